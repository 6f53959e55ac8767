//! The report folder: report.json per docs/contracts.md, report.html with the
//! verdict and counts, diffs.parquet rows matching the findings.

use std::path::Path;

use arrow::array::*;
use serde_json::Value;

use super::fixtures::*;
use glue_recon::partial::FindingKind;

/// Two partitions: `dt=1` with a MISSING, an EXTRA and a MISMATCH on two columns;
/// `dt=2` with a duplicate key in the target and a NULL key in the source.
fn report_lab() -> Lab {
    let lab = Lab::new();
    let t = |ids: Vec<Option<i64>>, names: Vec<&str>, qty: Vec<i32>| {
        batch(vec![
            ("id", arr(Int64Array::from(ids))),
            ("name", arr(StringArray::from(names))),
            ("qty", arr(Int32Array::from(qty))),
        ])
    };
    lab.write(
        "source/dt=1/p.parquet",
        &t(
            vec![Some(1), Some(2), Some(3)],
            vec!["a", "b", "c"],
            vec![1, 2, 3],
        ),
    );
    lab.write(
        "target/dt=1/p.parquet",
        &t(
            vec![Some(1), Some(2), Some(4)],
            vec!["a", "B", "d"],
            vec![1, 20, 4],
        ),
    );
    lab.write(
        "source/dt=2/p.parquet",
        &t(vec![Some(5), None], vec!["e", "n"], vec![5, 0]),
    );
    lab.write(
        "target/dt=2/p.parquet",
        &t(vec![Some(5), Some(5)], vec!["e", "e"], vec![5, 5]),
    );
    lab
}

fn read_json(path: &str) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn object_keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort();
    k
}

#[test]
fn report_json_has_the_documented_fields() {
    let lab = report_lab();
    let run = lab.run(&["id"], "");
    let loc = lab.write_report(&run);
    let j = read_json(&loc.json);
    for field in [
        "schema_version",
        "engine_version",
        "hash_encoding_version",
        "run_id",
        "pair",
        "started_at",
        "finished_at",
        "source",
        "target",
        "key",
        "status",
        "complete",
        "reasons",
        "totals",
        "schema",
        "partitions",
        "columns",
        "samples",
        "artifacts",
    ] {
        assert!(j.get(field).is_some(), "report.json lacks `{field}`: {j:#}");
    }
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["hash_encoding_version"], 3);
    assert_eq!(j["engine_version"], glue_recon::ENGINE_VERSION);
    assert_eq!(j["pair"], "t");
    assert_eq!(j["key"], serde_json::json!(["id"]));
    assert_eq!(j["status"], "FAIL");
    assert_eq!(j["complete"], true);
    assert_eq!(j["source"], lab.loc("source"));
    for t in ["started_at", "finished_at"] {
        let s = j[t].as_str().unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(s).is_ok(), "{t}: {s}");
    }
    assert_eq!(
        object_keys(&j["totals"]),
        vec![
            "duplicate_key_source",
            "duplicate_key_target",
            "extra_in_target",
            "matched",
            "mismatch",
            "missing_in_target",
            "null_key_source",
            "null_key_target",
            "source_rows",
            "target_rows",
        ]
    );
    let totals = &j["totals"];
    assert_eq!(
        [
            &totals["source_rows"],
            &totals["target_rows"],
            &totals["matched"],
            &totals["missing_in_target"],
            &totals["extra_in_target"],
            &totals["mismatch"],
            &totals["duplicate_key_target"],
            &totals["null_key_source"],
        ],
        [5, 5, 1, 1, 1, 1, 1, 1].map(Value::from).each_ref()
    );
    for f in [
        "only_in_source",
        "only_in_target",
        "type_changes",
        "compared_columns",
    ] {
        assert!(j["schema"][f].is_array(), "schema.{f}: {j:#}");
    }
    let parts = j["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0]["partition"], "dt=1");
    assert_eq!(parts[0]["presence"], "both");
    assert_eq!(parts[0]["status"], "ok");
    assert_eq!(parts[0]["totals"]["mismatch"], 1);
    assert_eq!(parts[1]["totals"]["duplicate_key_target"], 1);
    assert_eq!(
        j["columns"],
        serde_json::json!([{"column": "name", "mismatch": 1}, {"column": "qty", "mismatch": 1}])
    );
    assert_eq!(
        object_keys(&j["samples"]),
        vec![
            "DUPLICATE_KEY",
            "EXTRA_IN_TARGET",
            "MISMATCH",
            "MISSING_IN_TARGET",
            "NULL_KEY"
        ]
    );
    assert_eq!(
        j["samples"]["MISMATCH"][0],
        serde_json::json!({
            "partition": "dt=1",
            "key": {"id": "2"},
            "diffs": [
                {"column": "name", "source": "b", "target": "B"},
                {"column": "qty", "source": "2", "target": "20"},
            ]
        })
    );
    assert_eq!(j["samples"]["MISSING_IN_TARGET"][0]["key"]["id"], "3");
    assert_eq!(j["samples"]["DUPLICATE_KEY"][0]["side"], "target");
    assert_eq!(j["samples"]["DUPLICATE_KEY"][0]["count"], 2);
    assert_eq!(j["samples"]["NULL_KEY"][0]["key"]["id"], Value::Null);
    assert_eq!(j["samples"]["NULL_KEY"][0]["side"], "source");
    assert_eq!(
        j["artifacts"],
        serde_json::json!({"html": "report.html", "diff_rows": "diffs.parquet"})
    );
    // The companions sit next to report.json under <out>/<pair>/<run_id>/.
    let dir = Path::new(&loc.json).parent().unwrap();
    assert_eq!(dir, lab.path("out").join("t").join(&run.report.run_id));
    assert!(dir.join("report.html").is_file() && dir.join("diffs.parquet").is_file());
}

#[test]
fn samples_are_bounded_by_the_sample_limit() {
    let n = 30;
    let lab = Lab::with(&batch(vec![("id", ids(n))]), &batch(vec![("id", ids(0))]));
    let run = lab.run(&["id"], "sample_limit = 4");
    assert_eq!(run.report.totals.missing_in_target, 30);
    assert_eq!(run.report.sample_limit, 4);
    assert_eq!(run.report.samples[&FindingKind::MissingInTarget].len(), 4);
    // diffs.parquet holds them all.
    let loc = lab.write_report(&run);
    assert_eq!(read_rows_as_text(Path::new(&loc.diff_rows)).len(), 30);
}

#[test]
fn report_html_shows_the_verdict_first_and_the_counts() {
    let lab = report_lab();
    let run = lab.run(&["id"], "");
    let html = std::fs::read_to_string(lab.write_report(&run).html).unwrap();
    let verdict = html.find("FAIL").expect("the verdict");
    for later in ["MISSING_IN_TARGET", "dt=1", "name"] {
        assert!(
            html.find(later).unwrap() > verdict,
            "{later} before the verdict"
        );
    }
    for (kind, n) in [
        ("MISSING_IN_TARGET", 1),
        ("EXTRA_IN_TARGET", 1),
        ("MISMATCH", 1),
        ("DUPLICATE_KEY", 1),
        ("NULL_KEY", 1),
    ] {
        let card = format!("data-kind=\"{kind}\"><div>{kind}</div><div class=\"num\">{n}</div>");
        assert!(html.contains(&card), "no card {card}");
    }
    // Samples side by side: the differing column with both values.
    assert!(html.contains("<td>name</td><td>b</td><td>B</td>"), "{html}");
    // The partition table says which sides a partition is on, in words.
    assert!(html.contains("<td>dt=1</td><td>both</td>"), "{html}");
    let pass = Lab::with(&batch(vec![("id", ids(2))]), &batch(vec![("id", ids(2))]));
    let run = pass.run(&["id"], "");
    let html = std::fs::read_to_string(pass.write_report(&run).html).unwrap();
    assert!(html.contains("class=\"verdict PASS\">PASS<"), "{html}");
}

#[test]
fn report_html_escapes_values() {
    let lab = Lab::with(
        &batch(vec![
            ("id", ids(1)),
            ("v", arr(StringArray::from(vec!["<b>x</b>"]))),
        ]),
        &batch(vec![
            ("id", ids(1)),
            ("v", arr(StringArray::from(vec!["<script>"]))),
        ]),
    );
    let run = lab.run(&["id"], "");
    let html = std::fs::read_to_string(lab.write_report(&run).html).unwrap();
    assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"));
}

#[test]
fn diffs_parquet_rows_match_the_findings() {
    let lab = report_lab();
    let run = lab.run(&["id"], "");
    let loc = lab.write_report(&run);
    let rows = read_rows_as_text(Path::new(&loc.diff_rows));
    let mut got: Vec<String> = rows
        .iter()
        .map(|r| {
            let cell = |c: &str| r[c].clone().unwrap_or_else(|| "∅".into());
            [
                "diff_type",
                "partition",
                "side",
                "key_id",
                "column",
                "source_value",
                "target_value",
                "count",
            ]
            .map(cell)
            .join(" ")
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            "DUPLICATE_KEY dt=2 target 5 ∅ ∅ ∅ 2",
            "EXTRA_IN_TARGET dt=1 ∅ 4 ∅ ∅ ∅ ∅",
            "MISMATCH dt=1 ∅ 2 name b B ∅",
            "MISMATCH dt=1 ∅ 2 qty 2 20 ∅",
            "MISSING_IN_TARGET dt=1 ∅ 3 ∅ ∅ ∅ ∅",
            "NULL_KEY dt=2 source ∅ ∅ ∅ ∅ ∅",
        ]
    );
    assert_eq!(
        rows[0].keys().collect::<Vec<_>>(),
        vec![
            "column",
            "count",
            "diff_type",
            "key_id",
            "partition",
            "side",
            "source_value",
            "target_value"
        ]
    );
}

#[test]
fn diffs_parquet_of_a_clean_run_is_empty_and_readable() {
    let lab = Lab::with(&batch(vec![("id", ids(3))]), &batch(vec![("id", ids(3))]));
    let run = lab.run(&["id"], "");
    let loc = lab.write_report(&run);
    assert!(read_rows_as_text(Path::new(&loc.diff_rows)).is_empty());
}
