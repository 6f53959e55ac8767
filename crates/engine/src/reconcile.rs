//! Reconciling one work item: hash both sides into a `PartitionIndex`, classify
//! every key, then read back only the mismatched rows to say which columns differ
//! and from what to what.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::{ColumnChunkMetaData, RowGroupMetaData};
use tokio::sync::Semaphore;

use crate::budget::MemoryBudget;
use crate::canonical::{display, is_null_encoding, split_values};
use crate::error::{ReconError, Result};
use crate::index::{MAX_FILE_ROWS, MAX_FILES, PartitionIndex, RowInfo, RowLoc};
use crate::mask::MaskKey;
use crate::partial::{ColumnDiff, Finding, FindingKind, ItemError, PartialDiff, Totals};
use crate::plan::{ComparePlan, PlanColumn, Side};
use crate::scan::{
    OpenedFile, Progress, Retained, RowValues, SideTask, hash_row_group, open_files, read_rows,
    retained_rows,
};
use crate::storage::Storage;
use crate::table::WorkItem;

/// Shared settings of a run's items.
#[derive(Clone)]
pub struct ItemRunner {
    /// Where files are.
    pub storage: Storage,
    /// The pair's plan.
    pub plan: Arc<ComparePlan>,
    /// How many row groups are decoded at once.
    pub parallelism: usize,
    /// Progress sink.
    pub progress: Arc<dyn Progress>,
    /// Memory the items in flight may keep their decoded batches in.
    pub retain: MemoryBudget,
    /// Memory the key indexes of the items in flight may take; an item whose index
    /// does not fit keeps it in a temporary file.
    pub index: MemoryBudget,
    /// Whose turn it is to start row-group tasks.
    pub turns: Turns,
    /// The key of masked values' tokens; required when the plan masks a column.
    pub mask: Option<MaskKey>,
}

/// Items in flight take turns starting their row-group tasks: an item starts its
/// first once the item before it has started its last. The cores stay busy across
/// items (one finishing its last row groups and joining its keys while the next
/// decodes), but only one item at a time grows its index and kept batches from
/// nothing, so peak memory is about one item and a part rather than one per item in
/// flight (on the bench data: 300 instead of 440 MiB, and a third fewer fresh pages
/// to fault in).
#[derive(Clone, Debug)]
pub struct Turns(Arc<Semaphore>);

impl Default for Turns {
    fn default() -> Self {
        Turns(Arc::new(Semaphore::new(1)))
    }
}

impl Turns {
    /// Wait for the turn, then yield `units`; the turn passes on once the last is
    /// taken (or the iterator is dropped).
    async fn take<T>(&self, units: Vec<T>) -> impl Iterator<Item = T> + use<T> {
        let mut turn = Some(
            self.0
                .clone()
                .acquire_owned()
                .await
                .expect("the turns semaphore is never closed"),
        );
        let mut units = units.into_iter();
        std::iter::from_fn(move || {
            let next = units.next();
            if next.is_none() {
                drop(turn.take());
            }
            next
        })
    }
}

/// Bytes a key index takes for `rows` rows with `tol_width` tolerance columns: a
/// 32-byte record, the key (16 bytes assumed) and the tolerance values, with room
/// for the growth of the buffers.
fn index_bytes(rows: usize, tol_width: usize) -> u64 {
    let per_row = 32 + 16 + 16 * tol_width as u64;
    rows as u64 * per_row * 5 / 4
}

/// Refuse a side whose rows the key index could not locate: more than
/// [`MAX_FILES`] files, or a file (URI, rows from its footer) of more than
/// [`MAX_FILE_ROWS`] rows.
fn check_locatable<'a>(
    partition: &str,
    side: Side,
    files: usize,
    mut rows: impl Iterator<Item = (&'a str, u64)>,
) -> Result<()> {
    if files > MAX_FILES {
        let side = side.as_str();
        return Err(ReconError::InvalidInput(format!(
            "partition {partition} has {files} files on the {side} side; glue-recon \
             reconciles at most {MAX_FILES} files a partition side: compact the partition's \
             files"
        )));
    }
    match rows.find(|(_, n)| *n > MAX_FILE_ROWS) {
        Some((uri, n)) => Err(ReconError::InvalidInput(format!(
            "{uri} has {n} rows; glue-recon reconciles files of at most {MAX_FILE_ROWS} rows: \
             split the file"
        ))),
        None => Ok(()),
    }
}

/// Bytes the decoded batches of a row group take in memory, estimated from its
/// footer: per column, the larger of its uncompressed bytes and its values at their
/// Arrow width (a dictionary-encoded column decodes to far more than its pages), and
/// for strings and binaries a 16-byte view a value on top of the pages it points
/// into. The footer's own total alone took a third of the memory of a wide table's
/// batches.
fn decoded_bytes(rg: &RowGroupMetaData) -> u64 {
    rg.columns().iter().map(column_decoded_bytes).sum()
}

/// [`decoded_bytes`] of one column chunk.
fn column_decoded_bytes(c: &ColumnChunkMetaData) -> u64 {
    let values = c.num_values().max(0) as u64;
    let pages = c.uncompressed_size().max(0) as u64;
    let width = match c.column_type() {
        PhysicalType::BOOLEAN => return pages.max(values.div_ceil(8)),
        PhysicalType::BYTE_ARRAY => return pages + 16 * values,
        // Decimals decode to 16 or 32 bytes whatever their stored width.
        PhysicalType::FIXED_LEN_BYTE_ARRAY => c.column_descr().type_length().max(16) as u64,
        PhysicalType::INT32 | PhysicalType::FLOAT => 4,
        PhysicalType::INT64 | PhysicalType::DOUBLE | PhysicalType::INT96 => 8,
    };
    pages.max(values * width)
}

/// The kept batches of an item: per side, per file.
type RetainedItem = [Vec<Retained>; 2];

/// Whether two tolerance-column values are equal within the column's tolerance.
pub(crate) fn within_tolerance(c: &PlanColumn, a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            if x.is_nan() || y.is_nan() {
                return x.is_nan() && y.is_nan();
            }
            if x == y {
                return true;
            }
            let d = (x - y).abs();
            c.abs_tolerance.is_some_and(|t| d <= t)
                || c.rel_tolerance
                    .is_some_and(|t| d <= t * x.abs().max(y.abs()))
        }
        _ => false,
    }
}

struct Candidate {
    key: Vec<u8>,
    source: RowLoc,
    target: RowLoc,
}

/// The rows of a side's files the candidates need: per file, sorted and unique.
fn candidate_rows(side: Side, candidates: &[Candidate]) -> BTreeMap<u32, Vec<u64>> {
    let mut per_file: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for c in candidates {
        let loc = [c.source, c.target][side.index()];
        per_file.entry(loc.file).or_default().push(loc.row);
    }
    for rows in per_file.values_mut() {
        rows.sort_unstable();
        rows.dedup();
    }
    per_file
}

impl ItemRunner {
    /// The token shown for a masked value (never the value).
    fn masked(&self, canonical: &[u8]) -> String {
        match &self.mask {
            Some(key) => key.token(canonical),
            None => "masked".into(),
        }
    }

    /// A key as shown in findings: masked key columns as tokens.
    fn key_display(&self, key: &[u8]) -> Vec<Option<String>> {
        split_values(key)
            .into_iter()
            .zip(&self.plan.key)
            .map(|(v, c)| {
                let text = display(v);
                if c.masked && text.is_some() {
                    Some(self.masked(v))
                } else {
                    text
                }
            })
            .collect()
    }

    /// Reconcile one item. Never fails: an item that cannot be read becomes a
    /// partial with `error` set, so it is reported, not dropped.
    pub async fn run(&self, item: &WorkItem) -> PartialDiff {
        let mut partial = PartialDiff::empty(item);
        if let Err(e) = self.reconcile(item, &mut partial).await {
            tracing::warn!(pair = %item.pair, partition = %item.partition, error = %e, "partition not reconciled");
            partial.error = Some(ItemError {
                error_type: e.error_type().to_string(),
                message: e.to_string(),
            });
            partial.findings.clear();
            partial.column_mismatches.clear();
            partial.totals = Totals::default();
        }
        self.progress.item_done(&item.partition);
        partial
    }

    async fn open_side(&self, files: &[crate::table::TableFile]) -> Result<Vec<Arc<OpenedFile>>> {
        let mut out = Vec::with_capacity(files.len());
        let Some(first) = files.first() else {
            return Ok(out);
        };
        let store = self.storage.for_uri(&first.file.uri)?;
        for r in open_files(&store, files, self.parallelism * 2).await {
            out.push(Arc::new(r?));
        }
        Ok(out)
    }

    async fn reconcile(&self, item: &WorkItem, partial: &mut PartialDiff) -> Result<()> {
        if self.mask.is_none() && self.plan.masks_columns() {
            return Err(ReconError::InvalidConfig {
                file: format!("pair `{}`", item.pair),
                message: "it masks columns but no masking key is set: the hash function \
                          reads it from the secret RECON_MASK_KEY_SECRET names (the template \
                          sets it), the CLI from GLUE_RECON_MASK_KEY_FILE or its default key file"
                    .into(),
            });
        }
        let sides = [
            (Side::Source, self.open_side(&item.source).await?),
            (Side::Target, self.open_side(&item.target).await?),
        ];
        for (side, files) in &sides {
            let rows = files.iter().map(|f| {
                let rows = f.meta.metadata().file_metadata().num_rows();
                (f.file.file.uri.as_str(), rows.max(0) as u64)
            });
            check_locatable(&item.partition, *side, files.len(), rows)?;
        }
        let rows_of = |files: &[Arc<OpenedFile>]| -> usize {
            files
                .iter()
                .map(|f| f.meta.metadata().file_metadata().num_rows().max(0) as usize)
                .sum()
        };
        let (source_rows, target_rows) = (rows_of(&sides[0].1), rows_of(&sides[1].1));
        let expected = source_rows.max(target_rows);
        let tol_width = self.plan.tolerant.len();
        // Held until the item is done, with the index it pays for.
        let index_permit = self
            .index
            .try_reserve(index_bytes(source_rows + target_rows, tol_width));
        let index = Arc::new(match &index_permit {
            Some(_) => PartitionIndex::new(tol_width, expected),
            None => {
                tracing::info!(partition = %item.partition, rows = source_rows + target_rows, "key index kept on disk");
                PartitionIndex::on_disk(tol_width, expected)?
            }
        });
        let bytes: u64 = sides
            .iter()
            .flat_map(|(_, files)| files.iter())
            .flat_map(|f| f.meta.metadata().row_groups().iter())
            .map(decoded_bytes)
            .sum();
        // Held until the item is done, with the batches it pays for.
        let retain_permit = self.retain.try_reserve(bytes);
        let retain = retain_permit.is_some();
        let mut retained: RetainedItem = [
            vec![Vec::new(); sides[0].1.len()],
            vec![Vec::new(); sides[1].1.len()],
        ];
        let mut units = Vec::new();
        for (side, files) in &sides {
            let Some(first) = files.first() else { continue };
            let task = Arc::new(SideTask {
                store: self.storage.for_uri(&first.file.file.uri)?,
                plan: self.plan.clone(),
                side: *side,
                index: index.clone(),
                progress: self.progress.clone(),
                retain,
            });
            for (file_no, f) in files.iter().enumerate() {
                for rg in 0..f.meta.metadata().num_row_groups() {
                    if f.meta.metadata().row_group(rg).num_rows() > 0 {
                        units.push((task.clone(), file_no as u32, f.clone(), rg));
                    }
                }
            }
        }
        let mut results = futures::stream::iter(self.turns.take(units).await)
            .map(|(task, file_no, f, rg)| {
                tokio::spawn(async move {
                    let kept = hash_row_group(&task, file_no, &f, rg).await?;
                    Ok::<_, ReconError>((task.side.index(), file_no, kept))
                })
            })
            .buffer_unordered(self.parallelism.max(1));
        while let Some(r) = results.next().await {
            let (slot, file_no, kept) = r.map_err(|e| ReconError::Transient {
                resource: item.partition.clone(),
                reason: format!("hash task failed: {e}"),
            })??;
            retained[slot][file_no as usize].extend(kept);
        }
        drop(results);
        for files in &mut retained {
            for batches in files {
                batches.sort_by_key(|(first, _)| *first);
            }
        }

        let plan = &self.plan;
        let t = &mut partial.totals;
        t.source_rows = index.rows(Side::Source);
        t.target_rows = index.rows(Side::Target);
        let mut findings = Vec::new();
        let mut candidates = Vec::new();
        let dup = |side: Side, info: &RowInfo, key: &[u8]| Finding {
            kind: FindingKind::DuplicateKey,
            key: self.key_display(key),
            side: Some(side),
            count: Some(info.count as u64),
            diffs: Vec::new(),
            identical: Some(info.identical),
        };
        index.drain_keys(|v| {
            let simple = |kind| Finding {
                kind,
                key: self.key_display(v.key),
                side: None,
                count: None,
                diffs: Vec::new(),
                identical: None,
            };
            for (side, info) in [(Side::Source, v.source), (Side::Target, v.target)] {
                if let Some(i) = info
                    && i.count > 1
                {
                    findings.push(dup(side, i, v.key));
                    match side {
                        Side::Source => t.duplicate_key_source += 1,
                        Side::Target => t.duplicate_key_target += 1,
                    }
                }
            }
            match (v.source, v.target) {
                (Some(_), None) => {
                    t.missing_in_target += 1;
                    findings.push(simple(FindingKind::MissingInTarget));
                }
                (None, Some(_)) => {
                    t.extra_in_target += 1;
                    findings.push(simple(FindingKind::ExtraInTarget));
                }
                (Some(s), Some(g)) if s.count == 1 && g.count == 1 => {
                    let tol_ok = plan
                        .tolerant
                        .iter()
                        .enumerate()
                        .all(|(i, c)| within_tolerance(c, v.source_tol[i], v.target_tol[i]));
                    if s.hash == g.hash && tol_ok {
                        t.matched += 1;
                    } else {
                        candidates.push(Candidate {
                            key: v.key.to_vec(),
                            source: s.loc,
                            target: g.loc,
                        });
                    }
                }
                _ => {}
            }
        })?;
        for n in index.take_null_keys() {
            match n.side {
                Side::Source => t.null_key_source += 1,
                Side::Target => t.null_key_target += 1,
            }
            findings.push(Finding {
                kind: FindingKind::NullKey,
                key: self.key_display(&n.key),
                side: Some(n.side),
                count: None,
                diffs: Vec::new(),
                identical: None,
            });
        }
        t.mismatch = candidates.len() as u64;
        if !candidates.is_empty() {
            let detail = if retain {
                self.retained_details(&sides, &retained, &candidates)?
            } else {
                self.details(&sides, &candidates).await?
            };
            for c in candidates {
                let (Some(s), Some(g)) = (detail[0].get(&c.source), detail[1].get(&c.target))
                else {
                    return Err(ReconError::Transient {
                        resource: item.partition.clone(),
                        reason: "a mismatched row could not be read back".into(),
                    });
                };
                let diffs = self.column_diffs(s, g);
                for d in &diffs {
                    *partial
                        .column_mismatches
                        .entry(d.column.clone())
                        .or_default() += 1;
                }
                findings.push(Finding {
                    kind: FindingKind::Mismatch,
                    key: self.key_display(&c.key),
                    side: None,
                    count: None,
                    diffs,
                    identical: None,
                });
            }
        }
        findings.sort_by(|a, b| {
            a.kind
                .cmp(&b.kind)
                .then_with(|| crate::partial::compare_keys(&a.key, &b.key))
                .then_with(|| {
                    a.side
                        .map(|s| s == Side::Target)
                        .cmp(&b.side.map(|s| s == Side::Target))
                })
        });
        partial.findings = findings;
        Ok(())
    }

    /// The candidate rows of both sides, from the batches kept in memory.
    fn retained_details(
        &self,
        sides: &[(Side, Vec<Arc<OpenedFile>>); 2],
        retained: &RetainedItem,
        candidates: &[Candidate],
    ) -> Result<[HashMap<RowLoc, RowValues>; 2]> {
        let mut out = [HashMap::new(), HashMap::new()];
        for (slot, (side, files)) in sides.iter().enumerate() {
            for (file_no, rows) in candidate_rows(*side, candidates) {
                let f = &files[file_no as usize];
                let batches = &retained[slot][file_no as usize];
                for (row, values) in retained_rows(&self.plan, *side, f, batches, &rows)? {
                    out[slot].insert(RowLoc { file: file_no, row }, values);
                }
            }
        }
        Ok(out)
    }

    /// Read back the candidate rows of both sides.
    async fn details(
        &self,
        sides: &[(Side, Vec<Arc<OpenedFile>>); 2],
        candidates: &[Candidate],
    ) -> Result<[HashMap<RowLoc, RowValues>; 2]> {
        // One read per (side, file), each its own task so both sides and all files
        // decode on every core.
        let mut reads = Vec::new();
        for (slot, (side, files)) in sides.iter().enumerate() {
            for (file_no, rows) in candidate_rows(*side, candidates) {
                let f = files[file_no as usize].clone();
                let plan = self.plan.clone();
                let storage = self.storage.clone();
                let side = *side;
                reads.push(async move {
                    let store = storage.for_uri(&f.file.file.uri)?;
                    let rows = read_rows(store.as_ref(), &plan, side, &f, &rows).await?;
                    Ok::<_, ReconError>((slot, file_no, rows))
                });
            }
        }
        let results = futures::stream::iter(reads.into_iter().map(tokio::spawn))
            .buffer_unordered(self.parallelism.max(1))
            .collect::<Vec<_>>()
            .await;
        let mut out = [HashMap::new(), HashMap::new()];
        for r in results {
            let (slot, file_no, rows) = r.map_err(|e| ReconError::Transient {
                resource: "mismatch read-back".into(),
                reason: format!("read task failed: {e}"),
            })??;
            for (row, values) in rows {
                out[slot].insert(RowLoc { file: file_no, row }, values);
            }
        }
        Ok(out)
    }

    fn column_diffs(&self, s: &RowValues, g: &RowValues) -> Vec<ColumnDiff> {
        let plan = &self.plan;
        let nk = plan.key.len();
        let tol_from = nk + plan.values.len();
        let show = |c: &PlanColumn, v: &RowValues, i: usize| match c.masked {
            true => (!is_null_encoding(&v.canonical[i])).then(|| self.masked(&v.canonical[i])),
            false => v.display(i),
        };
        let mut diffs: Vec<ColumnDiff> = plan
            .all_columns()
            .enumerate()
            .skip(nk)
            .filter(|(i, c)| {
                if *i >= tol_from {
                    !within_tolerance(c, s.floats[*i], g.floats[*i])
                } else {
                    s.canonical[*i] != g.canonical[*i]
                }
            })
            .map(|(i, c)| ColumnDiff {
                column: c.name.clone(),
                source: show(c, s, i),
                target: show(c, g, i),
            })
            .collect();
        if diffs.is_empty() {
            // The row hashes differ but no single column does: should not happen;
            // say so rather than hide the finding.
            diffs.push(ColumnDiff {
                column: "(row hash)".into(),
                source: None,
                target: None,
            });
        }
        diffs.sort_by(|a, b| a.column.cmp(&b.column));
        diffs
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use futures::poll;

    use super::{MAX_FILE_ROWS, MAX_FILES, Side, Turns, check_locatable};

    #[test]
    fn sides_beyond_what_a_row_location_holds_are_refused_by_name() {
        let ok = [("a.parquet", MAX_FILE_ROWS)];
        assert!(check_locatable("dt=1", Side::Source, MAX_FILES, ok.into_iter()).is_ok());
        let many = check_locatable("dt=1", Side::Target, MAX_FILES + 1, ok.into_iter());
        let message = many.unwrap_err().to_string();
        assert!(message.contains("partition dt=1 has 16777217 files on the target side"));
        assert!(message.contains("compact"), "{message}");
        let long = [("a.parquet", 5), ("b.parquet", MAX_FILE_ROWS + 1)];
        let message = check_locatable("dt=1", Side::Source, 2, long.into_iter())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("b.parquet has 1099511627777 rows"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_turn_passes_on_after_the_last_unit_or_when_the_units_are_dropped() {
        let turns = Turns::default();
        let mut first = turns.take(vec![1, 2]).await;
        let mut second = pin!(turns.take(vec![3]));
        assert!(poll!(second.as_mut()).is_pending());
        assert_eq!(first.next(), Some(1));
        assert_eq!(first.next(), Some(2));
        assert!(
            poll!(second.as_mut()).is_pending(),
            "the last unit not yet asked past"
        );
        assert_eq!(first.next(), None);
        let second = second.await;
        let mut third = pin!(turns.take(vec![4]));
        assert!(poll!(third.as_mut()).is_pending());
        drop(second);
        assert_eq!(third.await.collect::<Vec<_>>(), [4]);
    }
}

#[cfg(test)]
mod decoded_bytes_tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int32Array, RecordBatch, StringArray};
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::{column_decoded_bytes, decoded_bytes};

    #[test]
    fn dictionary_pages_and_string_views_count_at_their_decoded_size() {
        let n = 50_000usize;
        let columns: Vec<(&str, ArrayRef)> = vec![
            // Seven distinct values: a dictionary page and a few bits a row.
            (
                "few",
                Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i % 7))),
            ),
            (
                "text",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("t{i}")),
                )),
            ),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut file = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let reader = SerializedFileReader::new(Bytes::from(file)).unwrap();
        let rg = reader.metadata().row_group(0);
        let (few, text) = (rg.column(0), rg.column(1));
        assert!(
            (few.uncompressed_size() as usize) < n * 4,
            "dictionary-encoded"
        );
        assert_eq!(column_decoded_bytes(few), n as u64 * 4, "as 32-bit values");
        assert_eq!(
            column_decoded_bytes(text),
            text.uncompressed_size() as u64 + 16 * n as u64,
            "the pages the views point into, and the views"
        );
        assert!(decoded_bytes(rg) > rg.total_byte_size() as u64);
    }
}
