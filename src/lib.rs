//! # glue-recon
//!
//! The `glue-recon` command line, and the library face of the workspace: its modules
//! are those of the crates below, re-exported under one name (docs/architecture.md
//! shows the layers).
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

pub use recon_engine::{
    ENGINE_VERSION, budget, canonical, catalog, config, diffrows, error, hints, html, index,
    layout, mask, model, out, parquet_forms, partial, partition_filter, plan, reconcile, report,
    row_hash, row_hasher, row_slots, runner, sample, scan, side_schema, storage, table,
};
pub use recon_events::{bounded, contract, trigger};
pub use recon_history::{
    alert, completion, dashboard, drift, history, ledger, resolution, run_marker, run_record,
};
pub use recon_pipeline as pipeline;

#[cfg(feature = "aws")]
pub use recon_aws as aws;
