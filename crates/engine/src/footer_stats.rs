//! What a Parquet footer says of a table's key columns before any page is read: the
//! NULLs in them and, for a one-column signed integer key, its range
//! ([`KeyFooter`]), from the column chunks' statistics.

use parquet::basic::{ConvertedType, LogicalType};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;

use crate::model::KeyFooter;

/// The key statistics of one file; `columns` are the side's names of the key
/// columns (top-level, matched case-insensitively).
pub(crate) fn key_footer(meta: &ParquetMetaData, columns: &[String]) -> KeyFooter {
    let mut nulls = Some(0u64);
    let mut range: Option<Option<(i64, i64)>> = (columns.len() == 1).then_some(None);
    let schema = meta.file_metadata().schema_descr();
    let indexes: Vec<Option<usize>> = columns
        .iter()
        .map(|c| {
            (0..schema.num_columns()).find(|&i| {
                let path = schema.column(i).path().parts().to_vec();
                path.len() == 1 && path[0].eq_ignore_ascii_case(c)
            })
        })
        .collect();
    if indexes.iter().any(Option::is_none) {
        return KeyFooter::default();
    }
    for rg in meta.row_groups().iter().filter(|rg| rg.num_rows() > 0) {
        for i in indexes.iter().flatten() {
            let chunk = rg.column(*i);
            let stats = chunk.statistics();
            nulls = nulls
                .zip(stats.and_then(Statistics::null_count_opt))
                .map(|(a, b)| a + b);
            // UINT_64 statistics are unsigned: their i64 order is not the values'.
            let unsigned = matches!(
                chunk.column_descr().logical_type_ref(),
                Some(LogicalType::Integer(int)) if !int.is_signed
            ) || matches!(
                chunk.column_descr().converted_type(),
                ConvertedType::UINT_8
                    | ConvertedType::UINT_16
                    | ConvertedType::UINT_32
                    | ConvertedType::UINT_64
            );
            // Outer `None`: unknown for the file; inner `None`: nothing seen yet.
            if let Some(seen) = range {
                let here = match stats {
                    _ if unsigned => None,
                    Some(Statistics::Int32(s)) if s.min_is_exact() && s.max_is_exact() => s
                        .min_opt()
                        .zip(s.max_opt())
                        .map(|(a, b)| (i64::from(*a), i64::from(*b))),
                    Some(Statistics::Int64(s)) if s.min_is_exact() && s.max_is_exact() => {
                        s.min_opt().zip(s.max_opt()).map(|(a, b)| (*a, *b))
                    }
                    _ => None,
                };
                range = here.map(|(b0, b1)| {
                    Some(seen.map_or((b0, b1), |(a0, a1)| (a0.min(b0), a1.max(b1))))
                });
            }
        }
    }
    KeyFooter {
        nulls,
        range: range.flatten(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int32Array, RecordBatch, UInt64Array};
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;

    fn footer(column: ArrayRef, key: &str) -> KeyFooter {
        let batch = RecordBatch::try_from_iter([("id", column)]).unwrap();
        let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        let bytes = Bytes::from(w.into_inner().unwrap());
        let reader = SerializedFileReader::new(bytes).unwrap();
        key_footer(reader.metadata(), &[key.to_string()])
    }

    #[test]
    fn signed_keys_give_nulls_and_range_unsigned_ones_nulls_only() {
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(-4), None, Some(9)]));
        assert_eq!(
            footer(ints.clone(), "ID"),
            KeyFooter {
                nulls: Some(1),
                range: Some((-4, 9))
            }
        );
        let unsigned: ArrayRef = Arc::new(UInt64Array::from(vec![1, u64::MAX]));
        assert_eq!(
            footer(unsigned, "id"),
            KeyFooter {
                nulls: Some(0),
                range: None
            }
        );
        assert_eq!(footer(ints, "other"), KeyFooter::default());
    }
}
