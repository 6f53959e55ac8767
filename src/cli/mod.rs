//! Argument parsing and the subcommands.

/// `println!` for the CLI's output: a closed pipe (`glue-recon ... | head`) ends the
/// output quietly instead of panicking; the exit code still tells the verdict.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod cloud;
mod diff;
mod interrupt;
mod progress;
mod root;
mod run;
mod summary;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use diff::DiffPair;

use glue_recon::budget::MemoryBudget;
use glue_recon::config::{Config, PairConfig};
use glue_recon::runner::RunOptions;

use root::{optional_config, report_root, require_ledger};
use run::run_pairs;

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
        /// Overwrite the folder's recon.toml, source/ and target/ even when its
        /// recon.toml was not written by sample-data.
        #[arg(long)]
        force: bool,
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
        /// The difference is the pair's new normal: the run joins the drift baseline
        /// (without it, a run that drifted stays out of the baseline once resolved).
        #[arg(long)]
        accept: bool,
        #[command(flatten)]
        history: HistoryArgs,
    },
    /// Regenerate the dashboard (dashboard/index.html) from the ledger.
    Dashboard {
        #[command(flatten)]
        history: HistoryArgs,
    },
}

/// Where the history of runs is: `--out`, else the `report_dir` of `--config`.
#[derive(clap::Args)]
struct HistoryArgs {
    /// Report root holding the ledger (folder or s3:// prefix; default: the config's
    /// `report_dir`, else ./recon-out).
    #[arg(long)]
    out: Option<String>,
    /// The config file of the runs, for its `report_dir`.
    #[arg(long, short)]
    config: Option<PathBuf>,
}

impl HistoryArgs {
    /// The report root and its storage.
    async fn root(&self) -> anyhow::Result<(String, glue_recon::storage::Storage)> {
        let config = optional_config(self.config.as_deref())?;
        let root = report_root(self.out.clone(), config.as_ref());
        let storage = storage_for(&root).await?;
        Ok((root, storage))
    }
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
    #[arg(long, value_parser = at_least_one)]
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
    /// EventBridge bus to put a `Reconciliation Completed` event per pair on once the
    /// run is recorded (`default` for the account's default bus), as the merge function
    /// does.
    #[arg(long, value_name = "BUS")]
    event_bus: Option<String>,
    /// Record the run as started at this past time (`2026-12-01T06:00:00Z`, or a day
    /// `2026-12-01` for its midnight UTC): its run id, ledger date and drift baseline
    /// are that time's. To replay a missed day, or to build a demo's history.
    #[arg(long, value_name = "TIME", value_parser = past_time)]
    as_of: Option<chrono::DateTime<chrono::Utc>>,
}

/// A time in RFC 3339, or a day, not in the future.
fn past_time(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    let at = chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc())
        })
        .map_err(|_| {
            format!("`{s}` is not a time: write it as 2026-12-01T06:00:00Z or 2026-12-01")
        })?;
    if at > chrono::Utc::now() {
        return Err(format!(
            "`{s}` is in the future: --as-of records a run as started at a past time"
        ));
    }
    Ok(at)
}

/// A count of 1 or more.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{s}` is not a count: {e}")),
    }
}

/// An error and its causes, each said once: a cause whose text its parent already
/// includes (an OS error inside an I/O error's message) is not repeated.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if !text.contains(&c) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&c);
        }
    }
    text
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
            eprintln!("error: {}", error_text(&e));
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
            force,
        } => {
            refuse_to_overwrite(&out, force)?;
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
            accept,
            history,
        } => {
            let (out, storage) = history.root().await?;
            let ledger = require_ledger(&storage, &out).await?;
            let req = glue_recon::resolution::ResolveRequest {
                pair,
                run_id: run,
                partitions,
                by,
                note,
                accepted: accept,
            };
            let glue_recon::resolution::Resolved {
                record,
                uri,
                ledger,
            } = glue_recon::resolution::resolve(&storage, &out, ledger, &req).await?;
            out!(
                "resolved {} finding(s) of {} run {} (open since {}, {}){}",
                record.findings,
                record.pair,
                record.run_id,
                record.open_since,
                glue_recon::dashboard::duration(record.time_to_resolve_seconds),
                if record.accepted {
                    "; accepted as the new normal"
                } else {
                    ""
                }
            );
            out!("record: {uri}");
            let dash = glue_recon::dashboard::write_dashboard(&storage, &out, ledger, None).await?;
            print_dashboard(&dash);
            Ok(ExitCode::SUCCESS)
        }
        Command::Dashboard { history } => {
            let (out, storage) = history.root().await?;
            let ledger = require_ledger(&storage, &out).await?;
            let dash = glue_recon::dashboard::write_dashboard(&storage, &out, ledger, None).await?;
            print_dashboard(&dash);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `sample-data` writes recon.toml and replaces source/ and target/: refuse when the
/// folder's recon.toml is not one it wrote, unless `--force`.
fn refuse_to_overwrite(out: &std::path::Path, force: bool) -> anyhow::Result<()> {
    let config = out.join("recon.toml");
    let ours = match std::fs::read_to_string(&config) {
        Ok(text) => text.starts_with(glue_recon::sample::CONFIG_HEADER),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => anyhow::bail!("cannot read {}: {e}", config.display()),
    };
    if !ours && !force {
        anyhow::bail!(
            "{} exists and was not written by sample-data: it and {}/source and {}/target would be replaced; choose another --out, or pass --force",
            config.display(),
            out.display(),
            out.display()
        );
    }
    Ok(())
}

fn print_dashboard(d: &glue_recon::dashboard::DashboardOutput) {
    for p in &d.problems {
        eprintln!("warning: skipped history object {}: {}", p.uri, p.error);
    }
    for u in &d.unfinished {
        eprintln!("warning: {u}");
    }
    out!(
        "dashboard: {} ({} open finding{})",
        d.index,
        glue_recon::report::thousands(d.open),
        if d.open == 1 { "" } else { "s" }
    );
}

/// Local storage, with S3 added when the report root is on S3.
async fn storage_for(root: &str) -> anyhow::Result<glue_recon::storage::Storage> {
    Ok(if glue_recon::table::is_aws_location([root]) {
        cloud::connect().await?.storage()
    } else {
        RunOptions::local().storage
    })
}
