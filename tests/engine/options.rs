//! Per-column options: absolute and relative tolerances, trim, ignore_case,
//! empty_as_null; and masking.

use arrow::array::*;

use super::fixtures::*;
use glue_recon::partial::FindingKind;
use glue_recon::runner::PairRun;

/// Reconcile `id, v, other` tables with the pair options `extra`.
fn reconcile(source_v: ArrayRef, target_v: ArrayRef, extra: &str) -> PairRun {
    let n = source_v.len();
    let other = || {
        arr(StringArray::from_iter_values(
            (0..n).map(|i| format!("o{i}")),
        ))
    };
    Lab::with(
        &batch(vec![("id", ids(n)), ("v", source_v), ("other", other())]),
        &batch(vec![("id", ids(n)), ("v", target_v), ("other", other())]),
    )
    .run(&["id"], extra)
}

fn floats(v: &[Option<f64>]) -> ArrayRef {
    arr(Float64Array::from(v.to_vec()))
}

#[test]
fn absolute_tolerance_matches_within_and_reports_beyond() {
    let run = reconcile(
        floats(&[Some(1.0), Some(2.0), Some(3.0), None, Some(-5.0)]),
        floats(&[Some(1.005), Some(2.02), Some(3.0), None, Some(-5.01)]),
        "[pair.columns.v]\nabs_tolerance = 0.01",
    );
    assert_eq!(run.report.totals.matched, 4, "{:?}", diffs(&run));
    assert_eq!(diffs(&run), vec![diff("1", "v", Some("2.0"), Some("2.02"))]);
}

#[test]
fn relative_tolerance_scales_with_the_magnitude() {
    let run = reconcile(
        floats(&[Some(100.0), Some(100.0), Some(1e9), Some(0.0), Some(0.001)]),
        floats(&[
            Some(100.5),
            Some(102.0),
            Some(1.005e9),
            Some(0.0),
            Some(0.002),
        ]),
        "[pair.columns.v]\nrel_tolerance = 0.01",
    );
    // 100 vs 100.5 and 1e9 vs 1.005e9 are within 1%; 100 vs 102 and 0.001 vs 0.002 not.
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["1", "4"]);
    assert_eq!(run.report.totals.matched, 3);
}

#[test]
fn tolerance_does_not_make_null_equal_to_a_number() {
    let run = reconcile(
        floats(&[Some(0.0), None]),
        floats(&[None, Some(0.0)]),
        "[pair.columns.v]\nabs_tolerance = 1.0",
    );
    assert_eq!(
        diffs(&run),
        vec![
            diff("0", "v", Some("0.0"), None),
            diff("1", "v", None, Some("0.0"))
        ]
    );
}

#[test]
fn tolerance_compares_decimals_with_doubles() {
    let dec = arr(Decimal128Array::from(vec![110, 220])
        .with_precision_and_scale(12, 2)
        .unwrap());
    let run = reconcile(
        dec,
        floats(&[Some(1.1000001), Some(2.3)]),
        "[pair.columns.v]\nabs_tolerance = 0.001",
    );
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["1"]);
    assert_eq!(run.report.totals.matched, 1);
}

#[test]
fn a_tolerance_on_one_column_leaves_the_others_exact() {
    let n = 2;
    let lab = Lab::with(
        &batch(vec![
            ("id", ids(n)),
            ("v", floats(&[Some(1.0), Some(1.0)])),
            ("w", floats(&[Some(1.0), Some(1.0)])),
        ]),
        &batch(vec![
            ("id", ids(n)),
            ("v", floats(&[Some(1.001), Some(1.0)])),
            ("w", floats(&[Some(1.0), Some(1.001)])),
        ]),
    );
    let run = lab.run(&["id"], "[pair.columns.v]\nabs_tolerance = 0.01");
    assert_eq!(
        diffs(&run),
        vec![diff("1", "w", Some("1.0"), Some("1.001"))]
    );
}

#[test]
fn a_tolerance_on_text_is_a_config_error() {
    let lab = Lab::with(
        &batch(vec![
            ("id", ids(1)),
            ("v", arr(StringArray::from(vec!["a"]))),
        ]),
        &batch(vec![
            ("id", ids(1)),
            ("v", arr(StringArray::from(vec!["a"]))),
        ]),
    );
    let err = lab
        .try_run(&["id"], "[pair.columns.v]\nabs_tolerance = 0.5")
        .err()
        .expect("a tolerance on a string column is refused")
        .to_string();
    assert!(
        err.contains("columns.v") && err.contains("tolerance"),
        "{err}"
    );
}

fn text(v: &[Option<&str>]) -> ArrayRef {
    arr(StringArray::from(v.to_vec()))
}

#[test]
fn trim_ignores_surrounding_white_space() {
    let (s, t) = (
        &[Some(" a "), Some("b\t"), Some("c")],
        &[Some("a"), Some("b"), Some(" c d ")],
    );
    assert_eq!(reconcile(text(s), text(t), "").report.totals.mismatch, 3);
    let run = reconcile(text(s), text(t), "[pair.columns.v]\ntrim = true");
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["2"]);
}

#[test]
fn ignore_case_compares_case_insensitively() {
    let (s, t) = (
        &[Some("ABC"), Some("Straße")],
        &[Some("abc"), Some("STRASSE")],
    );
    assert_eq!(reconcile(text(s), text(t), "").report.totals.mismatch, 2);
    let run = reconcile(text(s), text(t), "[pair.columns.v]\nignore_case = true");
    // Lower-casing, not case folding: ß is not ss.
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["1"]);
}

#[test]
fn empty_as_null_treats_empty_strings_as_null() {
    let (s, t) = (&[Some(""), Some("  "), Some("x")], &[None, None, None]);
    assert_eq!(reconcile(text(s), text(t), "").report.totals.mismatch, 3);
    let run = reconcile(text(s), text(t), "[pair.columns.v]\nempty_as_null = true");
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["1", "2"]);
    let run = reconcile(
        text(s),
        text(t),
        "[pair.columns.v]\nempty_as_null = true\ntrim = true",
    );
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["2"]);
}

#[test]
fn string_options_apply_to_their_column_only() {
    let lab = Lab::with(
        &batch(vec![
            ("id", ids(1)),
            ("v", text(&[Some("A ")])),
            ("w", text(&[Some("A ")])),
        ]),
        &batch(vec![
            ("id", ids(1)),
            ("v", text(&[Some("a")])),
            ("w", text(&[Some("a")])),
        ]),
    );
    let run = lab.run(&["id"], "[pair.columns.V]\ntrim = true\nignore_case = true");
    assert_eq!(diffs(&run), vec![diff("0", "w", Some("A "), Some("a"))]);
}

#[test]
fn string_options_apply_inside_dictionaries_and_views() {
    let source: DictionaryArray<arrow::datatypes::Int32Type> =
        vec![" X", "y", "z"].into_iter().collect();
    let target = arr(StringViewArray::from(vec!["x", "Y ", "w"]));
    let run = reconcile(
        arr(source),
        target,
        "[pair.columns.v]\ntrim = true\nignore_case = true",
    );
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["2"]);
}
