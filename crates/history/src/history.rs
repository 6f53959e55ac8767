//! A run's place in history: `load_history` reads the ledger and resolutions of a
//! root, `apply_drift` compares a report with its pair's trailing baseline
//! ([`crate::drift`]), `write_athena_manifest` puts the symlink manifest beside a
//! report's diffs.parquet, and [`offending_keys_query`] says how to query the diffs.
//! [`crate::run_record`] strings them into the finishing sequence of a run.
//!
//! An unreadable ledger object never stops a run: it is reported in the result and
//! the run is still recorded.

use bytes::Bytes;

use crate::ledger::{LedgerProblem, LedgerRead, LedgerRun, read_ledger};
use crate::resolution::{accepted, read_resolutions};
use recon_engine::config::{Config, Defaults};
use recon_engine::error::Result;
use recon_engine::layout::ATHENA_DIR;
use recon_engine::layout::ReportLocation;
use recon_engine::report::Report;
use recon_engine::storage::Storage;

/// A run's history: the ledger as read when the run started.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    /// The ledger read; the run record brings it up to date for the dashboard.
    pub ledger: LedgerRead,
}

impl History {
    /// Every pair run in the ledger, oldest first: what drift checks compare with.
    pub fn runs(&self) -> &[LedgerRun] {
        &self.ledger.runs
    }

    /// Ledger objects that could not be read.
    pub fn problems(&self) -> &[LedgerProblem] {
        &self.ledger.problems
    }
}

/// Read the history under `root`: the resolutions, then the ledger, whose runs count
/// the findings that accepted resolutions made the new normal.
pub(crate) async fn load_history(storage: &Storage, root: &str) -> Result<History> {
    let (resolutions, problems) = read_resolutions(storage, root).await?;
    for p in problems {
        tracing::warn!(object = %p.uri, error = %p.error, "resolution skipped");
    }
    let ledger = read_ledger(storage, root, &accepted(&resolutions)).await?;
    Ok(History { ledger })
}

/// Compare a report with its pair's baseline in `history` (settings from the pair's
/// config, else `[defaults]`) and record the check in the report.
pub(crate) fn apply_drift(config: &Config, history: &[LedgerRun], report: &mut Report) {
    let (n, band) = match config.pairs.iter().find(|p| p.name == report.pair) {
        Some(p) => p.drift_settings(&config.defaults),
        None => defaults_settings(&config.defaults),
    };
    crate::drift::apply(report, history, n, &band);
}

fn defaults_settings(d: &Defaults) -> (usize, recon_engine::config::Limit) {
    (
        d.drift_baseline_runs,
        d.drift_band
            .clone()
            .unwrap_or(recon_engine::config::DEFAULT_DRIFT_BAND),
    )
}

/// The symlink manifest of a report folder.
pub(crate) fn athena_manifest_uri(loc: &ReportLocation) -> String {
    Storage::join(&loc.dir, &format!("{ATHENA_DIR}/diffs.txt"))
}

/// Write the symlink manifest beside a report's diffs.parquet ([`athena_manifest_uri`]).
pub(crate) async fn write_athena_manifest(storage: &Storage, loc: &ReportLocation) -> Result<()> {
    let uri = athena_manifest_uri(loc);
    storage
        .for_uri(&uri)?
        .put(&uri, Bytes::from(format!("{}\n", loc.diff_rows)))
        .await
}

/// The Glue database of the ledger when none is configured (`LedgerDatabaseName`
/// of the template).
pub const DEFAULT_ATHENA_DATABASE: &str = "glue_recon";

/// The query of a run's offending keys suited to where its report is, and the engine
/// that runs it: Athena statements for a report on S3 (`athena_diff_query`, its table
/// in Glue database `athena_database`), a `read_parquet` SELECT for a local one
/// (`local_diff_query`).
pub fn offending_keys_query(
    report: &Report,
    loc: &ReportLocation,
    athena_database: &str,
) -> (&'static str, String) {
    if loc.dir.starts_with("s3://") {
        let query = athena_diff_query(report, loc, athena_database);
        ("Athena", query)
    } else {
        ("DuckDB", local_diff_query(report, loc))
    }
}

/// Athena statements fetching the offending keys of a run from its diffs.parquet:
/// a table declared over the symlink manifest that [`write_athena_manifest`] writes beside the
/// file (a folder of its own, as Athena reads every object of a table's LOCATION),
/// then a SELECT of the findings.
fn athena_diff_query(report: &Report, loc: &ReportLocation, database: &str) -> String {
    let ident = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    let table = format!(
        "{database}.diffs_{}_{}",
        ident(&report.pair),
        ident(&report.run_id)
    );
    let keys: Vec<String> = report
        .key
        .iter()
        .map(|k| format!("`key_{}` string", k.replace('`', "")))
        .collect();
    let location = Storage::join(&loc.dir, &format!("{ATHENA_DIR}/"));
    format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS {table} (`diff_type` string, `partition` string, `side` string, {keys}, `column` string, `source_value` string, `target_value` string, `count` bigint) \
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' \
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat' \
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat' \
LOCATION '{location}';\n{select}",
        keys = keys.join(", "),
        select = findings_select(report, &table),
    )
}

/// A SELECT of a local run's offending keys straight from its diffs.parquet (by its
/// absolute path), for DuckDB (`duckdb -c "..."`) or another SQL engine with
/// `read_parquet`: Athena reads only S3, so [`athena_diff_query`] is for runs
/// reported there.
fn local_diff_query(report: &Report, loc: &ReportLocation) -> String {
    let path = recon_engine::storage::local::local_path(&loc.diff_rows);
    // Absolute, so the query works from any folder.
    let path = std::path::absolute(&path).unwrap_or(path);
    let path = path.to_string_lossy().replace('\'', "''");
    findings_select(report, &format!("read_parquet('{path}')"))
}

/// The findings of a run's diff rows in `from`, by kind, partition and key.
fn findings_select(report: &Report, from: &str) -> String {
    let key_cols: Vec<String> = report
        .key
        .iter()
        .map(|k| format!("\"key_{}\"", k.replace('"', "")))
        .collect();
    format!(
        "SELECT diff_type, \"partition\", {key_cols}, \"column\", source_value, target_value FROM {from} ORDER BY diff_type, \"partition\", {key_cols} LIMIT 1000;",
        key_cols = key_cols.join(", "),
    )
}
