//! The cloud run, split into the steps the state machine calls: [`Pipeline::lookup`]
//! (config and catalog to a work manifest), [`Pipeline::hash`] (one manifest item to
//! a partial diff) and [`Pipeline::merge`] (partials to reports and an alert). The
//! Lambda functions in `functions/` are thin adapters over these; the payload types
//! here are their events and results (docs/contracts.md).
//!
//! Every object is written whole under a key that depends only on the run id, the
//! pair and the item, so a retried step overwrites and never duplicates:
//!
//! ```text
//! s3://BUCKET/runs/<run_id>/plans/<pair>.json       the pair's compare plan (PairPlan)
//! s3://BUCKET/runs/<run_id>/items/<item_id>.json    one WorkItem (its file lists)
//! s3://BUCKET/runs/<run_id>/manifest.json           JSON array of ManifestItem (ids only)
//! s3://BUCKET/runs/<run_id>/partials/<item_id>.json one PartialDiff per item
//! s3://BUCKET/reports/<pair>/<run_id>/              report.json, report.html, diffs.parquet
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use recon_engine::budget::MemoryBudget;
use recon_engine::catalog::{Catalog, record_statuses};
use recon_engine::config::{Config, Defaults, PairConfig};
use recon_engine::diffrows::DiffRowsWriter;
use recon_engine::error::{ReconError, Result};
use recon_engine::hints::HintCollector;
use recon_engine::layout::check_segment;
use recon_engine::mask::MaskKey;
use recon_engine::partial::{ItemError, PartialDiff, Totals};
use recon_engine::plan::ComparePlan;
use recon_engine::reconcile::ItemRunner;
use recon_engine::report::{RunMeta, Status, build_report, new_run_id, now_rfc3339};
use recon_engine::runner::{RunOptions, prepare_pair};
use recon_engine::scan::NoProgress;
use recon_engine::storage::Storage;
use recon_engine::table::{ItemRef, WorkItem};
use recon_events::contract::parse_event;
pub use recon_events::contract::{
    EXECUTION_NAME_MAX, GLUE_JOB_STATE_CHANGE, GlueJobDetail, GlueJobEvent, LookupRequest,
    MAX_REQUEST_BYTES, OnDemandRequest, TriggerOutput, execution_name,
};
use recon_events::error::EventError;
use recon_history::alert::Alert;
use recon_history::completion::{EventSink, completed};
use recon_history::history::DEFAULT_ATHENA_DATABASE;
use recon_history::metrics::{DEFAULT_NAMESPACE, emf_lines};
use recon_history::run_record::{LedgerWrites, RunRecord};

/// Version of the plan document.
pub(crate) const PLAN_SCHEMA_VERSION: u32 = 1;
/// Item objects a lookup writes at once.
const ITEM_PUTS_IN_FLIGHT: usize = 32;
/// Partials a merge reads at once.
const PARTIAL_GETS_IN_FLIGHT: usize = 16;
/// Pair names a lookup output lists (all of them are in the run's plans).
pub(crate) const PAIRS_LISTED: usize = 100;
/// Pair outcomes a merge output lists, the worst first (all are in the ledger and
/// on the dashboard).
pub(crate) const REPORTS_LISTED: usize = 20;

/// The lookup result: a pointer to the manifest, small enough for any state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupOutput {
    /// The run id.
    pub run_id: String,
    /// The work bucket.
    pub bucket: String,
    /// `runs/<run_id>/manifest.json`.
    pub manifest_key: String,
    /// Manifest items; 0 = nothing to do.
    pub item_count: usize,
    /// The first `PAIRS_LISTED` pairs of the run (every pair has its plan at
    /// `runs/<run_id>/plans/<pair>.json`).
    pub pairs: Vec<String>,
    /// How many pairs the run has.
    pub pair_count: usize,
    /// `on-demand` or `glue:<job>:<run id>`.
    pub trigger: String,
}

/// A pair's compare plan and config as of the lookup, read by hash and merge so the
/// whole run uses one snapshot of the config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PairPlan {
    /// [`PLAN_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The run id.
    pub run_id: String,
    /// What triggered the run.
    pub trigger: String,
    /// When the lookup started.
    pub started_at: String,
    /// The pair's config.
    pub pair: PairConfig,
    /// The config's shared settings (drift baseline and band for the merge).
    #[serde(default)]
    pub defaults: Defaults,
    /// Samples per finding kind.
    pub sample_limit: usize,
    /// The compare plan.
    pub plan: ComparePlan,
}

/// One manifest item, the input of one hash step: the ids of a work item and its
/// run, a few hundred bytes whatever the partition's size. The [`WorkItem`] (the
/// files of the partition on each side) is at `runs/<run_id>/items/<item_id>.json`
/// and the plan at `runs/<run_id>/plans/<pair>.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestItem {
    /// The run id.
    pub run_id: String,
    /// The item.
    #[serde(flatten)]
    pub item: ItemRef,
}

/// The hash result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HashOutput {
    /// The run id.
    pub run_id: String,
    /// The item.
    pub item_id: String,
    /// `runs/<run_id>/partials/<item_id>.json`.
    pub partial_key: String,
    /// The item's counts.
    pub counts: Totals,
    /// Set when the partition could not be reconciled (the partial records it too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ItemError>,
}

/// One pair's outcome in a merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairOutcome {
    /// The pair.
    pub pair: String,
    /// Its verdict.
    pub status: Status,
    /// Whether every partition was reconciled.
    pub complete: bool,
    /// report.json.
    pub report_uri: String,
    /// report.html.
    pub html_uri: String,
}

/// The merge result. With several pairs, `status` is the worst, `complete` is
/// true only if all are, and the URIs are those of the worst pair (all in `reports`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeOutput {
    /// The run id.
    pub run_id: String,
    /// The worst verdict.
    pub status: Status,
    /// Whether every partition of every pair was reconciled.
    pub complete: bool,
    /// The worst pair's report.json.
    pub report_uri: String,
    /// The worst pair's report.html.
    pub html_uri: String,
    /// The alert (always present; the state machine publishes it when not PASS).
    pub alert: Alert,
    /// The first `REPORTS_LISTED` pairs, the worst first.
    pub reports: Vec<PairOutcome>,
    /// How many pairs the run reported.
    pub report_count: usize,
    /// The run's CloudWatch metrics as Embedded Metric Format lines, for the function
    /// to print (not part of the state's payload).
    #[serde(skip)]
    pub metrics: Vec<String>,
}

/// The engine's error for an event that did not parse: the same variant and message.
pub fn from_event(e: EventError) -> ReconError {
    match e {
        EventError::InvalidConfig { file, message } => ReconError::InvalidConfig { file, message },
        EventError::InvalidInput(message) => ReconError::InvalidInput(message),
        EventError::AccessDenied { resource, reason } => {
            ReconError::AccessDenied { resource, reason }
        }
        EventError::Transient { resource, reason } => ReconError::Transient { resource, reason },
    }
}

/// The partition labels a Glue job run names in its argument `arg` (a pair's
/// `partitions_from_argument`): comma-separated labels
/// (`dt=2024-01-01,dt=2024-01-02`; several keys `dt=2024-01-01/region=eu`), or a JSON
/// array of labels (for values with a comma); white space around a label is
/// ignored, a label named twice counts once. A run without the argument, or with
/// one that names no partition or something that is not a label, is an error
/// (`InvalidInput`): the pair says its runs name their partitions, and reconciling
/// the whole table instead would be a different and possibly much larger run.
pub fn job_run_partitions(
    pair: &PairConfig,
    arg: &str,
    arguments: &std::collections::HashMap<String, String>,
    run: &GlueJobDetail,
) -> Result<Vec<String>> {
    let what = format!(
        "pair `{}` takes its partitions from the `{arg}` argument of its Glue job runs \
         (partitions_from_argument), but run `{}` of job `{}`",
        pair.name, run.job_run_id, run.job_name
    );
    let example = format!(
        "start the job with `{arg}` naming the partitions it wrote (e.g. `dt=2024-01-01,dt=2024-01-02`), \
         or reconcile on demand with {{\"pairs\": [\"{}\"]}}",
        pair.name
    );
    let Some(value) = arguments.get(arg) else {
        return Err(ReconError::InvalidInput(format!(
            "{what} has no `{arg}` argument; {example}"
        )));
    };
    let value = value.trim();
    let raw: Vec<String> = if value.starts_with('[') {
        serde_json::from_str(value).map_err(|e| {
            ReconError::InvalidInput(format!(
                "{what} has `{arg}` = `{value}`, which is not a JSON array of partition labels: {e}"
            ))
        })?
    } else {
        value.split(',').map(str::to_string).collect()
    };
    let mut labels: Vec<String> = Vec::new();
    for label in raw.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        let is_label = label.split('/').all(|kv| {
            kv.split_once('=')
                .is_some_and(|(k, _)| !k.trim().is_empty())
        });
        if !is_label {
            return Err(ReconError::InvalidInput(format!(
                "{what} has `{arg}` naming `{label}`, which is not a partition label (`key=value`, several keys `k1=v1/k2=v2`)"
            )));
        }
        if !labels.iter().any(|l| l == label) {
            labels.push(label.to_string());
        }
    }
    if labels.is_empty() {
        return Err(ReconError::InvalidInput(format!(
            "{what} has `{arg}` = `{value}`, which names no partition; {example}"
        )));
    }
    Ok(labels)
}

/// Run ids and item ids become key segments: the rule of [`check_segment`].
fn check_id(what: &str, value: &str) -> Result<()> {
    check_segment(value).map_err(|why| {
        ReconError::InvalidInput(format!("{what} `{value}` is not a valid id: it {why}"))
    })
}

/// `runs/<run_id>/manifest.json`.
pub fn manifest_key(run_id: &str) -> String {
    format!("runs/{run_id}/manifest.json")
}

/// `runs/<run_id>/items/<item_id>.json`.
pub(crate) fn item_key(run_id: &str, item_id: &str) -> String {
    format!("runs/{run_id}/items/{item_id}.json")
}

/// `runs/<run_id>/plans/<pair>.json`.
pub(crate) fn plan_key(run_id: &str, pair: &str) -> String {
    format!("runs/{run_id}/plans/{pair}.json")
}

/// `runs/<run_id>/partials/<item_id>.json`.
pub fn partial_key(run_id: &str, item_id: &str) -> String {
    format!("runs/{run_id}/partials/{item_id}.json")
}

/// Parse a hash event as a manifest item.
pub fn parse_item(event: serde_json::Value) -> Result<ManifestItem> {
    let item: ManifestItem = parse_event(event, "manifest item").map_err(from_event)?;
    check_id("run_id", &item.run_id)?;
    check_id("item_id", &item.item.item_id)?;
    Ok(item)
}

/// Parse a merge event (the lookup output).
pub fn parse_lookup_output(event: serde_json::Value) -> Result<LookupOutput> {
    let out: LookupOutput = parse_event(event, "lookup output (run_id, bucket, manifest_key, ...)")
        .map_err(from_event)?;
    check_id("run_id", &out.run_id)?;
    Ok(out)
}

/// Read and parse the config at `uri` (an s3:// URI or a path).
pub async fn load_config(storage: &Storage, uri: &str) -> Result<Config> {
    let bytes = storage.for_uri(uri)?.get(uri).await.map_err(|e| match e {
        ReconError::TableNotFound { reason, .. } => ReconError::InvalidConfig {
            file: uri.to_string(),
            message: format!("cannot read it: {reason}"),
        },
        e => e,
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| ReconError::InvalidConfig {
        file: uri.to_string(),
        message: format!("not UTF-8 text: {e}"),
    })?;
    Config::parse(text, uri)
}

/// The steps of a cloud run over one work bucket.
#[derive(Clone)]
pub struct Pipeline {
    /// Where tables, the work objects and the reports are.
    pub storage: Storage,
    /// The Glue catalog for glue:// tables.
    pub catalog: Option<Arc<dyn Catalog>>,
    /// The work and report bucket.
    pub bucket: String,
    /// Row groups decoded at once by a hash step.
    pub parallelism: usize,
    /// Memory a hash step may keep its decoded batches in.
    pub retain: MemoryBudget,
    /// Memory a hash step's key index may take (beyond it, the index waits in a
    /// temporary file in /tmp).
    pub index: MemoryBudget,
    /// The Glue database of the ledger, which the alert's Athena statements name
    /// (the stack's `LedgerDatabaseName`).
    pub athena_database: String,
    /// The key of masked values' tokens (the hash step needs it for a pair that
    /// masks a column).
    pub mask_key: Option<MaskKey>,
    /// The CloudWatch namespace of the merge's metrics (`RECON_METRICS_NAMESPACE`).
    pub metrics_namespace: String,
    /// Where the merge sends a "Reconciliation Completed" event per pair
    /// (`RECON_EVENT_BUS`); `None` sends none.
    pub events: Option<Arc<dyn EventSink>>,
}

impl Pipeline {
    /// A pipeline on `bucket`; parallelism from the cores available.
    pub fn new(storage: Storage, catalog: Option<Arc<dyn Catalog>>, bucket: &str) -> Self {
        Pipeline {
            parallelism: RunOptions::local().parallelism,
            retain: MemoryBudget::for_batches(),
            index: MemoryBudget::for_indexes(),
            athena_database: DEFAULT_ATHENA_DATABASE.into(),
            mask_key: None,
            metrics_namespace: DEFAULT_NAMESPACE.into(),
            events: None,
            storage,
            catalog,
            bucket: bucket.to_string(),
        }
    }

    fn uri(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }

    async fn put_json<T: Serialize>(&self, key: &str, value: &T) -> Result<String> {
        let uri = self.uri(key);
        let json = serde_json::to_vec(value).map_err(|e| ReconError::Write {
            target: uri.clone(),
            reason: e.to_string(),
        })?;
        self.storage
            .for_uri(&uri)?
            .put(&uri, Bytes::from(json))
            .await?;
        Ok(uri)
    }

    async fn get_json<T: DeserializeOwned>(&self, key: &str, what: &str) -> Result<T> {
        let uri = self.uri(key);
        let bytes = self.storage.for_uri(&uri)?.get(&uri).await?;
        serde_json::from_slice(&bytes)
            .map_err(|e| ReconError::InvalidInput(format!("{uri} is not a valid {what}: {e}")))
    }

    async fn read_plan(&self, run_id: &str, pair: &str) -> Result<PairPlan> {
        let plan: PairPlan = self.get_json(&plan_key(run_id, pair), "pair plan").await?;
        if plan.schema_version != PLAN_SCHEMA_VERSION {
            return Err(ReconError::InvalidInput(format!(
                "{}: plan schema_version {} is not supported (expected {PLAN_SCHEMA_VERSION})",
                self.uri(&plan_key(run_id, pair)),
                plan.schema_version
            )));
        }
        Ok(plan)
    }

    /// The URIs of the objects under `prefix` (a URI).
    async fn list_uris(&self, prefix: &str) -> Result<impl Iterator<Item = String>> {
        let files = self.storage.for_uri(prefix)?.list(prefix).await?;
        Ok(files.into_iter().map(|f| f.uri))
    }

    /// Resolve the requested pairs, plan each, and write the plans and the manifest.
    pub async fn lookup(&self, config: &Config, request: &LookupRequest) -> Result<LookupOutput> {
        let (pairs, partitions, trigger): (Vec<&PairConfig>, _, String) = match request {
            LookupRequest::OnDemand(r) => {
                let pairs = config.select(&r.pairs)?;
                for name in r.partitions.keys() {
                    if !pairs.iter().any(|p| &p.name == name) {
                        return Err(ReconError::InvalidInput(format!(
                            "`partitions` names pair `{name}`, which is not among the requested pairs"
                        )));
                    }
                }
                (pairs, r.partitions.clone(), "on-demand".into())
            }
            LookupRequest::GlueJob(e) => {
                let d = &e.detail;
                let pairs = if d.state == "SUCCEEDED" {
                    config
                        .pairs
                        .iter()
                        .filter(|p| p.glue_jobs.iter().any(|j| j == &d.job_name))
                        .collect()
                } else {
                    tracing::info!(job = %d.job_name, state = %d.state, "job run did not succeed; nothing to reconcile");
                    Vec::new()
                };
                let partitions = self.job_run_partitions(&pairs, d).await?;
                (
                    pairs,
                    partitions,
                    format!("glue:{}:{}", d.job_name, d.job_run_id),
                )
            }
        };
        let run_id = new_run_id();
        let started_at = now_rfc3339();
        let mut items: Vec<WorkItem> = Vec::new();
        for pair in &pairs {
            let mut opts = RunOptions::local();
            opts.storage = self.storage.clone();
            opts.catalog = self.catalog.clone();
            opts.partitions = partitions.get(&pair.name).cloned();
            let prepared = prepare_pair(pair, &opts).await?;
            for counts in prepared.footer_counts.iter().filter(|c| c.differ()) {
                tracing::info!(
                    pair = %pair.name,
                    partition = %counts.partition,
                    source_rows = counts.source_rows,
                    target_rows = counts.target_rows,
                    "footer row counts differ"
                );
            }
            let plan = PairPlan {
                schema_version: PLAN_SCHEMA_VERSION,
                run_id: run_id.clone(),
                trigger: trigger.clone(),
                started_at: started_at.clone(),
                pair: (*pair).clone(),
                defaults: config.defaults.clone(),
                sample_limit: pair.sample_limit(&config.defaults),
                plan: prepared.plan,
            };
            self.put_json(&plan_key(&run_id, &pair.name), &plan).await?;
            items.extend(prepared.items);
        }
        futures::stream::iter(&items)
            .map(|item| {
                let key = item_key(&run_id, &item.item_id);
                async move { self.put_json(&key, item).await }
            })
            .buffer_unordered(ITEM_PUTS_IN_FLIGHT)
            .try_collect::<Vec<String>>()
            .await?;
        let manifest: Vec<ManifestItem> = items
            .iter()
            .map(|item| ManifestItem {
                run_id: run_id.clone(),
                item: item.into(),
            })
            .collect();
        // The manifest last: when it exists, every plan and item it refers to does too.
        let key = manifest_key(&run_id);
        self.put_json(&key, &manifest).await?;
        tracing::info!(%run_id, items = manifest.len(), %trigger, "manifest written");
        Ok(LookupOutput {
            run_id,
            bucket: self.bucket.clone(),
            manifest_key: key,
            item_count: manifest.len(),
            pairs: pairs
                .iter()
                .take(PAIRS_LISTED)
                .map(|p| p.name.clone())
                .collect(),
            pair_count: pairs.len(),
            trigger,
        })
    }

    /// The partitions a Glue job run names for the pairs that take them from one of
    /// its arguments (`partitions_from_argument`); the run's arguments are read once
    /// (GetJobRun), and only when such a pair is among `pairs`.
    async fn job_run_partitions(
        &self,
        pairs: &[&PairConfig],
        run: &GlueJobDetail,
    ) -> Result<BTreeMap<String, Vec<String>>> {
        let mut out = BTreeMap::new();
        if pairs.iter().all(|p| p.partitions_from_argument.is_none()) {
            return Ok(out);
        }
        let catalog = self.catalog.as_ref().ok_or_else(|| {
            ReconError::InvalidInput(format!(
                "the pairs of Glue job `{}` take their partitions from the job run's arguments, but no Glue client is configured",
                run.job_name
            ))
        })?;
        let arguments = catalog
            .job_run_arguments(&run.job_name, &run.job_run_id)
            .await?;
        for pair in pairs {
            if let Some(arg) = &pair.partitions_from_argument {
                let labels = job_run_partitions(pair, arg, &arguments, run)?;
                tracing::info!(pair = %pair.name, argument = %arg, partitions = labels.len(), "partitions named by the job run");
                out.insert(pair.name.clone(), labels);
            }
        }
        Ok(out)
    }

    /// Read a manifest item's [`WorkItem`], refusing one whose ids differ from the
    /// manifest's (a manifest and items of different runs or lookups).
    async fn read_item(&self, item: &ManifestItem) -> Result<WorkItem> {
        let key = item_key(&item.run_id, &item.item.item_id);
        let work: WorkItem = self.get_json(&key, "work item").await?;
        if ItemRef::from(&work) != item.item {
            return Err(ReconError::InvalidInput(format!(
                "{} is item `{}` of pair `{}`, partition `{}`, but the manifest names item `{}` of pair `{}`, partition `{}`; re-run the lookup",
                self.uri(&key),
                work.item_id,
                work.pair,
                work.partition,
                item.item.item_id,
                item.item.pair,
                item.item.partition
            )));
        }
        Ok(work)
    }

    /// Reconcile one manifest item (its work item read from S3) and write its
    /// partial diff (also when the partition could not be read: the partial then
    /// records why).
    pub async fn hash(&self, item: &ManifestItem) -> Result<HashOutput> {
        let work = self.read_item(item).await?;
        let plan = self.read_plan(&item.run_id, &item.item.pair).await?;
        let runner = ItemRunner {
            storage: self.storage.clone(),
            plan: Arc::new(plan.plan),
            parallelism: self.parallelism,
            progress: Arc::new(NoProgress),
            retain: self.retain.clone(),
            index: self.index.clone(),
            turns: Default::default(),
            mask: self.mask_key.clone(),
        };
        let partial = runner.run(&work).await;
        let key = partial_key(&item.run_id, &item.item.item_id);
        self.put_json(&key, &partial).await?;
        Ok(HashOutput {
            run_id: item.run_id.clone(),
            item_id: item.item.item_id.clone(),
            partial_key: key,
            counts: partial.totals,
            error: partial.error,
        })
    }

    /// An item's partial, or when `present` (the partials listed) lacks it, the
    /// partial of a partition that was not reconciled.
    async fn read_partial(
        &self,
        run_id: &str,
        item: &ItemRef,
        present: &BTreeSet<String>,
    ) -> Result<PartialDiff> {
        let uri = self.uri(&partial_key(run_id, &item.item_id));
        if !present.contains(&uri) {
            return Ok(missing_partial(item, &uri));
        }
        let bytes = self.storage.for_uri(&uri)?.get(&uri).await?;
        PartialDiff::from_json(&bytes, &uri)
    }

    /// Read the manifest and every partial, write each pair's report, and build
    /// the alert. A manifest item without a partial is reported as a partition that
    /// was not reconciled, and its pair as incomplete.
    pub async fn merge(&self, input: &LookupOutput) -> Result<MergeOutput> {
        if input.bucket != self.bucket {
            return Err(ReconError::InvalidInput(format!(
                "run {} is in bucket `{}` but this function works in `{}`",
                input.run_id, input.bucket, self.bucket
            )));
        }
        let manifest: Vec<ManifestItem> = self
            .get_json(
                &manifest_key(&input.run_id),
                "work manifest (JSON array of items)",
            )
            .await?;
        let partials_prefix = self.uri(&format!("runs/{}/partials/", input.run_id));
        let present: BTreeSet<String> = self.list_uris(&partials_prefix).await?.collect();
        // Every pair of the run has a plan, also a pair without partitions.
        let plans_prefix = self.uri(&format!("runs/{}/plans/", input.run_id));
        let planned: Vec<String> = self
            .list_uris(&plans_prefix)
            .await?
            .filter_map(|uri| {
                uri.strip_prefix(&plans_prefix)
                    .and_then(|name| name.strip_suffix(".json"))
                    .map(str::to_string)
            })
            .collect();
        let mut by_pair: BTreeMap<&str, Vec<&ManifestItem>> = BTreeMap::new();
        for pair in input.pairs.iter().chain(&planned) {
            by_pair.entry(pair).or_default();
        }
        for item in &manifest {
            by_pair.entry(&item.item.pair).or_default().push(item);
        }
        if by_pair.len() != input.pair_count {
            return Err(ReconError::InvalidInput(format!(
                "run {} has {} pairs but {} has plans for {}: re-run the lookup",
                input.run_id,
                input.pair_count,
                plans_prefix,
                by_pair.len()
            )));
        }
        // The ledger and dashboard under the bucket root, the reports under reports/.
        let root = self.uri("");
        let root = root.trim_end_matches('/').to_string();
        let reports_root = self.uri("reports");
        let mut record: Option<RunRecord> = None;
        let mut pairs: Vec<PairConfig> = Vec::new();
        for (pair, items) in by_pair {
            let plan = self.read_plan(&input.run_id, pair).await?;
            pairs.push(plan.pair.clone());
            let meta = RunMeta {
                run_id: plan.run_id.clone(),
                trigger: plan.trigger.clone(),
                started_at: plan.started_at.clone(),
            };
            let record = record.get_or_insert_with(|| {
                let (storage, writes) = (&self.storage, LedgerWrites::AtTheEnd);
                RunRecord::start(storage, &root, &reports_root, meta.clone(), writes)
                    .with_athena_database(&self.athena_database)
            });
            // One partial at a time (a few in flight): its findings go into
            // diffs.parquet, and only what the report samples is kept.
            let mut diffs = DiffRowsWriter::new(&plan.pair.key)?;
            let mut partials: Vec<PartialDiff> = Vec::with_capacity(items.len());
            let mut reads = futures::stream::iter(items)
                .map(|item| self.read_partial(&input.run_id, &item.item, &present))
                .buffered(PARTIAL_GETS_IN_FLIGHT);
            let mut hints = HintCollector::new(&plan.pair);
            while let Some(partial) = reads.try_next().await? {
                diffs.add(&partial)?;
                hints.add(&partial);
                partials.push(partial.into_sample_view(plan.sample_limit));
            }
            let report = build_report(
                &meta,
                &plan.pair,
                plan.sample_limit,
                plan.plan.schema.clone(),
                &partials,
                hints.finish(),
            );
            let config = Config {
                defaults: plan.defaults.clone(),
                pairs: vec![plan.pair.clone()],
            };
            record.report(&config, report, diffs.finish()?).await?;
        }
        let Some(mut record) = record else {
            return Err(ReconError::InvalidInput(format!(
                "run {} has no pairs to merge (lookup returned item_count 0)",
                input.run_id
            )));
        };
        for p in record.history_problems().await? {
            tracing::warn!(problem = ?p, "ledger object skipped");
        }
        // Append the ledger and regenerate the dashboard: every run is recorded once
        // (a retried merge writes the same ledger key).
        let finished = record.finish().await?;
        // The verdict next to the target table in the Glue console, for pairs that ask.
        record_statuses(
            self.catalog.as_deref(),
            &pairs.iter().collect::<Vec<_>>(),
            finished.reports.iter().map(|(r, _)| r),
        )
        .await?;
        // After the reports and the ledger are written, so a rule's target finds them;
        // a retried merge sends them again (consumers key on run id and pair).
        if let Some(sink) = &self.events {
            let events = completed(
                &input.run_id,
                &input.trigger,
                &finished.reports,
                &finished.not_run,
            );
            sink.send(&events).await?;
        }
        let written = &finished.reports;
        let now = chrono::Utc::now();
        let started = written
            .first()
            .and_then(|(r, _)| chrono::DateTime::parse_from_rfc3339(&r.started_at).ok());
        let duration = started.map_or(0.0, |s| {
            (now - s.with_timezone(&chrono::Utc))
                .num_milliseconds()
                .max(0) as f64
                / 1000.0
        });
        let metrics = emf_lines(
            &self.metrics_namespace,
            &input.run_id,
            written,
            duration,
            now.timestamp_millis(),
        );
        let mut reports: Vec<PairOutcome> = written
            .iter()
            .map(|(r, l)| PairOutcome {
                pair: r.pair.clone(),
                status: r.status,
                complete: r.complete,
                report_uri: l.json.clone(),
                html_uri: l.html.clone(),
            })
            .collect();
        // The worst first, then by name; the worst of all leads the output.
        reports.sort_by(|a, b| b.status.cmp(&a.status).then(a.pair.cmp(&b.pair)));
        let worst = reports
            .first()
            .cloned()
            .expect("a run with pairs has reports");
        let complete = reports.iter().all(|r| r.complete);
        let report_count = reports.len();
        reports.truncate(REPORTS_LISTED);
        Ok(MergeOutput {
            run_id: input.run_id.clone(),
            status: worst.status,
            complete,
            report_uri: worst.report_uri,
            html_uri: worst.html_uri,
            alert: finished.alert,
            reports,
            report_count,
            metrics,
        })
    }
}

/// The partial of an item whose hash step left nothing behind.
fn missing_partial(item: &ItemRef, uri: &str) -> PartialDiff {
    PartialDiff::failed(
        item.clone(),
        "MissingPartial",
        format!(
            "no partial diff at {uri}: the hash step of this partition failed or did not finish"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON fixtures of functions/*/fixtures are the documented payloads: each
    /// must parse as its type and survive a round trip.
    #[test]
    fn function_fixtures_parse_as_their_types() {
        fn json(text: &str) -> serde_json::Value {
            serde_json::from_str(text).unwrap()
        }
        fn round_trip<T: Serialize + DeserializeOwned>(text: &str) {
            let v = json(text);
            let t: T = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&t).unwrap(), v);
        }
        let glue = json(include_str!(
            "../../../functions/trigger/fixtures/glue-job-succeeded.json"
        ));
        assert!(
            matches!(LookupRequest::parse(glue), Ok(LookupRequest::GlueJob(e)) if e.detail.job_name == "load-orders")
        );
        let on_demand = json(include_str!(
            "../../../functions/lookup/fixtures/on-demand.json"
        ));
        assert!(
            matches!(LookupRequest::parse(on_demand), Ok(LookupRequest::OnDemand(r)) if r.partitions["orders"].len() == 2)
        );
        round_trip::<LookupOutput>(include_str!(
            "../../../functions/lookup/fixtures/output.json"
        ));
        round_trip::<LookupOutput>(include_str!("../../../functions/merge/fixtures/input.json"));
        let item = parse_item(json(include_str!(
            "../../../functions/hash/fixtures/input.json"
        )))
        .unwrap();
        assert_eq!(item.item.presence, recon_engine::table::Presence::Both);
        round_trip::<ManifestItem>(include_str!("../../../functions/hash/fixtures/input.json"));
        round_trip::<WorkItem>(include_str!("../../../functions/hash/fixtures/item.json"));
        let work: WorkItem =
            serde_json::from_str(include_str!("../../../functions/hash/fixtures/item.json"))
                .unwrap();
        assert_eq!(ItemRef::from(&work), item.item);
        assert_eq!(work.target.len(), 2);
        round_trip::<HashOutput>(include_str!("../../../functions/hash/fixtures/output.json"));
        round_trip::<MergeOutput>(include_str!(
            "../../../functions/merge/fixtures/output.json"
        ));
        round_trip::<TriggerOutput>(include_str!(
            "../../../functions/trigger/fixtures/output.json"
        ));
        let trigger: GlueJobEvent = serde_json::from_value(json(include_str!(
            "../../../functions/trigger/fixtures/glue-job-succeeded.json"
        )))
        .unwrap();
        assert_eq!(
            execution_name(&trigger.detail.job_run_id),
            format!("glue-{}", trigger.detail.job_run_id)
        );
    }

    #[test]
    fn job_run_arguments_name_partitions_or_fail_naming_the_argument() {
        let pair = Config::parse(
            "[[pair]]\nname = \"orders\"\nsource = \"a\"\ntarget = \"b\"\nkey = [\"id\"]\nglue_jobs = [\"etl\"]\npartitions_from_argument = \"--partitions\"\n",
            "t",
        )
        .unwrap()
        .pairs
        .remove(0);
        let run = GlueJobDetail {
            job_name: "etl".into(),
            job_run_id: "jr_1".into(),
            state: "SUCCEEDED".into(),
        };
        let args = |v: &str| {
            std::collections::HashMap::from([("--partitions".to_string(), v.to_string())])
        };
        let got = |v: &str| job_run_partitions(&pair, "--partitions", &args(v), &run);
        assert_eq!(
            got(" dt=2024-01-01, dt=2024-01-02/region=eu ,dt=2024-01-01").unwrap(),
            vec!["dt=2024-01-01", "dt=2024-01-02/region=eu"]
        );
        assert_eq!(got(r#"["note=a,b"]"#).unwrap(), vec!["note=a,b"]);
        for bad in ["", " , ", "2024-01-01", "[not json", "dt=1/=x"] {
            let err = got(bad).unwrap_err().to_string();
            assert!(
                err.contains("--partitions") && err.contains("jr_1") && err.contains("orders"),
                "{bad}: {err}"
            );
        }
        let err = job_run_partitions(&pair, "--partitions", &Default::default(), &run)
            .unwrap_err()
            .to_string();
        assert!(err.contains("has no `--partitions` argument"), "{err}");
    }

    #[test]
    fn requests_are_told_apart_and_bounded() {
        let glue = serde_json::json!({"detail-type": GLUE_JOB_STATE_CHANGE, "source": "aws.glue",
            "detail": {"jobName": "j", "jobRunId": "jr_1", "state": "SUCCEEDED"}});
        assert!(matches!(
            LookupRequest::parse(glue),
            Ok(LookupRequest::GlueJob(_))
        ));
        let on_demand = serde_json::json!({"pairs": ["orders"]});
        assert!(matches!(
            LookupRequest::parse(on_demand),
            Ok(LookupRequest::OnDemand(_))
        ));
        let typo = serde_json::json!({"pair": ["orders"]});
        assert_eq!(
            LookupRequest::parse(typo).unwrap_err().error_type(),
            "InvalidInput"
        );
        let huge = serde_json::json!({"pairs": vec!["p".repeat(1000); 300]});
        let err = LookupRequest::parse(huge).unwrap_err().to_string();
        assert!(err.contains("limit"), "{err}");
    }
}
