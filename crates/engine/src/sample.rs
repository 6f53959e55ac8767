//! `glue-recon sample-data`: a source and a target table with planted differences of
//! every kind, for the demo, the tests and the benchmark.
//!
//! The target deliberately stores the same values with other physical types than the
//! source (int64 vs int32, decimal(18,2) vs decimal(12,2), millisecond vs microsecond
//! timestamps, dictionary strings, another column order, several files per
//! partition), so a correct engine reports only the planted differences.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int16Array, Int32Array,
    Int64Array, RecordBatch, StringArray, StringDictionaryBuilder, TimestampMicrosecondArray,
    TimestampMillisecondArray,
};
use arrow::datatypes::{DataType, Field, Int32Type, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::error::{ReconError, Result};

/// What to generate.
#[derive(Debug, Clone)]
pub struct SampleSpec {
    /// Output folder (gets `source/`, `target/`, `recon.toml`).
    pub out: PathBuf,
    /// Source rows in all.
    pub rows: u64,
    /// Number of `dt=` partitions.
    pub partitions: u32,
    /// PRNG seed.
    pub seed: u64,
    /// Fraction of rows missing, extra and changed (each).
    pub changes: f64,
    /// Also plant duplicates, NULL keys, NULL-vs-empty, a source-only partition and
    /// within-tolerance noise.
    pub edge_cases: bool,
}

/// What was planted (the expected findings).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Planted {
    /// Source rows.
    pub source_rows: u64,
    /// Target rows.
    pub target_rows: u64,
    /// Keys dropped from the target.
    pub missing_in_target: u64,
    /// Keys added to the target.
    pub extra_in_target: u64,
    /// Keys with changed values.
    pub mismatch: u64,
    /// Keys duplicated in the target.
    pub duplicate_key_target: u64,
    /// Target rows with a NULL key.
    pub null_key_target: u64,
}

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p && p > 0.0
    }
}

const STATUSES: [&str; 5] = ["NEW", "PAID", "SHIPPED", "DELIVERED", "RETURNED"];

/// One logical row.
#[derive(Clone)]
struct Row {
    id: Option<i64>,
    customer_id: i32,
    amount_cents: i128,
    price: f64,
    status: &'static str,
    created_ms: i64,
    updated_days: i32,
    flag: bool,
    note: Option<String>,
    qty: i16,
    email: String,
}

fn make_row(id: i64, rng: &mut Rng, day: i32) -> Row {
    let note = match rng.below(4) {
        0 => None,
        1 => Some(String::new()),
        _ => Some(format!("note {}", rng.below(1000))),
    };
    Row {
        id: Some(id),
        customer_id: rng.below(100_000) as i32,
        amount_cents: rng.below(10_000_000) as i128,
        price: (rng.below(1_000_000) as f64) / 100.0,
        status: STATUSES[rng.below(5) as usize],
        created_ms: (day as i64) * 86_400_000 + rng.below(86_400_000) as i64,
        updated_days: day + rng.below(30) as i32,
        flag: rng.below(2) == 1,
        note,
        qty: rng.below(500) as i16,
        email: format!("user{}@example.com", rng.below(1_000_000)),
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ReconError + '_ {
    move |e| ReconError::io(path, e)
}

fn write_err(path: &Path) -> impl Fn(parquet::errors::ParquetError) -> ReconError + '_ {
    move |e| ReconError::Write {
        target: path.display().to_string(),
        reason: e.to_string(),
    }
}

fn source_batch(rows: &[Row]) -> Result<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("customer_id", DataType::Int32, false),
        Field::new("amount", DataType::Decimal128(12, 2), false),
        Field::new("price", DataType::Float64, false),
        Field::new("status", DataType::Utf8, false),
        Field::new(
            "created_at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("updated", DataType::Date32, false),
        Field::new("flag", DataType::Boolean, false),
        Field::new("note", DataType::Utf8, true),
        Field::new("qty", DataType::Int16, false),
        Field::new("email", DataType::Utf8, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.id))),
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|r| r.customer_id),
        )),
        Arc::new(
            Decimal128Array::from_iter_values(rows.iter().map(|r| r.amount_cents))
                .with_precision_and_scale(12, 2)
                .expect("valid decimal"),
        ),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.price))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.status))),
        Arc::new(
            TimestampMicrosecondArray::from_iter_values(rows.iter().map(|r| r.created_ms * 1000))
                .with_timezone("UTC"),
        ),
        Arc::new(Date32Array::from_iter_values(
            rows.iter().map(|r| r.updated_days),
        )),
        Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.flag)))),
        Arc::new(StringArray::from_iter(
            rows.iter().map(|r| r.note.as_deref()),
        )),
        Arc::new(Int16Array::from_iter_values(rows.iter().map(|r| r.qty))),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.email.as_str()),
        )),
    ];
    RecordBatch::try_new(schema, cols).map_err(|e| ReconError::InvalidInput(e.to_string()))
}

/// The target: other physical types and another column order, same values.
fn target_batch(rows: &[Row]) -> Result<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("qty", DataType::Int16, false),
        Field::new(
            "status",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
        Field::new("amount", DataType::Decimal128(18, 2), false),
        Field::new("id", DataType::Int64, true),
        Field::new("customer_id", DataType::Int64, false),
        Field::new("price", DataType::Float64, false),
        Field::new(
            "created_at",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            false,
        ),
        Field::new("updated", DataType::Date32, false),
        Field::new("flag", DataType::Boolean, false),
        Field::new("note", DataType::Utf8, true),
        Field::new("email", DataType::Utf8, false),
    ]));
    let mut status = StringDictionaryBuilder::<Int32Type>::new();
    for r in rows {
        status.append_value(r.status);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int16Array::from_iter_values(rows.iter().map(|r| r.qty))),
        Arc::new(status.finish()),
        Arc::new(
            Decimal128Array::from_iter_values(rows.iter().map(|r| r.amount_cents))
                .with_precision_and_scale(18, 2)
                .expect("valid decimal"),
        ),
        Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.id))),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| r.customer_id as i64),
        )),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.price))),
        Arc::new(
            TimestampMillisecondArray::from_iter_values(rows.iter().map(|r| r.created_ms))
                .with_timezone("UTC"),
        ),
        Arc::new(Date32Array::from_iter_values(
            rows.iter().map(|r| r.updated_days),
        )),
        Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.flag)))),
        Arc::new(StringArray::from_iter(
            rows.iter().map(|r| r.note.as_deref()),
        )),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.email.as_str()),
        )),
    ];
    RecordBatch::try_new(schema, cols).map_err(|e| ReconError::InvalidInput(e.to_string()))
}

fn write_parquet(path: &Path, batch: &RecordBatch, row_group: usize) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let file = std::fs::File::create(path).map_err(io(path))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(row_group.max(1)))
        .build();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(write_err(path))?;
    w.write(batch).map_err(write_err(path))?;
    w.close().map_err(write_err(path))?;
    Ok(())
}

/// The first words of the config `sample-data` writes: a `recon.toml` that starts
/// otherwise is the user's, and is never overwritten without `--force`.
pub const CONFIG_HEADER: &str = "# Generated by `glue-recon sample-data`.";

/// Generate the sample tables and a config for them.
pub fn generate(spec: &SampleSpec) -> Result<Planted> {
    let mut planted = Planted::default();
    let parts = spec.partitions.max(1) as u64;
    let per_part = (spec.rows / parts).max(1);
    let base_day = 19_723; // 2024-01-01
    for dir in ["source", "target"] {
        let d = spec.out.join(dir);
        if d.exists() {
            std::fs::remove_dir_all(&d).map_err(io(&d))?;
        }
    }
    let mut next_extra_id = (parts * per_part) as i64 + 1_000_000;
    for p in 0..parts {
        let mut rng = Rng(spec.seed ^ (p + 1).wrapping_mul(0xA24B_AED4_963E_E407));
        let day = base_day + p as i32;
        let date = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)
            .and_then(|e| e.checked_add_signed(chrono::TimeDelta::days(day as i64)))
            .expect("valid date");
        let dt = format!("dt={}", date.format("%Y-%m-%d"));
        let source: Vec<Row> = (0..per_part)
            .map(|i| make_row((p * per_part + i) as i64, &mut rng, day))
            .collect();
        planted.source_rows += source.len() as u64;
        write_parquet(
            &spec.out.join("source").join(&dt).join("part-00000.parquet"),
            &source_batch(&source)?,
            128 * 1024,
        )?;
        // The last partition never reached the target (edge cases only).
        if spec.edge_cases && p == parts - 1 && parts > 1 {
            planted.missing_in_target += source.len() as u64;
            continue;
        }
        let mut target = Vec::with_capacity(source.len());
        // Keys whose values were changed: the planted duplicate must not be one of
        // them, because a duplicated key is not value-compared.
        let mut changed = std::collections::HashSet::new();
        for row in &source {
            if rng.chance(spec.changes) {
                planted.missing_in_target += 1;
                continue;
            }
            let mut row = row.clone();
            if rng.chance(spec.changes) {
                planted.mismatch += 1;
                changed.insert(row.id);
                match rng.below(3) {
                    0 => row.amount_cents += 1,
                    1 => row.status = if row.status == "NEW" { "PAID" } else { "NEW" },
                    _ => row.note = Some(format!("{} (edited)", row.note.unwrap_or_default())),
                }
            } else if spec.edge_cases && rng.chance(spec.changes * 2.0) {
                // Within the configured price tolerance: not a mismatch.
                row.price += 0.001;
            }
            target.push(row);
            if rng.chance(spec.changes) {
                let mut extra = make_row(next_extra_id, &mut rng, day);
                next_extra_id += 1;
                extra.note = Some("extra".into());
                planted.extra_in_target += 1;
                target.push(extra);
            }
        }
        if spec.edge_cases && target.len() > 10 {
            // NULL vs '' is a mismatch.
            if let Some(r) = target
                .iter_mut()
                .find(|r| r.note.is_none() && !changed.contains(&r.id))
            {
                r.note = Some(String::new());
                planted.mismatch += 1;
                changed.insert(r.id);
            }
            // A duplicated key (of an unchanged row) and a NULL key.
            let dup = target
                .iter()
                .skip(3)
                .find(|r| !changed.contains(&r.id) && r.note.as_deref() != Some("extra"))
                .unwrap_or(&target[3])
                .clone();
            target.push(dup);
            planted.duplicate_key_target += 1;
            let mut null_key = target[5].clone();
            null_key.id = None;
            target.push(null_key);
            planted.null_key_target += 1;
        }
        planted.target_rows += target.len() as u64;
        // Two files per partition with small row groups.
        let half = target.len() / 2;
        for (i, chunk) in [&target[..half], &target[half..]].into_iter().enumerate() {
            write_parquet(
                &spec
                    .out
                    .join("target")
                    .join(&dt)
                    .join(format!("part-{i:05}.snappy.parquet")),
                &target_batch(chunk)?,
                64 * 1024,
            )?;
        }
        std::fs::write(spec.out.join("target").join(&dt).join("_SUCCESS"), b"")
            .map_err(io(&spec.out))?;
    }
    let config = format!(
        r#"{CONFIG_HEADER} Paths are relative to this file.
[defaults]
sample_limit = 20

[[pair]]
name = "orders"
source = "source"
target = "target"
key = ["id"]
masked = ["email"]
glue_jobs = ["orders-etl"]
{tolerance}
[pair.thresholds.warn]
mismatch = 0

[pair.thresholds.fail]
missing_in_target = 0
extra_in_target = 0
mismatch = "1%"
duplicate_key = 0
null_key = 0
"#,
        tolerance = if spec.edge_cases {
            "\n[pair.columns.price]\nabs_tolerance = 0.005\n"
        } else {
            ""
        }
    );
    let path = spec.out.join("recon.toml");
    std::fs::write(&path, config).map_err(io(&path))?;
    let expected = spec.out.join("expected.json");
    std::fs::write(
        &expected,
        serde_json::to_vec_pretty(&planted).unwrap_or_default(),
    )
    .map_err(io(&expected))?;
    Ok(planted)
}
