//! Argument parsing and the subcommands.

/// `println!` for the CLI's output: a closed pipe (`glue-recon ... | head`) ends the
/// output quietly instead of panicking; the exit code still tells the verdict.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod diff;
mod progress;
mod summary;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use diff::DiffPair;

use glue_recon::alert::NotRun;
use glue_recon::budget::MemoryBudget;
use glue_recon::config::{Config, PairConfig};
use glue_recon::history::{History, apply_drift, load_history, record_run};
use glue_recon::report::Status;
use glue_recon::runner::{RunOptions, run_pair_full, write_report};

/// Reconcile a target table with its source, row by row, by business key.
#[derive(Parser)]
#[command(name = "glue-recon", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reconcile the pairs of a config file.
    Run {
        /// The config file (TOML).
        #[arg(long, short)]
        config: PathBuf,
        /// Only these pairs (repeatable; default all).
        #[arg(long = "pair")]
        pairs: Vec<String>,
        /// Only these partitions, e.g. `dt=2024-01-01` (repeatable).
        #[arg(long = "partition")]
        partitions: Vec<String>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Reconcile two tables once, without a config file.
    Diff {
        #[command(flatten)]
        pair: Box<DiffPair>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Write sample source and target tables with planted differences, and a config.
    SampleData {
        /// Output folder.
        #[arg(long, default_value = "demo-data")]
        out: PathBuf,
        /// Source rows in all.
        #[arg(long, default_value_t = 200_000)]
        rows: u64,
        /// Number of `dt=` partitions.
        #[arg(long, default_value_t = 6)]
        partitions: u32,
        /// Random seed.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Fraction of rows missing, extra and changed (each).
        #[arg(long, default_value_t = 0.001)]
        changes: f64,
        /// Only missing, extra and changed rows (no duplicates, NULL keys,
        /// one-sided partition or tolerance noise); used by the benchmark.
        #[arg(long)]
        no_edge_cases: bool,
        /// No differences at all.
        #[arg(long)]
        clean: bool,
    },
    /// Record that the findings of a pair's run are resolved (appends a record;
    /// history is never edited).
    Resolve {
        /// The pair.
        #[arg(long)]
        pair: String,
        /// The run id (default: the pair's latest run).
        #[arg(long)]
        run: Option<String>,
        /// Only these partitions (repeatable; default all of the run).
        #[arg(long = "partition")]
        partitions: Vec<String>,
        /// Who resolved it.
        #[arg(long)]
        by: String,
        /// Why: the fix, the ticket, the accepted difference.
        #[arg(long)]
        note: String,
        /// Report root holding the ledger (folder or s3:// prefix).
        #[arg(long, default_value = "recon-out")]
        out: String,
    },
    /// Regenerate the dashboard (dashboard/index.html) from the ledger.
    Dashboard {
        /// Report root holding the ledger (folder or s3:// prefix).
        #[arg(long, default_value = "recon-out")]
        out: String,
    },
}

#[derive(clap::Args)]
struct OutputArgs {
    /// Report folder or s3:// prefix (default: the config's `report_dir`, else ./recon-out).
    #[arg(long)]
    out: Option<String>,
    /// Print the report JSON to stdout (a JSON array when several pairs run; a pair
    /// that could not run as `{"pair", "status": "ERROR", "error_type", "error"}`).
    #[arg(long)]
    json: bool,
    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,
    /// Row groups decoded at once (default: 2 per core).
    #[arg(long)]
    parallelism: Option<usize>,
    /// Memory the key indexes of the partitions in flight may take, in MiB; a
    /// partition whose index does not fit joins from a temporary file in TMPDIR
    /// (slower, same result).
    #[arg(long, value_name = "MIB", default_value_t = MemoryBudget::LOCAL_INDEX_BYTES >> 20)]
    index_memory: u64,
    /// SNS topic ARN to publish the alert to when a pair is not PASS (default: the
    /// config's `defaults.sns_topic`).
    #[arg(long)]
    sns_topic: Option<String>,
}

/// Run the CLI and map the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("GLUE_RECON_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run {
            config,
            pairs,
            partitions,
            output,
        } => {
            let config = Config::from_file(&config)?;
            let selected: Vec<PairConfig> = config.select(&pairs)?.into_iter().cloned().collect();
            run_pairs(&config, selected, partitions, output).await
        }
        Command::Diff { pair, output } => {
            let config = pair.config()?;
            let selected = config.pairs.clone();
            run_pairs(&config, selected, Vec::new(), output).await
        }
        Command::SampleData {
            out,
            rows,
            partitions,
            seed,
            changes,
            no_edge_cases,
            clean,
        } => {
            let spec = glue_recon::sample::SampleSpec {
                out: out.clone(),
                rows,
                partitions,
                seed,
                changes: if clean { 0.0 } else { changes },
                edge_cases: !(clean || no_edge_cases),
            };
            let planted =
                tokio::task::spawn_blocking(move || glue_recon::sample::generate(&spec)).await??;
            out!(
                "wrote {} source and {} target rows to {}/source and {}/target",
                planted.source_rows,
                planted.target_rows,
                out.display(),
                out.display()
            );
            out!(
                "planted: {} missing, {} extra, {} mismatched, {} duplicate, {} NULL keys",
                planted.missing_in_target,
                planted.extra_in_target,
                planted.mismatch,
                planted.duplicate_key_target,
                planted.null_key_target
            );
            out!("config: {}", out.join("recon.toml").display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Resolve {
            pair,
            run,
            partitions,
            by,
            note,
            out,
        } => {
            let out = glue_recon::table::s3_normalized(out);
            let storage = storage_for(&out).await;
            let req = glue_recon::resolution::ResolveRequest {
                pair,
                run_id: run,
                partitions,
                by,
                note,
            };
            let glue_recon::resolution::Resolved {
                record,
                uri,
                ledger,
            } = glue_recon::resolution::resolve(&storage, &out, &req).await?;
            out!(
                "resolved {} finding(s) of {} run {} (open since {}, {})",
                record.findings,
                record.pair,
                record.run_id,
                record.open_since,
                glue_recon::dashboard::duration(record.time_to_resolve_seconds)
            );
            out!("record: {uri}");
            let dash = glue_recon::dashboard::write_dashboard(&storage, &out, ledger, None).await?;
            print_dashboard(&dash);
            Ok(ExitCode::SUCCESS)
        }
        Command::Dashboard { out } => {
            let out = glue_recon::table::s3_normalized(out);
            let storage = storage_for(&out).await;
            let dash =
                glue_recon::dashboard::write_dashboard(&storage, &out, Default::default(), None)
                    .await?;
            print_dashboard(&dash);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_dashboard(d: &glue_recon::dashboard::DashboardOutput) {
    for p in &d.problems {
        eprintln!("warning: skipped history object {}: {}", p.uri, p.error);
    }
    out!("open findings: {}", d.open);
    out!("dashboard: {}", d.index);
}

/// Local storage, with S3 added when the report root is on S3.
async fn storage_for(root: &str) -> glue_recon::storage::Storage {
    if glue_recon::aws::is_aws_location([root]) {
        glue_recon::aws::storage(&glue_recon::aws::load_config(env!("CARGO_PKG_NAME")).await)
    } else {
        RunOptions::local().storage
    }
}

/// The ledger history of a run, read in a task of its own while the first pair is
/// reconciled (the history is needed only once a pair's report is built).
struct PendingHistory {
    reading: Option<tokio::task::JoinHandle<glue_recon::error::Result<History>>>,
    read: History,
}

impl PendingHistory {
    fn start(storage: &glue_recon::storage::Storage, root: &str) -> Self {
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
    Report(&'a glue_recon::report::Report),
    NotRun(&'a NotRun),
}

async fn run_pairs(
    config: &Config,
    pairs: Vec<PairConfig>,
    partitions: Vec<String>,
    output: OutputArgs,
) -> anyhow::Result<ExitCode> {
    let root = output
        .out
        .clone()
        .map(glue_recon::table::s3_normalized)
        .or_else(|| config.defaults.report_dir.clone())
        .unwrap_or_else(|| "recon-out".into());
    let bar = progress::Bar::new(output.quiet || output.json);
    let mut opts = RunOptions::local();
    if let Some(p) = output.parallelism {
        opts.parallelism = p.max(1);
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
    let aws =
        if sns_topic.is_some() || glue_recon::aws::is_aws_location(tables.chain([root.as_str()])) {
            let conf = glue_recon::aws::load_config(env!("CARGO_PKG_NAME")).await;
            opts.storage = glue_recon::aws::storage(&conf);
            opts.catalog = Some(glue_recon::aws::glue::catalog(&conf));
            Some(conf)
        } else {
            None
        };
    let mut worst = Status::Pass;
    let mut reports = Vec::new();
    let mut locations = Vec::new();
    // What the pairs gave, in order: a report (its index), or why the pair did not run.
    let mut outcomes: Vec<std::result::Result<usize, NotRun>> = Vec::new();
    let mut history = PendingHistory::start(&opts.storage, &root);
    for pair in &pairs {
        bar.start_pair(&pair.name);
        match run_pair_full(pair, &config.defaults, &opts).await {
            Ok(mut run) => {
                apply_drift(config, &history.get().await?.runs, &mut run.report);
                let loc = write_report(&opts.storage, &root, &run).await?;
                bar.finish();
                worst = worst.max(run.report.status);
                if !output.quiet && !output.json {
                    summary::print(&run.report, &loc);
                }
                outcomes.push(Ok(reports.len()));
                reports.push(run.report);
                locations.push(loc);
            }
            Err(e) => {
                bar.finish();
                eprintln!("error: pair `{}`: {e}", pair.name);
                outcomes.push(Err(NotRun::new(&pair.name, &e)));
            }
        }
    }
    let mut dashboard = None;
    if !reports.is_empty() {
        let history = std::mem::take(history.get().await?);
        let recorded = record_run(&opts.storage, &root, &reports, &locations, history).await?;
        if !output.quiet && !output.json {
            out!("ledger: {}", recorded.ledger_uri);
            print_dashboard(&recorded.dashboard);
        }
        dashboard = Some(recorded.dashboard.index);
    }
    // The alerts of this run: the reports' when one is not PASS, and the pairs that
    // could not run.
    let mut alerts = Vec::new();
    if worst != Status::Pass {
        let written: Vec<_> = reports.iter().zip(&locations).collect();
        let alert = glue_recon::alert::Alert::for_reports(&written);
        if !output.quiet && !output.json {
            let shown = match &dashboard {
                Some(d) => alert.clone().with_dashboard(d),
                None => alert.clone(),
            };
            out!("\nalert: {}\n{}", shown.subject, shown.message.trim_end());
        }
        alerts.push(alert);
    }
    let not_run: Vec<NotRun> = outcomes
        .iter()
        .filter_map(|o| o.as_ref().err().cloned())
        .collect();
    if !not_run.is_empty() {
        alerts.push(glue_recon::alert::Alert::for_not_run(&not_run));
    }
    if let (Some(topic), Some(conf)) = (&sns_topic, &aws) {
        let publisher = glue_recon::aws::sns::SnsPublisher::from_conf(conf, topic);
        for alert in &alerts {
            let id = publisher.publish(alert).await?;
            if !output.quiet && !output.json {
                out!(
                    "alert: published to {topic} (message {id}): {}",
                    alert.subject
                );
            }
        }
    }
    if output.json {
        let printed: Vec<PairOutput> = outcomes
            .iter()
            .map(|o| match o {
                Ok(i) => PairOutput::Report(&reports[*i]),
                Err(e) => PairOutput::NotRun(e),
            })
            .collect();
        let json = match printed.as_slice() {
            [one] => serde_json::to_string_pretty(one)?,
            all => serde_json::to_string_pretty(all)?,
        };
        out!("{json}");
    }
    Ok(if !not_run.is_empty() {
        ExitCode::from(2)
    } else if worst == Status::Fail {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
