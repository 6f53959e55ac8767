//! Issue 5: the run ledger, resolutions, drift, the dashboard (in a browser) and the
//! ledger on S3 (moto). Runs go through the real `glue-recon` binary where the CLI is
//! under test, and through the library where S3 is.

mod alert;
mod browser;
mod ledger;
mod ledger_memory;
mod s3;
mod terminal;
mod truthful;

use std::path::{Path, PathBuf};
use std::process::Command;

use glue_recon::ledger::LedgerRow;
use glue_recon::report::Report;
use glue_recon::sample::{SampleSpec, generate};
use glue_recon::storage::Storage;

/// The glue-recon binary built with the tests.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_glue-recon"))
}

/// Write sample tables into `dir` (clean, or with `changes` of each kind planted).
pub fn sample(dir: &Path, seed: u64, changes: f64) {
    generate(&SampleSpec {
        out: dir.to_path_buf(),
        rows: 4_000,
        partitions: 2,
        seed,
        changes,
        edge_cases: false,
    })
    .expect("sample data");
}

/// A config with two pairs, `alpha` over `<dir>/a` and `beta` over `<dir>/b`,
/// with drift settings in `[defaults]`.
pub fn two_pair_config(dir: &Path) -> PathBuf {
    let path = dir.join("recon.toml");
    let pair = |name: &str, sub: &str| {
        format!(
            "[[pair]]\nname = \"{name}\"\nsource = \"{sub}/source\"\ntarget = \"{sub}/target\"\nkey = [\"id\"]\n\n"
        )
    };
    std::fs::write(
        &path,
        format!(
            "[defaults]\ndrift_baseline_runs = 3\ndrift_band = \"0.5%\"\n\n{}{}",
            pair("alpha", "a"),
            pair("beta", "b")
        ),
    )
    .unwrap();
    path
}

/// Run every pair of `config` into `out` with the CLI; returns the exit code and
/// the reports (`--json`). Waits a second first so run times differ.
pub fn run_cli(config: &Path, out: &Path) -> (i32, Vec<Report>) {
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = bin()
        .args(["run", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .arg("--json")
        .output()
        .expect("run glue-recon");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.code().unwrap_or(99) < 2,
        "glue-recon could not run: {}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    let reports: Vec<Report> = serde_json::from_str(&stdout).expect("reports JSON");
    (o.status.code().unwrap(), reports)
}

/// Every row of every readable ledger object under `root`, decoded straight from the
/// objects: what the ledger reader's summaries are checked against.
pub async fn ledger_rows(storage: &Storage, root: &str) -> Vec<LedgerRow> {
    let prefix = Storage::join(root, "ledger/");
    let store = storage.for_uri(&prefix).unwrap();
    let mut rows = Vec::new();
    for f in store.list(&prefix).await.unwrap() {
        let data = store.get(&f.uri).await.unwrap();
        if let Ok(decoded) = glue_recon::ledger::decode(data, &f.uri) {
            rows.extend(decoded);
        }
    }
    rows
}
