//! # recon-history
//!
//! What glue-recon remembers between runs and what it tells people: the audit ledger
//! ([`ledger`]), drift against the pair's own baseline ([`drift`]), accepted findings
//! ([`resolution`]), the dashboard ([`dashboard`]), the alert text ([`alert`]), the
//! marker of an unfinished run ([`run_marker`]), and the finishing sequence of a run
//! ([`history`]).

pub mod alert;
pub mod completion;
pub mod dashboard;
pub mod drift;
pub mod history;
pub mod ledger;
pub mod metrics;
pub mod resolution;
pub mod run_marker;
pub mod run_record;
