//! The finishing sequence of a run, one for the CLI and the merge function. Each
//! pair's report is checked for drift against the pair's own history, written
//! (report.json, report.html, diffs.parquet and the Athena manifest beside it) and
//! added to the run's ledger object; a pair that could not run gets its error record
//! and a ledger row instead. [`RunRecord::finish`] then writes the ledger object,
//! regenerates the dashboard and builds the run's alert.
//!
//! The history is read in the background from [`RunRecord::start`] on, while the
//! first pair is reconciled.

use bytes::Bytes;
use recon_engine::config::Config;
use recon_engine::error::{ReconError, Result};
use recon_engine::layout::ReportLocation;
use recon_engine::report::{NotRun, Report, RunMeta, Status};
use recon_engine::runner::{write_not_run, write_report_files};
use recon_engine::storage::Storage;
use tokio::task::JoinHandle;

use crate::alert::Alert;
use crate::dashboard::{DashboardOutput, write_dashboard};
use crate::history::{
    DEFAULT_ATHENA_DATABASE, History, apply_drift, load_history, write_athena_manifest,
};
use crate::ledger::{LedgerProblem, LedgerRow, not_run_row, rows_of, write_run_rows};

/// When the run's ledger object is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerWrites {
    /// After every pair (rewritten whole), so a run stopped half way has recorded
    /// the pairs it finished: the CLI.
    AfterEachPair,
    /// Once, in [`RunRecord::finish`]: the merge function, whose retry writes the
    /// same object again.
    AtTheEnd,
}

/// The history of the run's root, read in the background until first needed.
struct PendingHistory {
    reading: Option<JoinHandle<Result<History>>>,
    read: History,
}

impl PendingHistory {
    fn start(storage: &Storage, root: &str) -> Self {
        let (storage, root) = (storage.clone(), root.to_string());
        PendingHistory {
            reading: Some(tokio::spawn(
                async move { load_history(&storage, &root).await },
            )),
            read: History::default(),
        }
    }

    async fn get(&mut self) -> Result<&mut History> {
        if let Some(task) = self.reading.take() {
            self.read = task.await.map_err(|e| ReconError::Transient {
                resource: "the ledger".into(),
                reason: format!("reading it stopped: {e}"),
            })??;
        }
        Ok(&mut self.read)
    }
}

/// A run being recorded: its reports, the pairs that could not run and its ledger
/// rows so far.
pub struct RunRecord<'a> {
    storage: &'a Storage,
    root: String,
    reports_root: String,
    meta: RunMeta,
    writes: LedgerWrites,
    history: PendingHistory,
    rows: Vec<LedgerRow>,
    ledger_uri: Option<String>,
    reports: Vec<(Report, ReportLocation)>,
    not_run: Vec<NotRun>,
    athena_database: String,
}

/// What a recorded run wrote.
#[derive(Debug)]
pub struct Finished {
    /// The reports, in the order they were recorded, with where they are.
    pub reports: Vec<(Report, ReportLocation)>,
    /// The pairs that could not run, in order.
    pub not_run: Vec<NotRun>,
    /// The run's ledger object (`None`: nothing was recorded).
    pub ledger_uri: Option<String>,
    /// The regenerated dashboard (with the ledger object).
    pub dashboard: Option<DashboardOutput>,
    /// The run's alert, linking the dashboard; it is due ([`Finished::alert_due`])
    /// when a pair is not PASS or could not run.
    pub alert: Alert,
    /// Whether the alert should be sent.
    pub alert_due: bool,
}

impl<'a> RunRecord<'a> {
    /// Start recording run `meta`: its ledger and dashboard go under `root`, its
    /// report folders under `reports_root`. Starts reading the history of `root`.
    pub fn start(
        storage: &'a Storage,
        root: &str,
        reports_root: &str,
        meta: RunMeta,
        writes: LedgerWrites,
    ) -> Self {
        RunRecord {
            storage,
            root: root.to_string(),
            reports_root: reports_root.to_string(),
            history: PendingHistory::start(storage, root),
            meta,
            writes,
            rows: Vec::new(),
            ledger_uri: None,
            reports: Vec::new(),
            not_run: Vec::new(),
            athena_database: DEFAULT_ATHENA_DATABASE.into(),
        }
    }

    /// The Glue database the alert's Athena statements name (the stack's ledger
    /// database); [`DEFAULT_ATHENA_DATABASE`] unless set.
    pub fn with_athena_database(mut self, database: &str) -> Self {
        self.athena_database = database.to_string();
        self
    }

    /// The run.
    pub fn meta(&self) -> &RunMeta {
        &self.meta
    }

    /// The ledger objects of the history that could not be read (and were skipped),
    /// waiting for the history read.
    pub async fn history_problems(&mut self) -> Result<&[LedgerProblem]> {
        Ok(self.history.get().await?.problems())
    }

    /// Record a pair's report: the drift check (settings from `config`), its files
    /// with `diff_rows` as diffs.parquet, the Athena manifest and its ledger rows.
    pub async fn report(
        &mut self,
        config: &Config,
        mut report: Report,
        diff_rows: Bytes,
    ) -> Result<&(Report, ReportLocation)> {
        apply_drift(config, self.history.get().await?.runs(), &mut report);
        let loc = write_report_files(self.storage, &self.reports_root, &report, diff_rows).await?;
        write_athena_manifest(self.storage, &loc).await?;
        self.add_rows(rows_of(&report, &loc)).await?;
        self.reports.push((report, loc));
        Ok(self.reports.last().expect("just pushed"))
    }

    /// Record a pair that could not run: its error record in its report's place
    /// (returned) and a ledger row.
    pub async fn not_run(&mut self, not_run: NotRun) -> Result<String> {
        let record = write_not_run(self.storage, &self.reports_root, &self.meta, &not_run).await?;
        let row = not_run_row(&self.meta, &not_run.pair, &record);
        self.add_rows(vec![row]).await?;
        self.not_run.push(not_run);
        Ok(record)
    }

    /// Record pairs stopped before they finished (Ctrl-C): a ledger row each, no
    /// record file, so the run is wholly recorded.
    pub async fn stopped(&mut self, stopped: Vec<NotRun>) -> Result<()> {
        if stopped.is_empty() {
            return Ok(());
        }
        let rows = stopped
            .iter()
            .map(|n| not_run_row(&self.meta, &n.pair, ""))
            .collect();
        self.add_rows(rows).await?;
        self.not_run.extend(stopped);
        Ok(())
    }

    async fn add_rows(&mut self, rows: Vec<LedgerRow>) -> Result<()> {
        self.rows.extend(rows);
        if self.writes == LedgerWrites::AfterEachPair {
            self.write_ledger().await?;
        }
        Ok(())
    }

    async fn write_ledger(&mut self) -> Result<()> {
        let date = self.meta.started_at.get(..10).unwrap_or("unknown");
        let uri = write_run_rows(
            self.storage,
            &self.root,
            date,
            &self.meta.run_id,
            &self.rows,
        )
        .await?;
        self.ledger_uri = Some(uri);
        Ok(())
    }

    /// Write the ledger object (once, for [`LedgerWrites::AtTheEnd`]), regenerate the
    /// dashboard from the history and this run, and build the alert.
    pub async fn finish(mut self) -> Result<Finished> {
        if self.writes == LedgerWrites::AtTheEnd && !self.rows.is_empty() {
            self.write_ledger().await?;
        }
        let dashboard = match &self.ledger_uri {
            Some(uri) => {
                let history = std::mem::take(self.history.get().await?);
                Some(write_dashboard(self.storage, &self.root, history.ledger, Some(uri)).await?)
            }
            None => None,
        };
        let written: Vec<(&Report, &ReportLocation)> =
            self.reports.iter().map(|(r, l)| (r, l)).collect();
        let alert_due =
            !self.not_run.is_empty() || self.reports.iter().any(|(r, _)| r.status != Status::Pass);
        let db = &self.athena_database;
        let alert = Alert::for_run(&written, &self.not_run, db)
            .unwrap_or_else(|| Alert::for_reports(&written, db));
        let alert = match &dashboard {
            Some(d) => alert.with_dashboard(&d.index),
            None => alert,
        };
        Ok(Finished {
            reports: self.reports,
            not_run: self.not_run,
            ledger_uri: self.ledger_uri,
            dashboard,
            alert,
            alert_due,
        })
    }
}
