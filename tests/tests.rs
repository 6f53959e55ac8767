mod engine;
mod history;
