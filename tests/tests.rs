mod aws;
mod engine;
mod history;
