//! `glue-recon run` and `diff`: reconcile pairs in this process, record each pair in
//! the ledger as soon as its report is written, and say what happened to every pair.

use std::process::ExitCode;
use std::sync::Arc;

use glue_recon::alert::Alert;
use glue_recon::budget::MemoryBudget;
use glue_recon::config::{Config, PairConfig};
use glue_recon::history::{History, apply_drift, load_history, write_athena_manifest};
use glue_recon::layout::ReportLocation;
use glue_recon::ledger::{LedgerRow, not_run_row, rows_of, write_run_rows};
use glue_recon::report::NotRun;
use glue_recon::report::{Report, RunMeta, Status};
use glue_recon::run_marker::RunMarker;
use glue_recon::runner::{RunOptions, check_writable, run_pair_full, write_not_run, write_report};
use glue_recon::storage::Storage;

use super::interrupt::{self, Interrupt};
use super::{OutputArgs, cloud, print_dashboard, progress, root::report_root, summary};

/// The ledger history of a run, read in a task of its own while the first pair is
/// reconciled (the history is needed only once a pair's report is built).
struct PendingHistory {
    reading: Option<tokio::task::JoinHandle<glue_recon::error::Result<History>>>,
    read: History,
}

impl PendingHistory {
    fn start(storage: &Storage, root: &str) -> Self {
        let (storage, root) = (storage.clone(), root.to_string());
        let reading = tokio::spawn(async move { load_history(&storage, &root).await });
        PendingHistory {
            reading: Some(reading),
            read: History::default(),
        }
    }

    /// The history, waiting for the read the first time; warns of the ledger objects
    /// that could not be read.
    async fn get(&mut self) -> anyhow::Result<&mut History> {
        if let Some(task) = self.reading.take() {
            self.read = task
                .await
                .map_err(|e| anyhow::anyhow!("reading the ledger: {e}"))??;
            for p in self.read.problems() {
                eprintln!("warning: skipped ledger object {}: {}", p.uri, p.error);
            }
        }
        Ok(&mut self.read)
    }
}

/// What `--json` prints for one pair: its report, or why it did not run.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum PairOutput<'a> {
    Report(&'a Report),
    NotRun(&'a NotRun),
}

/// What became of one pair of the run.
enum Outcome {
    Reported(Box<Report>, ReportLocation),
    NotRun(NotRun),
}

impl Outcome {
    fn pair_and_verdict(&self) -> (String, String) {
        match self {
            Outcome::Reported(r, _) => (r.pair.clone(), r.status.to_string()),
            Outcome::NotRun(n) => (n.pair.clone(), n.status.to_string()),
        }
    }
}

fn interrupted(pair: &str) -> NotRun {
    NotRun {
        pair: pair.to_string(),
        status: "ERROR",
        error_type: "Interrupted",
        error: "the run was interrupted (Ctrl-C) before this pair was reconciled; run it again"
            .into(),
    }
}

/// The run's records so far: its ledger rows, rewritten as one object after each pair.
struct Recorder<'a> {
    storage: &'a Storage,
    root: &'a str,
    meta: RunMeta,
    rows: Vec<LedgerRow>,
    ledger_uri: Option<String>,
}

impl Recorder<'_> {
    async fn add(&mut self, rows: Vec<LedgerRow>) -> anyhow::Result<()> {
        self.rows.extend(rows);
        let date = self.meta.started_at.get(..10).unwrap_or("unknown");
        let uri =
            write_run_rows(self.storage, self.root, date, &self.meta.run_id, &self.rows).await?;
        self.ledger_uri = Some(uri);
        Ok(())
    }
}

/// Reconcile `pairs` of `config` and report on every one of them.
pub async fn run_pairs(
    config: &Config,
    pairs: Vec<PairConfig>,
    partitions: Vec<String>,
    output: OutputArgs,
) -> anyhow::Result<ExitCode> {
    let root = report_root(output.out.clone(), Some(config));
    let talk = !output.quiet && !output.json;
    let bar = progress::Bar::new(output.quiet || output.json);
    let mut opts = RunOptions::local();
    if let Some(p) = output.parallelism {
        opts.parallelism = p;
    }
    if let Some(at) = output.as_of {
        opts.as_of(at);
    }
    opts.index = MemoryBudget::new(output.index_memory << 20);
    opts.progress = Arc::new(bar.clone());
    if !partitions.is_empty() {
        opts.partitions = Some(partitions);
    }
    let sns_topic = output
        .sns_topic
        .clone()
        .or_else(|| config.defaults.sns_topic.clone());
    let tables = pairs
        .iter()
        .flat_map(|p| [p.source.as_str(), p.target.as_str()]);
    let aws = if sns_topic.is_some()
        || glue_recon::table::is_aws_location(tables.chain([root.as_str()]))
    {
        let aws = cloud::connect().await?;
        opts.storage = aws.storage();
        opts.catalog = Some(aws.catalog());
        Some(aws)
    } else {
        None
    };
    // Before any table is read: a report root that cannot be written fails now.
    check_writable(&opts.storage, &root).await?;
    let meta = RunMeta {
        run_id: opts.run_id.clone(),
        trigger: opts.trigger.clone(),
        started_at: opts.started_at(),
    };
    let marker = RunMarker {
        run_id: meta.run_id.clone(),
        started_at: meta.started_at.clone(),
        pairs: pairs.iter().map(|p| p.name.clone()).collect(),
    };
    marker.write(&opts.storage, &root).await?;
    let stop = Interrupt::listen();
    let mut history = PendingHistory::start(&opts.storage, &root);
    let mut recorder = Recorder {
        storage: &opts.storage,
        root: &root,
        meta,
        rows: Vec::new(),
        ledger_uri: None,
    };
    let mut outcomes = Vec::new();
    for pair in &pairs {
        if stop.fired() {
            outcomes.push(Outcome::NotRun(interrupted(&pair.name)));
            continue;
        }
        bar.start_pair(&pair.name);
        let result = tokio::select! {
            r = run_pair_full(pair, &config.defaults, &opts) => Some(r),
            _ = stop.wait() => None,
        };
        // What is written from here on is finished even if Ctrl-C comes.
        let outcome = match result {
            Some(Ok(mut run)) => {
                apply_drift(config, history.get().await?.runs(), &mut run.report);
                bar.writing();
                let loc = write_report(&opts.storage, &root, &run).await?;
                write_athena_manifest(&opts.storage, &loc).await?;
                recorder.add(rows_of(&run.report, &loc)).await?;
                bar.finish();
                if talk {
                    summary::print(&run.report, &loc);
                }
                Outcome::Reported(Box::new(run.report), loc)
            }
            Some(Err(e)) => {
                bar.finish();
                let not_run = NotRun::new(&pair.name, &e);
                eprintln!("error: pair `{}`: {e}", pair.name);
                let record = write_not_run(&opts.storage, &root, &recorder.meta, &not_run).await?;
                recorder
                    .add(vec![not_run_row(&recorder.meta, &pair.name, &record)])
                    .await?;
                if talk {
                    summary::print_not_run(&not_run, Some(&record));
                }
                Outcome::NotRun(not_run)
            }
            None => {
                bar.finish();
                Outcome::NotRun(interrupted(&pair.name))
            }
        };
        outcomes.push(outcome);
    }
    // Pairs stopped by Ctrl-C are recorded as such: the run is then wholly recorded.
    let stopped: Vec<LedgerRow> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::NotRun(n) if n.error_type == "Interrupted" => {
                Some(not_run_row(&recorder.meta, &n.pair, ""))
            }
            _ => None,
        })
        .collect();
    if !stopped.is_empty() {
        recorder.add(stopped).await?;
    }
    marker.remove(&opts.storage, &root).await?;
    let verdicts: Vec<(String, String)> = outcomes.iter().map(Outcome::pair_and_verdict).collect();
    if talk {
        out!("{}", summary::run_line(&verdicts));
    }
    let mut dashboard = None;
    if let Some(ledger_uri) = &recorder.ledger_uri {
        let history = std::mem::take(history.get().await?);
        let dash = glue_recon::dashboard::write_dashboard(
            &opts.storage,
            &root,
            history.ledger,
            Some(ledger_uri),
        )
        .await?;
        if talk {
            out!("ledger: {ledger_uri}");
            print_dashboard(&dash);
        }
        dashboard = Some(dash.index);
    }
    let written: Vec<(&Report, &ReportLocation)> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Reported(r, l) => Some((r.as_ref(), l)),
            Outcome::NotRun(_) => None,
        })
        .collect();
    let not_run: Vec<NotRun> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::NotRun(n) => Some(n.clone()),
            Outcome::Reported(..) => None,
        })
        .collect();
    let alert = Alert::for_run(&written, &not_run).map(|a| match &dashboard {
        Some(d) => a.with_dashboard(d),
        None => a,
    });
    if let (Some(topic), Some(aws), Some(alert)) = (&sns_topic, &aws, &alert) {
        let id = aws.publish(topic, alert).await?;
        if talk {
            out!(
                "alert: published to {topic} (message {id}): {}",
                alert.subject
            );
        }
    }
    if output.json {
        let printed: Vec<PairOutput> = outcomes
            .iter()
            .map(|o| match o {
                Outcome::Reported(r, _) => PairOutput::Report(r),
                Outcome::NotRun(n) => PairOutput::NotRun(n),
            })
            .collect();
        let json = match printed.as_slice() {
            [one] => serde_json::to_string_pretty(one)?,
            all => serde_json::to_string_pretty(all)?,
        };
        out!("{json}");
    }
    let worst = written
        .iter()
        .map(|(r, _)| r.status)
        .max()
        .unwrap_or(Status::Pass);
    Ok(if stop.fired() {
        ExitCode::from(interrupt::EXIT_CODE)
    } else if !not_run.is_empty() {
        ExitCode::from(2)
    } else if worst == Status::Fail {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
