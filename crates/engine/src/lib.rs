//! # recon-engine
//!
//! The reconciliation engine, without any cloud SDK: the config ([`config`]), table
//! listings over the storage and catalog ports ([`storage`], [`catalog`], [`table`]),
//! the compare plan ([`plan`]), row hashing over a value-based canonical encoding
//! ([`canonical`], [`row_hash`]), the scan and key join of one partition
//! ([`scan`], [`reconcile`]), partial diffs ([`partial`]) and the report they merge
//! into ([`report`]). [`runner`] runs whole pairs on one machine.
//!
//! The data flows config -> table listing -> plan -> hash -> scan -> join -> partial
//! diff -> report; each module imports only those before it.

pub mod budget;
pub mod canonical;
pub mod catalog;
pub mod config;
pub mod diffrows;
pub mod error;
mod footer_stats;
pub mod hints;
pub mod html;
pub mod index;
pub mod layout;
pub mod mask;
pub mod model;
pub mod numbers;
pub mod out;
pub mod parquet_forms;
pub mod partial;
pub mod partition_filter;
pub mod plan;
pub mod reconcile;
pub mod report;
pub mod row_hash;
pub mod row_hasher;
pub mod row_slots;
pub mod runner;
pub mod sample;
pub mod scan;
pub mod side_schema;
pub mod storage;
pub mod table;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;

/// The engine version recorded in reports and the ledger.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
