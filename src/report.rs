//! The run report of a pair: partial diffs merged into totals, per-partition and
//! per-column counts, bounded samples of every finding kind, the schema section and
//! the PASS/WARN/FAIL verdict.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{DriftAction, Limits, PairConfig};
use crate::partial::{ColumnDiff, FindingKind, ItemError, PartialDiff, Totals};
use crate::plan::{SchemaDiff, Side};
use crate::table::Presence;

/// Version of the report schema.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Within every threshold.
    Pass,
    /// Beyond a warn threshold.
    Warn,
    /// Beyond a fail threshold, or incomplete.
    Fail,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        })
    }
}

/// One partition's line in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionSummary {
    /// The partition label.
    pub partition: String,
    /// The work item id.
    pub item_id: String,
    /// Which sides have it.
    pub presence: Presence,
    /// `ok`, or `failed` when it could not be reconciled.
    pub status: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ItemError>,
    /// Its counts.
    pub totals: Totals,
}

/// Mismatches of one column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnCount {
    /// The column.
    pub column: String,
    /// How many keys differ in it.
    pub mismatch: u64,
}

/// A sample finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The partition.
    pub partition: String,
    /// Key column -> value (`null` = NULL).
    pub key: BTreeMap<String, Option<String>>,
    /// The side (DUPLICATE_KEY, NULL_KEY).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// Occurrences (DUPLICATE_KEY).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Differing columns (MISMATCH).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diffs: Vec<ColumnDiff>,
}

/// File names of the report's companions, relative to report.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifacts {
    /// The HTML page.
    pub html: String,
    /// Every finding as Parquet rows.
    pub diff_rows: String,
}

/// The report of one pair in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Schema version of this document.
    pub schema_version: u32,
    /// glue-recon version.
    pub engine_version: String,
    /// Version of the canonical row encoding.
    pub hash_encoding_version: u32,
    /// The run id.
    pub run_id: String,
    /// What started the run (`on-demand`, `glue:<job>:<run id>`).
    pub trigger: String,
    /// The pair.
    pub pair: String,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// When it finished.
    pub finished_at: String,
    /// Source location.
    pub source: String,
    /// Target location.
    pub target: String,
    /// Key columns.
    pub key: Vec<String>,
    /// The verdict.
    pub status: Status,
    /// False when a partition could not be reconciled.
    pub complete: bool,
    /// Why the verdict is not PASS.
    pub reasons: Vec<String>,
    /// Counts over all partitions.
    pub totals: Totals,
    /// Schema differences.
    pub schema: SchemaDiff,
    /// Per partition.
    pub partitions: Vec<PartitionSummary>,
    /// Mismatches per column, most first.
    pub columns: Vec<ColumnCount>,
    /// Up to `sample_limit` findings of each kind.
    pub samples: BTreeMap<FindingKind, Vec<Sample>>,
    /// The sample bound used.
    pub sample_limit: usize,
    /// Companion files.
    pub artifacts: Artifacts,
    /// The check against the pair's own trailing baseline ([`crate::drift`]); absent
    /// until the run is compared with the ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<crate::drift::DriftCheck>,
}

/// Identity and timing of a run, supplied by the caller.
#[derive(Debug, Clone)]
pub struct RunMeta {
    /// The run id.
    pub run_id: String,
    /// What triggered it.
    pub trigger: String,
    /// Start time, RFC 3339.
    pub started_at: String,
}

fn check(limits: &Limits, totals: &Totals) -> Vec<String> {
    let kinds = [
        (FindingKind::MissingInTarget, &limits.missing_in_target),
        (FindingKind::ExtraInTarget, &limits.extra_in_target),
        (FindingKind::Mismatch, &limits.mismatch),
        (FindingKind::DuplicateKey, &limits.duplicate_key),
        (FindingKind::NullKey, &limits.null_key),
    ];
    kinds
        .into_iter()
        .filter_map(|(kind, limit)| {
            let limit = limit.as_ref()?;
            let found = totals.of(kind);
            limit
                .exceeded(found, totals.source_rows)
                .then(|| format!("{kind} {found} > {limit}"))
        })
        .collect()
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Merge partial diffs into the pair's report.
pub fn build_report(
    meta: &RunMeta,
    pair: &PairConfig,
    sample_limit: usize,
    schema: SchemaDiff,
    partials: &[PartialDiff],
) -> Report {
    // Sorted references: the partials (every finding) are read, never copied.
    let mut partials: Vec<&PartialDiff> = partials.iter().collect();
    partials.sort_by(|a, b| a.partition.cmp(&b.partition));
    let mut totals = Totals::default();
    let mut columns: BTreeMap<String, u64> = BTreeMap::new();
    let mut samples: BTreeMap<FindingKind, Vec<Sample>> = BTreeMap::new();
    let mut partitions = Vec::with_capacity(partials.len());
    for p in partials.iter().copied() {
        totals.add(&p.totals);
        for (c, n) in &p.column_mismatches {
            *columns.entry(c.clone()).or_default() += n;
        }
        for f in &p.findings {
            let list = samples.entry(f.kind).or_default();
            if list.len() < sample_limit {
                list.push(Sample {
                    partition: p.partition.clone(),
                    key: pair
                        .key
                        .iter()
                        .cloned()
                        .zip(f.key.iter().cloned())
                        .collect(),
                    side: f.side,
                    count: f.count,
                    diffs: f.diffs.clone(),
                });
            }
        }
        partitions.push(PartitionSummary {
            partition: p.partition.clone(),
            item_id: p.item_id.clone(),
            presence: p.presence,
            status: if p.error.is_some() { "failed" } else { "ok" }.into(),
            error: p.error.clone(),
            totals: p.totals,
        });
    }
    let failed = partitions.iter().filter(|p| p.error.is_some()).count();
    let complete = failed == 0;
    let mut reasons = Vec::new();
    let mut status = Status::Pass;
    if !complete {
        status = Status::Fail;
        reasons.push(format!(
            "incomplete: {failed} of {} partition(s) could not be reconciled",
            partitions.len()
        ));
    }
    if complete && totals.source_rows == 0 && totals.target_rows == 0 {
        // Nothing was compared: a job that wrote nothing from nothing is worth a look,
        // never a silent PASS.
        status = Status::Warn;
        reasons.push("both tables are empty: no rows were compared".to_string());
    }
    let fails = check(&pair.thresholds.fail, &totals);
    if !fails.is_empty() {
        status = Status::Fail;
        reasons.extend(fails);
    } else {
        let warns = check(&pair.thresholds.warn, &totals);
        if !warns.is_empty() {
            status = status.max(Status::Warn);
            reasons.extend(warns);
        }
    }
    if schema.drifted() {
        let what = format!("schema drift: {}", schema.describe());
        match pair.thresholds.schema_drift {
            DriftAction::Fail => {
                status = Status::Fail;
                reasons.push(what);
            }
            DriftAction::Warn => {
                status = status.max(Status::Warn);
                reasons.push(what);
            }
            DriftAction::Ignore => {}
        }
    }
    let mut columns: Vec<ColumnCount> = columns
        .into_iter()
        .map(|(column, mismatch)| ColumnCount { column, mismatch })
        .collect();
    columns.sort_by(|a, b| b.mismatch.cmp(&a.mismatch).then(a.column.cmp(&b.column)));
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        engine_version: crate::ENGINE_VERSION.into(),
        hash_encoding_version: crate::canonical::HASH_ENCODING_VERSION,
        run_id: meta.run_id.clone(),
        trigger: meta.trigger.clone(),
        pair: pair.name.clone(),
        started_at: meta.started_at.clone(),
        finished_at: now_rfc3339(),
        source: pair.source.clone(),
        target: pair.target.clone(),
        key: pair.key.clone(),
        status,
        complete,
        reasons,
        totals,
        schema,
        partitions,
        columns,
        samples,
        sample_limit,
        artifacts: Artifacts {
            html: "report.html".into(),
            diff_rows: "diffs.parquet".into(),
        },
        drift: None,
    }
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A new run id: UTC time plus a random suffix, sortable by time.
pub fn new_run_id() -> String {
    use sha2::{Digest, Sha256};
    let now = chrono::Utc::now();
    let seed = format!(
        "{}-{}-{:?}",
        now.timestamp_nanos_opt().unwrap_or(0),
        std::process::id(),
        std::thread::current().id()
    );
    let d = Sha256::digest(seed.as_bytes());
    format!(
        "{}-{:02x}{:02x}{:02x}{:02x}",
        now.format("%Y%m%dT%H%M%SZ"),
        d[0],
        d[1],
        d[2],
        d[3]
    )
}

/// A report of pair `p` (key `id`, run `now`) over one partition of 1000 rows a side
/// with `mismatch` mismatched rows: for tests of what reads reports.
#[cfg(test)]
pub(crate) fn one_partition_report(mismatch: u64) -> Report {
    let pair = crate::config::Config::parse(
        "[[pair]]\nname='p'\nsource='s'\ntarget='t'\nkey=['id']\n",
        "t",
    )
    .unwrap()
    .pairs
    .remove(0);
    let meta = RunMeta {
        run_id: "now".into(),
        trigger: "on-demand".into(),
        started_at: "2026-01-02T00:00:00Z".into(),
    };
    let partial = PartialDiff {
        schema_version: crate::partial::PARTIAL_SCHEMA_VERSION,
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
    build_report(&meta, &pair, 5, Default::default(), &[partial])
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(33_835), "33,835");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
