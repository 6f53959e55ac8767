//! The run report of a pair: partial diffs merged into totals, per-partition and
//! per-column counts, bounded samples of every finding kind, the schema section and
//! the PASS/WARN/FAIL verdict.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{DriftAction, Limits, PairConfig};
use crate::hints::Hint;
use crate::layout::Artifacts;
use crate::partial::{FindingKind, ItemError, PartialDiff, Totals};
use crate::plan::{SchemaDiff, Side};
use crate::table::Presence;

/// Version of the report schema.
pub(crate) const REPORT_SCHEMA_VERSION: u32 = 1;

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
    /// `ok`; `failed` when it could not be reconciled; `missing_in_target` or
    /// `extra_in_target` when one side has none of its rows ([`PartitionStatus`]).
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
    pub diffs: Vec<SampleDiff>,
}

/// A differing column of a sample: the values as text, a value longer than
/// [`VALUE_CHARS`] cut to that many characters with its whole length beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleDiff {
    /// The column (target name).
    pub column: String,
    /// The source value (`None` = NULL).
    pub source: Option<String>,
    /// The target value.
    pub target: Option<String>,
    /// The source value's length in characters, when it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_chars: Option<u64>,
    /// The target value's length in characters, when it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_chars: Option<u64>,
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
    /// Root-cause hints: the patterns the findings fit, the most findings first.
    #[serde(default)]
    pub hints: Vec<Hint>,
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
    /// The check against the pair's own trailing baseline (`recon_history::drift`); absent
    /// until the run is compared with the ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<DriftCheck>,
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

/// The finding kinds beyond their limit, each with its reason
/// (`MISSING_IN_TARGET 3,351 > 0`).
fn check(limits: &Limits, totals: &Totals) -> Vec<(FindingKind, String)> {
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
                .then(|| (kind, format!("{kind} {} > {limit}", thousands(found))))
        })
        .collect()
}

pub use crate::numbers::{count, thousands};
pub use crate::partial::PartitionStatus;

/// Partitions listed by name in the reasons; the rest are counted.
const PARTITIONS_NAMED: usize = 5;

/// A reason for each partition that is wholly missing or extra in the target
/// (`dt=2024-01-06 is missing in the target: 33,333 of the 33,522 missing keys`),
/// the largest first, the rest summed in one line.
fn whole_partition_reasons(partitions: &[PartitionSummary], totals: &Totals) -> Vec<String> {
    let mut reasons = Vec::new();
    for (status, what, all) in [
        (
            PartitionStatus::MissingInTarget,
            "missing",
            totals.missing_in_target,
        ),
        (
            PartitionStatus::ExtraInTarget,
            "extra",
            totals.extra_in_target,
        ),
    ] {
        let of_kind = |p: &PartitionSummary| match status {
            PartitionStatus::MissingInTarget => p.totals.missing_in_target,
            _ => p.totals.extra_in_target,
        };
        let mut whole: Vec<&PartitionSummary> = partitions
            .iter()
            .filter(|p| p.status == status.as_str())
            .collect();
        whole.sort_by(|a, b| {
            of_kind(b)
                .cmp(&of_kind(a))
                .then(a.partition.cmp(&b.partition))
        });
        let label = |p: &PartitionSummary| {
            if p.partition.is_empty() {
                "the table".to_string()
            } else {
                p.partition.clone()
            }
        };
        for p in whole.iter().take(PARTITIONS_NAMED) {
            let (how, side) = match (status, p.presence) {
                (PartitionStatus::MissingInTarget, Presence::Both) => {
                    ("has no rows", "in the target")
                }
                (PartitionStatus::MissingInTarget, _) => ("is missing", "in the target"),
                (_, Presence::Both) => ("has no rows", "in the source"),
                _ => ("is only", "in the target"),
            };
            reasons.push(format!(
                "{} {how} {side}: {} of the {} {what} keys",
                label(p),
                thousands(of_kind(p)),
                thousands(all)
            ));
        }
        if whole.len() > PARTITIONS_NAMED {
            let rest = &whole[PARTITIONS_NAMED..];
            reasons.push(format!(
                "{} more partition{} {}: {} of the {} {what} keys",
                thousands(rest.len() as u64),
                if rest.len() == 1 { "" } else { "s" },
                match status {
                    PartitionStatus::MissingInTarget => "missing in the target",
                    _ => "only in the target",
                },
                thousands(rest.iter().map(|p| of_kind(p)).sum()),
                thousands(all)
            ));
        }
    }
    reasons
}

/// Characters of a value kept in report.json and report.html; diffs.parquet has it
/// whole.
pub const VALUE_CHARS: usize = 1_000;

/// A value cut to [`VALUE_CHARS`], with its length when cut.
fn bounded(v: &Option<String>) -> (Option<String>, Option<u64>) {
    match v {
        Some(s) if s.chars().count() > VALUE_CHARS => (
            Some(s.chars().take(VALUE_CHARS).collect()),
            Some(s.chars().count() as u64),
        ),
        v => (v.clone(), None),
    }
}

/// Samples of every kind spread over the partitions: each partition gives its first
/// finding of a kind, then each its second, until `limit`; shown by partition and
/// key (numbers in numeric order).
fn spread_samples(
    pair: &PairConfig,
    partials: &[&PartialDiff],
    limit: usize,
) -> BTreeMap<FindingKind, Vec<Sample>> {
    let mut samples: BTreeMap<FindingKind, Vec<Sample>> = BTreeMap::new();
    for kind in FindingKind::ALL {
        let mut of_kind: Vec<_> = partials
            .iter()
            .map(|p| (p, p.findings.iter().filter(|f| f.kind == kind)))
            .collect();
        let mut taken = Vec::new();
        while taken.len() < limit {
            let before = taken.len();
            for (p, findings) in of_kind.iter_mut() {
                if taken.len() == limit {
                    break;
                }
                if let Some(f) = findings.next() {
                    taken.push((*p, f));
                }
            }
            if taken.len() == before {
                break;
            }
        }
        if taken.is_empty() {
            continue;
        }
        taken.sort_by(|(pa, a), (pb, b)| {
            pa.partition
                .cmp(&pb.partition)
                .then_with(|| crate::partial::compare_keys(&a.key, &b.key))
        });
        let list = taken
            .into_iter()
            .map(|(p, f)| Sample {
                partition: p.partition.clone(),
                key: pair
                    .key
                    .iter()
                    .cloned()
                    .zip(f.key.iter().map(|v| bounded(v).0))
                    .collect(),
                side: f.side,
                count: f.count,
                diffs: f
                    .diffs
                    .iter()
                    .map(|d| {
                        let (source, source_chars) = bounded(&d.source);
                        let (target, target_chars) = bounded(&d.target);
                        SampleDiff {
                            column: d.column.clone(),
                            source,
                            target,
                            source_chars,
                            target_chars,
                        }
                    })
                    .collect(),
            })
            .collect();
        samples.insert(kind, list);
    }
    samples
}

/// Merge partial diffs into the pair's report.
pub fn build_report(
    meta: &RunMeta,
    pair: &PairConfig,
    sample_limit: usize,
    schema: SchemaDiff,
    partials: &[PartialDiff],
    hints: Vec<Hint>,
) -> Report {
    // Sorted references: the partials (every finding) are read, never copied.
    let mut partials: Vec<&PartialDiff> = partials.iter().collect();
    partials.sort_by(|a, b| a.partition.cmp(&b.partition));
    let mut totals = Totals::default();
    let mut columns: BTreeMap<String, u64> = BTreeMap::new();
    let mut partitions = Vec::with_capacity(partials.len());
    for p in partials.iter().copied() {
        totals.add(&p.totals);
        for (c, n) in &p.column_mismatches {
            *columns.entry(c.clone()).or_default() += n;
        }
        partitions.push(PartitionSummary {
            partition: p.partition.clone(),
            item_id: p.item_id.clone(),
            presence: p.presence,
            status: PartitionStatus::of(p).as_str().into(),
            error: p.error.clone(),
            totals: p.totals,
        });
    }
    let samples = spread_samples(pair, &partials, sample_limit);
    let failed = partitions.iter().filter(|p| p.error.is_some()).count();
    let complete = failed == 0;
    let mut reasons = Vec::new();
    let mut status = Status::Pass;
    if !complete {
        status = Status::Fail;
        reasons.push(format!(
            "incomplete: {} of {} could not be reconciled; the counts are of the others",
            thousands(failed as u64),
            count(partitions.len(), "partition")
        ));
    }
    if complete && totals.source_rows == 0 && totals.target_rows == 0 {
        // Nothing was compared: a job that wrote nothing from nothing is worth a look,
        // never a silent PASS.
        status = Status::Warn;
        reasons.push("both tables are empty: no rows were compared".to_string());
    }
    // Every limit passed is said, the warn ones under a FAIL too (marked, unless the
    // fail limit of the same kind already says it).
    let fails = check(&pair.thresholds.fail, &totals);
    let warns = check(&pair.thresholds.warn, &totals);
    if !fails.is_empty() {
        status = Status::Fail;
    } else if !warns.is_empty() {
        status = status.max(Status::Warn);
    }
    let failed_kinds: Vec<FindingKind> = fails.iter().map(|(k, _)| *k).collect();
    reasons.extend(fails.into_iter().map(|(_, r)| r));
    reasons.extend(
        warns
            .into_iter()
            .filter(|(k, _)| !failed_kinds.contains(k))
            .map(|(_, r)| {
                if status == Status::Fail {
                    format!("{r} (warn limit)")
                } else {
                    r
                }
            }),
    );
    reasons.extend(whole_partition_reasons(&partitions, &totals));
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
        hints,
        totals,
        schema,
        partitions,
        columns,
        samples,
        sample_limit,
        artifacts: Artifacts::standard(),
        drift: None,
    }
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    rfc3339(chrono::Utc::now())
}

/// A new run id: UTC time plus a random suffix, sortable by time.
pub fn new_run_id() -> String {
    run_id_at(chrono::Utc::now())
}

/// The run id of a run started at `at`: its time plus a random suffix.
pub(crate) fn run_id_at(at: chrono::DateTime<chrono::Utc>) -> String {
    use sha2::{Digest, Sha256};
    let now = chrono::Utc::now();
    let seed = format!(
        "{}-{}-{}-{:?}",
        at.timestamp_nanos_opt().unwrap_or(0),
        now.timestamp_nanos_opt().unwrap_or(0),
        std::process::id(),
        std::thread::current().id()
    );
    let d = Sha256::digest(seed.as_bytes());
    format!(
        "{}-{:02x}{:02x}{:02x}{:02x}",
        at.format("%Y%m%dT%H%M%SZ"),
        d[0],
        d[1],
        d[2],
        d[3]
    )
}

/// A time as reports write it: RFC 3339, UTC, seconds.
pub fn rfc3339(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The outcome of a pair's drift check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftCheck {
    /// Runs in the baseline (0: no history, nothing compared).
    pub baseline_runs: usize,
    /// How many of them were clean.
    pub baseline_clean_runs: usize,
    /// Earlier runs of the pair left out of the baseline
    /// (incomplete, or drifted with findings not accepted: the history layer's
    /// `LedgerRun::joins_baseline`).
    #[serde(default)]
    pub left_out_runs: usize,
    /// The band used (`0.5%` or a count).
    pub band: String,
    /// Whether the pair drifted.
    pub detected: bool,
    /// Why, with the deltas (empty when not detected).
    pub reasons: Vec<String>,
    /// Mean finding rate (findings per source row, %) of the baseline.
    pub baseline_finding_rate: f64,
    /// This run's finding rate (%).
    pub finding_rate: f64,
    /// Mean findings of the baseline.
    pub baseline_findings: f64,
    /// Mean source rows of the baseline.
    pub baseline_source_rows: f64,
    /// Mean target rows of the baseline.
    pub baseline_target_rows: f64,
}

impl DriftCheck {
    /// One line: `DRIFT: reason; reason` or the delta when there is none.
    pub fn summary(&self) -> String {
        if self.detected {
            format!("DRIFT: {}", self.reasons.join("; "))
        } else {
            self.delta()
        }
    }

    /// The delta against the baseline in words.
    pub fn delta(&self) -> String {
        let left_out = match self.left_out_runs {
            0 => String::new(),
            n => format!("; {} left out (drifted or incomplete)", count(n, "run")),
        };
        if self.baseline_runs == 0 {
            return format!("no baseline yet{left_out}");
        }
        format!(
            "finding rate {:.3}% vs baseline {:.3}% ({:+.3} pp) over {}, {} clean{left_out}",
            self.finding_rate,
            self.baseline_finding_rate,
            self.finding_rate - self.baseline_finding_rate,
            count(self.baseline_runs, "run"),
            self.baseline_clean_runs
        )
    }
}

/// A pair that could not run (bad table, schema, config): what `--json` prints in its
/// report's place and what the alert of a run tells of it (`alert::Alert::for_not_run` in the history layer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotRun {
    /// The pair.
    pub pair: String,
    /// Always `ERROR`, where a report has its verdict.
    pub status: &'static str,
    /// The error's stable name ([`crate::error::ReconError::error_type`]).
    pub error_type: &'static str,
    /// The error, for people.
    pub error: String,
}

impl NotRun {
    /// Pair `pair` stopped with `error`.
    pub fn new(pair: &str, error: &crate::error::ReconError) -> NotRun {
        NotRun {
            pair: pair.to_string(),
            status: "ERROR",
            error_type: error.error_type(),
            error: error.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partial::{ColumnDiff, Finding, FindingKind};

    /// A partial of `n` findings of each kind in partition `part`.
    fn partial(part: &str, n: usize) -> PartialDiff {
        let mut findings = Vec::new();
        for kind in FindingKind::ALL {
            for i in 0..n {
                findings.push(Finding {
                    kind,
                    key: vec![Some(format!("{part}-{i:04}"))],
                    side: None,
                    count: None,
                    diffs: if kind == FindingKind::Mismatch {
                        vec![ColumnDiff {
                            column: "v".into(),
                            source: Some(i.to_string()),
                            target: None,
                        }]
                    } else {
                        Vec::new()
                    },
                    identical: None,
                });
            }
        }
        PartialDiff {
            schema_version: crate::partial::PARTIAL_SCHEMA_VERSION,
            pair: "p".into(),
            item_id: part.into(),
            partition: part.into(),
            presence: Presence::Both,
            error: None,
            totals: Totals {
                source_rows: 10 * n as u64,
                target_rows: 10 * n as u64,
                missing_in_target: n as u64,
                extra_in_target: n as u64,
                mismatch: n as u64,
                ..Totals::default()
            },
            column_mismatches: [("v".to_string(), n as u64)].into(),
            findings,
        }
    }

    #[test]
    fn a_report_from_sample_views_equals_the_report_from_every_finding() {
        let (pair, meta) = crate::test_support::pair_and_meta("r");
        // Partitions with more, as many and fewer findings of a kind than the limit.
        let full: Vec<PartialDiff> = [("c", 40), ("a", 7), ("b", 0), ("d", 3)]
            .into_iter()
            .map(|(p, n)| partial(p, n))
            .collect();
        for limit in [1, 5, 7, 20, 100] {
            let views: Vec<PartialDiff> = full
                .iter()
                .cloned()
                .map(|p| p.into_sample_view(limit))
                .collect();
            assert!(views.iter().all(|v| v.findings.len() <= limit * 5));
            let a = build_report(&meta, &pair, limit, Default::default(), &full, Vec::new());
            let b = build_report(&meta, &pair, limit, Default::default(), &views, Vec::new());
            assert_eq!(
                serde_json::to_value(&a).unwrap(),
                serde_json::to_value(&b).unwrap(),
                "sample limit {limit}"
            );
        }
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(33_835), "33,835");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
