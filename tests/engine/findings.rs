//! Every finding kind with its keys, counts and values; the value semantics of
//! NULL, '', 0, -0.0 and NaN.

use arrow::array::*;

use super::fixtures::*;
use glue_recon::partial::FindingKind;
use glue_recon::plan::Side;
use glue_recon::runner::PairRun;

/// Source and target with one finding of every kind:
///
/// | id | source | target |
/// |---|---|---|
/// | 1 | ann, 10.50, 1 | same | matched
/// | 2 | bob, 20.00, 2 | rob, 20.00, 2 | MISMATCH on name
/// | 3 | cy, 10.50, 1 | cy, 10.75, NULL | MISMATCH on amount and qty
/// | 4 | twice in the source | once | DUPLICATE_KEY (source, 2)
/// | 5 | once | three times | DUPLICATE_KEY (target, 3)
/// | 6 | - | extra | EXTRA_IN_TARGET
/// | 7 | missing | - | MISSING_IN_TARGET
/// | NULL | 1 row | 2 rows | NULL_KEY
fn every_kind() -> PairRun {
    let dec = |m: Vec<Option<i128>>| {
        arr(Decimal128Array::from(m)
            .with_precision_and_scale(12, 2)
            .unwrap())
    };
    let source = batch(vec![
        (
            "id",
            arr(Int64Array::from(vec![
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                Some(4),
                Some(5),
                Some(7),
                None,
            ])),
        ),
        (
            "name",
            arr(StringArray::from(vec![
                "ann", "bob", "cy", "dee", "dee", "eve", "gus", "nul",
            ])),
        ),
        (
            "amount",
            dec(vec![
                Some(1050),
                Some(2000),
                Some(1050),
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                None,
            ]),
        ),
        ("qty", arr(Int32Array::from(vec![1, 2, 1, 1, 1, 1, 1, 1]))),
    ]);
    let target = batch(vec![
        (
            "id",
            arr(Int64Array::from(vec![
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                Some(5),
                Some(5),
                Some(5),
                Some(6),
                None,
                None,
            ])),
        ),
        (
            "name",
            arr(StringArray::from(vec![
                "ann", "rob", "cy", "dee", "eve", "eve", "eve", "fay", "n1", "n2",
            ])),
        ),
        (
            "amount",
            dec(vec![
                Some(1050),
                Some(2000),
                Some(1075),
                Some(1),
                Some(3),
                Some(3),
                Some(3),
                Some(5),
                None,
                None,
            ]),
        ),
        (
            "qty",
            arr(Int32Array::from(vec![
                Some(1),
                Some(2),
                None,
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                Some(1),
            ])),
        ),
    ]);
    Lab::with(&source, &target).run(&["id"], "")
}

#[test]
fn every_finding_kind_is_counted() {
    let run = every_kind();
    let t = run.report.totals;
    assert_eq!((t.source_rows, t.target_rows), (8, 10));
    assert_eq!(t.matched, 1, "{t:?}");
    assert_eq!(t.mismatch, 2);
    assert_eq!(t.missing_in_target, 1);
    assert_eq!(t.extra_in_target, 1);
    assert_eq!((t.duplicate_key_source, t.duplicate_key_target), (1, 1));
    assert_eq!((t.null_key_source, t.null_key_target), (1, 2));
}

#[test]
fn missing_and_extra_keys_are_named() {
    let run = every_kind();
    assert_eq!(keys(&run, FindingKind::MissingInTarget), vec!["7"]);
    assert_eq!(keys(&run, FindingKind::ExtraInTarget), vec!["6"]);
}

#[test]
fn mismatches_name_each_differing_column_with_both_values() {
    let run = every_kind();
    assert_eq!(
        diffs(&run),
        vec![
            diff("2", "name", Some("bob"), Some("rob")),
            diff("3", "amount", Some("10.50"), Some("10.75")),
            diff("3", "qty", Some("1"), None),
        ]
    );
    let columns: Vec<(String, u64)> = run
        .report
        .columns
        .iter()
        .map(|c| (c.column.clone(), c.mismatch))
        .collect();
    assert_eq!(
        columns,
        vec![("amount".into(), 1), ("name".into(), 1), ("qty".into(), 1)]
    );
}

#[test]
fn duplicate_keys_are_counted_per_side_and_not_value_compared() {
    let run = every_kind();
    assert_eq!(
        duplicate_counts(&run),
        vec![
            ("4".into(), Some(Side::Source), Some(2)),
            ("5".into(), Some(Side::Target), Some(3)),
        ]
    );
    // Neither duplicated key is matched, mismatched, missing or extra.
    for kind in [
        FindingKind::Mismatch,
        FindingKind::MissingInTarget,
        FindingKind::ExtraInTarget,
    ] {
        let k = keys(&run, kind);
        assert!(
            !k.contains(&"4".into()) && !k.contains(&"5".into()),
            "{kind}: {k:?}"
        );
    }
}

#[test]
fn null_keys_are_reported_per_side() {
    let run = every_kind();
    let mut nulls: Vec<(String, Option<Side>)> = findings(&run, FindingKind::NullKey)
        .into_iter()
        .map(|(_, f)| (key_text(&f.key), f.side))
        .collect();
    nulls.sort_by_key(|(_, s)| *s == Some(Side::Target));
    assert_eq!(
        nulls,
        vec![
            ("NULL".into(), Some(Side::Source)),
            ("NULL".into(), Some(Side::Target)),
            ("NULL".into(), Some(Side::Target)),
        ]
    );
}

#[test]
fn identical_tables_pass() {
    let t = batch(vec![
        ("id", ids(4)),
        (
            "name",
            arr(StringArray::from(vec![
                Some("a"),
                None,
                Some(""),
                Some("d"),
            ])),
        ),
    ]);
    let run = Lab::with(&t, &t).run(&["id"], "");
    assert_clean(&run, 4);
    assert_eq!(run.report.status.to_string(), "PASS");
}

/// Reconcile two `id, v` tables of one value each and return the differing columns.
fn one_value(source: ArrayRef, target: ArrayRef) -> Vec<Diff> {
    let n = source.len();
    let run = Lab::with(
        &batch(vec![("id", ids(n)), ("v", source)]),
        &batch(vec![("id", ids(n)), ("v", target)]),
    )
    .run(&["id"], "");
    diffs(&run)
}

#[test]
fn null_and_empty_string_differ() {
    assert_eq!(
        one_value(
            arr(StringArray::from(vec![Some(""), Some("x")])),
            arr(StringArray::from(vec![None, Some("x")]))
        ),
        vec![diff("0", "v", Some(""), None)]
    );
    assert_eq!(
        one_value(
            arr(StringArray::from(vec![None::<&str>])),
            arr(LargeStringArray::from(vec![Some("")]))
        ),
        vec![diff("0", "v", None, Some(""))]
    );
}

#[test]
fn null_and_empty_string_keys_differ() {
    let source = batch(vec![
        ("k", arr(StringArray::from(vec![Some(""), Some("a")]))),
        ("v", arr(Int32Array::from(vec![1, 2]))),
    ]);
    let target = batch(vec![
        ("k", arr(StringArray::from(vec![None, Some("a")]))),
        ("v", arr(Int32Array::from(vec![1, 2]))),
    ]);
    let run = Lab::with(&source, &target).run(&["k"], "");
    assert_eq!(keys(&run, FindingKind::MissingInTarget), vec![""]);
    assert_eq!(keys(&run, FindingKind::NullKey), vec!["NULL"]);
    assert_eq!(run.report.totals.null_key_target, 1);
}

#[test]
fn null_and_zero_differ() {
    assert_eq!(
        one_value(
            arr(Int32Array::from(vec![Some(0)])),
            arr(Int64Array::from(vec![None]))
        ),
        vec![diff("0", "v", Some("0"), None)]
    );
    assert_eq!(
        one_value(
            arr(Float64Array::from(vec![None])),
            arr(Float64Array::from(vec![Some(0.0)]))
        ),
        vec![diff("0", "v", None, Some("0.0"))]
    );
    assert_eq!(
        one_value(
            arr(BooleanArray::from(vec![Some(false)])),
            arr(BooleanArray::from(vec![None]))
        ),
        vec![diff("0", "v", Some("false"), None)]
    );
}

#[test]
fn negative_zero_equals_zero_and_nan_equals_nan() {
    let other_nan = f64::from_bits(0x7ff8_0000_0000_0001);
    assert!(other_nan.is_nan());
    assert_eq!(
        one_value(
            arr(Float64Array::from(vec![0.0, f64::NAN, -0.0, 1.5])),
            arr(Float64Array::from(vec![-0.0, other_nan, 0.0, 1.5]))
        ),
        vec![]
    );
    assert_eq!(
        one_value(
            arr(Float32Array::from(vec![-0.0f32, f32::NAN])),
            arr(Float32Array::from(vec![0.0f32, -f32::NAN]))
        ),
        vec![]
    );
    // NaN is not a number like any other: NaN vs 0 differs.
    assert_eq!(
        one_value(
            arr(Float64Array::from(vec![f64::NAN])),
            arr(Float64Array::from(vec![0.0]))
        )
        .len(),
        1
    );
}

#[test]
fn booleans_and_binaries_are_compared() {
    assert_eq!(
        one_value(
            arr(BooleanArray::from(vec![true, false])),
            arr(BooleanArray::from(vec![true, true]))
        ),
        vec![diff("1", "v", Some("false"), Some("true"))]
    );
    let bytes: Vec<&[u8]> = vec![b"ab", b"", b"\x00\xff"];
    let changed: Vec<&[u8]> = vec![b"ab", b"", b"\x00\xfe"];
    let found = one_value(
        arr(BinaryArray::from(bytes)),
        arr(LargeBinaryArray::from(changed)),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "2");
}
