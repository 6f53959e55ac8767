//! The partial diff of one work item (partition): what the Hash Lambda writes and
//! the merge reads; in a local run the same values pass in memory.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::plan::Side;
use crate::table::{ItemRef, Presence};

/// Version of the partial-diff schema.
pub(crate) const PARTIAL_SCHEMA_VERSION: u32 = 1;

/// The kinds of finding, named as in every output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FindingKind {
    /// In the source, not in the target.
    MissingInTarget,
    /// In the target, not in the source.
    ExtraInTarget,
    /// On both sides, values differ.
    Mismatch,
    /// More than one row with the key on a side.
    DuplicateKey,
    /// A key column is NULL.
    NullKey,
}

impl FindingKind {
    /// Every kind, in report order.
    pub const ALL: [FindingKind; 5] = [
        FindingKind::MissingInTarget,
        FindingKind::ExtraInTarget,
        FindingKind::Mismatch,
        FindingKind::DuplicateKey,
        FindingKind::NullKey,
    ];

    /// The name used in outputs (`MISSING_IN_TARGET`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            FindingKind::MissingInTarget => "MISSING_IN_TARGET",
            FindingKind::ExtraInTarget => "EXTRA_IN_TARGET",
            FindingKind::Mismatch => "MISMATCH",
            FindingKind::DuplicateKey => "DUPLICATE_KEY",
            FindingKind::NullKey => "NULL_KEY",
        }
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One differing column of a mismatched key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnDiff {
    /// The column (target name).
    pub column: String,
    /// The source value as text (`None` = NULL; masked columns show a hash prefix).
    pub source: Option<String>,
    /// The target value as text.
    pub target: Option<String>,
}

/// The order findings are listed in: key by key, NULL first, then numbers in
/// numeric order (`9` before `10`), then other text in byte order. A total order, so
/// a sort by it is stable whatever the values.
pub(crate) fn compare_keys(a: &[Option<String>], b: &[Option<String>]) -> std::cmp::Ordering {
    fn number(s: &str) -> Option<f64> {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        if !digits.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        s.parse::<f64>().ok()
    }
    fn rank(v: &Option<String>) -> (u8, Option<f64>) {
        match v {
            None => (0, None),
            Some(s) => match number(s) {
                Some(n) => (1, Some(n)),
                None => (2, None),
            },
        }
    }
    for (x, y) in a.iter().zip(b) {
        let ((rx, nx), (ry, ny)) = (rank(x), rank(y));
        let order = rx
            .cmp(&ry)
            .then_with(|| match (nx, ny) {
                (Some(nx), Some(ny)) => nx.total_cmp(&ny),
                _ => std::cmp::Ordering::Equal,
            })
            .then_with(|| x.cmp(y));
        if order.is_ne() {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind.
    pub kind: FindingKind,
    /// Key values as text, in key-column order (`None` = NULL).
    pub key: Vec<Option<String>>,
    /// The side, for DUPLICATE_KEY and NULL_KEY.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// Occurrences on that side (DUPLICATE_KEY).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Differing columns (MISMATCH).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diffs: Vec<ColumnDiff>,
    /// Whether the rows of a duplicated key are exact copies of each other
    /// (DUPLICATE_KEY): a double load, where other values mean the key is not unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identical: Option<bool>,
}

/// Counts of one item, a pair, or a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Rows read from the source.
    pub source_rows: u64,
    /// Rows read from the target.
    pub target_rows: u64,
    /// Keys on both sides once, with equal values.
    pub matched: u64,
    /// Keys missing in the target.
    pub missing_in_target: u64,
    /// Keys only in the target.
    pub extra_in_target: u64,
    /// Keys whose values differ.
    pub mismatch: u64,
    /// Keys duplicated in the source.
    pub duplicate_key_source: u64,
    /// Keys duplicated in the target.
    pub duplicate_key_target: u64,
    /// Source rows with a NULL key column.
    pub null_key_source: u64,
    /// Target rows with a NULL key column.
    pub null_key_target: u64,
}

impl Totals {
    /// Add another set of counts.
    pub fn add(&mut self, o: &Totals) {
        self.source_rows += o.source_rows;
        self.target_rows += o.target_rows;
        self.matched += o.matched;
        self.missing_in_target += o.missing_in_target;
        self.extra_in_target += o.extra_in_target;
        self.mismatch += o.mismatch;
        self.duplicate_key_source += o.duplicate_key_source;
        self.duplicate_key_target += o.duplicate_key_target;
        self.null_key_source += o.null_key_source;
        self.null_key_target += o.null_key_target;
    }

    /// Findings of a kind (both sides added for duplicates and NULL keys).
    pub fn of(&self, kind: FindingKind) -> u64 {
        match kind {
            FindingKind::MissingInTarget => self.missing_in_target,
            FindingKind::ExtraInTarget => self.extra_in_target,
            FindingKind::Mismatch => self.mismatch,
            FindingKind::DuplicateKey => self.duplicate_key_source + self.duplicate_key_target,
            FindingKind::NullKey => self.null_key_source + self.null_key_target,
        }
    }

    /// All findings.
    pub fn findings(&self) -> u64 {
        FindingKind::ALL.iter().map(|k| self.of(*k)).sum()
    }
}

/// Why an item could not be reconciled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemError {
    /// Stable error name (`CorruptParquet`, ...).
    pub error_type: String,
    /// The message, naming the file or column.
    pub message: String,
}

/// The result of one work item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialDiff {
    /// Schema version of this document.
    pub schema_version: u32,
    /// The pair.
    pub pair: String,
    /// The item id.
    pub item_id: String,
    /// The partition label.
    pub partition: String,
    /// Which sides have the partition.
    pub presence: Presence,
    /// Set when the item could not be reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ItemError>,
    /// Counts.
    pub totals: Totals,
    /// Mismatch count per column.
    #[serde(default)]
    pub column_mismatches: BTreeMap<String, u64>,
    /// Every finding, sorted by kind and key.
    #[serde(default)]
    pub findings: Vec<Finding>,
}

impl PartialDiff {
    /// This partial with only the first `limit` findings of each kind: all that
    /// [`crate::report::build_report`] can sample from it (it takes at most `limit`
    /// findings of a kind from any one partition), so a merge can keep a view of every
    /// partition without holding every finding. Counts are untouched.
    pub fn into_sample_view(mut self, limit: usize) -> PartialDiff {
        let mut kept: BTreeMap<FindingKind, usize> = BTreeMap::new();
        self.findings.retain(|f| {
            let n = kept.entry(f.kind).or_default();
            *n += 1;
            *n <= limit
        });
        self.findings.shrink_to_fit();
        self
    }

    /// The partial of an item before anything is counted.
    pub fn empty(item: impl Into<ItemRef>) -> PartialDiff {
        let item: ItemRef = item.into();
        PartialDiff {
            schema_version: PARTIAL_SCHEMA_VERSION,
            pair: item.pair,
            item_id: item.item_id,
            partition: item.partition,
            presence: item.presence,
            error: None,
            totals: Totals::default(),
            column_mismatches: BTreeMap::new(),
            findings: Vec::new(),
        }
    }

    /// The partial of an item that could not be reconciled: reported, never dropped.
    pub fn failed(item: impl Into<ItemRef>, error_type: &str, message: String) -> PartialDiff {
        PartialDiff {
            error: Some(ItemError {
                error_type: error_type.to_string(),
                message,
            }),
            ..PartialDiff::empty(item)
        }
    }

    /// Parse a partial, refusing unknown schema versions.
    pub fn from_json(bytes: &[u8], origin: &str) -> crate::error::Result<PartialDiff> {
        let p: PartialDiff = serde_json::from_slice(bytes).map_err(|e| {
            crate::error::ReconError::InvalidInput(format!("{origin}: not a partial diff: {e}"))
        })?;
        if p.schema_version != PARTIAL_SCHEMA_VERSION {
            return Err(crate::error::ReconError::InvalidInput(format!(
                "{origin}: partial diff schema_version {} is not supported (expected {PARTIAL_SCHEMA_VERSION}); re-run with a matching glue-recon",
                p.schema_version
            )));
        }
        Ok(p)
    }
}

/// What a partition's line says of it, beyond its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionStatus {
    /// Reconciled, rows on both sides (or on neither).
    Ok,
    /// Could not be reconciled: see its error.
    Failed,
    /// Rows in the source and none in the target (absent, or its files empty).
    MissingInTarget,
    /// Rows in the target and none in the source.
    ExtraInTarget,
}

impl PartitionStatus {
    /// The status of a partial's partition.
    pub fn of(p: &PartialDiff) -> PartitionStatus {
        let t = &p.totals;
        if p.error.is_some() {
            PartitionStatus::Failed
        } else if t.target_rows == 0 && (t.source_rows > 0 || p.presence == Presence::SourceOnly) {
            PartitionStatus::MissingInTarget
        } else if t.source_rows == 0 && (t.target_rows > 0 || p.presence == Presence::TargetOnly) {
            PartitionStatus::ExtraInTarget
        } else {
            PartitionStatus::Ok
        }
    }

    /// As written in report.json and the ledger.
    pub fn as_str(&self) -> &'static str {
        match self {
            PartitionStatus::Ok => "ok",
            PartitionStatus::Failed => "failed",
            PartitionStatus::MissingInTarget => "missing_in_target",
            PartitionStatus::ExtraInTarget => "extra_in_target",
        }
    }
}
