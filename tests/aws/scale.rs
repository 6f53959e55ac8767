//! The cloud path at scale, on moto: a partition of thousands of files starts a
//! hash step through a manifest item of a few hundred bytes (its files are in the
//! item object), and a merge over a thousand partials reports every one.

use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use futures::{StreamExt, TryStreamExt};
use glue_recon::config::Config;
use glue_recon::pipeline::{
    HashOutput, LookupOutput, LookupRequest, MAX_REQUEST_BYTES, Pipeline, parse_item,
};
use glue_recon::report::Report;
use glue_recon::table::WorkItem;
use parquet::arrow::ArrowWriter;
use serde_json::Value;

use super::moto;
use super::pipeline::pipeline;

/// Objects put or steps run at once by these tests (the Map's concurrency).
const IN_FLIGHT: usize = 16;

/// One Parquet file of rows `(id, v)`.
fn parquet(rows: &[(i64, &str)]) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
        ],
    )
    .unwrap();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

/// Put `objects` (key, body) into `bucket`, several at once.
async fn put_all(bucket: &str, objects: Vec<(String, Vec<u8>)>) {
    let s3 = moto::s3(&moto::sdk_config().await);
    futures::stream::iter(objects)
        .for_each_concurrent(IN_FLIGHT, |(key, body)| {
            let s3 = s3.clone();
            async move { moto::put(&s3, bucket, &key, body).await }
        })
        .await;
}

/// A pipeline on a fresh bucket and the config of pair `wide` over its `src/` and
/// `tgt/` prefixes, keyed by `id`.
async fn setup(prefix: &str) -> (String, Pipeline, Config) {
    let s3 = moto::s3(&moto::sdk_config().await);
    let bucket = moto::unique(prefix);
    moto::bucket(&s3, &bucket).await;
    let config = Config::parse(
        &format!(
            "[[pair]]\nname = \"wide\"\nsource = \"s3://{bucket}/src/\"\ntarget = \"s3://{bucket}/tgt/\"\nkey = [\"id\"]\n"
        ),
        "test",
    )
    .unwrap();
    let p = pipeline(&bucket).await;
    (bucket, p, config)
}

/// The manifest of a lookup, as the Distributed Map's ItemReader reads it.
async fn manifest(out: &LookupOutput) -> (usize, Vec<Value>) {
    let s3 = moto::s3(&moto::sdk_config().await);
    let bytes = moto::get(&s3, &out.bucket, &out.manifest_key).await;
    let items: Vec<Value> = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(items.len(), out.item_count);
    (bytes.len(), items)
}

/// Hash every manifest item, several at once.
async fn hash_all(p: &Pipeline, items: Vec<Value>) -> Vec<HashOutput> {
    futures::stream::iter(items)
        .map(|raw| async move {
            let item = parse_item(raw)?;
            p.hash(&item).await
        })
        .buffer_unordered(IN_FLIGHT)
        .try_collect()
        .await
        .expect("hash")
}

async fn report(bucket: &str, run_id: &str) -> Report {
    let s3 = moto::s3(&moto::sdk_config().await);
    let key = format!("reports/wide/{run_id}/report.json");
    serde_json::from_slice(&moto::get(&s3, bucket, &key).await).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_partition_of_two_thousand_files_is_one_small_manifest_item() {
    const FILES: i64 = 2_000;
    const MISSING: i64 = 10;
    let (bucket, p, config) = setup("gr-files").await;
    // One row per source file; the target holds them all in one file but the last
    // MISSING, with row 5's value changed.
    let mut objects: Vec<(String, Vec<u8>)> = (0..FILES)
        .map(|i| {
            (
                format!("src/dt=1/part-{i:05}.parquet"),
                parquet(&[(i, "a")]),
            )
        })
        .collect();
    let target: Vec<(i64, &str)> = (0..FILES - MISSING)
        .map(|i| (i, if i == 5 { "b" } else { "a" }))
        .collect();
    objects.push(("tgt/dt=1/part-0.parquet".into(), parquet(&target)));
    put_all(&bucket, objects).await;

    let started = Instant::now();
    let request = LookupRequest::parse(serde_json::json!({})).unwrap();
    let out = p.lookup(&config, &request).await.expect("lookup");
    let lookup_time = started.elapsed();
    let (manifest_bytes, items) = manifest(&out).await;
    assert_eq!(items.len(), 1);
    let element = serde_json::to_vec(&items[0]).unwrap().len();
    assert!(element < 1024, "a manifest item is {element} bytes");
    assert!(
        manifest_bytes < 1024,
        "the manifest is {manifest_bytes} bytes"
    );
    assert!(element < MAX_REQUEST_BYTES);
    // The files are in the item object.
    let item = parse_item(items[0].clone()).unwrap();
    let s3 = moto::s3(&moto::sdk_config().await);
    let work: WorkItem = serde_json::from_slice(
        &moto::get(
            &s3,
            &bucket,
            &format!("runs/{}/items/{}.json", out.run_id, item.item.item_id),
        )
        .await,
    )
    .unwrap();
    assert_eq!((work.source.len(), work.target.len()), (FILES as usize, 1));

    let started = Instant::now();
    let hashed = hash_all(&p, items).await;
    let hash_time = started.elapsed();
    assert_eq!(hashed[0].error, None);
    let merged = p.merge(&out).await.expect("merge");
    assert!(merged.complete);
    let r = report(&bucket, &out.run_id).await;
    assert_eq!(r.totals.source_rows, FILES as u64);
    assert_eq!(r.totals.target_rows, (FILES - MISSING) as u64);
    assert_eq!(r.totals.missing_in_target, MISSING as u64);
    assert_eq!(r.totals.mismatch, 1);
    assert_eq!(r.totals.matched, (FILES - MISSING - 1) as u64);
    eprintln!(
        "{FILES} files: lookup {lookup_time:?}, hash {hash_time:?}, manifest item {element} bytes"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_merge_over_a_thousand_partials_reports_every_partition() {
    const PARTITIONS: i64 = 1_000;
    const ROWS: i64 = 20;
    let (bucket, p, config) = setup("gr-partials").await;
    // Every partition is on both sides; the target lacks every row but the first
    // of each (a broken load: almost every row MISSING).
    let mut objects = Vec::new();
    for d in 0..PARTITIONS {
        let rows: Vec<(i64, &str)> = (0..ROWS).map(|i| (d * ROWS + i, "a")).collect();
        objects.push((format!("src/dt={d}/part-0.parquet"), parquet(&rows)));
        objects.push((format!("tgt/dt={d}/part-0.parquet"), parquet(&rows[..1])));
    }
    put_all(&bucket, objects).await;
    let request = LookupRequest::parse(serde_json::json!({})).unwrap();
    let out = p.lookup(&config, &request).await.expect("lookup");
    let (manifest_bytes, items) = manifest(&out).await;
    assert_eq!(items.len(), PARTITIONS as usize);
    assert!(
        manifest_bytes < 300 * PARTITIONS as usize,
        "{manifest_bytes}"
    );
    // One partial lost: its partition is reported as not reconciled.
    let lost = parse_item(items[7].clone()).unwrap().item;
    let others = items
        .into_iter()
        .filter(|i| i["item_id"] != lost.item_id.as_str())
        .collect();
    hash_all(&p, others).await;

    let started = Instant::now();
    let merged = p.merge(&out).await.expect("merge");
    let merge_time = started.elapsed();
    assert!(!merged.complete);
    let r = report(&bucket, &out.run_id).await;
    assert_eq!(r.partitions.len(), PARTITIONS as usize);
    let failed: Vec<_> = r.partitions.iter().filter(|p| p.error.is_some()).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].partition, lost.partition);
    assert_eq!(
        failed[0].error.as_ref().unwrap().error_type,
        "MissingPartial"
    );
    let reconciled = (PARTITIONS - 1) as u64;
    assert_eq!(r.totals.source_rows, reconciled * ROWS as u64);
    assert_eq!(r.totals.target_rows, reconciled);
    assert_eq!(r.totals.matched, reconciled);
    assert_eq!(r.totals.missing_in_target, reconciled * (ROWS - 1) as u64);
    // Samples stay bounded by the sample limit whatever the findings.
    for samples in r.samples.values() {
        assert!(samples.len() <= r.sample_limit, "{}", samples.len());
    }
    // diffs.parquet, written partial by partial, holds every finding (one row per
    // MISSING key, one per failed partition), with the keys the sources lost.
    let s3 = moto::s3(&moto::sdk_config().await);
    let diffs = moto::get(
        &s3,
        &bucket,
        &format!("reports/wide/{}/diffs.parquet", out.run_id),
    )
    .await;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
        bytes::Bytes::from(diffs),
        8192,
    )
    .unwrap();
    let mut missing_keys = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let kind = batch
            .column_by_name("diff_type")
            .unwrap()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .clone();
        let key = batch
            .column_by_name("key_id")
            .unwrap()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .clone();
        for i in 0..batch.num_rows() {
            if kind.value(i) == "MISSING_IN_TARGET" {
                missing_keys.push(key.value(i).parse::<i64>().unwrap());
            }
        }
    }
    missing_keys.sort_unstable();
    let lost_partition: i64 = lost.partition.trim_start_matches("dt=").parse().unwrap();
    let want: Vec<i64> = (0..PARTITIONS)
        .filter(|d| *d != lost_partition)
        .flat_map(|d| (1..ROWS).map(move |i| d * ROWS + i))
        .collect();
    assert_eq!(missing_keys, want);
    // The partitions are in partition order, as in a local run.
    let labels: Vec<&str> = r.partitions.iter().map(|p| p.partition.as_str()).collect();
    let mut sorted = labels.clone();
    sorted.sort();
    assert_eq!(labels, sorted);
    eprintln!("{PARTITIONS} partials: merge {merge_time:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_merge_of_two_thousand_failed_partitions_stays_far_under_the_payload_limit() {
    use glue_recon::alert::FAILED_PARTITIONS_SHOWN;
    use glue_recon::bounded::{ALERT_MESSAGE_MAX, STEP_FUNCTIONS_PAYLOAD_MAX};
    const PARTITIONS: usize = 2_000;
    let (bucket, p, config) = setup("gr-failed").await;
    let mut objects = Vec::new();
    for d in 0..PARTITIONS {
        let file = parquet(&[(d as i64, "a")]);
        objects.push((format!("src/dt={d}/part-0.parquet"), file.clone()));
        objects.push((format!("tgt/dt={d}/part-0.parquet"), file));
    }
    put_all(&bucket, objects).await;
    let request = LookupRequest::parse(serde_json::json!({})).unwrap();
    let out = p.lookup(&config, &request).await.expect("lookup");
    assert_eq!(out.item_count, PARTITIONS);
    // No hash step left a partial (as when every partition is AccessDenied): each
    // partition is reported as not reconciled, and the alert still fits.
    let merged = p.merge(&out).await.expect("merge");
    assert!(!merged.complete);
    let r = report(&bucket, &out.run_id).await;
    let failed = r.partitions.iter().filter(|p| p.error.is_some()).count();
    assert_eq!(failed, PARTITIONS, "the report has every failed partition");

    let output = serde_json::to_vec(&merged).unwrap();
    assert!(
        output.len() < STEP_FUNCTIONS_PAYLOAD_MAX / 4,
        "merge output {} bytes",
        output.len()
    );
    let message = &merged.alert.message;
    assert!(message.len() <= ALERT_MESSAGE_MAX, "{}", message.len());
    let named = message.matches("not reconciled (MissingPartial)").count();
    assert_eq!(named, FAILED_PARTITIONS_SHOWN, "{message}");
    let rest = PARTITIONS - FAILED_PARTITIONS_SHOWN;
    assert!(
        message.contains(&format!(
            "... and {rest} more partitions not reconciled (all {PARTITIONS} are in the report)"
        )),
        "{message}"
    );
    assert!(message.contains("dashboard: s3://"), "{message}");
    assert_eq!((merged.reports.len(), merged.report_count), (1, 1));
}
