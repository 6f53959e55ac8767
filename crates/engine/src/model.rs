//! The values every layer passes around: a listed file ([`FileRef`]), a side of a pair
//! ([`Side`]), a table's file with its partition values ([`TableFile`]), and one unit
//! of work ([`WorkItem`], named without its files by [`ItemRef`]). This module imports
//! nothing of the crate, so any module can use it.

use serde::{Deserialize, Serialize};

/// One object (file) as listed: its URI or path and its size in bytes. The size
/// from the listing lets the Parquet footer be read with one ranged request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FileRef {
    /// A local path or an `s3://bucket/key` URI.
    pub uri: String,
    /// Size in bytes.
    pub size: u64,
}

/// Which side of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The source table.
    Source,
    /// The target table.
    Target,
}

impl Side {
    /// The side's name in outputs and messages (`source`, `target`), as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Target => "target",
        }
    }

    /// 0 for the source, 1 for the target: the index of a side in per-side arrays.
    pub fn index(self) -> usize {
        match self {
            Side::Source => 0,
            Side::Target => 1,
        }
    }
}

/// Partition values of one file: `(column, value)` in folder order, column names
/// lower-case, NULL for Hive's default partition.
pub type PartitionValues = Vec<(String, Option<String>)>;

/// One Parquet file of a table with its partition values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFile {
    /// The file.
    #[serde(flatten)]
    pub file: FileRef,
    /// Its partition values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition: PartitionValues,
}

/// Which sides a partition is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    /// On both sides.
    Both,
    /// Only in the source: every key is missing in the target.
    SourceOnly,
    /// Only in the target: every key is extra.
    TargetOnly,
}

impl std::fmt::Display for Presence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Presence::Both => "both",
            Presence::SourceOnly => "source only",
            Presence::TargetOnly => "target only",
        })
    }
}

/// What names a work item without its files: the manifest's element, and all a
/// merge needs to report an item whose partial is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemRef {
    /// Stable id of the item within its pair.
    pub item_id: String,
    /// The pair name.
    pub pair: String,
    /// Human label of the partition.
    pub partition: String,
    /// Which sides have it.
    pub presence: Presence,
}

impl From<&WorkItem> for ItemRef {
    fn from(item: &WorkItem) -> Self {
        ItemRef {
            item_id: item.item_id.clone(),
            pair: item.pair.clone(),
            partition: item.partition.clone(),
            presence: item.presence,
        }
    }
}

/// One unit of work: the files of one partition on each side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkItem {
    /// Stable id of the item within its pair (a hash of the partition label).
    pub item_id: String,
    /// The pair name.
    pub pair: String,
    /// Human label of the partition: `dt=2024-01-01/region=eu`, or `*` for all.
    pub partition: String,
    /// Which sides have it.
    pub presence: Presence,
    /// Source files.
    pub source: Vec<TableFile>,
    /// Target files.
    pub target: Vec<TableFile>,
}

/// What the footers say of a side's key columns: their NULLs in all and, for a
/// one-column signed integer key, its smallest and largest value. `None` where a
/// footer lacks the statistic (or the key is a partition column).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyFooter {
    /// NULL key values.
    pub nulls: Option<u64>,
    /// The key's range.
    pub range: Option<(i64, i64)>,
}

impl KeyFooter {
    /// The statistics of two sets of rows together (`None` unless both have it).
    pub fn and(self, other: KeyFooter) -> KeyFooter {
        KeyFooter {
            nulls: self.nulls.zip(other.nulls).map(|(a, b)| a + b),
            range: self
                .range
                .zip(other.range)
                .map(|((a0, a1), (b0, b1))| (a0.min(b0), a1.max(b1))),
        }
    }
}

/// What the files' footers say of an item before a page is read: the rows of each
/// side (a file whose footer could not be read counts 0; its item fails later) and
/// its key statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FooterCounts {
    /// The partition label.
    pub partition: String,
    /// Source rows.
    pub source_rows: u64,
    /// Target rows.
    pub target_rows: u64,
    /// The source's key statistics (`None`: a side without rows).
    pub source_key: Option<KeyFooter>,
    /// The target's key statistics.
    pub target_key: Option<KeyFooter>,
}

impl FooterCounts {
    /// What differs already, where both sides have the statistic: row counts, NULL
    /// keys, key ranges. Each one means the partition has findings.
    pub fn differences(&self) -> Vec<String> {
        let n = crate::numbers::thousands;
        let mut out = Vec::new();
        if self.source_rows != self.target_rows {
            out.push(format!(
                "{} source rows, {} target rows",
                n(self.source_rows),
                n(self.target_rows)
            ));
        }
        let (s, t) = (
            self.source_key.unwrap_or_default(),
            self.target_key.unwrap_or_default(),
        );
        if let (Some(a), Some(b)) = (s.nulls, t.nulls)
            && a != b
        {
            out.push(format!("NULL keys {} vs {}", n(a), n(b)));
        }
        if let (Some((a0, a1)), Some((b0, b1))) = (s.range, t.range)
            && (a0, a1) != (b0, b1)
        {
            out.push(format!("key range {a0}..{a1} vs {b0}..{b1}"));
        }
        out
    }

    /// Whether anything differs already.
    pub fn differ(&self) -> bool {
        !self.differences().is_empty()
    }

    /// The partition's label, `the table` for an unpartitioned one.
    pub fn label(&self) -> &str {
        if self.partition.is_empty() {
            "the table"
        } else {
            &self.partition
        }
    }

    /// `dt=1: the footers already differ: 10 source rows, 0 target rows`.
    pub fn describe(&self) -> String {
        format!(
            "{}: the footers already differ: {}",
            self.label(),
            self.differences().join("; ")
        )
    }
}
