//! Lookup of a Glue table of 10,000 partitions, on moto: the whole table (every
//! partition planned, one footer GET per file; its time is printed, not asserted), and
//! an on-demand lookup of 3 partitions that asks Glue for those partitions only and
//! reads only their footers.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::Int64Array;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use aws_sdk_glue::types::{Column, PartitionInput, StorageDescriptor, TableInput};
use futures::StreamExt;
use glue_recon::aws::s3::S3Store;
use glue_recon::config::Config;
use glue_recon::pipeline::{LookupOutput, LookupRequest, Pipeline, parse_item};
use glue_recon::storage::Storage;
use parquet::arrow::ArrowWriter;
use serde_json::Value;

use super::moto;

/// Partitions of the table: `day` (an int key) by `region` (a string key).
const DAYS: usize = 100;
const REGIONS: usize = 100;
/// Requests in flight while the table is set up.
const IN_FLIGHT: usize = 16;

/// The region values: one holds a quote, which the Glue expression must escape.
fn region(r: usize) -> String {
    if r == 0 {
        "o'neil".into()
    } else {
        format!("r{r:02}")
    }
}

/// One Parquet file of one row `id`.
fn parquet(id: i64) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let batch =
        RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![id]))]).unwrap();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

/// A Glue table `name` partitioned by `day int, region string`, at `location`.
async fn table(glue: &aws_sdk_glue::Client, db: &str, name: &str, location: &str) {
    let sd = StorageDescriptor::builder()
        .location(location)
        .columns(
            Column::builder()
                .name("id")
                .r#type("bigint")
                .build()
                .unwrap(),
        )
        .build();
    let input = TableInput::builder()
        .name(name)
        .table_type("EXTERNAL_TABLE")
        .storage_descriptor(sd)
        .partition_keys(Column::builder().name("day").r#type("int").build().unwrap())
        .partition_keys(
            Column::builder()
                .name("region")
                .r#type("string")
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    glue.create_table()
        .database_name(db)
        .table_input(input)
        .send()
        .await
        .unwrap();
}

/// Every partition of table `name`, registered 100 per BatchCreatePartition call.
async fn partitions(glue: &aws_sdk_glue::Client, db: &str, name: &str, bucket: &str) {
    let all: Vec<(usize, usize)> = (0..DAYS)
        .flat_map(|d| (0..REGIONS).map(move |r| (d, r)))
        .collect();
    futures::stream::iter(all.chunks(100))
        .for_each_concurrent(IN_FLIGHT, |chunk| async move {
            let mut call = glue
                .batch_create_partition()
                .database_name(db)
                .table_name(name);
            for &(d, r) in chunk {
                let location = format!("s3://{bucket}/data/day={d}/region={}/", region(r));
                call = call.partition_input_list(
                    PartitionInput::builder()
                        .values(d.to_string())
                        .values(region(r))
                        .storage_descriptor(StorageDescriptor::builder().location(location).build())
                        .build(),
                );
            }
            let out = call.send().await.unwrap();
            assert!(out.errors().is_empty(), "{:?}", out.errors());
        })
        .await;
}

/// The partitions a lookup's manifest names.
async fn manifest(out: &LookupOutput) -> BTreeSet<String> {
    let s3 = moto::s3(&moto::sdk_config().await);
    let items: Vec<Value> =
        serde_json::from_slice(&moto::get(&s3, &out.bucket, &out.manifest_key).await).unwrap();
    assert_eq!(items.len(), out.item_count);
    items
        .into_iter()
        .map(|i| parse_item(i).unwrap().item.partition)
        .collect()
}

/// Peak resident memory of this process (VmHWM), when /proc tells.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(str::to_string)
        })
        .unwrap_or_else(|| "VmHWM unknown".into())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lookup_of_ten_thousand_glue_partitions_pushes_requested_ones_to_glue() {
    let conf = moto::sdk_config().await;
    let s3 = moto::s3(&conf);
    let glue = aws_sdk_glue::Client::new(&conf);
    let bucket = moto::unique("gr-lookup");
    let db = moto::unique("lookupdb").replace('-', "_");
    moto::bucket(&s3, &bucket).await;
    moto::database(&glue, &db).await;
    let started = Instant::now();
    let files: Vec<(String, Vec<u8>)> = (0..DAYS)
        .flat_map(|d| (0..REGIONS).map(move |r| (d, r)))
        .map(|(d, r)| {
            (
                format!("data/day={d}/region={}/part-0.parquet", region(r)),
                parquet((d * REGIONS + r) as i64),
            )
        })
        .collect();
    futures::stream::iter(files)
        .for_each_concurrent(IN_FLIGHT, |(key, body)| {
            let s3 = s3.clone();
            let bucket = &bucket;
            async move { moto::put(&s3, bucket, &key, body).await }
        })
        .await;
    // Source and target are two catalog tables over the same files.
    for name in ["src", "tgt"] {
        table(&glue, &db, name, &format!("s3://{bucket}/data/")).await;
        partitions(&glue, &db, name, &bucket).await;
    }
    eprintln!(
        "setup of {} partitions: {:?}",
        DAYS * REGIONS,
        started.elapsed()
    );

    let store = S3Store::from_conf(&conf);
    let storage = Storage::with_s3(Arc::new(store.clone()));
    let catalog = glue_recon::aws::glue::GlueCatalog::new(glue.clone(), storage.clone());
    let p = Pipeline::new(storage, Some(Arc::new(catalog)), &bucket);
    let config = Config::parse(
        &format!(
            "[[pair]]\nname = \"big\"\nsource = \"glue://{db}/src\"\ntarget = \"glue://{db}/tgt\"\nkey = [\"id\"]\n"
        ),
        "test",
    )
    .unwrap();

    // The whole table: every partition.
    let before = store.get_requests();
    let started = Instant::now();
    let request = LookupRequest::parse(serde_json::json!({})).unwrap();
    let out = p
        .lookup(&config, &request)
        .await
        .expect("whole-table lookup");
    let whole = started.elapsed();
    let whole_gets = store.get_requests() - before;
    let expected: BTreeSet<String> = (0..DAYS)
        .flat_map(|d| (0..REGIONS).map(move |r| format!("day={d}/region={}", region(r))))
        .collect();
    assert_eq!(manifest(&out).await, expected);
    eprintln!(
        "whole-table lookup of {} partitions: {whole:?}, {whole_gets} GETs, {}",
        DAYS * REGIONS,
        peak_rss()
    );

    // Three partitions on demand (one with a quoted string value): only they are
    // fetched from Glue and only their footers read.
    let wanted = [
        "day=7/region=r05",
        "day=42/region=o'neil",
        "day=99/region=r99",
    ];
    let before = store.get_requests();
    let started = Instant::now();
    let request = LookupRequest::parse(serde_json::json!({
        "pairs": ["big"],
        "partitions": {"big": wanted},
    }))
    .unwrap();
    let out = p.lookup(&config, &request).await.expect("requested lookup");
    let requested = started.elapsed();
    let gets = store.get_requests() - before;
    assert_eq!(
        manifest(&out).await,
        wanted
            .iter()
            .map(|w| w.to_string())
            .collect::<BTreeSet<_>>()
    );
    // Each side's file of each partition: a footer read is at most 2 GETs.
    let per_file = whole_gets as f64 / (2 * DAYS * REGIONS) as f64;
    assert!(gets <= 12, "a lookup of 3 partitions sent {gets} GETs");
    eprintln!(
        "lookup of 3 requested partitions: {requested:?}, {gets} GETs ({per_file:.1} per file in the whole-table lookup), {}",
        peak_rss()
    );

    // A requested partition the table lacks is named in the error.
    let request = LookupRequest::parse(serde_json::json!({
        "pairs": ["big"],
        "partitions": {"big": ["day=7/region=r05", "day=100/region=r05"]},
    }))
    .unwrap();
    let err = p.lookup(&config, &request).await.unwrap_err().to_string();
    assert!(err.contains("no partition `day=100/region=r05`"), "{err}");
}
