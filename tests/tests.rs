
mod history;
