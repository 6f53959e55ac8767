//! `glue-recon run` and `diff`: reconcile pairs in this process, record each pair in
//! the ledger as soon as its report is written, and say what happened to every pair.

use std::process::ExitCode;
use std::sync::Arc;

use glue_recon::budget::MemoryBudget;
use glue_recon::completion::completed;
use glue_recon::config::{Config, PairConfig};
use glue_recon::diffrows::write_diff_rows;
use glue_recon::history::DEFAULT_ATHENA_DATABASE;
use glue_recon::report::NotRun;
use glue_recon::report::{Report, RunMeta, Status, count};
use glue_recon::run_marker::RunMarker;
use glue_recon::run_record::{LedgerWrites, RunRecord};
use glue_recon::runner::{RunOptions, check_writable, run_pair_full};

use super::interrupt::{self, Interrupt};
use super::{OutputArgs, cloud, print_dashboard, progress, root::report_root, summary};

/// What `--json` prints for one pair: its report, or why it did not run.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum PairOutput<'a> {
    Report(&'a Report),
    NotRun(&'a NotRun),
}

impl PairOutput<'_> {
    fn pair_and_verdict(&self) -> (String, String) {
        match self {
            PairOutput::Report(r) => (r.pair.clone(), r.status.to_string()),
            PairOutput::NotRun(n) => (n.pair.clone(), n.status.to_string()),
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
        || output.event_bus.is_some()
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
    let athena_database = config
        .defaults
        .athena_database
        .as_deref()
        .unwrap_or(DEFAULT_ATHENA_DATABASE);
    let mut record = RunRecord::start(
        &opts.storage,
        &root,
        &root,
        meta,
        LedgerWrites::AfterEachPair,
    )
    .with_athena_database(athena_database);
    let mut stopped = Vec::new();
    for pair in &pairs {
        if stop.fired() {
            stopped.push(interrupted(&pair.name));
            continue;
        }
        bar.start_pair(&pair.name);
        let result = tokio::select! {
            r = run_pair_full(pair, &config.defaults, &opts) => Some(r),
            _ = stop.wait() => None,
        };
        // What is written from here on is finished even if Ctrl-C comes.
        match result {
            Some(Ok(run)) => {
                let diff_rows = write_diff_rows(&run.report.key, &run.partials)?;
                bar.writing();
                let (report, loc) = record.report(config, run.report, diff_rows).await?;
                bar.finish();
                if talk {
                    summary::print(report, loc, athena_database);
                }
            }
            Some(Err(e)) => {
                bar.finish();
                let not_run = NotRun::new(&pair.name, &e);
                eprintln!("error: pair `{}`: {e}", pair.name);
                let shown = talk.then(|| not_run.clone());
                let record_uri = record.not_run(not_run).await?;
                if let Some(not_run) = shown {
                    summary::print_not_run(&not_run, Some(&record_uri));
                }
            }
            None => {
                bar.finish();
                stopped.push(interrupted(&pair.name));
            }
        }
    }
    // Pairs stopped by Ctrl-C are recorded as such: the run is then wholly recorded.
    record.stopped(stopped).await?;
    for p in record.history_problems().await? {
        eprintln!("warning: skipped ledger object {}: {}", p.uri, p.error);
    }
    // The run is recorded: it is no longer unfinished when the dashboard is drawn.
    marker.remove(&opts.storage, &root).await?;
    let finished = record.finish().await?;
    glue_recon::catalog::record_statuses(
        opts.catalog.as_deref(),
        &pairs.iter().collect::<Vec<_>>(),
        finished.reports.iter().map(|(r, _)| r),
    )
    .await?;
    // After the reports and the ledger are written, as the merge function sends them.
    if let (Some(bus), Some(aws)) = (&output.event_bus, &aws) {
        let events = completed(
            &opts.run_id,
            &opts.trigger,
            &finished.reports,
            &finished.not_run,
        );
        aws.put_events(bus, &events).await?;
        if talk {
            out!(
                "events: {} on the {bus} bus",
                count(events.len(), "Reconciliation Completed event")
            );
        }
    }
    // Every pair in the order of the run: its report, or why it did not run.
    let outcomes: Vec<PairOutput> = pairs
        .iter()
        .filter_map(|p| {
            let report = finished.reports.iter().find(|(r, _)| r.pair == p.name);
            match report {
                Some((r, _)) => Some(PairOutput::Report(r)),
                None => finished
                    .not_run
                    .iter()
                    .find(|n| n.pair == p.name)
                    .map(PairOutput::NotRun),
            }
        })
        .collect();
    if talk {
        let verdicts: Vec<(String, String)> =
            outcomes.iter().map(PairOutput::pair_and_verdict).collect();
        out!("{}", summary::run_line(&verdicts));
        if let (Some(uri), Some(dash)) = (&finished.ledger_uri, &finished.dashboard) {
            out!("ledger: {uri}");
            print_dashboard(dash);
        }
    }
    if let (Some(topic), Some(aws), true) = (&sns_topic, &aws, finished.alert_due) {
        let alert = &finished.alert;
        let id = aws.publish(topic, alert).await?;
        if talk {
            out!(
                "alert: published to {topic} (message {id}): {}",
                alert.subject
            );
        }
    }
    if output.json {
        let json = match outcomes.as_slice() {
            [one] => serde_json::to_string_pretty(one)?,
            all => serde_json::to_string_pretty(all)?,
        };
        out!("{json}");
    }
    let worst = finished
        .reports
        .iter()
        .map(|(r, _)| r.status)
        .max()
        .unwrap_or(Status::Pass);
    Ok(if stop.fired() {
        ExitCode::from(interrupt::EXIT_CODE)
    } else if !finished.not_run.is_empty() {
        ExitCode::from(2)
    } else if worst == Status::Fail {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
