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

/// Encode the findings of `partials` as a Parquet file.
pub fn write_diff_rows(key: &[String], partials: &[PartialDiff]) -> Result<Bytes> {
    let schema = Arc::new(schema(key));
    let err = |e: parquet::errors::ParquetError| ReconError::Write {
        target: "diffs.parquet".into(),
        reason: e.to_string(),
    };
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).map_err(err)?;
    let mut b = Builders::new(key.len());
    for p in partials {
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
                    writer.write(&b.finish(&schema)?).map_err(err)?;
                }
            }
        }
    }
    if b.len > 0 || writer.flushed_row_groups().is_empty() {
        writer.write(&b.finish(&schema)?).map_err(err)?;
    }
    writer.close().map_err(err)?;
    Ok(Bytes::from(buf))
}
