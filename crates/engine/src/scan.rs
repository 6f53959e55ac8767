//! Reading one side of a work item: Parquet files are opened through the
//! [`ObjectStore`], split into row groups, and every row group is decoded, encoded
//! and hashed as its own task so one large partition uses every core.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, UInt32Array};
use arrow::compute::{cast, take_record_batch};
use arrow::datatypes::{
    DECIMAL32_MAX_PRECISION, DECIMAL64_MAX_PRECISION, DataType, Float64Type, Schema, SchemaRef,
};
use futures::{StreamExt, TryStreamExt};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, RowSelection};
use parquet::arrow::async_reader::ParquetRecordBatchStreamBuilder;
use parquet::basic::Type as PhysicalType;
use parquet::schema::types::Type as ParquetType;

use crate::canonical::{Encoder, StringRules, is_null_encoding};
use crate::error::{ReconError, Result};
use crate::index::{NullKeyRow, PartitionIndex, RowLoc};
use crate::parquet_forms::{self, Form};
use crate::plan::{CompareMode, ComparePlan, PlanColumn, Side};
use crate::row_hasher::RowHasher;
use crate::storage::ObjectStore;
use crate::table::TableFile;

/// Rows per decoded batch.
pub(crate) const BATCH_SIZE: usize = 8192;

/// Rows per batch for hashing a row group of `rows` rows: [`BATCH_SIZE`], or the
/// whole row group when it has at most half as many again, rather than a batch and a
/// small remainder. Each batch costs its own arrays, encoders and bounds: the
/// 10,000-row row groups pyarrow writes by default took about 2% more CPU as batches of
/// 8192 and 1808 rows than as one.
fn hash_batch_rows(rows: usize) -> usize {
    match rows <= BATCH_SIZE + BATCH_SIZE / 2 {
        true => rows.max(1),
        false => BATCH_SIZE,
    }
}

/// Something that wants to know how far a run is (a progress bar).
pub trait Progress: Send + Sync {
    /// `n` more rows were hashed.
    fn rows(&self, n: u64);
    /// A work item (partition) finished.
    fn item_done(&self, partition: &str);
    /// The work planned for the pair, told once before hashing starts: the rows its
    /// items hold in all, both sides, from the files' footers, and the items.
    fn planned(&self, _rows: u64, _items: usize) {}
    /// A partition whose footers already hold different row counts on the two sides,
    /// told after [`Progress::planned`] and before any row is hashed.
    fn footers_differ(&self, _counts: &crate::model::FooterCounts) {}
}

/// Progress that goes nowhere.
pub struct NoProgress;

impl Progress for NoProgress {
    fn rows(&self, _: u64) {}
    fn item_done(&self, _: &str) {}
}

/// A Parquet error as the engine's error: a storage failure carried through the
/// reader (S3 access denied, throttling) keeps its own kind; anything else means
/// the file could not be decoded.
fn corrupt(file: &str, e: parquet::errors::ParquetError) -> ReconError {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<ReconError>() {
            Ok(storage) => *storage,
            Err(other) => ReconError::CorruptParquet {
                file: file.to_string(),
                reason: other.to_string(),
            },
        },
        e => ReconError::CorruptParquet {
            file: file.to_string(),
            reason: e.to_string(),
        },
    }
}

/// An opened Parquet file: its footer, decoded once and shared by its row-group tasks.
pub(crate) struct OpenedFile {
    /// The file.
    pub file: TableFile,
    /// Its Arrow metadata (INTERVAL columns read as raw bytes: [`parquet_forms`]).
    pub meta: ArrowReaderMetadata,
    /// Its Arrow schema as compared (top-level INTERVAL and UUID columns in their
    /// compared types).
    pub schema: SchemaRef,
    /// The form of each top-level column of `meta`'s schema, when it is compared in
    /// another.
    pub forms: Vec<Option<Form>>,
    /// The same metadata in the forms hashing reads fastest (`for_hashing`).
    pub hash_meta: ArrowReaderMetadata,
}

/// `meta` reading top-level columns in the Arrow forms that are quickest to decode
/// and encode, with the same values: strings and binaries as views, which point into
/// the decoded pages instead of copying every value, and decimals stored in at most
/// 32 or 64 bits (INT32, INT64, or a FIXED_LEN_BYTE_ARRAY of at most 4 or 8 bytes,
/// as pyarrow writes them) as 32- or 64-bit decimals, which the reader takes as they
/// are stored instead of widening every value to 128 bits.
fn for_hashing(meta: &ArrowReaderMetadata) -> ArrowReaderMetadata {
    let schema = meta.schema();
    let parquet_roots = meta
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields();
    // The bits a top-level decimal column is stored in (looked up for decimals only).
    let stored_bits = |name: &str| {
        let stored = parquet_roots.iter().find(|t| t.name() == name)?;
        match *stored.as_ref() {
            ParquetType::PrimitiveType {
                physical_type: PhysicalType::INT32,
                ..
            } => Some(32),
            ParquetType::PrimitiveType {
                physical_type: PhysicalType::INT64,
                ..
            } => Some(64),
            ParquetType::PrimitiveType {
                physical_type: PhysicalType::FIXED_LEN_BYTE_ARRAY,
                type_length,
                ..
            } => Some(8 * type_length.max(0)),
            _ => None,
        }
    };
    let mut changed = false;
    let fields: Vec<arrow::datatypes::FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            let hinted = match f.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
                DataType::Binary | DataType::LargeBinary => DataType::BinaryView,
                DataType::Decimal128(p, s) => match stored_bits(f.name()) {
                    Some(1..=32) if *p <= DECIMAL32_MAX_PRECISION => DataType::Decimal32(*p, *s),
                    Some(1..=64) if *p <= DECIMAL64_MAX_PRECISION => DataType::Decimal64(*p, *s),
                    _ => return f.clone(),
                },
                _ => return f.clone(),
            };
            changed = true;
            Arc::new(f.as_ref().clone().with_data_type(hinted))
        })
        .collect();
    if !changed {
        return meta.clone();
    }
    let hinted = Schema::new_with_metadata(fields, schema.metadata().clone());
    let options = ArrowReaderOptions::new().with_schema(Arc::new(hinted));
    ArrowReaderMetadata::try_new(meta.metadata().clone(), options).unwrap_or_else(|_| meta.clone())
}

/// Open a file and read its footer.
pub(crate) async fn open_file(store: &dyn ObjectStore, file: &TableFile) -> Result<OpenedFile> {
    let mut reader = store.open(&file.file).await?;
    let meta = ArrowReaderMetadata::load_async(&mut reader, ArrowReaderOptions::new())
        .await
        .map_err(|e| corrupt(&file.file.uri, e))?;
    let (meta, schema, forms) =
        parquet_forms::read_as_compared(meta).map_err(|e| corrupt(&file.file.uri, e))?;
    Ok(OpenedFile {
        file: file.clone(),
        hash_meta: for_hashing(&meta),
        meta,
        schema,
        forms,
    })
}

/// Where a plan column's values come from in one file.
enum Source {
    /// A top-level column of the file (index into the projected batch, by name),
    /// and the form it is read in when it is compared in another.
    Column { name: String, form: Option<Form> },
    /// A partition value from the path.
    Partition(Option<String>),
    /// Neither: NULL on every row (schema evolution).
    Missing,
}

fn find_field(schema: &Schema, name: &str) -> Option<usize> {
    schema
        .fields()
        .iter()
        .position(|f| f.name().eq_ignore_ascii_case(name))
}

/// Resolve every plan column in a file, and the projection that reads them.
fn resolve(
    opened: &OpenedFile,
    columns: &[&PlanColumn],
    side: Side,
    key_count: usize,
) -> Result<(Vec<Source>, ProjectionMask)> {
    let schema = opened.meta.schema();
    let mut roots = Vec::new();
    let mut sources = Vec::with_capacity(columns.len());
    for (i, c) in columns.iter().enumerate() {
        let name = c.name_on(side);
        if let Some(idx) = find_field(schema, name) {
            roots.push(idx);
            sources.push(Source::Column {
                name: schema.field(idx).name().clone(),
                form: opened.forms[idx],
            });
        } else if let Some((_, v)) = opened
            .file
            .partition
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
        {
            sources.push(Source::Partition(v.clone()));
        } else if i < key_count {
            return Err(ReconError::SchemaMismatch {
                table: opened.file.file.uri.clone(),
                reason: format!(
                    "key column `{name}` is not in this file (columns: {})",
                    schema
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        } else {
            sources.push(Source::Missing);
        }
    }
    roots.sort_unstable();
    roots.dedup();
    let mask = ProjectionMask::roots(opened.meta.metadata().file_metadata().schema_descr(), roots);
    Ok((sources, mask))
}

/// Bring an array to the plan's comparison form.
pub fn prepare(array: &ArrayRef, mode: CompareMode, column: &str) -> Result<ArrayRef> {
    let to = match mode {
        CompareMode::Native => return Ok(array.clone()),
        CompareMode::AsFloat => DataType::Float64,
        CompareMode::AsString => DataType::Utf8,
    };
    cast(array, &to).map_err(|e| ReconError::SchemaMismatch {
        table: column.to_string(),
        reason: format!("cannot convert column `{column}` to {to} for comparison: {e}"),
    })
}

/// Arrays of one batch, prepared for encoding, in plan-column order.
pub(crate) struct PreparedBatch {
    arrays: Vec<Option<ArrayRef>>,
    constants: Vec<Option<Option<String>>>,
    /// The raw (unprepared) arrays, for display.
    raw: Vec<Option<ArrayRef>>,
}

fn prepare_batch(
    batch: &RecordBatch,
    columns: &[&PlanColumn],
    sources: &[Source],
) -> Result<PreparedBatch> {
    let mut arrays = Vec::with_capacity(columns.len());
    let mut raw = Vec::with_capacity(columns.len());
    let mut constants = Vec::with_capacity(columns.len());
    for (c, s) in columns.iter().zip(sources) {
        match s {
            Source::Column { name, form } => {
                let a = batch.column_by_name(name).expect("projected column");
                let a = match form {
                    Some(form) => form.convert(a),
                    None => a.clone(),
                };
                arrays.push(Some(prepare(&a, c.mode, &c.name)?));
                raw.push(Some(a));
                constants.push(None);
            }
            Source::Partition(v) => {
                arrays.push(None);
                raw.push(None);
                constants.push(Some(v.clone()));
            }
            Source::Missing => {
                arrays.push(None);
                raw.push(None);
                constants.push(Some(None));
            }
        }
    }
    Ok(PreparedBatch {
        arrays,
        constants,
        raw,
    })
}

impl PreparedBatch {
    /// Encoders for the columns `range` of the plan-column list.
    pub fn encoders<'a>(
        &'a self,
        columns: &[&PlanColumn],
        range: std::ops::Range<usize>,
    ) -> Result<Vec<Encoder<'a>>> {
        range
            .map(|i| {
                let rules: StringRules = columns[i].rules.into();
                match (&self.arrays[i], &self.constants[i]) {
                    (Some(a), _) => Encoder::new(a.as_ref(), rules, &columns[i].name),
                    (None, Some(Some(v))) => Ok(Encoder::constant_text(Some(v), rules)),
                    _ => Ok(Encoder::all_null()),
                }
            })
            .collect()
    }

    /// The tolerance columns `range` as float64 arrays (None = NULL throughout).
    pub fn floats(&self, range: std::ops::Range<usize>) -> Result<Vec<Option<ArrayRef>>> {
        range
            .map(|i| match (&self.arrays[i], &self.constants[i]) {
                (Some(a), _) => {
                    cast(a, &DataType::Float64)
                        .map(Some)
                        .map_err(|e| ReconError::SchemaMismatch {
                            table: format!("column {i}"),
                            reason: e.to_string(),
                        })
                }
                (None, Some(Some(v))) => Ok(v
                    .parse::<f64>()
                    .ok()
                    .map(|f| Arc::new(arrow::array::Float64Array::from(vec![f])) as ArrayRef)),
                _ => Ok(None),
            })
            .collect()
    }
}

/// Read one value of a float64 array, or of a one-element constant array.
pub(crate) fn float_at(a: &Option<ArrayRef>, row: usize) -> Option<f64> {
    let a = a.as_ref()?;
    let a = a.as_primitive::<Float64Type>();
    let row = if a.len() == 1 { 0 } else { row };
    a.is_valid(row).then(|| a.value(row))
}

/// Everything a row-group task needs, shared by `Arc`.
pub(crate) struct SideTask {
    /// The store the files are in.
    pub store: Arc<dyn ObjectStore>,
    /// The plan.
    pub plan: Arc<ComparePlan>,
    /// Which side.
    pub side: Side,
    /// The index to fill.
    pub index: Arc<PartitionIndex>,
    /// Progress sink.
    pub progress: Arc<dyn Progress>,
    /// Whether to keep the decoded batches, so mismatched rows need not be read again.
    pub retain: bool,
}

/// Decoded batches of a file kept in memory, each with the file row number of its
/// first row, in file order.
pub(crate) type Retained = Vec<(u64, RecordBatch)>;

/// Hash one row group of one file into the index; returns its decoded batches when
/// the task retains them (empty otherwise).
pub(crate) async fn hash_row_group(
    task: &SideTask,
    file_no: u32,
    opened: &OpenedFile,
    row_group: usize,
) -> Result<Retained> {
    let plan = &task.plan;
    let columns: Vec<&PlanColumn> = plan.all_columns().collect();
    let (nk, nv) = (plan.key.len(), plan.values.len());
    let (sources, mask) = resolve(opened, &columns, task.side, nk)?;
    let uri = &opened.file.file.uri;
    let row_groups = opened.meta.metadata().row_groups();
    let group_rows = row_groups[row_group].num_rows().max(0) as usize;
    let reader = task.store.open(&opened.file.file).await?;
    let mut stream =
        ParquetRecordBatchStreamBuilder::new_with_metadata(reader, opened.hash_meta.clone())
            .with_row_groups(vec![row_group])
            .with_projection(mask)
            .with_batch_size(hash_batch_rows(group_rows))
            .build()
            .map_err(|e| corrupt(uri, e))?;
    let mut row = row_groups
        .iter()
        .take(row_group)
        .map(|rg| rg.num_rows() as u64)
        .sum::<u64>();
    let mut spill = task.index.spill(task.side, group_rows);
    let mut retained = Vec::new();
    while let Some(batch) = stream.try_next().await.map_err(|e| corrupt(uri, e))? {
        let n = batch.num_rows();
        let prepared = prepare_batch(&batch, &columns, &sources)?;
        let key_enc = prepared.encoders(&columns, 0..nk)?;
        let value_enc = prepared.encoders(&columns, nk..nk + nv)?;
        let floats = prepared.floats(nk + nv..columns.len())?;
        let mut nulls = Vec::new();
        spill.write(|spill| {
            RowHasher::with_thread_local(|hasher| {
                hasher.hash(n, &key_enc, &value_enc, |h| {
                    let loc = RowLoc {
                        file: file_no,
                        row: row + h.row as u64,
                    };
                    match h.hash {
                        Some(digest) => spill.push(
                            task.index.key_hash(h.key),
                            h.key,
                            digest,
                            loc,
                            floats.iter().map(|a| float_at(a, h.row)),
                        ),
                        None => nulls.push(NullKeyRow {
                            side: task.side,
                            key: h.key.to_vec(),
                        }),
                    }
                })
            })
        });
        task.index.add_null_keys(nulls);
        task.index.add_rows(task.side, n as u64);
        task.progress.rows(n as u64);
        if task.retain {
            retained.push((row, batch));
        }
        row += n as u64;
    }
    task.index.absorb(spill)?;
    Ok(retained)
}

/// Values of selected rows of one file: for each requested row, per plan column,
/// the canonical bytes (of the prepared value) and the float value (tolerance
/// columns); the display text (of the raw value) is made on demand
/// ([`RowValues::display`]), as only the columns that differ are shown.
pub(crate) struct RowValues {
    /// Canonical bytes per plan column.
    pub canonical: Vec<Vec<u8>>,
    /// Float values per plan column (only meaningful for tolerance columns).
    pub floats: Vec<Option<f64>>,
    /// The batch the row's values come from.
    batch: Arc<PreparedBatch>,
    /// The row in `batch`.
    row: usize,
}

impl RowValues {
    /// The display text of plan column `i` (`None` = NULL).
    pub fn display(&self, i: usize) -> Option<String> {
        let canonical = &self.canonical[i];
        if is_null_encoding(canonical) {
            return None;
        }
        // A NULL inside a list, struct or map shows as NULL, not as nothing (which
        // would read as an empty string).
        let options = arrow::util::display::FormatOptions::default().with_null("NULL");
        let formatter = self.batch.raw[i]
            .as_ref()
            .and_then(|a| arrow::util::display::ArrayFormatter::try_new(a.as_ref(), &options).ok());
        match (formatter, &self.batch.constants[i]) {
            (Some(f), _) => Some(f.value(self.row).to_string()),
            (None, Some(v)) => v.clone(),
            // No formatter for the type: the value as its canonical bytes read back,
            // never as NULL.
            _ => crate::canonical::display(canonical),
        }
    }
}

/// Read the given rows (sorted, unique) of a file with all plan columns.
pub(crate) async fn read_rows(
    store: &dyn ObjectStore,
    plan: &ComparePlan,
    side: Side,
    opened: &OpenedFile,
    rows: &[u64],
) -> Result<Vec<(u64, RowValues)>> {
    let columns: Vec<&PlanColumn> = plan.all_columns().collect();
    let (sources, mask) = resolve(opened, &columns, side, plan.key.len())?;
    let uri = &opened.file.file.uri;
    // Row groups that hold a requested row, and the selection within them.
    let mut groups = Vec::new();
    let mut selectors = Vec::new();
    let mut wanted: Vec<u64> = Vec::new();
    let mut start = 0u64;
    let mut it = rows.iter().peekable();
    for (i, rg) in opened.meta.metadata().row_groups().iter().enumerate() {
        let end = start + rg.num_rows() as u64;
        let mut in_group = Vec::new();
        while let Some(&&r) = it.peek() {
            if r >= end {
                break;
            }
            in_group.push(r);
            it.next();
        }
        if !in_group.is_empty() {
            groups.push(i);
            let mut pos = start;
            for r in in_group {
                if r > pos {
                    selectors.push(parquet::arrow::arrow_reader::RowSelector::skip(
                        (r - pos) as usize,
                    ));
                }
                selectors.push(parquet::arrow::arrow_reader::RowSelector::select(1));
                wanted.push(r);
                pos = r + 1;
            }
            if end > pos {
                selectors.push(parquet::arrow::arrow_reader::RowSelector::skip(
                    (end - pos) as usize,
                ));
            }
        }
        start = end;
    }
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let reader = store.open(&opened.file.file).await?;
    let stream = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, opened.meta.clone())
        .with_row_groups(groups)
        .with_row_selection(RowSelection::from(selectors))
        .with_projection(mask)
        .with_batch_size(BATCH_SIZE)
        .build()
        .map_err(|e| corrupt(uri, e))?;
    let batches: Vec<RecordBatch> = stream.try_collect().await.map_err(|e| corrupt(uri, e))?;
    let mut out = Vec::with_capacity(wanted.len());
    let mut next = wanted.into_iter();
    for batch in batches {
        let rows = (0..batch.num_rows()).map_while(|r| next.next().map(|no| (r, no)));
        out.extend(batch_rows(plan, &columns, &sources, &batch, rows)?);
    }
    Ok(out)
}

/// Values of the given rows of batches kept by [`hash_row_group`]: `batches` are one
/// file's, `rows` sorted and unique.
pub(crate) fn retained_rows(
    plan: &ComparePlan,
    side: Side,
    opened: &OpenedFile,
    batches: &Retained,
    rows: &[u64],
) -> Result<Vec<(u64, RowValues)>> {
    let columns: Vec<&PlanColumn> = plan.all_columns().collect();
    let (sources, _) = resolve(opened, &columns, side, plan.key.len())?;
    let mut out = Vec::with_capacity(rows.len());
    let mut rest = rows;
    for (first, batch) in batches {
        let end = first + batch.num_rows() as u64;
        let here = rest.partition_point(|r| *r < end);
        let (mine, later) = rest.split_at(here);
        rest = later;
        // A row before this batch was in no kept batch: left out, so the caller
        // reports it as not read rather than reading another row.
        let mine: Vec<u64> = mine.iter().copied().filter(|no| no >= first).collect();
        if !mine.is_empty() {
            // Only a few rows of a batch mismatch: take them out first, so converting,
            // encoding and formatting cost what those rows cost, not the batch.
            let within = UInt32Array::from_iter_values(mine.iter().map(|no| (no - first) as u32));
            // Not `Transient`: taking rows of an array fails the same way every time.
            let picked =
                take_record_batch(batch, &within).map_err(|e| ReconError::CorruptParquet {
                    file: opened.file.file.uri.clone(),
                    reason: format!("cannot pick the mismatched rows of a decoded batch: {e}"),
                })?;
            let rows = mine.iter().enumerate().map(|(i, no)| (i, *no));
            out.extend(batch_rows(plan, &columns, &sources, &picked, rows)?);
        }
    }
    Ok(out)
}

/// Canonical bytes, display text and float values of `rows` (row in batch, row
/// number in the file) of one decoded batch.
fn batch_rows(
    plan: &ComparePlan,
    columns: &[&PlanColumn],
    sources: &[Source],
    batch: &RecordBatch,
    rows: impl Iterator<Item = (usize, u64)>,
) -> Result<Vec<(u64, RowValues)>> {
    let n_all = columns.len();
    let tol_from = plan.key.len() + plan.values.len();
    let prepared = Arc::new(prepare_batch(batch, columns, sources)?);
    let encoders = prepared.encoders(columns, 0..n_all)?;
    let mut floats = vec![None; tol_from];
    floats.extend(prepared.floats(tol_from..n_all)?);
    let mut out = Vec::new();
    for (r, row_no) in rows {
        let canonical = encoders
            .iter()
            .map(|e| {
                let mut b = Vec::new();
                e.encode(r, &mut b);
                b
            })
            .collect();
        let floats = (0..n_all)
            .map(|i| match i >= tol_from {
                true => float_at(&floats[i], r),
                false => None,
            })
            .collect();
        out.push((
            row_no,
            RowValues {
                canonical,
                floats,
                batch: prepared.clone(),
                row: r,
            },
        ));
    }
    Ok(out)
}

/// Open many files concurrently.
pub(crate) async fn open_files(
    store: &Arc<dyn ObjectStore>,
    files: &[TableFile],
    concurrency: usize,
) -> Vec<Result<OpenedFile>> {
    // Owned items keep the future `Send` for callers that spawn it.
    futures::stream::iter(files.iter().cloned())
        .map(|f| {
            let store = store.clone();
            async move { open_file(store.as_ref(), &f).await }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_group_up_to_half_a_batch_larger_is_one_batch() {
        assert_eq!(hash_batch_rows(0), 1);
        assert_eq!(hash_batch_rows(10_000), 10_000);
        assert_eq!(hash_batch_rows(BATCH_SIZE * 3 / 2), BATCH_SIZE * 3 / 2);
        assert_eq!(hash_batch_rows(BATCH_SIZE * 3 / 2 + 1), BATCH_SIZE);
        assert_eq!(hash_batch_rows(111_111), BATCH_SIZE);
    }
}
