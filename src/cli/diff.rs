//! `glue-recon diff`: one pair from the command line, with the options a config's
//! `[[pair]]` has.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use glue_recon::config::Config;

/// The pair of a `diff` run.
#[derive(clap::Args)]
pub struct DiffPair {
    /// The source table (folder, file://, s3:// or glue://db/table).
    source: String,
    /// The target table.
    target: String,
    /// Key column (repeat for a composite key).
    #[arg(long = "key", required = true)]
    key: Vec<String>,
    /// The pair's name: its report folder and history (drift is checked against
    /// earlier runs of the same name). Default: `diff-` and a digest of the two table
    /// locations and the key, so runs of other tables, or by another key, never share
    /// a history.
    #[arg(long)]
    name: Option<String>,
    /// Column not to compare (repeatable).
    #[arg(long = "exclude", value_name = "COL")]
    exclude: Vec<String>,
    /// Source column that has another name in the target (repeatable).
    #[arg(long = "rename", value_name = "FROM=TO", value_parser = assignment)]
    rename: Vec<(String, String)>,
    /// Column whose values are never shown (repeatable).
    #[arg(long = "mask", value_name = "COL")]
    masked: Vec<String>,
    /// Numbers of a column within this absolute difference are equal (repeatable).
    #[arg(long = "abs-tolerance", value_name = "COL=X", value_parser = number)]
    abs_tolerance: Vec<(String, f64)>,
    /// Numbers of a column within this relative difference are equal (repeatable).
    #[arg(long = "rel-tolerance", value_name = "COL=X", value_parser = number)]
    rel_tolerance: Vec<(String, f64)>,
    /// Strip leading and trailing white space of a column's strings (repeatable).
    #[arg(long = "trim", value_name = "COL")]
    trim: Vec<String>,
    /// Compare a column's strings case-insensitively (repeatable).
    #[arg(long = "ignore-case", value_name = "COL")]
    ignore_case: Vec<String>,
    /// Treat an empty string of a column as NULL (repeatable).
    #[arg(long = "empty-as-null", value_name = "COL")]
    empty_as_null: Vec<String>,
    /// Stop instead of comparing the common columns when the schemas differ.
    #[arg(long)]
    require_same_schema: bool,
    /// Partition filter (`dt >= '2024-01-01'`).
    #[arg(long)]
    partition_filter: Option<String>,
    /// Samples per finding kind in the report.
    #[arg(long, default_value_t = 20)]
    sample_limit: usize,
}

/// `FROM=TO`.
fn assignment(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!("expected COLUMN=VALUE, got `{s}`")),
    }
}

/// `COL=X` with a number X.
fn number(s: &str) -> Result<(String, f64), String> {
    let (col, v) = assignment(s)?;
    let x = v
        .parse::<f64>()
        .map_err(|_| format!("`{v}` (in `{s}`) is not a number"))?;
    let x = glue_recon::config::check_tolerance(x).map_err(|e| format!("`{s}`: {e}"))?;
    Ok((col, x))
}

impl DiffPair {
    /// The default name: `diff-` and the first 8 hex digits of the SHA-256 of the
    /// two locations and the key columns (lower-case, in order; findings by another key
    /// are not comparable).
    fn default_name(&self) -> String {
        let key: Vec<String> = self.key.iter().map(|k| k.to_lowercase()).collect();
        let digest = Sha256::digest(format!(
            "{}\n{}\n{}",
            self.source,
            self.target,
            key.join("\n")
        ));
        let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        format!("diff-{hex}")
    }

    /// The per-column options, by column.
    fn columns(&self) -> BTreeMap<String, serde_json::Map<String, Value>> {
        let mut columns: BTreeMap<String, serde_json::Map<String, Value>> = BTreeMap::new();
        let mut set = |col: &str, option: &str, value: Value| {
            columns
                .entry(col.to_string())
                .or_default()
                .insert(option.to_string(), value);
        };
        for (col, x) in &self.abs_tolerance {
            set(col, "abs_tolerance", json!(x));
        }
        for (col, x) in &self.rel_tolerance {
            set(col, "rel_tolerance", json!(x));
        }
        for (flag, cols) in [
            ("trim", &self.trim),
            ("ignore_case", &self.ignore_case),
            ("empty_as_null", &self.empty_as_null),
        ] {
            for col in cols {
                set(col, flag, json!(true));
            }
        }
        columns
    }

    /// The one-pair config these arguments describe, validated as a config file is.
    pub fn config(&self) -> anyhow::Result<Config> {
        let rename: BTreeMap<&str, &str> = self
            .rename
            .iter()
            .map(|(from, to)| (from.as_str(), to.as_str()))
            .collect();
        let mut pair = json!({
            "name": self.name.clone().unwrap_or_else(|| self.default_name()),
            "source": self.source,
            "target": self.target,
            "key": self.key,
            "exclude": self.exclude,
            "rename": rename,
            "masked": self.masked,
            "columns": self.columns(),
            "require_same_schema": self.require_same_schema,
            "sample_limit": self.sample_limit,
        });
        if let Some(filter) = &self.partition_filter {
            pair["partition_filter"] = json!(filter);
        }
        let text = toml::to_string(&json!({ "pair": [pair] }))?;
        Ok(Config::parse(&text, "command line")?)
    }
}
