//! The report root a command works on, and the history it must find there.

use std::path::Path;

use anyhow::bail;

use glue_recon::config::Config;
use glue_recon::layout::LEDGER_DIR;
use glue_recon::ledger::{LedgerRead, read_ledger};
use glue_recon::resolution::{accepted, read_resolutions};
use glue_recon::storage::Storage;

/// The report root when neither `--out` nor a config's `report_dir` names one.
pub const DEFAULT_ROOT: &str = "recon-out";

/// The report root: `--out`, else the config's `report_dir`, else [`DEFAULT_ROOT`].
pub fn report_root(out: Option<String>, config: Option<&Config>) -> String {
    out.map(glue_recon::table::s3_normalized)
        .or_else(|| config.and_then(|c| c.defaults.report_dir.clone()))
        .unwrap_or_else(|| DEFAULT_ROOT.into())
}

/// The config of `--config`, when given.
pub fn optional_config(path: Option<&Path>) -> anyhow::Result<Option<Config>> {
    Ok(path.map(Config::from_file).transpose()?)
}

/// The ledger under `root`, which must hold at least one run: a root that does not
/// exist, or holds no ledger (a typo in `--out`, a missing `--config`), is an error
/// naming it, never an empty, all-green history.
pub async fn require_ledger(storage: &Storage, root: &str) -> anyhow::Result<LedgerRead> {
    // Unreadable resolutions are reported by the dashboard each command writes next.
    let (resolutions, _) = read_resolutions(storage, root).await?;
    let ledger = read_ledger(storage, root, &accepted(&resolutions)).await?;
    if ledger.objects.is_empty() {
        let local_missing =
            !root.starts_with("s3://") && !glue_recon::storage::local::local_path(root).exists();
        bail!(
            "{} holds no ledger ({}): no glue-recon run has been recorded there; pass the report root of your runs with --out, or --config to use its report_dir",
            root,
            if local_missing {
                "the folder does not exist".to_string()
            } else {
                format!(
                    "nothing under {}",
                    Storage::join(root, &format!("{LEDGER_DIR}/"))
                )
            }
        );
    }
    Ok(ledger)
}
