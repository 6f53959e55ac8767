//! Integration tests of the engine and the CLI on Parquet tables written by arrow.

mod bad_input;
mod cli;
mod config;
mod file_layouts;
mod findings;
mod fixtures;
mod hash_vectors;
mod headline;
pub(crate) mod hints;
mod keys;
mod large;
mod masking;
mod options;
mod partitions;
mod report;
mod schema_evolution;
mod types;
