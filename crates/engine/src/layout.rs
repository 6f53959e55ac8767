//! Where things are under a report root: the folder of each pair run and its files,
//! and the folders of the history beside them. The CLI and the functions both write
//! through these, so a local root and an S3 one have the same layout
//! (docs/history.md draws it).

use serde::{Deserialize, Serialize};

use crate::storage::Storage;

/// The ledger's folder: one Parquet object per run (`recon_history::ledger` in the history layer).
pub const LEDGER_DIR: &str = "ledger";

/// The dashboard's folder (`index.html`, `engineer.html`).
pub const DASHBOARD_DIR: &str = "dashboard";

/// The resolution records' folder.
pub const RESOLUTIONS_DIR: &str = "resolutions";

/// The folder of the markers of runs being recorded.
pub const IN_PROGRESS_DIR: &str = "in-progress";

/// The folder beside a report's diffs.parquet holding a one-line symlink manifest that
/// points at it, the LOCATION of an Athena `SymlinkTextInputFormat` table over the diff
/// rows.
pub const ATHENA_DIR: &str = "athena";

/// The folders of a report root that are not pairs: no pair may be named after one.
pub(crate) const RESERVED_DIRS: [&str; 4] =
    [DASHBOARD_DIR, LEDGER_DIR, RESOLUTIONS_DIR, IN_PROGRESS_DIR];

/// The longest name that becomes one segment of a path or object key.
pub const SEGMENT_MAX: usize = 128;

/// Whether `value` may be one segment of a path or object key, the rule for pair
/// names, run ids and item ids alike: 1 to [`SEGMENT_MAX`] letters, digits, `-`, `_`
/// and `.`, not starting with `.` (no `..`, and no name the table listing would skip
/// as hidden). The error says what is wrong, for a message that names the value.
pub fn check_segment(value: &str) -> std::result::Result<(), String> {
    if value.is_empty() {
        return Err("is empty".into());
    }
    if value.len() > SEGMENT_MAX {
        return Err(format!(
            "is {} characters long; at most {SEGMENT_MAX} are allowed",
            value.len()
        ));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err("may only use letters, digits, '-', '_' and '.' (it becomes a path)".into());
    }
    if value.starts_with('.') {
        return Err("cannot start with '.' (it becomes a folder name)".into());
    }
    Ok(())
}

/// The folder of a pair's run under a report root.
pub fn report_dir(root: &str, pair: &str, run_id: &str) -> String {
    Storage::join(root, &format!("{pair}/{run_id}"))
}

/// The files of one pair run's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportLocation {
    /// The folder (or s3 prefix).
    pub dir: String,
    /// report.json.
    pub json: String,
    /// report.html.
    pub html: String,
    /// diffs.parquet.
    pub diff_rows: String,
}

impl ReportLocation {
    /// Where the files of a report whose companions are `artifacts` go in the folder
    /// `dir`.
    pub fn of(dir: String, artifacts: &Artifacts) -> Self {
        ReportLocation {
            json: Storage::join(&dir, "report.json"),
            html: Storage::join(&dir, &artifacts.html),
            diff_rows: Storage::join(&dir, &artifacts.diff_rows),
            dir,
        }
    }
}

/// File names of the report's companions, relative to report.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifacts {
    /// The HTML page.
    pub html: String,
    /// Every finding as Parquet rows.
    pub diff_rows: String,
}

impl Artifacts {
    /// The names every report is written with: `report.html`, `diffs.parquet`.
    pub fn standard() -> Self {
        Artifacts {
            html: "report.html".into(),
            diff_rows: "diffs.parquet".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_segment_rule_for_names_and_ids() {
        for ok in ["orders", "orders_v2", "a.b-c", "20261205T060000Z-b9363916"] {
            assert_eq!(check_segment(ok), Ok(()), "{ok}");
        }
        let long = "x".repeat(SEGMENT_MAX + 1);
        for (bad, why) in [
            ("", "empty"),
            ("a/b", "letters, digits"),
            ("é", "letters, digits"),
            ("..", "start with '.'"),
            (".hidden", "start with '.'"),
            (long.as_str(), "at most 128"),
        ] {
            let err = check_segment(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn a_pair_name_follows_the_segment_rule() {
        let config = |name: &str| {
            crate::config::Config::parse(
                &format!("[[pair]]\nname = '{name}'\nsource = 'a'\ntarget = 'b'\nkey = ['id']\n"),
                "recon.toml",
            )
        };
        assert!(config("orders").is_ok());
        let err = config(".orders").unwrap_err().to_string();
        assert!(
            err.contains("recon.toml") && err.contains("pair `.orders`") && err.contains("'.'"),
            "{err}"
        );
        let err = config("ledger").unwrap_err().to_string();
        assert!(err.contains("taken by a folder"), "{err}");
    }
}
