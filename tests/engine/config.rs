//! The config: rename and exclude, the schema drift section and
//! `require_same_schema`, thresholds, and config errors that name the key and line.

use arrow::array::*;
use arrow::datatypes::Int32Type;

use super::fixtures::*;
use glue_recon::config::Config;
use glue_recon::partial::FindingKind;
use glue_recon::report::Status;

#[test]
fn rename_maps_source_columns_to_target_names_including_the_key() {
    let source = batch(vec![
        ("order_no", ids(3)),
        ("cust_id", arr(Int32Array::from(vec![7, 8, 9]))),
    ]);
    let target = batch(vec![
        ("order_id", ids(3)),
        ("customer_id", arr(Int64Array::from(vec![7, 8, 10]))),
    ]);
    let run = Lab::with(&source, &target).run(
        &["order_id"],
        "rename = { order_no = \"order_id\", CUST_ID = \"customer_id\" }",
    );
    assert_eq!(
        diffs(&run),
        vec![diff("2", "customer_id", Some("9"), Some("10"))]
    );
    let s = &run.report.schema;
    assert!(
        s.only_in_source.is_empty() && s.only_in_target.is_empty(),
        "{s:?}"
    );
    assert_eq!(s.compared_columns, vec!["order_id", "customer_id"]);
}

#[test]
fn rename_of_a_column_the_source_lacks_is_an_error() {
    let t = batch(vec![("id", ids(1))]);
    let err = Lab::with(&t, &t)
        .try_run(&["id"], "rename = { nope = \"id2\" }")
        .err()
        .expect("an unknown rename source is refused")
        .to_string();
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn excluded_columns_are_not_compared() {
    let source = batch(vec![
        ("id", ids(2)),
        ("load_ts", arr(Int64Array::from(vec![1, 2]))),
        ("v", arr(Int32Array::from(vec![1, 2]))),
    ]);
    let target = batch(vec![
        ("id", ids(2)),
        ("LOAD_TS", arr(Int64Array::from(vec![100, 200]))),
        ("v", arr(Int32Array::from(vec![1, 2]))),
    ]);
    let lab = Lab::with(&source, &target);
    assert_eq!(lab.run(&["id"], "").report.totals.mismatch, 2);
    let run = lab.run(&["id"], "exclude = [\"load_ts\"]");
    assert_clean(&run, 2);
    assert_eq!(run.report.schema.compared_columns, vec!["id", "v"]);
}

#[test]
fn excluding_a_key_column_is_a_config_error() {
    let err = Config::parse(
        "[[pair]]\nname='p'\nsource='s'\ntarget='t'\nkey=['id']\nexclude=['ID']\n",
        "recon.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("id") && err.contains("exclude"), "{err}");
}

/// Source with `old` and int32/decimal columns; target with `new`, int64 and double.
fn drifted_lab() -> Lab {
    let source = batch(vec![
        ("id", ids(2)),
        ("old", arr(StringArray::from(vec!["a", "b"]))),
        ("n", arr(Int32Array::from(vec![1, 2]))),
        (
            "amount",
            arr(Decimal128Array::from(vec![150, 250])
                .with_precision_and_scale(12, 2)
                .unwrap()),
        ),
    ]);
    let target = batch(vec![
        ("id", ids(2)),
        ("new", arr(StringArray::from(vec!["a", "b"]))),
        ("n", arr(Int64Array::from(vec![1, 2]))),
        ("amount", arr(Float64Array::from(vec![1.5, 2.5]))),
    ]);
    Lab::with(&source, &target)
}

#[test]
fn schema_drift_is_a_section_of_the_report_and_warns_by_default() {
    let run = drifted_lab().run(&["id"], "");
    let s = &run.report.schema;
    assert_eq!(s.only_in_source, vec!["old"]);
    assert_eq!(s.only_in_target, vec!["new"]);
    let changes: Vec<(&str, &str, &str, bool)> = s
        .type_changes
        .iter()
        .map(|c| {
            (
                c.column.as_str(),
                c.source.as_str(),
                c.target.as_str(),
                c.compatible,
            )
        })
        .collect();
    assert_eq!(
        changes,
        vec![
            ("amount", "Decimal128(12, 2)", "Float64", false),
            ("n", "Int32", "Int64", true),
        ]
    );
    assert_eq!(s.compared_columns, vec!["id", "amount", "n"]);
    // The common columns are equal: the drift alone makes it WARN.
    assert_clean(&run, 2);
    assert_eq!(run.report.status, Status::Warn);
    assert!(
        run.report
            .reasons
            .iter()
            .any(|r| r.contains("schema drift") && r.contains("old")),
        "{:?}",
        run.report.reasons
    );
}

#[test]
fn schema_drift_action_fail_and_ignore() {
    let lab = drifted_lab();
    let fail = lab.run(&["id"], "[pair.thresholds]\nschema_drift = \"fail\"");
    assert_eq!(fail.report.status, Status::Fail);
    let ignore = lab.run(&["id"], "[pair.thresholds]\nschema_drift = \"ignore\"");
    assert_eq!(ignore.report.status, Status::Pass);
    assert_eq!(ignore.report.schema.only_in_source, vec!["old"]);
}

#[test]
fn a_compatible_width_change_alone_is_not_drift() {
    let source = batch(vec![
        ("id", ids(2)),
        ("n", arr(Int32Array::from(vec![1, 2]))),
    ]);
    let target = batch(vec![
        ("id", ids(2)),
        ("n", arr(Int64Array::from(vec![1, 2]))),
    ]);
    let run = Lab::with(&source, &target).run(&["id"], "require_same_schema = true");
    assert_eq!(run.report.status, Status::Pass, "{:?}", run.report.reasons);
}

#[test]
fn require_same_schema_refuses_drifted_tables() {
    let err = drifted_lab()
        .try_run(&["id"], "require_same_schema = true")
        .err()
        .expect("drifted schemas are refused")
        .to_string();
    for part in ["require_same_schema", "old", "new", "amount"] {
        assert!(err.contains(part), "{part} not in: {err}");
    }
}

/// A lab of 20 rows with `mismatch` changed values, `missing` missing keys.
fn counted_lab(mismatch: usize, missing: usize) -> Lab {
    let n = 20;
    let v = |changed: usize| {
        arr(Int32Array::from_iter_values(
            (0..n as i32).map(|i| if (i as usize) < changed { -i - 1 } else { i }),
        ))
    };
    let source = batch(vec![("id", ids(n)), ("v", v(0))]);
    let target = batch(vec![("id", ids(n)), ("v", v(mismatch))]);
    Lab::with(&source, &target.slice(0, n - missing))
}

#[test]
fn thresholds_decide_pass_warn_and_fail() {
    let limits = "[pair.thresholds.fail]\nmismatch = 3\nmissing_in_target = \"10%\"\n\
                  [pair.thresholds.warn]\nmismatch = 0\nmissing_in_target = 0\n";
    let status = |mismatch, missing| counted_lab(mismatch, missing).run(&["id"], limits).report;
    assert_eq!(status(0, 0).status, Status::Pass);
    let warn = status(3, 2);
    assert_eq!(warn.status, Status::Warn, "{:?}", warn.reasons);
    assert_eq!(warn.reasons.len(), 2, "{:?}", warn.reasons);
    let fail = status(4, 0);
    assert_eq!(fail.status, Status::Fail);
    assert_eq!(fail.reasons.len(), 1, "{:?}", fail.reasons);
    assert!(
        fail.reasons[0].contains("MISMATCH 4 > 3"),
        "{:?}",
        fail.reasons
    );
    // 3 of 20 source rows is 15% > 10%.
    assert_eq!(status(0, 3).status, Status::Fail);
}

#[test]
fn without_thresholds_any_finding_fails() {
    let report = counted_lab(1, 0).run(&["id"], "").report;
    assert_eq!(report.status, Status::Fail);
    assert_eq!(report.totals.of(FindingKind::Mismatch), 1);
}

/// The error of parsing config text, which must name every part.
fn config_error(text: &str, parts: &[&str]) -> String {
    let err = Config::parse(text, "recon.toml")
        .err()
        .unwrap_or_else(|| panic!("accepted:\n{text}"))
        .to_string();
    for p in parts {
        assert!(err.contains(p), "`{p}` not in: {err}");
    }
    err
}

const PAIR: &str = "[[pair]]\nname = \"p\"\nsource = \"s\"\ntarget = \"t\"\nkey = [\"id\"]\n";

#[test]
fn unknown_keys_are_named_with_their_line() {
    // PAIR has 5 lines, so the appended key is on line 6.
    config_error(&format!("{PAIR}colour = \"red\"\n"), &["colour", "line 6"]);
    config_error(
        &format!("{PAIR}[pair.columns.v]\nabs_tolerence = 0.1\n"),
        &["abs_tolerence", "line 7"],
    );
    config_error(
        &format!("{PAIR}[pair.thresholds.fail]\nmismatches = 3\n"),
        &["mismatches", "line 7"],
    );
    config_error(
        &format!("[default]\nsample_limit = 3\n{PAIR}"),
        &["default", "line 1"],
    );
}

#[test]
fn ill_typed_values_are_named_with_their_line() {
    config_error(
        &PAIR.replace("key = [\"id\"]", "key = 5"),
        &["key", "line 5"],
    );
    config_error(
        &format!("{PAIR}[pair.columns.v]\ntrim = \"yes\"\n"),
        &["trim", "line 7"],
    );
    config_error(
        &format!("{PAIR}[pair.columns.v]\nabs_tolerance = \"0.1\"\n"),
        &["abs_tolerance", "line 7"],
    );
    config_error(
        &format!("{PAIR}sample_limit = -1\n"),
        &["sample_limit", "line 6"],
    );
    config_error(
        &format!("{PAIR}[pair.thresholds.fail]\nmismatch = \"lots\"\n"),
        &["lots", "line 7"],
    );
    config_error(
        &format!("{PAIR}[pair.thresholds]\nschema_drift = \"maybe\"\n"),
        &["maybe", "line 7"],
    );
    config_error(
        &format!("{PAIR}[pair.columns.v]\nabs_tolerance = -1.0\n"),
        &["abs_tolerance", "-1"],
    );
}

#[test]
fn a_config_that_names_nothing_is_an_error() {
    config_error("", &["no [[pair]]"]);
    config_error("[defaults]\nsample_limit = 5\n", &["no [[pair]]"]);
    config_error(&PAIR.replace("key = [\"id\"]", "key = []"), &["key"]);
    config_error(
        &PAIR.replace("source = \"s\"", "source = \"\""),
        &["source"],
    );
    config_error(&format!("{PAIR}{PAIR}"), &["twice"]);
}

#[test]
fn options_or_masks_for_unknown_columns_are_errors() {
    let t = batch(vec![("id", ids(1)), ("v", arr(Int32Array::from(vec![1])))]);
    let lab = Lab::with(&t, &t);
    for extra in ["masked = [\"emial\"]", "[pair.columns.emial]\ntrim = true"] {
        let err = lab
            .try_run(&["id"], extra)
            .err()
            .expect("refused")
            .to_string();
        assert!(err.contains("emial"), "{err}");
    }
}

#[test]
fn relative_table_paths_are_relative_to_the_config_file() {
    let t = batch(vec![
        ("id", ids(2)),
        (
            "s",
            arr(vec!["a", "b"]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>()),
        ),
    ]);
    let lab = Lab::with(&t, &t);
    let path = lab.path("recon.toml");
    std::fs::write(
        &path,
        "[[pair]]\nname = \"p\"\nsource = \"source\"\ntarget = \"target\"\nkey = [\"id\"]\n",
    )
    .unwrap();
    let config = Config::from_file(&path).unwrap();
    assert_clean(&run_pair(&config.pairs[0]).unwrap(), 2);
}
