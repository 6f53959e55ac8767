//! Root-cause hints: the few recognisable patterns behind most reconciliation
//! failures (a partition not loaded, a unit conversion, a time-zone shift, NULL
//! written as `''`, a column cut short, a double load...), found in every finding of
//! a pair (not the samples), each with the share of the findings it explains, example
//! keys and a one-line suggestion.
//!
//! A column pattern is looked for partition by partition: it holds in a partition
//! when one pattern with one parameter (the same power of ten, the same shift) fits
//! at least [`FIT_SHARE`] of the column's differences there. Partitions where the
//! same pattern holds are one hint; a hint is shown once it explains at least
//! [`MIN_SUPPORT`] findings, so random differences never make one.

mod classify;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::config::PairConfig;
use crate::numbers::{count, thousands};
use crate::partial::{Finding, FindingKind, PartialDiff, PartitionStatus};
use crate::plan::Side;
use classify::{Pattern, decimal_text, patterns};

/// Share of a column's differences in a partition that one pattern must fit.
pub const FIT_SHARE: f64 = 0.9;
/// Findings a hint must explain to be shown (partitions wholly missing or extra are
/// shown whatever their size).
pub const MIN_SUPPORT: u64 = 5;
/// Example keys kept per hint.
const EXAMPLES: usize = 3;
/// Hints listed in a report, the most findings first.
pub const HINTS_LISTED: usize = 20;
/// Integer keys of missing or extra rows kept to find contiguous ranges; beyond
/// this many, no range hint is made for that kind.
const RANGE_KEYS_KEPT: usize = 2_000_000;
/// Partitions named in a hint's summary.
const PARTITIONS_NAMED: usize = 5;

/// The kinds of hint, named as in report.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HintKind {
    /// Whole partitions in the source and not in the target.
    PartitionMissing,
    /// Whole partitions in the target and not in the source.
    PartitionExtra,
    /// A column NULL in the target for every row of a partition.
    ColumnNulled,
    /// target = source x 10^k.
    Scaled,
    /// target = source + a constant (a time-zone shift for timestamps).
    Shifted,
    /// NULL on one side, `''` or 0 on the other.
    NullVsEmpty,
    /// Letter case only.
    CaseOnly,
    /// Whitespace only.
    WhitespaceOnly,
    /// The target value cut short: a text prefix, a timestamp cut to fewer digits.
    Truncated,
    /// The target rounded to fewer decimal places.
    Rounded,
    /// Duplicated keys whose rows are exact copies (a double load).
    DuplicateCopies,
    /// Duplicated keys whose rows differ (the key is not unique).
    DuplicateConflicts,
    /// Missing or extra keys forming one contiguous integer range.
    KeyRange,
}

impl HintKind {
    /// Every kind.
    pub const ALL: [HintKind; 13] = [
        HintKind::PartitionMissing,
        HintKind::PartitionExtra,
        HintKind::ColumnNulled,
        HintKind::Scaled,
        HintKind::Shifted,
        HintKind::NullVsEmpty,
        HintKind::CaseOnly,
        HintKind::WhitespaceOnly,
        HintKind::Truncated,
        HintKind::Rounded,
        HintKind::DuplicateCopies,
        HintKind::DuplicateConflicts,
        HintKind::KeyRange,
    ];

    /// The name used in outputs (`PARTITION_MISSING`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            HintKind::PartitionMissing => "PARTITION_MISSING",
            HintKind::PartitionExtra => "PARTITION_EXTRA",
            HintKind::ColumnNulled => "COLUMN_NULLED",
            HintKind::Scaled => "SCALED",
            HintKind::Shifted => "SHIFTED",
            HintKind::NullVsEmpty => "NULL_VS_EMPTY",
            HintKind::CaseOnly => "CASE_ONLY",
            HintKind::WhitespaceOnly => "WHITESPACE_ONLY",
            HintKind::Truncated => "TRUNCATED",
            HintKind::Rounded => "ROUNDED",
            HintKind::DuplicateCopies => "DUPLICATE_COPIES",
            HintKind::DuplicateConflicts => "DUPLICATE_CONFLICTS",
            HintKind::KeyRange => "KEY_RANGE",
        }
    }
}

/// One root-cause hint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hint {
    /// What pattern.
    pub kind: HintKind,
    /// The column, for column patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The side, for duplicates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// The partitions it holds in (empty for an unpartitioned table or a key range).
    #[serde(default)]
    pub partitions: Vec<String>,
    /// Findings it explains.
    pub findings: u64,
    /// Its share of all the pair's findings (0-1, six decimals).
    pub share: f64,
    /// What was found, in one line.
    pub summary: String,
    /// What to do, in one line.
    pub suggestion: String,
    /// Example keys (column -> value).
    #[serde(default)]
    pub examples: Vec<BTreeMap<String, Option<String>>>,
}

impl Hint {
    /// `"42% (1,250 findings)"`.
    pub fn share_text(&self) -> String {
        let pct = self.share * 100.0;
        let pct = if pct >= 10.0 || pct == 0.0 {
            format!("{pct:.0}%")
        } else {
            format!("{pct:.1}%")
        };
        format!("{pct} ({} findings)", thousands(self.findings))
    }

    /// The example keys in one line: `id=1; id=2` (`region=eu, id=7` for a composite
    /// key).
    pub fn example_keys(&self) -> String {
        self.examples
            .iter()
            .map(|key| {
                key.iter()
                    .map(|(c, v)| format!("{c}={}", v.as_deref().unwrap_or("NULL")))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The first `shown` hints as text lines for a terminal or an e-mail: a heading,
/// then per hint `KIND share: summary` and its suggestion, each indented by two more
/// spaces. Nothing for no hints.
pub fn hint_lines(hints: &[Hint], shown: usize) -> Vec<String> {
    if hints.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["likely causes:".to_string()];
    for h in hints.iter().take(shown) {
        lines.push(format!(
            "  {} {}: {}",
            h.kind.as_str(),
            h.share_text(),
            h.summary
        ));
        lines.push(format!("    -> {}", h.suggestion));
    }
    if hints.len() > shown {
        lines.push(format!(
            "  ... and {} more in the report",
            hints.len() - shown
        ));
    }
    lines
}

/// What a hint has gathered so far.
#[derive(Debug, Default)]
struct Evidence {
    findings: u64,
    partitions: BTreeSet<String>,
    examples: Vec<Vec<Option<String>>>,
    /// Longest target text (for text cut short).
    longest: usize,
}

impl Evidence {
    fn add(&mut self, partition: &str, findings: u64, examples: &[Vec<Option<String>>]) {
        self.findings += findings;
        self.partitions.insert(partition.to_string());
        for e in examples {
            if self.examples.len() < EXAMPLES {
                self.examples.push(e.clone());
            }
        }
    }
}

/// What one hint is about: its kind with what tells two of a kind apart.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Subject {
    Partitions(FindingKind),
    Nulled(String),
    Column(String, Pattern),
    Duplicates(Side, bool),
}

/// Key values of a finding, borrowed from its partial.
type KeyRef<'a> = &'a [Option<String>];

/// Differences one pattern fits in a column of a partition (or that are a target
/// NULL): how many, the first keys, the longest target text.
#[derive(Default)]
struct Fit<'a> {
    count: u64,
    examples: Vec<KeyRef<'a>>,
    longest: usize,
}

impl<'a> Fit<'a> {
    fn add(&mut self, key: KeyRef<'a>, target_chars: usize) {
        self.count += 1;
        self.longest = self.longest.max(target_chars);
        if self.examples.len() < EXAMPLES {
            self.examples.push(key);
        }
    }

    fn owned_examples(&self) -> Vec<Vec<Option<String>>> {
        self.examples.iter().map(|k| k.to_vec()).collect()
    }
}

/// Differences of one column in one partition, while the partition is read.
#[derive(Default)]
struct ColumnTally<'a> {
    differences: u64,
    fits: HashMap<Pattern, Fit<'a>>,
    /// Target NULLs where the source has a value.
    nulled: Fit<'a>,
}

/// Gathers the hints of one pair from its partials, one partial at a time: each is
/// read whole (every finding) when added, and only the evidence is kept.
pub struct HintCollector {
    key: Vec<String>,
    masked: Vec<String>,
    findings: u64,
    evidence: BTreeMap<Subject, Evidence>,
    /// Integer keys of missing / extra rows outside wholly missing / extra partitions.
    range_keys: [Option<Vec<i64>>; 2],
}

impl HintCollector {
    /// A collector for `pair`'s findings.
    pub fn new(pair: &PairConfig) -> HintCollector {
        let ranges = || (pair.key.len() == 1).then(Vec::new);
        HintCollector {
            key: pair.key.clone(),
            masked: pair.masked.clone(),
            findings: 0,
            evidence: BTreeMap::new(),
            range_keys: [ranges(), ranges()],
        }
    }

    /// The hints of a pair's complete partials.
    pub fn of(pair: &PairConfig, partials: &[PartialDiff]) -> Vec<Hint> {
        let mut c = HintCollector::new(pair);
        for p in partials {
            c.add(p);
        }
        c.finish()
    }

    /// Read one partial's findings.
    pub fn add(&mut self, p: &PartialDiff) {
        self.findings += p.totals.findings();
        let keys = |kind: FindingKind| {
            p.findings
                .iter()
                .filter(move |f| f.kind == kind)
                .map(|f| f.key.clone())
        };
        let whole = match PartitionStatus::of(p) {
            PartitionStatus::MissingInTarget => Some(FindingKind::MissingInTarget),
            PartitionStatus::ExtraInTarget => Some(FindingKind::ExtraInTarget),
            _ => None,
        };
        if let Some(kind) = whole {
            let examples: Vec<_> = keys(kind).take(EXAMPLES).collect();
            self.evidence
                .entry(Subject::Partitions(kind))
                .or_default()
                .add(&p.partition, p.totals.of(kind), &examples);
        } else {
            for (slot, kind) in [FindingKind::MissingInTarget, FindingKind::ExtraInTarget]
                .into_iter()
                .enumerate()
            {
                self.add_range_keys(slot, keys(kind));
            }
        }
        self.add_duplicates(p);
        self.add_columns(p);
    }

    fn add_range_keys(&mut self, slot: usize, keys: impl Iterator<Item = Vec<Option<String>>>) {
        let Some(kept) = &mut self.range_keys[slot] else {
            return;
        };
        for key in keys {
            if let Some(Ok(n)) = key[0].as_deref().map(str::parse::<i64>) {
                kept.push(n);
            }
        }
        if kept.len() > RANGE_KEYS_KEPT {
            self.range_keys[slot] = None;
        }
    }

    fn add_duplicates(&mut self, p: &PartialDiff) {
        let mut by: BTreeMap<(Side, bool), Vec<&Finding>> = BTreeMap::new();
        for f in p
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::DuplicateKey)
        {
            if let (Some(side), Some(identical)) = (f.side, f.identical) {
                by.entry((side, identical)).or_default().push(f);
            }
        }
        for ((side, identical), found) in by {
            let examples: Vec<_> = found.iter().take(EXAMPLES).map(|f| f.key.clone()).collect();
            self.evidence
                .entry(Subject::Duplicates(side, identical))
                .or_default()
                .add(&p.partition, found.len() as u64, &examples);
        }
    }

    fn add_columns(&mut self, p: &PartialDiff) {
        let mut columns: BTreeMap<&str, ColumnTally> = BTreeMap::new();
        for f in p
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::Mismatch)
        {
            for d in &f.diffs {
                if self
                    .masked
                    .iter()
                    .any(|m| m.eq_ignore_ascii_case(&d.column))
                {
                    continue;
                }
                let tally = columns.entry(&d.column).or_default();
                tally.differences += 1;
                let target_chars = d.target.as_deref().map_or(0, |t| t.chars().count());
                // A target NULL where the source has `''` is NULL_VS_EMPTY instead.
                if d.target.is_none() && d.source.as_deref().is_some_and(|s| !s.is_empty()) {
                    tally.nulled.add(&f.key, 0);
                }
                for pattern in patterns(d.source.as_deref(), d.target.as_deref()) {
                    tally
                        .fits
                        .entry(pattern)
                        .or_default()
                        .add(&f.key, target_chars);
                }
            }
        }
        // Keys on both sides: a column NULL in every target row of the partition
        // differs in every one of them (where the source has a value).
        let joined = p.totals.matched + p.totals.mismatch;
        for (column, tally) in columns {
            let nulled = &tally.nulled;
            if nulled.count == tally.differences && nulled.count as f64 >= FIT_SHARE * joined as f64
            {
                self.evidence
                    .entry(Subject::Nulled(column.to_string()))
                    .or_default()
                    .add(&p.partition, nulled.count, &nulled.owned_examples());
                continue;
            }
            let best = tally
                .fits
                .iter()
                .max_by(|(pa, a), (pb, b)| a.count.cmp(&b.count).then_with(|| pb.cmp(pa)));
            if let Some((pattern, fit)) = best
                && fit.count as f64 >= FIT_SHARE * tally.differences as f64
            {
                let e = self
                    .evidence
                    .entry(Subject::Column(column.to_string(), pattern.clone()))
                    .or_default();
                e.add(&p.partition, fit.count, &fit.owned_examples());
                e.longest = e.longest.max(fit.longest);
            }
        }
    }

    /// The hints, the most findings first, at most [`HINTS_LISTED`].
    pub fn finish(mut self) -> Vec<Hint> {
        let mut hints: Vec<Hint> = Vec::new();
        for (subject, e) in std::mem::take(&mut self.evidence) {
            let whole_partitions = matches!(subject, Subject::Partitions(_));
            if e.findings == 0 || (!whole_partitions && e.findings < MIN_SUPPORT) {
                continue;
            }
            hints.push(self.hint(subject, e));
        }
        for (slot, kind) in [FindingKind::MissingInTarget, FindingKind::ExtraInTarget]
            .into_iter()
            .enumerate()
        {
            if let Some(keys) = self.range_keys[slot].take() {
                hints.extend(self.ranges(kind, keys));
            }
        }
        hints.sort_by(|a, b| b.findings.cmp(&a.findings).then(a.kind.cmp(&b.kind)));
        hints.truncate(HINTS_LISTED);
        hints
    }

    /// `n` over all findings, to six decimals: a number that reads back from
    /// report.json as written.
    fn share(&self, n: u64) -> f64 {
        if self.findings == 0 {
            0.0
        } else {
            (n as f64 / self.findings as f64 * 1e6).round() / 1e6
        }
    }

    fn examples(&self, keys: &[Vec<Option<String>>]) -> Vec<BTreeMap<String, Option<String>>> {
        keys.iter()
            .map(|k| self.key.iter().cloned().zip(k.iter().cloned()).collect())
            .collect()
    }

    fn hint(&self, subject: Subject, e: Evidence) -> Hint {
        let partitions: Vec<String> = e
            .partitions
            .iter()
            .filter(|p| !p.is_empty())
            .cloned()
            .collect();
        let place = place(&partitions);
        let (kind, column, side, summary, suggestion) = match subject {
            Subject::Partitions(k) => {
                let (verb, them) = if partitions.len() > 1 {
                    ("are", "them")
                } else {
                    ("is", "it")
                };
                if k == FindingKind::MissingInTarget {
                    (
                        HintKind::PartitionMissing,
                        None,
                        None,
                        format!("{place} {verb} in the source and not in the target"),
                        format!(
                            "re-run the load for {them}; check the job's partition filter and job bookmark"
                        ),
                    )
                } else {
                    (
                        HintKind::PartitionExtra,
                        None,
                        None,
                        format!("{place} {verb} in the target and not in the source"),
                        "look for a stale or misdirected load into the target, or narrow partition_filter".to_string(),
                    )
                }
            }
            Subject::Nulled(c) => (
                HintKind::ColumnNulled,
                Some(c.clone()),
                None,
                format!(
                    "{c} is NULL in the target in every row of {place} where the source has a value"
                ),
                format!(
                    "the load of {place} dropped {c}: check the job's column mapping for it, then re-run the load"
                ),
            ),
            Subject::Duplicates(side, identical) => {
                let s = side.as_str();
                let (kind, summary, suggestion) = if identical {
                    (
                        HintKind::DuplicateCopies,
                        format!(
                            "{} keys duplicated in the {s} are exact copies of each other",
                            thousands(e.findings)
                        ),
                        if side == Side::Target {
                            "the rows were loaded twice: make the write idempotent (overwrite the partition instead of appending)".to_string()
                        } else {
                            "the source holds exact copies: deduplicate it before the load, or accept them".to_string()
                        },
                    )
                } else {
                    (
                        HintKind::DuplicateConflicts,
                        format!(
                            "{} keys duplicated in the {s} have rows with other values",
                            thousands(e.findings)
                        ),
                        format!(
                            "the key ({}) is not unique in the {s}: check the key, or the join that fanned the rows out",
                            self.key.join(", ")
                        ),
                    )
                };
                (kind, None, Some(side), summary, suggestion)
            }
            Subject::Column(c, pattern) => {
                let (kind, summary, suggestion) = column_texts(&c, &pattern, e.longest);
                (kind, Some(c), None, summary, suggestion)
            }
        };
        Hint {
            kind,
            column,
            side,
            share: self.share(e.findings),
            findings: e.findings,
            partitions,
            summary,
            suggestion,
            examples: self.examples(&e.examples),
        }
    }

    /// Hints for contiguous runs of integer keys of one kind.
    fn ranges(&self, kind: FindingKind, mut keys: Vec<i64>) -> Vec<Hint> {
        keys.sort_unstable();
        keys.dedup();
        let mut runs: Vec<(i64, i64)> = Vec::new();
        for k in keys {
            match runs.last_mut() {
                Some((_, end)) if end.checked_add(1) == Some(k) => *end = k,
                _ => runs.push((k, k)),
            }
        }
        let (what, suggestion) = if kind == FindingKind::ExtraInTarget {
            (
                "extra in the target",
                "a batch of ids the source has not was loaded: look for a test load or a stale source snapshot",
            )
        } else {
            (
                "missing in the target",
                "a contiguous batch was not loaded: check the job's bookmark and filters, or a failed write of that batch",
            )
        };
        let key = &self.key[0];
        runs.into_iter()
            .map(|(a, b)| (a, b, (b - a) as u64 + 1))
            .filter(|(_, _, n)| *n >= MIN_SUPPORT)
            .map(|(a, b, n)| Hint {
                kind: HintKind::KeyRange,
                column: Some(key.clone()),
                side: None,
                partitions: Vec::new(),
                findings: n,
                share: self.share(n),
                summary: format!(
                    "{} keys {what} form the contiguous range {key} {a}..{b}",
                    thousands(n)
                ),
                suggestion: suggestion.to_string(),
                examples: self.examples(&[a, b].map(|k| vec![Some(k.to_string())])),
            })
            .collect()
    }
}

/// `dt=1, dt=2 and 3 more`.
fn named(partitions: &[String]) -> String {
    let mut s = partitions
        .iter()
        .take(PARTITIONS_NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if partitions.len() > PARTITIONS_NAMED {
        s.push_str(&format!(
            " and {} more",
            partitions.len() - PARTITIONS_NAMED
        ));
    }
    s
}

/// `the table`, `partition dt=1`, `3 partitions (dt=1, dt=2, dt=3)`.
fn place(partitions: &[String]) -> String {
    match partitions {
        [] => "the table".to_string(),
        [one] => format!("partition {one}"),
        many => format!("{} ({})", count(many.len(), "partition"), named(many)),
    }
}

/// `+2h`, `-5h 30m`, `+1.5s`.
fn shift_text(nanos: i128) -> String {
    let sign = if nanos < 0 { "-" } else { "+" };
    let n = nanos.unsigned_abs();
    let (h, m, s, sub) = (
        n / 3_600_000_000_000,
        n / 60_000_000_000 % 60,
        n / 1_000_000_000 % 60,
        n % 1_000_000_000,
    );
    let mut parts = Vec::new();
    if h > 0 {
        parts.push(format!("{h}h"));
    }
    if m > 0 {
        parts.push(format!("{m}m"));
    }
    if s > 0 || sub > 0 {
        parts.push(if sub > 0 {
            format!(
                "{}s",
                decimal_text((s * 1_000_000_000 + sub) as i128, -9).trim_end_matches('0')
            )
        } else {
            format!("{s}s")
        });
    }
    format!("{sign}{}", parts.join(" "))
}

/// Kind, summary and suggestion of a column pattern.
fn column_texts(c: &str, pattern: &Pattern, longest: usize) -> (HintKind, String, String) {
    match pattern {
        Pattern::Scaled { power } => {
            let factor = decimal_text(1, power.abs());
            let op = if *power > 0 { "x" } else { "/" };
            (
                HintKind::Scaled,
                format!("target {c} = source {op} {factor}"),
                format!(
                    "a unit or scale conversion of {c} in the job (cents and units, a decimal scale): fix the conversion"
                ),
            )
        }
        Pattern::ShiftedTime { nanos } => (
            HintKind::Shifted,
            format!("target {c} = source {}", shift_text(*nanos)),
            format!(
                "a time-zone shift: check the job's session time zone (spark.sql.session.timeZone) and how {c} is parsed and written"
            ),
        ),
        Pattern::ShiftedDate { days } => (
            HintKind::Shifted,
            format!(
                "target {c} = source {days:+} day{}",
                if days.abs() == 1 { "" } else { "s" }
            ),
            format!(
                "dates shifted by a day are usually a time-zone conversion: check how the job turns timestamps into {c}"
            ),
        ),
        Pattern::ShiftedNumber { mantissa, exponent } => {
            let d = decimal_text(*mantissa, *exponent);
            let d = if d.starts_with('-') {
                d
            } else {
                format!("+{d}")
            };
            (
                HintKind::Shifted,
                format!("target {c} = source {d}"),
                format!("a constant offset in {c}: check the job's transformation of it"),
            )
        }
        Pattern::NullVsEmpty {
            null_in_target,
            zero,
        } => {
            let (null_side, other_side) = if *null_in_target {
                ("target", "source")
            } else {
                ("source", "target")
            };
            let other = if *zero { "0" } else { "''" };
            let suggestion = if *zero {
                format!(
                    "the job turns NULL into 0 or back in {c} (a coalesce or a fill): keep the NULLs, or exclude {c}"
                )
            } else {
                format!("set empty_as_null = true on {c} if '' and NULL mean the same")
            };
            (
                HintKind::NullVsEmpty,
                format!("{c} is NULL in the {null_side} where the {other_side} has {other}"),
                suggestion,
            )
        }
        Pattern::CaseOnly => (
            HintKind::CaseOnly,
            format!("{c} differs in letter case only"),
            format!("set ignore_case = true on {c} if case does not matter"),
        ),
        Pattern::WhitespaceOnly { ends: true } => (
            HintKind::WhitespaceOnly,
            format!("{c} differs in leading or trailing whitespace only"),
            format!("set trim = true on {c} if surrounding spaces do not matter"),
        ),
        Pattern::WhitespaceOnly { ends: false } => (
            HintKind::WhitespaceOnly,
            format!("{c} differs in whitespace only, inside the values"),
            format!("normalise whitespace of {c} in the job (trim = true covers only the ends)"),
        ),
        Pattern::TruncatedText => (
            HintKind::Truncated,
            format!("target {c} is the source cut short (at most {longest} characters kept)"),
            format!(
                "the target column is too narrow or the job cuts it: widen {c} (e.g. its VARCHAR length)"
            ),
        ),
        Pattern::TruncatedTime { digits } => {
            let unit = match digits {
                0 => "seconds".to_string(),
                3 => "milliseconds".to_string(),
                6 => "microseconds".to_string(),
                d => format!("{d} fractional digits"),
            };
            (
                HintKind::Truncated,
                format!("target {c} is the source's timestamp cut to {unit}"),
                format!(
                    "the target stores {c} at a lower precision: write it at the source's precision (e.g. TIMESTAMP_MICROS)"
                ),
            )
        }
        Pattern::Rounded { digits } => (
            HintKind::Rounded,
            format!(
                "target {c} is the source rounded to {digits} decimal place{}",
                if *digits == 1 { "" } else { "s" }
            ),
            format!(
                "set abs_tolerance = {} on {c} if the rounding is expected, or widen the target's scale",
                decimal_text(5, -(*digits as i32) - 1)
            ),
        ),
    }
}

#[cfg(test)]
mod tests;
