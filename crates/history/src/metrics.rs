//! The CloudWatch metrics of a run in Embedded Metric Format (EMF): JSON log lines
//! that CloudWatch Logs turns into metrics, so the merge function publishes them
//! without an API call. One line per pair (dimensions `pair` and `status`: findings
//! by kind, rows per side, failed partitions, the run's duration) and one for the
//! run without dimensions (`PairsFailed`, `Pairs`), which a stack-wide alarm watches.
//! The CLI prints none.

use recon_engine::layout::ReportLocation;
use recon_engine::report::{Report, Status};
use serde_json::{Map, Value, json};

/// The namespace when the function is not given one (`RECON_METRICS_NAMESPACE`; the
/// template sets `glue-recon/<stack name>`).
pub const DEFAULT_NAMESPACE: &str = "glue-recon";

/// A metric of a line: its name, unit and value.
type Metric = (&'static str, &'static str, f64);

/// One EMF document: `metrics` under `dimensions` (whose values are in `members`),
/// at `timestamp_ms`.
fn document(
    namespace: &str,
    timestamp_ms: i64,
    dimensions: &[&str],
    members: Map<String, Value>,
    metrics: &[Metric],
) -> String {
    let definitions: Vec<Value> = metrics
        .iter()
        .map(|(name, unit, _)| json!({"Name": name, "Unit": unit}))
        .collect();
    let mut root = members;
    root.insert(
        "_aws".into(),
        json!({
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": namespace,
                "Dimensions": [dimensions],
                "Metrics": definitions,
            }],
        }),
    );
    for (name, _, value) in metrics {
        root.insert((*name).into(), json!(value));
    }
    Value::Object(root).to_string()
}

/// The EMF lines of a run: one per pair of `reports`, then one for the run.
/// `duration_seconds` is the run's, from the lookup to the end of the merge.
pub fn emf_lines(
    namespace: &str,
    run_id: &str,
    reports: &[(Report, ReportLocation)],
    duration_seconds: f64,
    timestamp_ms: i64,
) -> Vec<String> {
    let mut lines: Vec<String> = reports
        .iter()
        .map(|(r, _)| {
            let t = &r.totals;
            let failed = r.partitions.iter().filter(|p| p.error.is_some()).count();
            let mut members = Map::new();
            members.insert("pair".into(), json!(r.pair));
            members.insert("status".into(), json!(r.status.to_string()));
            members.insert("run_id".into(), json!(run_id));
            let metrics: [Metric; 10] = [
                ("MissingInTarget", "Count", t.missing_in_target as f64),
                ("ExtraInTarget", "Count", t.extra_in_target as f64),
                ("Mismatch", "Count", t.mismatch as f64),
                (
                    "DuplicateKey",
                    "Count",
                    (t.duplicate_key_source + t.duplicate_key_target) as f64,
                ),
                (
                    "NullKey",
                    "Count",
                    (t.null_key_source + t.null_key_target) as f64,
                ),
                ("Findings", "Count", t.findings() as f64),
                ("SourceRows", "Count", t.source_rows as f64),
                ("TargetRows", "Count", t.target_rows as f64),
                ("FailedPartitions", "Count", failed as f64),
                ("DurationSeconds", "Seconds", duration_seconds),
            ];
            document(
                namespace,
                timestamp_ms,
                &["pair", "status"],
                members,
                &metrics,
            )
        })
        .collect();
    let failed = reports
        .iter()
        .filter(|(r, _)| r.status == Status::Fail || !r.complete)
        .count();
    let mut members = Map::new();
    members.insert("run_id".into(), json!(run_id));
    lines.push(document(
        namespace,
        timestamp_ms,
        &[],
        members,
        &[
            ("PairsFailed", "Count", failed as f64),
            ("Pairs", "Count", reports.len() as f64),
        ],
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The units CloudWatch accepts (the `MetricDatum` Unit values).
    const UNITS: [&str; 27] = [
        "Seconds",
        "Microseconds",
        "Milliseconds",
        "Bytes",
        "Kilobytes",
        "Megabytes",
        "Gigabytes",
        "Terabytes",
        "Bits",
        "Kilobits",
        "Megabits",
        "Gigabits",
        "Terabits",
        "Percent",
        "Count",
        "Bytes/Second",
        "Kilobytes/Second",
        "Megabytes/Second",
        "Gigabytes/Second",
        "Terabytes/Second",
        "Bits/Second",
        "Kilobits/Second",
        "Megabits/Second",
        "Gigabits/Second",
        "Terabits/Second",
        "Count/Second",
        "None",
    ];

    /// Check one line against the EMF specification: a JSON object whose `_aws`
    /// holds a millisecond `Timestamp` and `CloudWatchMetrics` directives, each with
    /// a `Namespace` (1-255 characters), `Dimensions` (arrays of at most 30 keys,
    /// each a string member of the root of at most 1,024 characters) and `Metrics`
    /// (at most 100 definitions, a `Name` of 1-255 characters and a valid `Unit`,
    /// each a numeric member of the root). Returns the root.
    fn check_emf(line: &str) -> Map<String, Value> {
        assert!(!line.contains('\n'), "one line: {line}");
        let root: Value = serde_json::from_str(line).expect("a JSON object");
        let root = root.as_object().expect("an object").clone();
        let aws = root["_aws"].as_object().expect("_aws is an object");
        let ts = aws["Timestamp"].as_i64().expect("Timestamp is an integer");
        assert!(ts > 1_600_000_000_000, "milliseconds since the epoch: {ts}");
        let directives = aws["CloudWatchMetrics"].as_array().expect("directives");
        assert!(!directives.is_empty());
        for d in directives {
            let ns = d["Namespace"].as_str().expect("Namespace");
            assert!(!ns.is_empty() && ns.len() <= 255, "{ns}");
            for set in d["Dimensions"].as_array().expect("Dimensions") {
                let set = set.as_array().expect("a dimension set");
                assert!(set.len() <= 30);
                for key in set {
                    let key = key.as_str().expect("a dimension key");
                    let value = root[key].as_str().expect("a string dimension member");
                    assert!(!value.is_empty() && value.len() <= 1024, "{key}={value}");
                }
            }
            let metrics = d["Metrics"].as_array().expect("Metrics");
            assert!(!metrics.is_empty() && metrics.len() <= 100);
            for m in metrics {
                let name = m["Name"].as_str().expect("Name");
                assert!(!name.is_empty() && name.len() <= 255);
                let unit = m["Unit"].as_str().expect("Unit");
                assert!(UNITS.contains(&unit), "{unit}");
                assert!(root[name].is_number(), "{name} is a numeric member");
            }
        }
        root
    }

    #[test]
    fn every_line_follows_the_emf_specification_and_carries_the_counts() {
        let mut failing = recon_engine::test_support::one_partition_report(3);
        failing.pair = "orders".into();
        failing.status = Status::Fail;
        let passing = recon_engine::test_support::one_partition_report(0);
        let loc =
            |r: &Report| ReportLocation::of(format!("s3://b/reports/{}", r.pair), &r.artifacts);
        let reports = vec![
            (failing.clone(), loc(&failing)),
            (passing.clone(), loc(&passing)),
        ];
        let lines = emf_lines("glue-recon/prod", "r1", &reports, 42.5, 1_765_000_000_000);
        assert_eq!(lines.len(), 3);
        let orders = check_emf(&lines[0]);
        assert_eq!(
            (orders["pair"].as_str(), orders["status"].as_str()),
            (Some("orders"), Some("FAIL"))
        );
        assert_eq!(orders["Mismatch"], json!(3.0));
        assert_eq!(orders["SourceRows"], json!(1000.0));
        assert_eq!(orders["DurationSeconds"], json!(42.5));
        assert_eq!(
            orders["_aws"]["CloudWatchMetrics"][0]["Namespace"],
            json!("glue-recon/prod")
        );
        let p = check_emf(&lines[1]);
        assert_eq!(
            (p["status"].as_str(), p["Findings"].as_f64()),
            (Some("PASS"), Some(0.0))
        );
        let run = check_emf(&lines[2]);
        assert_eq!(
            run["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json!([[]])
        );
        assert_eq!(
            (run["PairsFailed"].as_f64(), run["Pairs"].as_f64()),
            (Some(1.0), Some(2.0))
        );
    }
}
