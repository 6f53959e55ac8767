//! # recon-events
//!
//! What starts a reconciliation: the events and requests of a run ([`contract`]) and
//! the trigger that turns a Glue job run (or a sweep of recent runs) into one Step
//! Functions execution per run ([`trigger`]). This crate knows nothing of tables or
//! hashing, so the trigger Lambda builds without the engine; with the `aws` feature it
//! also holds the trigger's AWS adapters ([`aws`]).

#[cfg(feature = "aws")]
pub mod aws;
pub mod bounded;
pub mod contract;
pub mod error;
pub mod trigger;
