//! The run ledger: an append-only record of every reconciliation ever run.
//!
//! Each run writes one Parquet object, `<root>/ledger/run_date=YYYY-MM-DD/<run_id>.parquet`,
//! with one row per pair and partition (see [`LedgerRow`]). The object is written
//! whole, once; a retried run writes the same key with the same rows. Athena reads the
//! objects through the `recon_ledger` Glue table of `infra/template.yaml`, whose
//! columns are [`schema`]'s (keep both in step).
//!
//! [`read_ledger`] lists and decodes every object, several at once, and folds each into
//! per-run summaries as it arrives ([`LedgerRead`]): only the partition rows of each
//! pair's latest run stay in memory, so the cost of history grows with its runs, not
//! with runs times partitions. [`refresh_ledger`] brings an earlier read up to date,
//! decoding only the objects it has not seen. An object that cannot be read is
//! reported in [`LedgerRead::problems`] and skipped, so one bad object never hides the
//! rest of the history; an object of an unknown ledger version is such a problem, with
//! a message naming the version.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use futures::StreamExt;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};

use recon_engine::error::{ReconError, Result};
use recon_engine::layout::LEDGER_DIR;
use recon_engine::layout::ReportLocation;
use recon_engine::report::Report;
use recon_engine::storage::Storage;

/// Version of the ledger's Parquet schema, stored in every object's key-value
/// metadata under [`VERSION_KEY`] and in the `ledger_version` column.
pub(crate) const LEDGER_SCHEMA_VERSION: i32 = 1;

/// The Parquet key-value metadata entry holding the ledger schema version.
pub const VERSION_KEY: &str = "glue_recon.ledger_version";

/// One ledger row: one partition of one pair in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerRow {
    /// The run id.
    pub run_id: String,
    /// When the run started, RFC 3339 UTC (a `timestamp` in Parquet).
    pub run_time: String,
    /// What started the run (`on-demand`, `glue:<job>:<run id>`).
    pub trigger: String,
    /// The pair.
    pub pair: String,
    /// The partition label (`dt=2024-01-01`; empty for a pair with no partitions).
    pub partition: String,
    /// The partition's [`recon_engine::report::PartitionStatus`]: `ok`, `failed`, `missing_in_target`, `extra_in_target`.
    pub partition_status: String,
    /// Source rows read.
    pub source_rows: u64,
    /// Target rows read.
    pub target_rows: u64,
    /// Keys missing in the target.
    pub missing_in_target: u64,
    /// Keys only in the target.
    pub extra_in_target: u64,
    /// Keys whose values differ.
    pub mismatch: u64,
    /// Duplicated keys, both sides.
    pub duplicate_key: u64,
    /// Rows with a NULL key, both sides.
    pub null_key: u64,
    /// The pair's verdict in this run (`PASS`, `WARN`, `FAIL`).
    pub status: String,
    /// Whether every partition of the pair was reconciled in this run.
    pub complete: bool,
    /// The drift against the pair's baseline, when detected (human text with the delta).
    pub drift: Option<String>,
    /// URI of the pair's report.json in this run.
    pub report_uri: String,
    /// glue-recon version.
    pub engine_version: String,
    /// Version of the canonical row encoding.
    pub hash_encoding_version: i32,
    /// Version of the ledger schema the row was written with.
    pub ledger_version: i32,
}

impl LedgerRow {
    /// Findings of every kind in this row.
    pub fn findings(&self) -> u64 {
        self.missing_in_target
            + self.extra_in_target
            + self.mismatch
            + self.duplicate_key
            + self.null_key
    }

    /// Whether the partition failed to reconcile.
    pub fn failed(&self) -> bool {
        self.partition_status == recon_engine::report::PartitionStatus::Failed.as_str()
    }

    /// The run date (`YYYY-MM-DD`) of the row.
    pub fn run_date(&self) -> &str {
        self.run_time.get(..10).unwrap_or(&self.run_time)
    }
}

/// The Arrow schema of a ledger object. Column names and types match the
/// `recon_ledger` table of `infra/template.yaml`.
pub fn schema() -> Schema {
    let text = |n: &str| Field::new(n, DataType::Utf8, false);
    let count = |n: &str| Field::new(n, DataType::Int64, false);
    Schema::new(vec![
        text("run_id"),
        Field::new(
            "run_time",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            false,
        ),
        text("trigger"),
        text("pair"),
        text("partition"),
        text("partition_status"),
        count("source_rows"),
        count("target_rows"),
        count("missing_in_target"),
        count("extra_in_target"),
        count("mismatch"),
        count("duplicate_key"),
        count("null_key"),
        text("status"),
        Field::new("complete", DataType::Boolean, false),
        Field::new("drift", DataType::Utf8, true),
        text("report_uri"),
        text("engine_version"),
        Field::new("hash_encoding_version", DataType::Int32, false),
        Field::new("ledger_version", DataType::Int32, false),
    ])
}

/// The ledger rows of one pair's report: one per partition (one with an empty
/// partition label when the pair has none).
pub fn rows_of(report: &Report, location: &ReportLocation) -> Vec<LedgerRow> {
    let row = |partition: &str, status: &str, t: &recon_engine::partial::Totals| LedgerRow {
        run_id: report.run_id.clone(),
        run_time: report.started_at.clone(),
        trigger: report.trigger.clone(),
        pair: report.pair.clone(),
        partition: partition.to_string(),
        partition_status: status.to_string(),
        source_rows: t.source_rows,
        target_rows: t.target_rows,
        missing_in_target: t.missing_in_target,
        extra_in_target: t.extra_in_target,
        mismatch: t.mismatch,
        duplicate_key: t.duplicate_key_source + t.duplicate_key_target,
        null_key: t.null_key_source + t.null_key_target,
        status: report.status.to_string(),
        complete: report.complete,
        drift: report
            .drift
            .as_ref()
            .filter(|d| d.detected)
            .map(|d| d.summary()),
        report_uri: location.json.clone(),
        engine_version: report.engine_version.clone(),
        hash_encoding_version: report.hash_encoding_version as i32,
        ledger_version: LEDGER_SCHEMA_VERSION,
    };
    if report.partitions.is_empty() {
        return vec![row("", "ok", &report.totals)];
    }
    report
        .partitions
        .iter()
        .map(|p| row(&p.partition, &p.status, &p.totals))
        .collect()
}

fn millis(rfc3339: &str) -> Result<i64> {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.timestamp_millis())
        .map_err(|e| ReconError::InvalidInput(format!("run time `{rfc3339}`: {e}")))
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// Encode ledger rows as one Parquet object.
pub fn encode(rows: &[LedgerRow]) -> Result<Bytes> {
    let schema = Arc::new(schema());
    let err = |e: String| ReconError::Write {
        target: "ledger object".into(),
        reason: e,
    };
    let strings = |f: &dyn Fn(&LedgerRow) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let ints = |f: &dyn Fn(&LedgerRow) -> u64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| f(r) as i64),
        ))
    };
    let times = rows
        .iter()
        .map(|r| millis(&r.run_time))
        .collect::<Result<Vec<_>>>()?;
    let columns: Vec<ArrayRef> = vec![
        strings(&|r| &r.run_id),
        Arc::new(TimestampMillisecondArray::from(times).with_timezone("UTC")),
        strings(&|r| &r.trigger),
        strings(&|r| &r.pair),
        strings(&|r| &r.partition),
        strings(&|r| &r.partition_status),
        ints(&|r| r.source_rows),
        ints(&|r| r.target_rows),
        ints(&|r| r.missing_in_target),
        ints(&|r| r.extra_in_target),
        ints(&|r| r.mismatch),
        ints(&|r| r.duplicate_key),
        ints(&|r| r.null_key),
        strings(&|r| &r.status),
        Arc::new(BooleanArray::from(
            rows.iter().map(|r| r.complete).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.drift.as_deref()).collect::<Vec<_>>(),
        )),
        strings(&|r| &r.report_uri),
        strings(&|r| &r.engine_version),
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|r| r.hash_encoding_version),
        )),
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|r| r.ledger_version),
        )),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| err(e.to_string()))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            VERSION_KEY.to_string(),
            LEDGER_SCHEMA_VERSION.to_string(),
        )]))
        .build();
    let mut buf = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut buf, schema, Some(props)).map_err(|e| err(e.to_string()))?;
    writer.write(&batch).map_err(|e| err(e.to_string()))?;
    writer.close().map_err(|e| err(e.to_string()))?;
    Ok(Bytes::from(buf))
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str, file: &str) -> Result<&'a T> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| ReconError::CorruptParquet {
            file: file.to_string(),
            reason: format!("ledger column `{name}` is missing or has another type"),
        })
}

/// Decode one ledger object. An object without a version, or of a version this
/// build does not know, is an error naming the version.
pub fn decode(data: Bytes, file: &str) -> Result<Vec<LedgerRow>> {
    let corrupt = |reason: String| ReconError::CorruptParquet {
        file: file.to_string(),
        reason,
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(data).map_err(|e| corrupt(e.to_string()))?;
    let version = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == VERSION_KEY))
        .and_then(|k| k.value.clone());
    match version.as_deref() {
        Some(v) if v == LEDGER_SCHEMA_VERSION.to_string() => {}
        Some(v) => {
            return Err(corrupt(format!(
                "ledger schema version {v} is not known to glue-recon {} (it reads version {LEDGER_SCHEMA_VERSION}); upgrade glue-recon to read it",
                recon_engine::ENGINE_VERSION
            )));
        }
        None => {
            return Err(corrupt(format!(
                "no `{VERSION_KEY}` metadata: not a glue-recon ledger object"
            )));
        }
    }
    let reader = builder.build().map_err(|e| corrupt(e.to_string()))?;
    let mut rows = Vec::new();
    for batch in reader {
        let b = batch.map_err(|e| corrupt(e.to_string()))?;
        let s = |n: &str| column::<StringArray>(&b, n, file);
        let i = |n: &str| column::<Int64Array>(&b, n, file);
        let i32s = |n: &str| column::<Int32Array>(&b, n, file);
        let (run_id, trigger, pair, partition, pstatus, status, drift, uri, engine) = (
            s("run_id")?,
            s("trigger")?,
            s("pair")?,
            s("partition")?,
            s("partition_status")?,
            s("status")?,
            s("drift")?,
            s("report_uri")?,
            s("engine_version")?,
        );
        let (src, tgt, miss, extra, mism, dup, null) = (
            i("source_rows")?,
            i("target_rows")?,
            i("missing_in_target")?,
            i("extra_in_target")?,
            i("mismatch")?,
            i("duplicate_key")?,
            i("null_key")?,
        );
        let time = column::<TimestampMillisecondArray>(&b, "run_time", file)?;
        let complete = column::<BooleanArray>(&b, "complete", file)?;
        let (hev, lv) = (i32s("hash_encoding_version")?, i32s("ledger_version")?);
        for r in 0..b.num_rows() {
            rows.push(LedgerRow {
                run_id: run_id.value(r).into(),
                run_time: rfc3339(time.value(r)),
                trigger: trigger.value(r).into(),
                pair: pair.value(r).into(),
                partition: partition.value(r).into(),
                partition_status: pstatus.value(r).into(),
                source_rows: src.value(r) as u64,
                target_rows: tgt.value(r) as u64,
                missing_in_target: miss.value(r) as u64,
                extra_in_target: extra.value(r) as u64,
                mismatch: mism.value(r) as u64,
                duplicate_key: dup.value(r) as u64,
                null_key: null.value(r) as u64,
                status: status.value(r).into(),
                complete: complete.value(r),
                drift: (!drift.is_null(r)).then(|| drift.value(r).to_string()),
                report_uri: uri.value(r).into(),
                engine_version: engine.value(r).into(),
                hash_encoding_version: hev.value(r),
                ledger_version: lv.value(r),
            });
        }
    }
    Ok(rows)
}

/// The URI of a run's ledger object under `root`.
pub(crate) fn object_uri(root: &str, run_date: &str, run_id: &str) -> String {
    Storage::join(
        root,
        &format!("{LEDGER_DIR}/run_date={run_date}/{run_id}.parquet"),
    )
}

/// Append a run to the ledger: one object holding a row per pair and partition of
/// `reports` (all of one run, in the order of `locations`). Returns the object's URI.
/// The key depends only on the run id and date, so a retried run overwrites its own
/// object with the same rows and never duplicates it. The CLI and the merge Lambda
/// both call this.
pub async fn append_run(
    storage: &Storage,
    root: &str,
    reports: &[Report],
    locations: &[ReportLocation],
) -> Result<String> {
    let first = reports
        .first()
        .ok_or_else(|| ReconError::InvalidInput("no report to append to the ledger".into()))?;
    if reports.len() != locations.len() {
        return Err(ReconError::InvalidInput(format!(
            "{} reports but {} report locations",
            reports.len(),
            locations.len()
        )));
    }
    if let Some(other) = reports.iter().find(|r| r.run_id != first.run_id) {
        return Err(ReconError::InvalidInput(format!(
            "one ledger object holds one run, got runs {} and {}",
            first.run_id, other.run_id
        )));
    }
    let run_time = reports
        .iter()
        .map(|r| r.started_at.as_str())
        .min()
        .unwrap_or(&first.started_at);
    let run_date = run_time.get(..10).unwrap_or(run_time);
    let rows: Vec<LedgerRow> = reports
        .iter()
        .zip(locations)
        .flat_map(|(r, l)| rows_of(r, l))
        .collect();
    write_run_rows(storage, root, run_date, &first.run_id, &rows).await
}

/// Write `rows`, every row of run `run_id` so far, as the run's ledger object (whole,
/// replacing the object an earlier call for the same run wrote). The CLI calls it after
/// each pair, so a run that is stopped loses at most the pair being written.
pub async fn write_run_rows(
    storage: &Storage,
    root: &str,
    run_date: &str,
    run_id: &str,
    rows: &[LedgerRow],
) -> Result<String> {
    let uri = object_uri(root, run_date, run_id);
    let data = encode(rows)?;
    storage.for_uri(&uri)?.put(&uri, data).await?;
    Ok(uri)
}

/// The ledger row of a pair that could not run: status `ERROR`, one failed
/// "partition" (so the pair's open findings are never 0), no rows read.
/// `record_uri` is the error record written in the report's place.
pub(crate) fn not_run_row(
    meta: &recon_engine::report::RunMeta,
    pair: &str,
    record_uri: &str,
) -> LedgerRow {
    LedgerRow {
        run_id: meta.run_id.clone(),
        run_time: meta.started_at.clone(),
        trigger: meta.trigger.clone(),
        pair: pair.to_string(),
        partition: String::new(),
        partition_status: recon_engine::report::PartitionStatus::Failed
            .as_str()
            .into(),
        source_rows: 0,
        target_rows: 0,
        missing_in_target: 0,
        extra_in_target: 0,
        mismatch: 0,
        duplicate_key: 0,
        null_key: 0,
        status: "ERROR".into(),
        complete: false,
        drift: None,
        report_uri: record_uri.to_string(),
        engine_version: recon_engine::ENGINE_VERSION.to_string(),
        hash_encoding_version: recon_engine::canonical::HASH_ENCODING_VERSION as i32,
        ledger_version: LEDGER_SCHEMA_VERSION,
    }
}

/// A ledger object that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerProblem {
    /// The object.
    pub uri: String,
    /// Why it was skipped.
    pub error: String,
}

/// A pair run's place in the ledger's order: run time, run id, pair.
type RunKey = (String, String, String);

/// What resolutions accepted as the pairs' new normal, by pair and run: the partition
/// lists (an empty list is every partition) whose findings a read counts in
/// [`LedgerRun::accepted_findings`] (`crate::resolution::accepted` builds it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accepted(BTreeMap<String, BTreeMap<String, BTreeSet<Vec<String>>>>);

impl Accepted {
    /// From `(pair, run id, partitions)` scopes, an empty partition list covering the
    /// whole run.
    pub fn new(scopes: impl IntoIterator<Item = (String, String, Vec<String>)>) -> Self {
        let mut map = BTreeMap::<String, BTreeMap<String, BTreeSet<Vec<String>>>>::new();
        for (pair, run_id, mut partitions) in scopes {
            partitions.sort();
            map.entry(pair)
                .or_default()
                .entry(run_id)
                .or_default()
                .insert(partitions);
        }
        Accepted(map)
    }

    /// Whether the row's findings were accepted.
    fn covers(&self, row: &LedgerRow) -> bool {
        self.0
            .get(&row.pair)
            .and_then(|runs| runs.get(&row.run_id))
            .is_some_and(|scopes| {
                scopes
                    .iter()
                    .any(|s| s.is_empty() || s.contains(&row.partition))
            })
    }

    /// The run ids whose scopes differ between `self` and `other`.
    fn runs_changed<'a>(&'a self, other: &'a Accepted) -> BTreeSet<&'a String> {
        let scopes = |a: &'a Accepted, pair: &str, run_id: &str| {
            a.0.get(pair).and_then(|runs| runs.get(run_id))
        };
        self.0
            .iter()
            .chain(other.0.iter())
            .flat_map(|(pair, runs)| runs.keys().map(move |run_id| (pair, run_id)))
            .filter(|(pair, run_id)| scopes(self, pair, run_id) != scopes(other, pair, run_id))
            .map(|(_, run_id)| run_id)
            .collect()
    }
}

/// The ledger as its readers need it: every pair run summed over its partitions,
/// with the partition rows of each pair's latest run only, and the objects that
/// could not be read. A run's memory is its summary, so a ledger of hundreds of runs
/// of thousands of partitions costs a few of its objects, never all of its rows;
/// [`LedgerRead::partitions_of`] reads an older run's rows back when one is asked for.
#[derive(Debug, Clone, Default)]
pub struct LedgerRead {
    /// Every pair run, oldest first (by run time, run id, pair).
    pub runs: Vec<LedgerRun>,
    /// Objects skipped, with the reason.
    pub problems: Vec<LedgerProblem>,
    /// Every object read or skipped, by URI, with the runs its rows are of: what
    /// [`refresh_ledger`] need not read again.
    pub objects: BTreeMap<String, BTreeSet<String>>,
    /// The accepted resolutions the runs' [`LedgerRun::accepted_findings`] count.
    accepted: Accepted,
}

impl LedgerRead {
    /// Partition rows held in memory (those of each pair's latest run).
    pub fn rows_held(&self) -> usize {
        self.runs.iter().map(|r| r.partitions.len()).sum()
    }

    /// The partition rows of `run`, sorted by partition: the rows held for a pair's
    /// latest run, else read again from the run's objects.
    pub async fn partitions_of(
        &self,
        storage: &Storage,
        run: &LedgerRun,
    ) -> Result<Vec<LedgerRow>> {
        if !run.partitions.is_empty() {
            return Ok(run.partitions.clone());
        }
        let mut rows = Vec::new();
        for (uri, runs) in &self.objects {
            if runs.contains(&run.run_id) {
                let data = storage.for_uri(uri)?.get(uri).await?;
                rows.extend(decode(data, uri)?.into_iter().filter(|r| {
                    r.run_id == run.run_id && r.pair == run.pair && r.run_time == run.run_time
                }));
            }
        }
        rows.sort_by(|a, b| a.partition.cmp(&b.partition));
        Ok(rows)
    }
}

/// Forget objects: their problems and their runs. Runs are known by run id, so an
/// object that shares a run with a forgotten one is forgotten too (and read again by
/// [`refresh_ledger`]).
fn forget(
    objects: &mut BTreeMap<String, BTreeSet<String>>,
    problems: &mut Vec<LedgerProblem>,
    runs: &mut BTreeMap<RunKey, LedgerRun>,
    mut uris: Vec<String>,
) {
    while let Some(uri) = uris.pop() {
        let gone = objects.remove(&uri).unwrap_or_default();
        problems.retain(|p| p.uri != uri);
        runs.retain(|(_, run_id, _), _| !gone.contains(run_id));
        uris.extend(
            objects
                .iter()
                .filter(|(_, other)| !other.is_disjoint(&gone))
                .map(|(u, _)| u.clone()),
        );
    }
}

/// The latest run of each pair.
fn latest_runs(runs: &BTreeMap<RunKey, LedgerRun>) -> BTreeMap<String, RunKey> {
    runs.keys()
        .map(|k| (k.2.clone(), k.clone()))
        .collect::<BTreeMap<_, _>>()
}

/// Add one object's rows to `runs`: each row counts in its pair run's summary, and
/// is kept only while that run is its pair's latest (`latest` follows along).
fn fold(
    runs: &mut BTreeMap<RunKey, LedgerRun>,
    latest: &mut BTreeMap<String, RunKey>,
    accepted: &Accepted,
    rows: Vec<LedgerRow>,
) {
    for row in rows {
        let key = (row.run_time.clone(), row.run_id.clone(), row.pair.clone());
        let keep = match latest.get(&row.pair) {
            Some(newest) if *newest > key => false,
            Some(newest) if *newest == key => true,
            older => {
                // A newer run of the pair: the previous latest lets its rows go.
                if let Some(old) = older.and_then(|k| runs.get_mut(k)) {
                    old.partitions = Vec::new();
                }
                latest.insert(row.pair.clone(), key.clone());
                true
            }
        };
        let covered = accepted.covers(&row);
        let run = runs.entry(key).or_insert_with(|| LedgerRun::of(&row));
        run.source_rows += row.source_rows;
        run.target_rows += row.target_rows;
        run.findings += row.findings();
        run.failed_partitions += u64::from(row.failed());
        if covered {
            run.accepted_findings += row.findings();
        }
        if keep {
            run.partitions.push(row);
        }
    }
}

/// Ledger objects fetched at once: an S3 ledger's reads overlap instead of paying
/// one round trip after another.
const READS_IN_FLIGHT: usize = 16;

/// List every object under `<root>/<dir>/` whose name ends in `ext` (a folder that
/// does not exist yet is empty). Shared by the ledger and resolution readers.
pub(crate) async fn list_objects(
    storage: &Storage,
    root: &str,
    dir: &str,
    ext: &str,
) -> Result<Vec<recon_engine::storage::FileRef>> {
    let prefix = Storage::join(root, &format!("{dir}/"));
    let store = storage.for_uri(&prefix)?;
    let listed = match store.list(&prefix).await {
        Ok(l) => l,
        // A root that has never had this folder (local) is an empty history.
        Err(ReconError::TableNotFound { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    Ok(listed
        .into_iter()
        .filter(|f| f.uri.ends_with(ext))
        .collect())
}

/// Every object under `<root>/<dir>/` whose name ends in `ext`, parsed by `parse`;
/// objects that cannot be read or parsed are returned as problems, never dropped
/// silently. Shared by the resolution and run-marker readers.
pub(crate) async fn read_objects<T>(
    storage: &Storage,
    root: &str,
    dir: &str,
    ext: &str,
    parse: impl Fn(&[u8]) -> Result<T>,
) -> Result<(Vec<T>, Vec<LedgerProblem>)> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for f in list_objects(storage, root, dir, ext).await? {
        match storage
            .for_uri(&f.uri)?
            .get(&f.uri)
            .await
            .and_then(|d| parse(&d))
        {
            Ok(t) => out.push(t),
            Err(e) => problems.push(LedgerProblem {
                uri: f.uri.clone(),
                error: e.to_string(),
            }),
        }
    }
    Ok((out, problems))
}

/// Read the ledger under `root` ([`LedgerRead`]), counting the findings that
/// `accepted` covers. Objects that cannot be listed are an error;
/// objects that cannot be read or decoded are reported in the result and skipped.
pub async fn read_ledger(storage: &Storage, root: &str, accepted: &Accepted) -> Result<LedgerRead> {
    refresh_ledger(storage, root, LedgerRead::default(), None, accepted).await
}

/// `known`, an earlier read of the ledger under `root`, brought up to date with one
/// listing: objects listed now and not known are read, known objects no longer
/// listed are forgotten, and `rewritten` (an object written since, such as the run's
/// own) is read again, as are the runs whose `accepted` scopes changed and a
/// pair's new latest run once its newer runs are gone. The result is what
/// [`read_ledger`] would read now, without decoding again the objects read before.
pub async fn refresh_ledger(
    storage: &Storage,
    root: &str,
    known: LedgerRead,
    rewritten: Option<&str>,
    accepted: &Accepted,
) -> Result<LedgerRead> {
    let LedgerRead {
        runs,
        mut problems,
        mut objects,
        accepted: was_accepted,
    } = known;
    let mut runs: BTreeMap<RunKey, LedgerRun> = runs
        .into_iter()
        .map(|r| ((r.run_time.clone(), r.run_id.clone(), r.pair.clone()), r))
        .collect();
    let files = list_objects(storage, root, LEDGER_DIR, ".parquet").await?;
    let listed: BTreeSet<String> = files.into_iter().map(|f| f.uri).collect();
    let reconsidered = was_accepted.runs_changed(accepted);
    let gone: Vec<String> = objects
        .iter()
        .filter(|(uri, ids)| {
            !listed.contains(*uri)
                || Some(uri.as_str()) == rewritten
                || ids.iter().any(|id| reconsidered.contains(id))
        })
        .map(|(uri, _)| uri.clone())
        .collect();
    forget(&mut objects, &mut problems, &mut runs, gone);
    loop {
        // A pair whose newer runs were forgotten has a latest run whose rows were
        // let go: read its objects again (in this pass or, for one read just now,
        // the next).
        let bare: BTreeSet<String> = latest_runs(&runs)
            .into_values()
            .filter(|k| runs[k].partitions.is_empty())
            .map(|(_, run_id, _)| run_id)
            .collect();
        let stale: Vec<String> = objects
            .iter()
            .filter(|(_, ids)| !ids.is_disjoint(&bare))
            .map(|(uri, _)| uri.clone())
            .collect();
        forget(&mut objects, &mut problems, &mut runs, stale);
        let new: Vec<String> = listed
            .iter()
            .filter(|uri| !objects.contains_key(*uri))
            .cloned()
            .collect();
        if new.is_empty() {
            break;
        }
        let mut latest = latest_runs(&runs);
        let mut reads = futures::stream::iter(new)
            .map(|uri| async move {
                let read = async {
                    let data = storage.for_uri(&uri)?.get(&uri).await?;
                    decode(data, &uri)
                };
                let result = read.await;
                (uri, result)
            })
            .buffered(READS_IN_FLIGHT);
        while let Some((uri, result)) = reads.next().await {
            let mut ids = BTreeSet::new();
            match result {
                Ok(rows) => {
                    ids.extend(rows.iter().map(|r| r.run_id.clone()));
                    fold(&mut runs, &mut latest, accepted, rows);
                }
                Err(e) => {
                    tracing::warn!(object = %uri, error = %e, "ledger object skipped");
                    problems.push(LedgerProblem {
                        uri: uri.clone(),
                        error: e.to_string(),
                    });
                }
            }
            objects.insert(uri, ids);
        }
    }
    for run in runs.values_mut() {
        run.partitions.sort_by(|a, b| a.partition.cmp(&b.partition));
    }
    problems.sort_by(|a, b| a.uri.cmp(&b.uri));
    Ok(LedgerRead {
        runs: runs.into_values().collect(),
        problems,
        objects,
        accepted: accepted.clone(),
    })
}

/// One pair in one run, summed over its partitions.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRun {
    /// The run id.
    pub run_id: String,
    /// When it ran (RFC 3339).
    pub run_time: String,
    /// The pair.
    pub pair: String,
    /// The verdict.
    pub status: String,
    /// Whether every partition was reconciled.
    pub complete: bool,
    /// Drift text, when detected.
    pub drift: Option<String>,
    /// report.json.
    pub report_uri: String,
    /// Source rows.
    pub source_rows: u64,
    /// Target rows.
    pub target_rows: u64,
    /// Findings of every kind.
    pub findings: u64,
    /// Partitions that could not be reconciled.
    pub failed_partitions: u64,
    /// The partition rows, sorted by partition, held for the pair's latest run only
    /// (empty for older runs: [`LedgerRead::partitions_of`] reads them).
    pub partitions: Vec<LedgerRow>,
    /// Findings in partitions that a resolution accepted as the pair's new normal
    /// ([`crate::resolution::Resolution::accepted`]).
    pub accepted_findings: u64,
}

impl LedgerRun {
    /// The run of `row`, with nothing counted yet.
    fn of(row: &LedgerRow) -> Self {
        LedgerRun {
            run_id: row.run_id.clone(),
            run_time: row.run_time.clone(),
            pair: row.pair.clone(),
            status: row.status.clone(),
            complete: row.complete,
            drift: row.drift.clone(),
            report_uri: row.report_uri.clone(),
            source_rows: 0,
            target_rows: 0,
            findings: 0,
            failed_partitions: 0,
            partitions: Vec::new(),
            accepted_findings: 0,
        }
    }

    /// Whether resolutions accepted every finding of the run as the new normal.
    pub fn accepted(&self) -> bool {
        self.findings > 0 && self.accepted_findings == self.findings
    }

    /// Whether the run belongs in its pair's drift baseline: it read every partition,
    /// and it is clean, or its findings stayed within the band (no drift), or a
    /// resolution accepted them as the new normal. A run with findings that drifted
    /// stays out even once fixed, so one bad day does not move the baseline and a
    /// return to normal clears the drift; a clean run whose row counts moved joins,
    /// so a table that grew becomes the norm after a few runs.
    pub fn joins_baseline(&self) -> bool {
        self.complete
            && self.failed_partitions == 0
            && (self.findings == 0 || self.drift.is_none() || self.accepted())
    }

    /// No findings and complete.
    pub fn clean(&self) -> bool {
        self.findings == 0 && self.complete && self.failed_partitions == 0
    }

    /// Findings per source row, in percent.
    pub fn finding_rate(&self) -> f64 {
        if self.source_rows == 0 {
            if self.findings == 0 { 0.0 } else { 100.0 }
        } else {
            self.findings as f64 * 100.0 / self.source_rows as f64
        }
    }
}
