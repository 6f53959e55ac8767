//! Reports for the tests of this crate and of the crates above it (feature
//! `test-support`): small, fixed, and built by the same code as real ones.

use crate::config::Config;
use crate::partial::{PARTIAL_SCHEMA_VERSION, PartialDiff, Totals};
use crate::report::{Report, RunMeta, build_report};
use crate::table::Presence;

/// Pair `p` keyed by `id`, and the meta of run `run_id`.
pub(crate) fn pair_and_meta(run_id: &str) -> (crate::config::PairConfig, RunMeta) {
    let pair = Config::parse(
        "[[pair]]\nname='p'\nsource='s'\ntarget='t'\nkey=['id']\n",
        "t",
    )
    .unwrap()
    .pairs
    .remove(0);
    let meta = RunMeta {
        run_id: run_id.into(),
        trigger: "on-demand".into(),
        started_at: "2026-01-02T00:00:00Z".into(),
    };
    (pair, meta)
}

/// A report of pair `p` (key `id`, run `now`) over one partition of 1000 rows a side
/// with `mismatch` mismatched rows: for tests of what reads reports.
pub fn one_partition_report(mismatch: u64) -> Report {
    let (pair, meta) = pair_and_meta("now");
    let partial = PartialDiff {
        schema_version: PARTIAL_SCHEMA_VERSION,
        pair: "p".into(),
        item_id: "i".into(),
        partition: "*".into(),
        presence: Presence::Both,
        error: None,
        totals: Totals {
            source_rows: 1000,
            target_rows: 1000,
            mismatch,
            ..Totals::default()
        },
        column_mismatches: Default::default(),
        findings: Vec::new(),
    };
    build_report(&meta, &pair, 5, Default::default(), &[partial], Vec::new())
}
