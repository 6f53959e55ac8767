//! # glue-recon
//!
//! Row-level reconciliation of a target table against its source, by business key.
//! It says which keys are missing, extra, changed (which columns, from what to
//! what), duplicated or NULL, and whether the schema drifted.
//!
//! The engine reads Parquet from local folders, S3 or tables of the Glue Data
//! Catalog, hashes every row with SHA-256 over a value-based canonical encoding
//! ([`canonical`]), and diffs the two sides partition by partition
//! ([`reconcile::ItemRunner`]). Partial diffs merge into a [`report::Report`].
//!
//! ```no_run
//! # async fn demo() -> glue_recon::error::Result<()> {
//! use glue_recon::config::Config;
//! use glue_recon::runner::{RunOptions, run_pair};
//! let config = Config::from_file("recon.toml".as_ref())?;
//! let report = run_pair(&config.pairs[0], &config.defaults, &RunOptions::local()).await?;
//! println!("{}: {}", report.pair, report.status);
//! # Ok(()) }
//! ```

pub mod alert;
#[cfg(feature = "aws")]
pub mod aws;
pub mod bounded;
pub mod budget;
pub mod canonical;
pub mod catalog;
pub mod config;
pub mod dashboard;
pub mod diffrows;
pub mod drift;
pub mod error;
pub mod history;
pub mod html;
pub mod index;
pub mod layout;
pub mod ledger;
pub mod out;
pub mod parquet_forms;
pub mod partial;
pub mod partition_filter;
pub mod pipeline;
pub mod plan;
pub mod reconcile;
pub mod report;
pub mod resolution;
pub mod row_hash;
pub mod row_hasher;
pub mod row_slots;
pub mod run_marker;
pub mod runner;
pub mod sample;
pub mod scan;
pub mod side_schema;
pub mod storage;
pub mod table;
pub mod trigger;

/// The engine version recorded in reports and the ledger.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
