//! Shared setup of the engine tests: Parquet tables written with arrow into a
//! temporary folder (any schema, row-group size, file count, Hive folders), pair
//! configs pointing at them, runs through the library or the real CLI binary, and
//! readers for what a run wrote.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::properties::WriterProperties;

use glue_recon::config::{Config, PairConfig};
use glue_recon::error::Result;
use glue_recon::layout::ReportLocation;
use glue_recon::mask::{MASK_KEY_FILE_ENV, MaskKey};
use glue_recon::partial::{Finding, FindingKind};
use glue_recon::plan::Side;
use glue_recon::runner::{PairRun, RunOptions, run_pair_full, write_report};
use glue_recon::storage::Storage;

/// Wrap an arrow array as an [`ArrayRef`].
pub fn arr<A: Array + 'static>(array: A) -> ArrayRef {
    Arc::new(array)
}

/// Keys `0..n` as int64.
pub fn ids(n: usize) -> ArrayRef {
    arr(Int64Array::from_iter_values(0..n as i64))
}

/// A record batch from named columns (every field nullable).
pub fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns.into_iter().map(|(n, a)| (n.to_string(), a)))
        .expect("columns of equal length")
}

/// Write `batch` as one Parquet file with at most `rows_per_group` rows per row group.
pub fn write_parquet(path: &Path, batch: &RecordBatch, rows_per_group: usize) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group.max(1)))
        .build();
    write_parquet_with(path, batch, props);
}

/// Write `batch` as one Parquet file with the writer settings `props`.
pub fn write_parquet_with(path: &Path, batch: &RecordBatch, props: WriterProperties) {
    std::fs::create_dir_all(path.parent().expect("a file path")).unwrap();
    let mut writer =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

/// A temporary folder holding a `source/` and a `target/` table (and whatever else a
/// test puts there), with helpers to write tables and reconcile them.
pub struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    /// An empty lab.
    pub fn new() -> Lab {
        Lab {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A lab whose source and target are one file each.
    pub fn with(source: &RecordBatch, target: &RecordBatch) -> Lab {
        let lab = Lab::new();
        lab.write("source/part-0.parquet", source);
        lab.write("target/part-0.parquet", target);
        lab
    }

    /// The lab's folder.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the lab.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The path of a path inside the lab, as text.
    pub fn loc(&self, rel: &str) -> String {
        self.path(rel).to_string_lossy().into_owned()
    }

    /// Write one Parquet file (one row group).
    pub fn write(&self, rel: &str, batch: &RecordBatch) -> PathBuf {
        self.write_groups(rel, batch, 1 << 20)
    }

    /// Write one Parquet file with small row groups.
    pub fn write_groups(&self, rel: &str, batch: &RecordBatch, rows_per_group: usize) -> PathBuf {
        let path = self.path(rel);
        write_parquet(&path, batch, rows_per_group);
        path
    }

    /// Split `batch` into `files` Parquet files `part-NNNNN.parquet` under `dir`,
    /// each with row groups of at most `rows_per_group` rows.
    pub fn write_files(&self, dir: &str, batch: &RecordBatch, files: usize, rows_per_group: usize) {
        let per_file = batch.num_rows().div_ceil(files.max(1));
        for (i, start) in (0..batch.num_rows()).step_by(per_file.max(1)).enumerate() {
            let len = per_file.min(batch.num_rows() - start);
            self.write_groups(
                &format!("{dir}/part-{i:05}.parquet"),
                &batch.slice(start, len),
                rows_per_group,
            );
        }
    }

    /// Write raw bytes (corrupt files, markers, notes).
    pub fn put(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// The config text of a pair `t` over the lab's `source/` and `target/`, with
    /// `extra` TOML appended to the pair.
    pub fn config_text(&self, key: &[&str], extra: &str) -> String {
        format!(
            "[[pair]]\nname = \"t\"\nsource = '{}'\ntarget = '{}'\nkey = {key:?}\n{extra}\n",
            self.loc("source"),
            self.loc("target"),
        )
    }

    /// The pair config over the lab's tables.
    pub fn pair(&self, key: &[&str], extra: &str) -> PairConfig {
        Config::parse(&self.config_text(key, extra), "test")
            .expect("a valid config")
            .pairs
            .remove(0)
    }

    /// Write `recon.toml` for the pair and return its path.
    pub fn write_config(&self, key: &[&str], extra: &str) -> PathBuf {
        let path = self.path("recon.toml");
        std::fs::write(&path, self.config_text(key, extra)).unwrap();
        path
    }

    /// Reconcile the lab's tables; panics if the run cannot start.
    pub fn run(&self, key: &[&str], extra: &str) -> PairRun {
        self.try_run(key, extra)
            .unwrap_or_else(|e| panic!("the run failed to start: {e}"))
    }

    /// Reconcile the lab's tables.
    pub fn try_run(&self, key: &[&str], extra: &str) -> Result<PairRun> {
        run_pair(&self.pair(key, extra))
    }

    /// Reconcile the lab's tables with other run options; panics if the run cannot start.
    pub fn run_with(&self, key: &[&str], extra: &str, opts: &RunOptions) -> PairRun {
        block_on(run_pair_full(
            &self.pair(key, extra),
            &Default::default(),
            opts,
        ))
        .unwrap_or_else(|e| panic!("the run failed to start: {e}"))
    }

    /// Write the report folder of a run under `<lab>/out` and return where.
    pub fn write_report(&self, run: &PairRun) -> ReportLocation {
        block_on(write_report(&Storage::local_only(), &self.loc("out"), run)).unwrap()
    }

    /// Run the CLI binary with `args` in the lab's folder.
    pub fn cli(&self, args: &[&str]) -> CliOutput {
        cli_in(self.root(), args)
    }

    /// [`Lab::cli`] with environment variables set for the binary.
    pub fn cli_env(&self, args: &[&str], env: &[(&str, &str)]) -> CliOutput {
        cli_in_env(self.root(), args, env)
    }

    /// `glue-recon run --config CONFIG --out out --json`, expecting exit `code`: the
    /// JSON it printed.
    pub fn run_json(&self, config: &Path, code: i32) -> serde_json::Value {
        let config = config.to_str().unwrap();
        self.cli(&["run", "--config", config, "--out", "out", "--json"])
            .expect_code(code)
            .json()
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// The masking key of the tests (the CLI's through [`test_mask_key_file`]).
pub const TEST_MASK_KEY: &[u8] = b"glue-recon test masking key, 48 bytes long ....";

/// A file holding [`TEST_MASK_KEY`], made once per test process: the CLI the tests
/// run reads it (`GLUE_RECON_MASK_KEY_FILE`), never the user's own key.
pub fn test_mask_key_file() -> &'static Path {
    static FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("glue-recon-test-{}.key", std::process::id()));
        std::fs::write(&path, TEST_MASK_KEY).unwrap();
        path
    })
}

/// The local defaults of a run, with the tests' masking key.
pub fn local_options() -> RunOptions {
    RunOptions {
        mask_key: Some(MaskKey::new(TEST_MASK_KEY, "tests").unwrap()),
        ..RunOptions::local()
    }
}

/// Reconcile a pair in this process with the local defaults.
pub fn run_pair(pair: &PairConfig) -> Result<PairRun> {
    block_on(run_pair_full(pair, &Default::default(), &local_options()))
}

/// Every finding of a kind, with its partition.
pub fn findings(run: &PairRun, kind: FindingKind) -> Vec<(String, Finding)> {
    run.partials
        .iter()
        .flat_map(|p| p.findings.iter().map(move |f| (p.partition.clone(), f)))
        .filter(|(_, f)| f.kind == kind)
        .map(|(p, f)| (p, f.clone()))
        .collect()
}

/// A key as text: its values joined with `|`, NULL as `NULL`.
pub fn key_text(key: &[Option<String>]) -> String {
    key.iter()
        .map(|v| v.as_deref().unwrap_or("NULL"))
        .collect::<Vec<_>>()
        .join("|")
}

/// The duplicate-key findings: (key, side, row count), in report order.
pub fn duplicate_counts(run: &PairRun) -> Vec<(String, Option<Side>, Option<u64>)> {
    findings(run, FindingKind::DuplicateKey)
        .into_iter()
        .map(|(_, f)| (key_text(&f.key), f.side, f.count))
        .collect()
}

/// The keys of a kind's findings, sorted.
pub fn keys(run: &PairRun, kind: FindingKind) -> Vec<String> {
    let mut keys: Vec<String> = findings(run, kind)
        .iter()
        .map(|(_, f)| key_text(&f.key))
        .collect();
    keys.sort();
    keys
}

/// One differing column of a MISMATCH: (key, column, source value, target value).
pub type Diff = (String, String, Option<String>, Option<String>);

/// Every differing column of every MISMATCH, sorted.
pub fn diffs(run: &PairRun) -> Vec<Diff> {
    let mut out: Vec<Diff> = findings(run, FindingKind::Mismatch)
        .iter()
        .flat_map(|(_, f)| {
            f.diffs.iter().map(|d| {
                (
                    key_text(&f.key),
                    d.column.clone(),
                    d.source.clone(),
                    d.target.clone(),
                )
            })
        })
        .collect();
    out.sort();
    out
}

/// A differing column as [`Diff`], for expectations.
pub fn diff(key: &str, column: &str, source: Option<&str>, target: Option<&str>) -> Diff {
    (
        key.to_string(),
        column.to_string(),
        source.map(str::to_string),
        target.map(str::to_string),
    )
}

/// Assert a run matched `rows` keys and found nothing.
pub fn assert_clean(run: &PairRun, rows: u64) {
    let t = &run.report.totals;
    let all: Vec<_> = run.partials.iter().flat_map(|p| &p.findings).collect();
    assert_eq!(t.findings(), 0, "expected no findings, got {t:?}: {all:?}");
    assert_eq!(t.matched, rows, "{t:?}");
    assert!(run.report.complete, "{:?}", run.report.partitions);
}

/// What the CLI binary did.
#[derive(Debug)]
pub struct CliOutput {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl CliOutput {
    /// Assert the exit code, showing the output when it differs, and that the
    /// binary did not panic.
    pub fn expect_code(self, code: i32) -> CliOutput {
        assert_eq!(self.code, code, "{self:#?}");
        assert!(!self.stderr.contains("panicked"), "{self:#?}");
        self
    }

    /// Standard output parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

/// Run the CLI binary with `args` in `dir`.
pub fn cli_in(dir: &Path, args: &[&str]) -> CliOutput {
    cli_in_env(dir, args, &[])
}

/// Run the CLI binary with `args` in `dir`, with `env` set.
pub fn cli_in_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> CliOutput {
    let out = Command::new(env!("CARGO_BIN_EXE_glue-recon"))
        .args(args)
        .current_dir(dir)
        .env_remove("GLUE_RECON_LOG")
        .env(MASK_KEY_FILE_ENV, test_mask_key_file())
        .envs(env.iter().copied())
        .output()
        .expect("the glue-recon binary runs");
    CliOutput {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The one run folder `<out>/<pair>/<run_id>/` a CLI run wrote.
pub fn run_dir(out: &Path, pair: &str) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(out.join(pair))
        .unwrap_or_else(|e| panic!("no reports for {pair} in {}: {e}", out.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs.into_iter().next().unwrap()
}

/// A Parquet file's rows as column name -> value text (`None` = NULL).
pub fn read_rows_as_text(path: &Path) -> Vec<BTreeMap<String, Option<String>>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let schema = batch.schema();
        let texts: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|c| cast(c, &DataType::Utf8).unwrap())
            .collect();
        for r in 0..batch.num_rows() {
            rows.push(
                schema
                    .fields()
                    .iter()
                    .zip(&texts)
                    .map(|(f, a)| {
                        let a = a.as_string::<i32>();
                        (
                            f.name().clone(),
                            a.is_valid(r).then(|| a.value(r).to_string()),
                        )
                    })
                    .collect(),
            );
        }
    }
    rows
}

/// The library refuses to run the lab's pair, and the CLI exits 2 without a
/// report; both messages name every part.
pub fn assert_cannot_run(lab: &Lab, key: &[&str], extra: &str, parts: &[&str]) -> String {
    let err = match lab.try_run(key, extra) {
        Ok(run) => panic!("ran: {:?}", run.report),
        Err(e) => e.to_string(),
    };
    for p in parts {
        assert!(err.contains(p), "`{p}` not in: {err}");
    }
    let config = lab.write_config(key, extra);
    let out = lab
        .cli(&["run", "--config", config.to_str().unwrap(), "--out", "out"])
        .expect_code(2);
    for p in parts {
        assert!(out.stderr.contains(p), "`{p}` not in stderr: {out:#?}");
    }
    // The pair's record says why it did not run; no comparison was written.
    let dir = run_dir(&lab.path("out"), "t");
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(record["status"], "ERROR", "{record:#}");
    assert!(
        !dir.join("diffs.parquet").exists(),
        "a comparison was written: {out:#?}"
    );
    err
}
