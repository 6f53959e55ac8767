//! `diffs.parquet`: every finding of a pair as rows (one per differing column of a
//! MISMATCH), for Athena, notebooks and the dashboard's drill-down.
//!
//! Columns: `diff_type`, `partition`, `side`, `key_<name>` (one per key column),
//! `column`, `source_value`, `target_value`, `count`; all text but `count` (int64).

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Builder, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::error::{ReconError, Result};
use crate::partial::PartialDiff;
use crate::plan::Side;

/// Rows per record batch written.
const CHUNK: usize = 64 * 1024;

/// The Arrow schema of diffs.parquet for the given key columns.
pub fn schema(key: &[String]) -> Schema {
    let mut fields = vec![
        Field::new("diff_type", DataType::Utf8, false),
        Field::new("partition", DataType::Utf8, false),
        Field::new("side", DataType::Utf8, true),
    ];
    fields.extend(
        key.iter()
            .map(|k| Field::new(format!("key_{k}"), DataType::Utf8, true)),
    );
    fields.extend([
        Field::new("column", DataType::Utf8, true),
        Field::new("source_value", DataType::Utf8, true),
        Field::new("target_value", DataType::Utf8, true),
        Field::new("count", DataType::Int64, true),
    ]);
    Schema::new(fields)
}

struct Builders {
    diff_type: StringBuilder,
    partition: StringBuilder,
    side: StringBuilder,
    keys: Vec<StringBuilder>,
    column: StringBuilder,
    source: StringBuilder,
    target: StringBuilder,
    count: Int64Builder,
    len: usize,
}

impl Builders {
    fn new(keys: usize) -> Self {
        Builders {
            diff_type: StringBuilder::new(),
            partition: StringBuilder::new(),
            side: StringBuilder::new(),
            keys: (0..keys).map(|_| StringBuilder::new()).collect(),
            column: StringBuilder::new(),
            source: StringBuilder::new(),
            target: StringBuilder::new(),
            count: Int64Builder::new(),
            len: 0,
        }
    }

    fn finish(&mut self, schema: &Arc<Schema>) -> Result<RecordBatch> {
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(self.diff_type.finish()),
            Arc::new(self.partition.finish()),
            Arc::new(self.side.finish()),
        ];
        cols.extend(
            self.keys
                .iter_mut()
                .map(|k| Arc::new(k.finish()) as ArrayRef),
        );
        cols.extend([
            Arc::new(self.column.finish()) as ArrayRef,
            Arc::new(self.source.finish()),
            Arc::new(self.target.finish()),
            Arc::new(self.count.finish()),
        ]);
        self.len = 0;
        RecordBatch::try_new(schema.clone(), cols).map_err(|e| ReconError::Write {
            target: "diffs.parquet".into(),
            reason: e.to_string(),
        })
    }
}

/// Encode the findings of `partials` as a Parquet file, partition by partition in
/// label order (whatever order the partials finished in), so the same run gives the
/// same file.
pub fn write_diff_rows(key: &[String], partials: &[PartialDiff]) -> Result<Bytes> {
    let mut sorted: Vec<&PartialDiff> = partials.iter().collect();
    sorted.sort_by(|a, b| a.partition.cmp(&b.partition));
    let mut w = DiffRowsWriter::new(key)?;
    for p in sorted {
        w.add(p)?;
    }
    w.finish()
}

/// diffs.parquet written one partial at a time, so a caller that reads partials one
/// by one (the merge) holds only the encoded file, never every finding at once.
pub struct DiffRowsWriter {
    schema: Arc<Schema>,
    writer: ArrowWriter<Vec<u8>>,
    rows: Builders,
}

fn write_error(e: parquet::errors::ParquetError) -> ReconError {
    ReconError::Write {
        target: "diffs.parquet".into(),
        reason: e.to_string(),
    }
}

impl DiffRowsWriter {
    /// A writer for a pair keyed by `key`.
    pub fn new(key: &[String]) -> Result<Self> {
        let schema = Arc::new(schema(key));
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let writer =
            ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).map_err(write_error)?;
        Ok(DiffRowsWriter {
            schema,
            writer,
            rows: Builders::new(key.len()),
        })
    }

    /// Append the findings of one partial.
    pub fn add(&mut self, p: &PartialDiff) -> Result<()> {
        let b = &mut self.rows;
        for f in &p.findings {
            let rows: Vec<(Option<&str>, Option<&str>, Option<&str>)> = if f.diffs.is_empty() {
                vec![(None, None, None)]
            } else {
                f.diffs
                    .iter()
                    .map(|d| {
                        (
                            Some(d.column.as_str()),
                            d.source.as_deref(),
                            d.target.as_deref(),
                        )
                    })
                    .collect()
            };
            for (column, source, target) in rows {
                b.diff_type.append_value(f.kind.as_str());
                b.partition.append_value(&p.partition);
                b.side.append_option(f.side.map(Side::as_str));
                for (i, kb) in b.keys.iter_mut().enumerate() {
                    kb.append_option(f.key.get(i).cloned().flatten());
                }
                b.column.append_option(column);
                b.source.append_option(source);
                b.target.append_option(target);
                b.count.append_option(f.count.map(|c| c as i64));
                b.len += 1;
                if b.len == CHUNK {
                    self.writer
                        .write(&b.finish(&self.schema)?)
                        .map_err(write_error)?;
                }
            }
        }
        Ok(())
    }

    /// The encoded file (one empty row group when there were no findings).
    pub fn finish(mut self) -> Result<Bytes> {
        if self.rows.len > 0 || self.writer.flushed_row_groups().is_empty() {
            let batch = self.rows.finish(&self.schema)?;
            self.writer.write(&batch).map_err(write_error)?;
        }
        Ok(Bytes::from(self.writer.into_inner().map_err(write_error)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partial::{Finding, FindingKind};
    use crate::table::{ItemRef, Presence};
    use arrow::array::{Array, AsArray};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn partial(partition: &str) -> PartialDiff {
        let mut p = PartialDiff::empty(ItemRef {
            pair: "p".into(),
            item_id: partition.into(),
            partition: partition.into(),
            presence: Presence::Both,
        });
        p.findings.push(Finding {
            kind: FindingKind::MissingInTarget,
            key: vec![Some("1".into())],
            side: None,
            count: None,
            diffs: Vec::new(),
            identical: None,
        });
        p
    }

    /// Partials that finished in any order give the rows in partition order.
    #[test]
    fn rows_come_in_partition_order() {
        let key = vec!["id".to_string()];
        let bytes =
            write_diff_rows(&key, &[partial("dt=3"), partial("dt=1"), partial("dt=2")]).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap();
        let mut partitions = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            let col = batch
                .column_by_name("partition")
                .unwrap()
                .as_string::<i32>();
            partitions.extend((0..col.len()).map(|i| col.value(i).to_string()));
        }
        assert_eq!(partitions, ["dt=1", "dt=2", "dt=3"]);
    }
}
