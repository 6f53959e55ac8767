//! Running a pair end to end in one process: resolve both tables, plan the compare,
//! reconcile the partitions in parallel, merge, and write the report folder.
//! The Lambda functions run the same steps split across invocations.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;

use crate::budget::MemoryBudget;
use crate::config::{Defaults, PairConfig};
use crate::error::{ReconError, Result};
use crate::footer_stats::key_footer;
use crate::hints::HintCollector;
use crate::layout::{ReportLocation, report_dir};
use crate::mask::MaskKey;
pub use crate::model::{FooterCounts, KeyFooter};
use crate::partial::PartialDiff;
use crate::partition_filter::Filter;
use crate::plan::{ComparePlan, with_partition_columns};
use crate::reconcile::ItemRunner;
use crate::report::{Report, RunMeta, build_report, new_run_id, now_rfc3339};
use crate::scan::{NoProgress, Progress, open_file};
use crate::side_schema::SideSchema;
use crate::storage::Storage;
use crate::table::{Location, TableListing, WorkItem, align, list_location, partition_label};

use crate::catalog::Catalog;

/// How a run is carried out.
#[derive(Clone)]
pub struct RunOptions {
    /// Storage for tables and reports.
    pub storage: Storage,
    /// The Glue catalog, when glue:// tables are used.
    pub catalog: Option<Arc<dyn Catalog>>,
    /// Row groups decoded at once (default: 2 per core).
    pub parallelism: usize,
    /// Partitions in flight at once.
    pub item_concurrency: usize,
    /// Progress sink.
    pub progress: Arc<dyn Progress>,
    /// Run id.
    pub run_id: String,
    /// The start time to record instead of now (RFC 3339), set by [`RunOptions::as_of`].
    pub as_of: Option<String>,
    /// What triggered the run.
    pub trigger: String,
    /// Restrict to these partition labels (`dt=2024-01-01`), when set.
    pub partitions: Option<Vec<String>>,
    /// Memory the partitions in flight may keep their decoded batches in.
    pub retain: MemoryBudget,
    /// Memory the key indexes of the partitions in flight may take (beyond it, an
    /// index waits in a temporary file).
    pub index: MemoryBudget,
    /// The key of masked values' tokens; unset, a pair that masks a column uses the
    /// local key file ([`MaskKey::local`]).
    pub mask_key: Option<MaskKey>,
}

impl RunOptions {
    /// Record the run as started at `at` (replaying a missed day, a demo's history):
    /// its run id and start time are `at`'s.
    pub fn as_of(&mut self, at: chrono::DateTime<chrono::Utc>) {
        self.run_id = crate::report::run_id_at(at);
        self.as_of = Some(crate::report::rfc3339(at));
    }

    /// When a pair run starts: now, or the time of [`RunOptions::as_of`].
    pub fn started_at(&self) -> String {
        self.as_of.clone().unwrap_or_else(now_rfc3339)
    }

    /// Defaults for a local run: local storage, all cores, no progress output.
    pub fn local() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        RunOptions {
            storage: Storage::local_only(),
            catalog: None,
            parallelism: cores * 2,
            item_concurrency: cores.max(2),
            progress: Arc::new(NoProgress),
            run_id: new_run_id(),
            as_of: None,
            trigger: "on-demand".into(),
            partitions: None,
            retain: MemoryBudget::for_batches(),
            index: MemoryBudget::for_indexes(),
            mask_key: None,
        }
    }
}

/// A pair ready to reconcile: its plan and work items.
pub struct PreparedPair {
    /// The compare plan.
    pub plan: ComparePlan,
    /// One item per aligned partition.
    pub items: Vec<WorkItem>,
    /// Rows of the items' files in all, both sides (from their footers; a file whose
    /// footer could not be read counts 0).
    pub total_rows: u64,
    /// Each item's rows per side from the footers, by partition.
    pub footer_counts: Vec<FooterCounts>,
}

/// Resolve a table location to its files.
pub async fn resolve_table(
    opts: &RunOptions,
    location: &str,
    filter: Option<&str>,
) -> Result<TableListing> {
    match Location::parse(location)? {
        Location::Glue { database, table } => {
            let catalog = opts.catalog.as_ref().ok_or_else(|| {
                ReconError::InvalidInput(format!(
                    "{location} is a Glue table but no Glue client is configured"
                ))
            })?;
            catalog
                .resolve(&database, &table, filter, opts.partitions.as_deref())
                .await
        }
        Location::Local(_) | Location::S3(_) => {
            let parsed = filter.map(Filter::parse).transpose()?;
            list_location(&opts.storage, location, parsed.as_ref()).await
        }
    }
}

/// Footers read at once while a side's schema is gathered.
const FOOTER_CONCURRENCY: usize = 32;

/// The schema of a side: the union of its files' columns ([`SideSchema`]) and its
/// partition columns. A corrupt file is skipped here: it fails its own partition,
/// which the report shows as incomplete, instead of stopping the whole pair.
async fn table_schema(
    opts: &RunOptions,
    listing: &TableListing,
    key: &[String],
) -> Result<(arrow::datatypes::Schema, HashMap<String, (u64, KeyFooter)>)> {
    let mut rows = HashMap::new();
    let mut union = SideSchema::new(&listing.location);
    let mut corrupt = None;
    let mut footers = futures::stream::iter(&listing.files)
        .map(|file| async move {
            let store = opts.storage.for_uri(&file.file.uri)?;
            open_file(store.as_ref(), file).await
        })
        .buffered(FOOTER_CONCURRENCY);
    while let Some(opened) = footers.next().await {
        match opened {
            Ok(opened) => {
                let meta = opened.meta.metadata();
                let n = meta.file_metadata().num_rows().max(0) as u64;
                let key = key_footer(meta, key);
                rows.insert(opened.file.file.uri.clone(), (n, key));
                union.add(&opened.file.file.uri, &opened.schema)?
            }
            Err(e @ ReconError::CorruptParquet { .. }) => {
                corrupt.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    if union.files() == 0 {
        return Err(corrupt.unwrap_or_else(|| ReconError::TableNotFound {
            location: listing.location.clone(),
            reason: "no Parquet files match (check the partition filter)".into(),
        }));
    }
    let schema = with_partition_columns(&union.finish(), &listing.partition_columns);
    Ok((schema, rows))
}

/// Resolve both tables, build the plan and align partitions.
pub async fn prepare_pair(pair: &PairConfig, opts: &RunOptions) -> Result<PreparedPair> {
    let filter = pair.partition_filter.as_deref();
    // Both sides are resolved at once; a source error is reported before a target
    // error so the message does not depend on which request finished first.
    let (source, target) = futures::join!(
        resolve_table(opts, &pair.source, filter),
        resolve_table(opts, &pair.target, filter)
    );
    let (mut source, mut target) = (source?, target?);
    let mut items = align(&pair.name, &source, &target);
    if let Some(wanted) = &opts.partitions {
        for w in wanted {
            if !items.iter().any(|i| &i.partition == w) {
                return Err(ReconError::InvalidInput(format!(
                    "pair `{}` has no partition `{w}` (of those requested, it has: {})",
                    pair.name,
                    items
                        .iter()
                        .filter(|i| wanted.contains(&i.partition))
                        .map(|i| i.partition.as_str())
                        .take(20)
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        items.retain(|i| wanted.contains(&i.partition));
        // Only the requested partitions' footers are read (a Glue catalog has
        // already fetched only those; a folder or S3 table is listed whole).
        for listing in [&mut source, &mut target] {
            listing
                .files
                .retain(|f| wanted.contains(&partition_label(&f.partition)));
        }
    }
    // The key's names on the source side (before `rename`).
    let source_key: Vec<String> = pair
        .key
        .iter()
        .map(|k| {
            pair.rename
                .iter()
                .find(|(_, to)| to.eq_ignore_ascii_case(k))
                .map_or_else(|| k.clone(), |(from, _)| from.clone())
        })
        .collect();
    let (s_schema, t_schema) = futures::join!(
        table_schema(opts, &source, &source_key),
        table_schema(opts, &target, &pair.key)
    );
    let ((s_schema, mut rows), (t_schema, t_rows)) = (s_schema?, t_schema?);
    rows.extend(t_rows);
    let plan = ComparePlan::build(pair, &s_schema, &t_schema)?;
    // Rows and key statistics of a side's files that hold rows.
    let side = |files: &[crate::table::TableFile]| -> (u64, Option<KeyFooter>) {
        let read = files.iter().filter_map(|f| rows.get(&f.file.uri));
        read.filter(|(n, _)| *n > 0)
            .fold((0, None), |(n, key), (m, k)| {
                (n + m, Some(key.map_or(*k, |key: KeyFooter| key.and(*k))))
            })
    };
    let mut footer_counts: Vec<FooterCounts> = items
        .iter()
        .map(|i| {
            let ((source_rows, source_key), (target_rows, target_key)) =
                (side(&i.source), side(&i.target));
            FooterCounts {
                partition: i.partition.clone(),
                source_rows,
                target_rows,
                source_key,
                target_key,
            }
        })
        .collect();
    footer_counts.sort_by(|a, b| a.partition.cmp(&b.partition));
    let total_rows = footer_counts
        .iter()
        .map(|c| c.source_rows + c.target_rows)
        .sum();
    Ok(PreparedPair {
        plan,
        items,
        total_rows,
        footer_counts,
    })
}

/// Reconcile every item, `item_concurrency` at a time, each as a task of its own (so
/// one item's key join never holds up the others), the largest first. An item whose
/// task fails (a panic) becomes a failed partial: reported, never dropped. Partials
/// come back in the order they finish.
pub(crate) async fn run_items(
    runner: &ItemRunner,
    items: &[WorkItem],
    item_concurrency: usize,
) -> Vec<PartialDiff> {
    futures::stream::iter(largest_first(items))
        .map(|item| {
            let runner = runner.clone();
            async move {
                let spawned = tokio::spawn({
                    let item = item.clone();
                    async move { runner.run(&item).await }
                });
                spawned.await.unwrap_or_else(|e| {
                    let e = ReconError::Transient {
                        resource: item.partition.clone(),
                        reason: format!("the partition's task failed: {e}"),
                    };
                    PartialDiff::failed(&item, e.error_type(), e.to_string())
                })
            }
        })
        .buffer_unordered(item_concurrency.max(1))
        .collect()
        .await
}

/// The items by their files' bytes, the most first (ties in their given order): an
/// item's last row groups and its key join use fewer cores than its hashing, so a
/// large item started last would leave cores idle at the end of the run, where one
/// started first overlaps with the smaller items' hashing.
fn largest_first(items: &[WorkItem]) -> Vec<WorkItem> {
    let bytes =
        |i: &WorkItem| -> u64 { i.source.iter().chain(&i.target).map(|f| f.file.size).sum() };
    let mut ordered = items.to_vec();
    // Each item's bytes summed once, not at every comparison.
    ordered.sort_by_cached_key(|i| std::cmp::Reverse(bytes(i)));
    ordered
}

/// The result of a pair's run.
pub struct PairRun {
    /// The merged report.
    pub report: Report,
    /// The partial diffs (for diffs.parquet).
    pub partials: Vec<PartialDiff>,
}

/// Run one pair in this process.
pub async fn run_pair_full(
    pair: &PairConfig,
    defaults: &Defaults,
    opts: &RunOptions,
) -> Result<PairRun> {
    let meta = RunMeta {
        run_id: opts.run_id.clone(),
        trigger: opts.trigger.clone(),
        started_at: opts.started_at(),
    };
    let prepared = prepare_pair(pair, opts).await?;
    opts.progress
        .planned(prepared.total_rows, prepared.items.len());
    // Before a page is read: partitions whose row counts already differ.
    for counts in prepared.footer_counts.iter().filter(|c| c.differ()) {
        opts.progress.footers_differ(counts);
    }
    let mask = match &opts.mask_key {
        Some(key) => Some(key.clone()),
        None if prepared.plan.masks_columns() => Some(MaskKey::local()?),
        None => None,
    };
    let runner = ItemRunner {
        mask,
        storage: opts.storage.clone(),
        plan: Arc::new(prepared.plan),
        parallelism: opts.parallelism,
        progress: opts.progress.clone(),
        retain: opts.retain.clone(),
        index: opts.index.clone(),
        turns: Default::default(),
    };
    let partials = run_items(&runner, &prepared.items, opts.item_concurrency).await;
    let report = build_report(
        &meta,
        pair,
        pair.sample_limit(defaults),
        runner.plan.schema.clone(),
        &partials,
        HintCollector::of(pair, &partials),
    );
    Ok(PairRun { report, partials })
}

/// Run one pair and return its report.
pub async fn run_pair(pair: &PairConfig, defaults: &Defaults, opts: &RunOptions) -> Result<Report> {
    Ok(run_pair_full(pair, defaults, opts).await?.report)
}

/// Write report.json, report.html and diffs.parquet under `root/<pair>/<run_id>/`.
/// Every object is written whole; a retried run overwrites the same keys.
pub async fn write_report(storage: &Storage, root: &str, run: &PairRun) -> Result<ReportLocation> {
    let rows = crate::diffrows::write_diff_rows(&run.report.key, &run.partials)?;
    write_report_files(storage, root, &run.report, rows).await
}

/// Write a report's files (as [`write_report`]) with its diffs.parquet already
/// encoded (`diff_rows`, e.g. by a [`crate::diffrows::DiffRowsWriter`]).
pub async fn write_report_files(
    storage: &Storage,
    root: &str,
    r: &Report,
    diff_rows: Bytes,
) -> Result<ReportLocation> {
    let loc = ReportLocation::of(report_dir(root, &r.pair, &r.run_id), &r.artifacts);
    let store = storage.for_uri(&loc.dir)?;
    store.put(&loc.diff_rows, diff_rows).await?;
    store
        .put(&loc.html, Bytes::from(crate::html::render_report(r)))
        .await?;
    let json = serde_json::to_vec_pretty(r).map_err(|e| ReconError::Write {
        target: loc.json.clone(),
        reason: e.to_string(),
    })?;
    store.put(&loc.json, Bytes::from(json)).await?;
    Ok(loc)
}

/// Write the record of a pair that could not run in its report's place:
/// `report.json` (the [`crate::report::NotRun`] with the run) and `report.html` (the
/// error page), so the ledger row and the dashboard link to why. Returns the
/// report.json URI.
pub async fn write_not_run(
    storage: &Storage,
    root: &str,
    meta: &RunMeta,
    not_run: &crate::report::NotRun,
) -> Result<String> {
    let dir = report_dir(root, &not_run.pair, &meta.run_id);
    let (json_uri, html_uri) = (
        Storage::join(&dir, "report.json"),
        Storage::join(&dir, "report.html"),
    );
    let record = serde_json::json!({
        "pair": not_run.pair,
        "status": not_run.status,
        "error_type": not_run.error_type,
        "error": not_run.error,
        "run_id": meta.run_id,
        "trigger": meta.trigger,
        "started_at": meta.started_at,
        "engine_version": crate::ENGINE_VERSION,
    });
    let store = storage.for_uri(&dir)?;
    store
        .put(
            &html_uri,
            Bytes::from(crate::html::render_not_run(not_run, meta)),
        )
        .await?;
    store
        .put(&json_uri, Bytes::from(format!("{record:#}\n")))
        .await?;
    Ok(json_uri)
}

/// Check that reports can be written under `root` before any table is read: create
/// and remove a probe object. A root that is a file, read-only, or refused (S3
/// AccessDenied) fails here, with the root named, instead of after the whole compare.
pub async fn check_writable(storage: &Storage, root: &str) -> Result<()> {
    let probe = Storage::join(root, &format!(".glue-recon-probe-{}", std::process::id()));
    let store = storage.for_uri(&probe)?;
    let refused = |e: ReconError| ReconError::Write {
        target: root.to_string(),
        reason: format!(
            "reports cannot be written there ({e}); choose another --out or `report_dir`, or fix its permissions"
        ),
    };
    store.put(&probe, Bytes::new()).await.map_err(refused)?;
    if let Err(e) = store.delete(&probe).await {
        tracing::warn!(probe = %probe, error = %e, "could not remove the write probe");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::largest_first;
    use crate::storage::FileRef;
    use crate::table::{Presence, TableFile, WorkItem};

    fn item(partition: &str, source: &[u64], target: &[u64]) -> WorkItem {
        let files = |sizes: &[u64]| -> Vec<TableFile> {
            sizes
                .iter()
                .enumerate()
                .map(|(i, &size)| TableFile {
                    file: FileRef {
                        uri: format!("{partition}/{i}.parquet"),
                        size,
                    },
                    partition: Vec::new(),
                })
                .collect()
        };
        WorkItem {
            item_id: partition.into(),
            pair: "p".into(),
            partition: partition.into(),
            presence: Presence::Both,
            source: files(source),
            target: files(target),
        }
    }

    #[test]
    fn items_start_largest_first_by_both_sides_bytes() {
        let items = [
            item("dt=1", &[10], &[10]),
            item("dt=2", &[5], &[100, 100]),
            item("dt=3", &[150], &[]),
            item("dt=4", &[15], &[5]),
        ];
        let order: Vec<String> = largest_first(&items)
            .into_iter()
            .map(|i| i.partition)
            .collect();
        // dt=2 has 205 bytes, dt=3 150, and dt=1 and dt=4 tie at 20: given order.
        assert_eq!(order, ["dt=2", "dt=3", "dt=1", "dt=4"]);
    }
}
