//! The integration tests, one binary: the engine on real Parquet files, the CLI, the
//! history (ledger, dashboard in Chromium), and the AWS adapters against a moto server.

mod aws;
mod engine;
mod history;
