//! The reconciliation config (`recon.toml`): table pairs, keys, column options,
//! thresholds, masking. Parsed strictly: an unknown or ill-typed key is an error that
//! names the key and its line.
//!
//! ```toml
//! [[pair]]
//! name = "orders"
//! source = "data/source/orders"          # folder, s3://bucket/prefix/ or glue://db/table
//! target = "glue://analytics/orders"
//! key = ["order_id"]                      # composite keys: ["order_id", "line_no"]
//! exclude = ["load_ts"]                   # columns never compared
//! rename = { cust_id = "customer_id" }    # source column -> target column
//! masked = ["email"]                      # values never printed
//! partition_filter = "dt >= '2024-01-01'" # Glue expression syntax
//! glue_jobs = ["orders-etl"]              # jobs whose success triggers this pair
//! partitions_from_argument = "--partitions" # a job run reconciles only the partitions it names
//! catalog_status = true                   # the verdict as parameters of the target's Glue table
//!
//! [pair.columns.amount]
//! abs_tolerance = 0.01
//!
//! [pair.thresholds.fail]
//! mismatch = "0.1%"                       # a count or a percentage of source rows
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ReconError, Result};

/// The whole config file.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Settings shared by every pair.
    #[serde(default)]
    pub defaults: Defaults,
    /// The table pairs to reconcile.
    #[serde(default, rename = "pair")]
    pub pairs: Vec<PairConfig>,
}

/// Settings shared by every pair.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// How many sample rows of each finding kind a report shows.
    #[serde(default = "default_sample_limit")]
    pub sample_limit: usize,
    /// Where reports go (a folder or an s3:// prefix) when the CLI is not told.
    #[serde(default)]
    pub report_dir: Option<String>,
    /// SNS topic ARN the CLI publishes the alert to when a pair is not PASS
    /// (`--sns-topic` overrides it).
    #[serde(default)]
    pub sns_topic: Option<String>,
    /// How many previous runs of a pair form its drift baseline.
    #[serde(default = "default_drift_baseline_runs")]
    pub drift_baseline_runs: usize,
    /// How far the finding rate (percentage points) or the row counts (percent) may
    /// move from the baseline before the pair is DRIFT; a count means findings and
    /// rows. Unset means [`DEFAULT_DRIFT_BAND`] (0.5%).
    #[serde(default)]
    pub drift_band: Option<Limit>,
    /// The Glue database the Athena statements of reports on S3 name (a deployed
    /// stack's `LedgerDatabaseName`); unset: `glue_recon`. In the stack the merge
    /// function's `RECON_LEDGER_DATABASE` decides.
    #[serde(default)]
    pub athena_database: Option<String>,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            sample_limit: default_sample_limit(),
            report_dir: None,
            sns_topic: None,
            drift_baseline_runs: default_drift_baseline_runs(),
            drift_band: None,
            athena_database: None,
        }
    }
}

fn default_drift_baseline_runs() -> usize {
    7
}

/// The drift band when neither the pair nor `[defaults]` sets one.
pub const DEFAULT_DRIFT_BAND: Limit = Limit::Percent(0.5);

fn default_sample_limit() -> usize {
    20
}

/// One source/target table pair.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PairConfig {
    /// A unique name; used in report paths and alerts.
    pub name: String,
    /// The source table location.
    pub source: String,
    /// The target table location.
    pub target: String,
    /// The business key columns (target names after rename).
    pub key: Vec<String>,
    /// Columns that are not compared.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Source column name -> target column name.
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    /// Columns whose values are never printed (reports, alerts, logs).
    #[serde(default)]
    pub masked: Vec<String>,
    /// Per-column comparison options, by (target) column name.
    #[serde(default)]
    pub columns: BTreeMap<String, ColumnOptions>,
    /// Partition filter in Glue expression syntax (`dt >= '2024-01-01' AND region = 'eu'`).
    #[serde(default)]
    pub partition_filter: Option<String>,
    /// Fail instead of comparing the common columns when the schemas differ.
    #[serde(default)]
    pub require_same_schema: bool,
    /// Glue job names whose successful runs trigger this pair.
    #[serde(default)]
    pub glue_jobs: Vec<String>,
    /// The job-run argument (`--partitions`) that names the partitions a run of a
    /// `glue_jobs` job wrote: a run it triggers reconciles only those
    /// (`recon_pipeline::job_run_partitions` reads the value). Unset: the whole table.
    #[serde(default)]
    pub partitions_from_argument: Option<String>,
    /// Write each run's verdict as parameters of the target's Glue table
    /// (`glue_recon.last_status`, `glue_recon.last_run_id`, `glue_recon.last_run_at`),
    /// so the Glue console shows it next to the table. Needs a `glue://` target.
    #[serde(default)]
    pub catalog_status: bool,
    /// Overrides `defaults.sample_limit`.
    #[serde(default)]
    pub sample_limit: Option<usize>,
    /// WARN/FAIL thresholds.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// Overrides `defaults.drift_baseline_runs`.
    #[serde(default)]
    pub drift_baseline_runs: Option<usize>,
    /// Overrides `defaults.drift_band`.
    #[serde(default)]
    pub drift_band: Option<Limit>,
}

/// How one column is compared.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ColumnOptions {
    /// Numbers within this absolute difference are equal.
    #[serde(default)]
    pub abs_tolerance: Option<f64>,
    /// Numbers within this relative difference (of the larger magnitude) are equal.
    #[serde(default)]
    pub rel_tolerance: Option<f64>,
    /// Strip leading and trailing white space of strings before comparing.
    #[serde(default)]
    pub trim: bool,
    /// Compare strings case-insensitively.
    #[serde(default)]
    pub ignore_case: bool,
    /// Treat an empty string as NULL.
    #[serde(default)]
    pub empty_as_null: bool,
}

impl ColumnOptions {
    /// Whether the column is compared numerically with a tolerance (and so kept out
    /// of the row hash).
    pub(crate) fn has_tolerance(&self) -> bool {
        self.abs_tolerance.is_some() || self.rel_tolerance.is_some()
    }
}

/// Limits on findings: above `warn` the pair is WARN, above `fail` it is FAIL.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Above these, FAIL. A kind the table does not name fails on any finding
    /// (write `"unlimited"` to never fail on it), so a partial table cannot turn a
    /// missing row into a silent PASS.
    #[serde(default = "Limits::zero", deserialize_with = "fail_limits")]
    pub fail: Limits,
    /// Above these (and not above `fail`), WARN. Default: no warn band.
    #[serde(default)]
    pub warn: Limits,
    /// What a schema difference does: `"fail"`, `"warn"` (default) or `"ignore"`.
    #[serde(default)]
    pub schema_drift: DriftAction,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            fail: Limits::zero(),
            warn: Limits::default(),
            schema_drift: DriftAction::Warn,
        }
    }
}

/// What a schema difference does to the status.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DriftAction {
    /// The pair fails.
    Fail,
    /// The pair warns.
    #[default]
    Warn,
    /// Reported, no effect on the status.
    Ignore,
}

/// A limit per finding kind; `None` means no limit.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Keys missing in the target.
    #[serde(default)]
    pub missing_in_target: Option<Limit>,
    /// Keys only in the target.
    #[serde(default)]
    pub extra_in_target: Option<Limit>,
    /// Keys whose values differ.
    #[serde(default)]
    pub mismatch: Option<Limit>,
    /// Duplicated keys (both sides together).
    #[serde(default)]
    pub duplicate_key: Option<Limit>,
    /// Rows with a NULL key column (both sides together).
    #[serde(default)]
    pub null_key: Option<Limit>,
}

/// Read `[thresholds.fail]`: kinds it does not name fail on any finding.
fn fail_limits<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Limits, D::Error> {
    let named = Limits::deserialize(d)?;
    let zero = || Some(Limit::Count(0));
    Ok(Limits {
        missing_in_target: named.missing_in_target.or_else(zero),
        extra_in_target: named.extra_in_target.or_else(zero),
        mismatch: named.mismatch.or_else(zero),
        duplicate_key: named.duplicate_key.or_else(zero),
        null_key: named.null_key.or_else(zero),
    })
}

impl Limits {
    fn zero() -> Self {
        let zero = Some(Limit::Count(0));
        Limits {
            missing_in_target: zero.clone(),
            extra_in_target: zero.clone(),
            mismatch: zero.clone(),
            duplicate_key: zero.clone(),
            null_key: zero,
        }
    }
}

/// A threshold: a number of findings, or a percentage of the source rows (`"0.5%"`).
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    /// At most this many findings.
    Count(u64),
    /// At most this percentage of the source rows.
    Percent(f64),
    /// No limit (`"unlimited"`).
    Unlimited,
}

impl Limit {
    /// Whether `found` findings out of `source_rows` exceed the limit.
    pub(crate) fn exceeded(&self, found: u64, source_rows: u64) -> bool {
        match self {
            Limit::Count(max) => found > *max,
            Limit::Percent(pct) => {
                let rate = if source_rows == 0 {
                    if found == 0 { 0.0 } else { 100.0 }
                } else {
                    found as f64 * 100.0 / source_rows as f64
                };
                rate > *pct
            }
            Limit::Unlimited => false,
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Count(n) => write!(f, "{n}"),
            Limit::Percent(p) => write!(f, "{p}%"),
            Limit::Unlimited => f.write_str("unlimited"),
        }
    }
}

/// Written the way it is read: a count as a number, a percentage as `"0.5%"`, so a
/// config survives a round trip (the cloud run snapshots pair configs as JSON).
impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Limit::Count(n) => s.serialize_u64(*n),
            Limit::Percent(_) | Limit::Unlimited => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Count(u64),
            Text(String),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom("expected a count (e.g. 10) or a percentage (e.g. \"0.5%\")")
        })? {
            Raw::Count(n) => Ok(Limit::Count(n)),
            Raw::Text(s) if s.trim().eq_ignore_ascii_case("unlimited") => Ok(Limit::Unlimited),
            Raw::Text(s) => s
                .trim()
                .strip_suffix('%')
                .and_then(|p| p.trim().parse::<f64>().ok())
                .filter(|p| p.is_finite() && *p >= 0.0)
                .map(Limit::Percent)
                .ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "`{s}` is not a percentage; write e.g. \"0.5%\" or a count"
                    ))
                }),
        }
    }
}

/// A tolerance must be a finite number >= 0 (the CLI's `--abs-tolerance` and
/// `--rel-tolerance` are checked by the same rule).
pub fn check_tolerance(v: f64) -> std::result::Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("must be a finite number >= 0, got {v}"))
    }
}

impl Config {
    /// Read and validate a config file.
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| ReconError::InvalidConfig {
            file: path.display().to_string(),
            message: format!("cannot read it: {e}"),
        })?;
        let mut config = Config::parse(&text, &path.display().to_string())?;
        if let Some(base) = path.parent() {
            config.resolve_relative_paths(base);
        }
        Ok(config)
    }

    /// Parse and validate config text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Config> {
        let mut config: Config = toml::from_str(text).map_err(|e| ReconError::InvalidConfig {
            file: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        config.validate(origin)?;
        config.s3_locations_in_s3_form();
        Ok(config)
    }

    /// Write `s3a://` and `s3n://` locations (tables, report folder) as the `s3://`
    /// locations of the same objects ([`crate::table::s3_normalized`]).
    fn s3_locations_in_s3_form(&mut self) {
        let fix = |loc: &mut String| *loc = crate::table::s3_normalized(std::mem::take(loc));
        for pair in &mut self.pairs {
            fix(&mut pair.source);
            fix(&mut pair.target);
        }
        if let Some(dir) = &mut self.defaults.report_dir {
            fix(dir);
        }
    }

    fn validate(&self, origin: &str) -> Result<()> {
        let invalid = |message: String| ReconError::InvalidConfig {
            file: origin.to_string(),
            message,
        };
        if self.pairs.is_empty() {
            return Err(invalid(
                "no [[pair]] is defined; add one with name, source, target and key".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for pair in &self.pairs {
            let at = format!("pair `{}`", pair.name);
            if let Err(why) = crate::layout::check_segment(&pair.name) {
                return Err(invalid(format!("{at}: `name` {why}")));
            }
            let reserved = crate::layout::RESERVED_DIRS;
            if reserved.iter().any(|r| r.eq_ignore_ascii_case(&pair.name)) {
                return Err(invalid(format!(
                    "{at}: `name` is taken by a folder of the report root ({}); choose another",
                    reserved.join(", ")
                )));
            }
            if !seen.insert(pair.name.as_str()) {
                return Err(invalid(format!("{at} is defined twice")));
            }
            if pair.key.is_empty() {
                return Err(invalid(format!(
                    "{at}: `key` is empty; name the business key column(s)"
                )));
            }
            for (i, k) in pair.key.iter().enumerate() {
                if pair.key[..i].iter().any(|e| e.eq_ignore_ascii_case(k)) {
                    return Err(invalid(format!(
                        "{at}: key column `{k}` is listed twice in `key`; list each key column once"
                    )));
                }
                if pair.exclude.iter().any(|e| e.eq_ignore_ascii_case(k)) {
                    return Err(invalid(format!(
                        "{at}: key column `{k}` is also in `exclude`"
                    )));
                }
            }
            for (column, opts) in &pair.columns {
                for (name, v) in [
                    ("abs_tolerance", opts.abs_tolerance),
                    ("rel_tolerance", opts.rel_tolerance),
                ] {
                    if let Some(Err(e)) = v.map(check_tolerance) {
                        return Err(invalid(format!("{at}: columns.{column}.{name} {e}")));
                    }
                }
                if opts.has_tolerance() && pair.key.iter().any(|k| k.eq_ignore_ascii_case(column)) {
                    return Err(invalid(format!(
                        "{at}: key column `{column}` cannot have a tolerance"
                    )));
                }
            }
            if pair.source.trim().is_empty() || pair.target.trim().is_empty() {
                return Err(invalid(format!("{at}: `source` and `target` must be set")));
            }
            if pair.catalog_status && !pair.target.starts_with("glue://") {
                return Err(invalid(format!(
                    "{at}: `catalog_status = true` writes the verdict on the target's Glue table, \
                     but the target `{}` is not a glue:// table; name it as glue://database/table \
                     or remove the key",
                    pair.target
                )));
            }
            if let Some(arg) = &pair.partitions_from_argument {
                let name = arg.strip_prefix("--").unwrap_or_default();
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                {
                    return Err(invalid(format!(
                        "{at}: `partitions_from_argument` = `{arg}` is not a Glue job argument name; \
                         write it as the job run has it, with the leading `--` (e.g. \"--partitions\")"
                    )));
                }
                if pair.glue_jobs.is_empty() {
                    return Err(invalid(format!(
                        "{at}: `partitions_from_argument` is set but `glue_jobs` is empty; \
                         name the Glue jobs whose runs pass `{arg}`"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Make relative local table paths relative to `base` (the config file's folder),
    /// so a config works from any working directory.
    pub(crate) fn resolve_relative_paths(&mut self, base: &Path) {
        let fix = |loc: &mut String| {
            if !loc.contains("://") && Path::new(loc.as_str()).is_relative() {
                *loc = base.join(loc.as_str()).to_string_lossy().into_owned();
            }
        };
        for pair in &mut self.pairs {
            fix(&mut pair.source);
            fix(&mut pair.target);
        }
        if let Some(dir) = &mut self.defaults.report_dir {
            fix(dir);
        }
    }

    /// The pairs selected by name (all when `names` is empty).
    pub fn select(&self, names: &[String]) -> Result<Vec<&PairConfig>> {
        if names.is_empty() {
            return Ok(self.pairs.iter().collect());
        }
        names
            .iter()
            .map(|n| {
                self.pairs.iter().find(|p| &p.name == n).ok_or_else(|| {
                    let known: Vec<_> = self.pairs.iter().map(|p| p.name.as_str()).collect();
                    ReconError::InvalidInput(format!(
                        "no pair named `{n}` in the config (known: {})",
                        known.join(", ")
                    ))
                })
            })
            .collect()
    }
}

impl PairConfig {
    /// The sample limit for this pair.
    pub fn sample_limit(&self, defaults: &Defaults) -> usize {
        self.sample_limit.unwrap_or(defaults.sample_limit)
    }

    /// The drift baseline size and band for this pair.
    pub fn drift_settings(&self, defaults: &Defaults) -> (usize, Limit) {
        (
            self.drift_baseline_runs
                .unwrap_or(defaults.drift_baseline_runs),
            self.drift_band
                .clone()
                .or_else(|| defaults.drift_band.clone())
                .unwrap_or(DEFAULT_DRIFT_BAND),
        )
    }

    /// Options of a (target-named) column; case-insensitive.
    pub(crate) fn column_options(&self, column: &str) -> ColumnOptions {
        self.columns
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(column))
            .map(|(_, o)| o.clone())
            .unwrap_or_default()
    }

    /// Whether a (target-named) column is masked; case-insensitive.
    pub fn is_masked(&self, column: &str) -> bool {
        self.masked.iter().any(|m| m.eq_ignore_ascii_case(column))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[[pair]]
name = "orders"
source = "a"
target = "b"
key = ["id"]
"#;

    #[test]
    fn minimal_config_gets_fail_on_any_finding() {
        let c = Config::parse(MINIMAL, "t").unwrap();
        assert_eq!(c.pairs[0].thresholds.fail.mismatch, Some(Limit::Count(0)));
        assert_eq!(c.defaults.sample_limit, 20);
    }

    #[test]
    fn s3a_and_s3n_locations_are_read_as_s3() {
        let text = r#"
[defaults]
report_dir = "s3n://reports/recon/"

[[pair]]
name = "orders"
source = "s3a://lake/raw/orders/"
target = "glue://db/orders"
key = ["id"]
"#;
        let c = Config::parse(text, "t").unwrap();
        assert_eq!(c.pairs[0].source, "s3://lake/raw/orders/");
        assert_eq!(c.pairs[0].target, "glue://db/orders");
        assert_eq!(
            c.defaults.report_dir.as_deref(),
            Some("s3://reports/recon/")
        );
        // So a run whose only AWS location is an s3a:// one still gets AWS clients.
        assert!(crate::table::is_aws_location(["s3a://lake/raw/orders/"]));
        assert!(!crate::table::is_aws_location([
            "raw/orders",
            "file:///tmp/t"
        ]));
    }

    #[test]
    fn unknown_key_names_key_and_line() {
        let text = format!("{MINIMAL}colour = \"red\"\n");
        let err = Config::parse(&text, "recon.toml").unwrap_err().to_string();
        assert!(err.contains("colour"), "{err}");
        assert!(err.contains("line 7"), "{err}");
    }

    #[test]
    fn ill_typed_value_is_an_error() {
        let text = MINIMAL.replace("key = [\"id\"]", "key = 5");
        let err = Config::parse(&text, "recon.toml").unwrap_err().to_string();
        assert!(err.contains("key"), "{err}");
    }

    #[test]
    fn percent_and_count_limits() {
        let text = format!(
            "{MINIMAL}[pair.thresholds.fail]\nmismatch = \"0.5%\"\nmissing_in_target = 3\n"
        );
        let c = Config::parse(&text, "t").unwrap();
        let fail = &c.pairs[0].thresholds.fail;
        assert_eq!(fail.mismatch, Some(Limit::Percent(0.5)));
        assert!(!fail.mismatch.as_ref().unwrap().exceeded(5, 1000));
        assert!(fail.mismatch.as_ref().unwrap().exceeded(6, 1000));
        assert!(fail.missing_in_target.as_ref().unwrap().exceeded(4, 1000));
        let bad = format!("{MINIMAL}[pair.thresholds.fail]\nmismatch = \"lots\"\n");
        assert!(
            Config::parse(&bad, "t")
                .unwrap_err()
                .to_string()
                .contains("lots")
        );
    }

    #[test]
    fn percent_limits_survive_a_json_round_trip() {
        let text = format!("{MINIMAL}[pair.thresholds.fail]\nmismatch = \"1%\"\n");
        let pair = &Config::parse(&text, "t").unwrap().pairs[0];
        let json = serde_json::to_string(pair).unwrap();
        let back: PairConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, pair);
    }

    #[test]
    fn partial_fail_table_keeps_failing_on_unnamed_kinds() {
        let text = format!(
            "{MINIMAL}[pair.thresholds.fail]\nmismatch = \"0.1%\"\nnull_key = \"unlimited\"\n"
        );
        let c = Config::parse(&text, "t").unwrap();
        let fail = &c.pairs[0].thresholds.fail;
        assert_eq!(fail.missing_in_target, Some(Limit::Count(0)));
        assert_eq!(fail.mismatch, Some(Limit::Percent(0.1)));
        assert!(!fail.null_key.as_ref().unwrap().exceeded(1_000, 10));
        let json = serde_json::to_string(fail).unwrap();
        assert!(json.contains("\"unlimited\""), "{json}");
    }

    #[test]
    fn config_that_names_nothing_is_an_error() {
        let err = Config::parse("", "recon.toml").unwrap_err().to_string();
        assert!(err.contains("no [[pair]]"), "{err}");
    }

    #[test]
    fn duplicate_pair_and_empty_key_are_errors() {
        let twice = format!("{MINIMAL}{MINIMAL}");
        assert!(
            Config::parse(&twice, "t")
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        let nokey = MINIMAL.replace("key = [\"id\"]", "key = []");
        assert!(
            Config::parse(&nokey, "t")
                .unwrap_err()
                .to_string()
                .contains("key")
        );
    }

    #[test]
    fn pair_names_that_are_folders_of_the_report_root_or_dots_are_errors() {
        for name in ["ledger", "Dashboard", "resolutions", "..", "."] {
            let text = MINIMAL.replace("name = \"orders\"", &format!("name = \"{name}\""));
            let err = Config::parse(&text, "t").unwrap_err().to_string();
            assert!(err.contains(&format!("pair `{name}`")), "{name}: {err}");
        }
    }

    #[test]
    fn partitions_from_argument_is_a_glue_argument_of_a_pair_with_glue_jobs() {
        let with = |value: &str, jobs: &str| {
            format!("{MINIMAL}glue_jobs = [{jobs}]\npartitions_from_argument = \"{value}\"\n")
        };
        let c = Config::parse(&with("--partitions", "\"etl\""), "t").unwrap();
        assert_eq!(
            c.pairs[0].partitions_from_argument.as_deref(),
            Some("--partitions")
        );
        for bad in ["partitions", "--", "--two words", ""] {
            let err = Config::parse(&with(bad, "\"etl\""), "t")
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("partitions_from_argument") && err.contains("leading `--`"),
                "{bad}: {err}"
            );
        }
        let err = Config::parse(&with("--partitions", ""), "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`glue_jobs` is empty"), "{err}");
    }

    #[test]
    fn select_unknown_pair_lists_known() {
        let c = Config::parse(MINIMAL, "t").unwrap();
        let err = c.select(&["nope".into()]).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("orders"), "{err}");
    }
}
