//! Ranged reads on S3 (moto): a row group's column chunks, adjacent in the file, are
//! fetched with one GET, not one per column.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use futures::TryStreamExt;
use glue_recon::aws::s3::S3Store;
use glue_recon::storage::{FileRef, ObjectStore};
use parquet::arrow::{ArrowWriter, ParquetRecordBatchStreamBuilder};
use parquet::file::properties::WriterProperties;

use super::moto;

const COLUMNS: usize = 24;
const ROW_GROUPS: usize = 3;
const ROWS_PER_GROUP: usize = 1_000;

/// A Parquet file of `COLUMNS` Int64 columns in `ROW_GROUPS` row groups; column `c`
/// of row `r` holds `r * COLUMNS + c`.
fn wide_file() -> Vec<u8> {
    let schema = Arc::new(Schema::new(
        (0..COLUMNS)
            .map(|c| Field::new(format!("c{c}"), DataType::Int64, false))
            .collect::<Vec<_>>(),
    ));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROWS_PER_GROUP))
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
    let rows = (ROW_GROUPS * ROWS_PER_GROUP) as i64;
    let columns: Vec<ArrayRef> = (0..COLUMNS as i64)
        .map(|c| {
            Arc::new(Int64Array::from_iter_values(
                (0..rows).map(|r| r * COLUMNS as i64 + c),
            )) as ArrayRef
        })
        .collect();
    w.write(&RecordBatch::try_new(schema, columns).unwrap())
        .unwrap();
    w.close().unwrap();
    buf
}

#[tokio::test]
async fn a_row_groups_column_chunks_are_read_with_one_get() {
    let conf = moto::sdk_config().await;
    let s3 = moto::s3(&conf);
    let bucket = moto::unique("ranges");
    moto::bucket(&s3, &bucket).await;
    let body = wide_file();
    let size = body.len() as u64;
    moto::put(&s3, &bucket, "wide/part-0.parquet", body).await;

    let store = S3Store::from_conf(&conf);
    let file = FileRef {
        uri: format!("s3://{bucket}/wide/part-0.parquet"),
        size,
    };
    let reader = store.open(&file).await.unwrap();
    let before = store.get_requests();
    let stream = ParquetRecordBatchStreamBuilder::new(reader)
        .await
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = stream.try_collect().await.unwrap();
    let gets = store.get_requests() - before;

    // Every value came back where it belongs.
    let mut row = 0i64;
    for batch in &batches {
        assert_eq!(batch.num_columns(), COLUMNS);
        for r in 0..batch.num_rows() {
            for c in 0..COLUMNS {
                let col = batch
                    .column(c)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap();
                assert_eq!(col.value(r), row * COLUMNS as i64 + c as i64);
            }
            row += 1;
        }
    }
    assert_eq!(row, (ROW_GROUPS * ROWS_PER_GROUP) as i64);
    // The footer takes one or two GETs; each row group one more. Without coalescing
    // it would be one per column chunk: ROW_GROUPS * COLUMNS = 72.
    assert!(
        gets <= 2 + ROW_GROUPS as u64,
        "{gets} GETs for {ROW_GROUPS} row groups of {COLUMNS} columns"
    );
}
