//! The same values written with other physical types reconcile clean; a changed
//! value in the same layouts is still found (so "clean" is not "blind").

use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{Field, Int8Type, Int32Type, Int64Type, UInt16Type, i256};

use super::fixtures::*;
use glue_recon::partial::FindingKind;
use glue_recon::runner::PairRun;

/// Reconcile `id, v` tables whose `v` columns are `source` and `target`.
fn reconcile_values(source: ArrayRef, target: ArrayRef) -> PairRun {
    let n = source.len();
    Lab::with(
        &batch(vec![("id", ids(n)), ("v", source)]),
        &batch(vec![("id", ids(n)), ("v", target)]),
    )
    .run(&["id"], "")
}

/// Same values, other layouts: every key matches.
fn assert_equivalent(source: ArrayRef, target: ArrayRef) {
    let (st, tt) = (source.data_type().clone(), target.data_type().clone());
    let n = source.len() as u64;
    let run = reconcile_values(source, target);
    assert_eq!(
        run.report.totals.findings(),
        0,
        "{st} vs {tt}: {:?}",
        diffs(&run)
    );
    assert_clean(&run, n);
}

/// Only row `row` differs: exactly that key is a MISMATCH on `v`.
fn assert_only_row_differs(source: ArrayRef, target: ArrayRef, row: usize) {
    let run = reconcile_values(source, target);
    assert_eq!(run.report.totals.mismatch, 1, "{:?}", diffs(&run));
    assert_eq!(keys(&run, FindingKind::Mismatch), vec![row.to_string()]);
    assert_eq!(diffs(&run)[0].1, "v");
}

#[test]
fn int32_and_int64_of_equal_value_match() {
    let v = [
        Some(0),
        Some(1),
        Some(-1),
        Some(i32::MAX),
        Some(i32::MIN),
        None,
    ];
    assert_equivalent(
        arr(Int32Array::from(v.to_vec())),
        arr(Int64Array::from(
            v.iter().map(|x| x.map(i64::from)).collect::<Vec<_>>(),
        )),
    );
}

#[test]
fn int8_int16_and_unsigned_of_equal_value_match() {
    let small = [Some(0i8), Some(1), Some(127), Some(42), None];
    assert_equivalent(
        arr(Int8Array::from(small.to_vec())),
        arr(Int16Array::from(
            small.iter().map(|x| x.map(i16::from)).collect::<Vec<_>>(),
        )),
    );
    assert_equivalent(
        arr(UInt8Array::from(
            small.iter().map(|x| x.map(|v| v as u8)).collect::<Vec<_>>(),
        )),
        arr(Int64Array::from(
            small.iter().map(|x| x.map(i64::from)).collect::<Vec<_>>(),
        )),
    );
    assert_equivalent(
        arr(UInt32Array::from(vec![Some(0), Some(4_000_000_000), None])),
        arr(UInt64Array::from(vec![Some(0), Some(4_000_000_000), None])),
    );
    assert_equivalent(
        arr(UInt64Array::from(vec![0, i64::MAX as u64])),
        arr(Int64Array::from(vec![0, i64::MAX])),
    );
}

#[test]
fn a_changed_integer_is_found_across_widths() {
    assert_only_row_differs(
        arr(Int32Array::from(vec![1, 2, 3])),
        arr(Int64Array::from(vec![1, 2, 4])),
        2,
    );
}

fn decimal(mantissas: &[Option<i128>], precision: u8, scale: i8) -> ArrayRef {
    arr(Decimal128Array::from(mantissas.to_vec())
        .with_precision_and_scale(precision, scale)
        .unwrap())
}

/// 1.00, 1.50, -0.01, 0, NULL, 1234567890.99 with scale 2.
const CENTS: [Option<i128>; 6] = [
    Some(100),
    Some(150),
    Some(-1),
    Some(0),
    None,
    Some(123_456_789_099),
];

fn rescaled(by: u32) -> Vec<Option<i128>> {
    CENTS
        .iter()
        .map(|m| m.map(|m| m * 10i128.pow(by)))
        .collect()
}

#[test]
fn decimals_of_equal_value_match_whatever_their_precision_and_scale() {
    assert_equivalent(decimal(&CENTS, 12, 2), decimal(&CENTS, 18, 2));
    assert_equivalent(decimal(&CENTS, 12, 2), decimal(&rescaled(8), 38, 10));
    let wide: Vec<Option<i256>> = rescaled(8).iter().map(|m| m.map(i256::from_i128)).collect();
    assert_equivalent(
        decimal(&CENTS, 12, 2),
        arr(Decimal256Array::from(wide)
            .with_precision_and_scale(50, 10)
            .unwrap()),
    );
}

#[test]
fn integers_and_whole_decimals_of_equal_value_match() {
    assert_equivalent(
        arr(Int64Array::from(vec![Some(5), Some(-3), Some(0), None])),
        decimal(&[Some(500), Some(-300), Some(0), None], 12, 2),
    );
}

#[test]
fn a_changed_decimal_is_found_across_precisions() {
    let mut changed = rescaled(8);
    changed[1] = Some(151 * 10i128.pow(8));
    assert_only_row_differs(decimal(&CENTS, 12, 2), decimal(&changed, 38, 10), 1);
}

/// Instants in seconds since the epoch (before and after it).
const SECONDS: [Option<i64>; 5] = [Some(0), Some(1_700_000_000), Some(-86_400), Some(1), None];

fn scaled(factor: i64) -> Vec<Option<i64>> {
    SECONDS.iter().map(|s| s.map(|s| s * factor)).collect()
}

#[test]
fn timestamps_of_the_same_instant_match_in_every_unit() {
    let s = || arr(TimestampSecondArray::from(SECONDS.to_vec()));
    let ms = || arr(TimestampMillisecondArray::from(scaled(1_000)));
    let us = || arr(TimestampMicrosecondArray::from(scaled(1_000_000)));
    let ns = || arr(TimestampNanosecondArray::from(scaled(1_000_000_000)));
    assert_equivalent(ms(), us());
    assert_equivalent(us(), ns());
    assert_equivalent(s(), ms());
    assert_equivalent(s(), ns());
    // A time zone annotation does not change the instant.
    assert_equivalent(
        arr(TimestampMicrosecondArray::from(scaled(1_000_000)).with_timezone("UTC")),
        ms(),
    );
}

#[test]
fn a_timestamp_one_millisecond_later_is_found() {
    let mut later = scaled(1_000_000);
    later[1] = later[1].map(|t| t + 1_000);
    assert_only_row_differs(
        arr(TimestampMillisecondArray::from(scaled(1_000))),
        arr(TimestampMicrosecondArray::from(later)),
        1,
    );
}

#[test]
fn timestamps_with_a_named_time_zone_show_their_values() {
    // A report must show both instants, in the column's zone, never NULL for a value.
    for (zone, before, after) in [
        ("UTC", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.001Z"),
        ("+00:00", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.001Z"),
        (
            "Europe/Paris",
            "2023-11-14T23:13:20+01:00",
            "2023-11-14T23:13:20.001+01:00",
        ),
    ] {
        let mut later = scaled(1_000);
        later[1] = later[1].map(|t| t + 1);
        let run = reconcile_values(
            arr(TimestampMillisecondArray::from(scaled(1_000)).with_timezone(zone)),
            arr(TimestampMillisecondArray::from(later).with_timezone(zone)),
        );
        assert_eq!(
            diffs(&run),
            vec![diff("1", "v", Some(before), Some(after))],
            "{zone}"
        );
    }
}

#[test]
fn date32_and_date64_of_the_same_day_match() {
    let days = [Some(0), Some(19_723), Some(-1), None];
    assert_equivalent(
        arr(Date32Array::from(days.to_vec())),
        arr(Date64Array::from(
            days.iter()
                .map(|d| d.map(|d| i64::from(d) * 86_400_000))
                .collect::<Vec<_>>(),
        )),
    );
    assert_only_row_differs(
        arr(Date32Array::from(vec![10, 11])),
        arr(Date64Array::from(vec![10 * 86_400_000, 12 * 86_400_000])),
        1,
    );
}

const TEXT: [Option<&str>; 6] = [
    Some("a"),
    Some(""),
    Some("héllo wörld"),
    None,
    Some("a"),
    Some("a string longer than twelve bytes"),
];

#[test]
fn string_layouts_of_the_same_text_match() {
    let utf8 = || arr(StringArray::from(TEXT.to_vec()));
    assert_equivalent(utf8(), arr(LargeStringArray::from(TEXT.to_vec())));
    assert_equivalent(utf8(), arr(StringViewArray::from(TEXT.to_vec())));
    assert_equivalent(
        utf8(),
        arr(TEXT.iter().copied().collect::<DictionaryArray<Int32Type>>()),
    );
    assert_equivalent(
        arr(LargeStringArray::from(TEXT.to_vec())),
        arr(TEXT
            .iter()
            .copied()
            .collect::<DictionaryArray<UInt16Type>>()),
    );
    assert_equivalent(
        arr(TEXT.iter().copied().collect::<DictionaryArray<Int8Type>>()),
        arr(StringViewArray::from(TEXT.to_vec())),
    );
}

#[test]
fn a_changed_dictionary_string_is_found() {
    let mut changed = TEXT.to_vec();
    changed[4] = Some("b");
    assert_only_row_differs(
        arr(StringArray::from(TEXT.to_vec())),
        arr(changed.into_iter().collect::<DictionaryArray<Int32Type>>()),
        4,
    );
}

/// A Parquet dictionary is its row group's: a batch can point into a few values or
/// into more values than it has rows (both are encoded as plain text is).
#[test]
fn dictionaries_of_few_values_or_of_a_value_a_row_match_plain_text() {
    let n = 3000;
    for distinct in [5, n] {
        let values: Vec<Option<String>> = (0..n)
            .map(|i| (i % 11 != 3).then(|| format!("value {}", i % distinct)))
            .collect();
        let dict = || {
            arr(values
                .iter()
                .map(|v| v.as_deref())
                .collect::<DictionaryArray<Int32Type>>())
        };
        assert_equivalent(arr(StringArray::from(values.clone())), dict());
        let mut changed = values.clone();
        changed[7] = Some("other".into());
        assert_only_row_differs(dict(), arr(StringArray::from(changed)), 7);
    }
}

#[test]
fn column_order_and_name_case_do_not_matter() {
    let source = batch(vec![
        ("id", ids(3)),
        ("amount", arr(Int32Array::from(vec![1, 2, 3]))),
        ("Status", arr(StringArray::from(vec!["a", "b", "c"]))),
        (
            "note",
            arr(StringArray::from(vec![Some("x"), None, Some("")])),
        ),
    ]);
    let target = batch(vec![
        (
            "NOTE",
            arr(StringArray::from(vec![Some("x"), None, Some("")])),
        ),
        ("status", arr(StringArray::from(vec!["a", "b", "c"]))),
        ("ID", ids(3)),
        ("Amount", arr(Int64Array::from(vec![1, 2, 3]))),
    ]);
    let run = Lab::with(&source, &target).run(&["id"], "");
    assert_clean(&run, 3);
    assert!(
        run.report.schema.only_in_source.is_empty(),
        "{:?}",
        run.report.schema
    );
    assert!(
        run.report.schema.only_in_target.is_empty(),
        "{:?}",
        run.report.schema
    );
}

/// A table of `n` rows with a few columns of mixed types.
fn mixed_table(n: usize, reverse: bool) -> RecordBatch {
    let order: Vec<i64> = if reverse {
        (0..n as i64).rev().collect()
    } else {
        (0..n as i64).collect()
    };
    batch(vec![
        ("id", arr(Int64Array::from(order.clone()))),
        (
            "name",
            arr(StringArray::from_iter_values(
                order.iter().map(|i| format!("name {}", i % 37)),
            )),
        ),
        (
            "amount",
            decimal(
                &order
                    .iter()
                    .map(|i| Some(i128::from(*i) * 7))
                    .collect::<Vec<_>>(),
                12,
                2,
            ),
        ),
    ])
}

#[test]
fn one_file_matches_many_small_files_and_row_groups() {
    let lab = Lab::new();
    lab.write("source/all.parquet", &mixed_table(1000, false));
    lab.write_files("target", &mixed_table(1000, true), 7, 13);
    let files = std::fs::read_dir(lab.path("target")).unwrap().count();
    assert_eq!(files, 7);
    assert_clean(&lab.run(&["id"], ""), 1000);
}

#[test]
fn many_small_row_groups_still_find_every_changed_row() {
    let lab = Lab::new();
    lab.write_groups("source/all.parquet", &mixed_table(1000, false), 10);
    let mut target = mixed_table(1000, false);
    // Change the name of rows 5, 500 and 999 (in different row groups and files).
    let names: StringArray = target
        .column(1)
        .as_string::<i32>()
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if [5, 500, 999].contains(&i) {
                Some("changed")
            } else {
                v
            }
        })
        .collect();
    target = batch(vec![
        ("id", target.column(0).clone()),
        ("name", arr(names)),
        ("amount", target.column(2).clone()),
    ]);
    lab.write_files("target", &target, 4, 17);
    let run = lab.run(&["id"], "");
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["5", "500", "999"]);
    assert_eq!(run.report.totals.matched, 997);
}

fn struct_array(fields: Vec<(&str, ArrayRef)>) -> ArrayRef {
    arr(StructArray::from(
        fields
            .into_iter()
            .map(|(n, a)| (Arc::new(Field::new(n, a.data_type().clone(), true)), a))
            .collect::<Vec<_>>(),
    ))
}

#[test]
fn structs_match_by_field_name_whatever_the_field_order_and_widths() {
    let source = struct_array(vec![
        ("a", arr(Int32Array::from(vec![Some(1), None, Some(3)]))),
        ("b", arr(StringArray::from(vec!["x", "y", "z"]))),
    ]);
    let target = struct_array(vec![
        ("B", arr(LargeStringArray::from(vec!["x", "y", "z"]))),
        ("A", arr(Int64Array::from(vec![Some(1), None, Some(3)]))),
    ]);
    assert_equivalent(source.clone(), target);
    let changed = struct_array(vec![
        ("b", arr(StringArray::from(vec!["x", "y", "Z"]))),
        ("a", arr(Int32Array::from(vec![Some(1), None, Some(3)]))),
    ]);
    assert_only_row_differs(source, changed, 2);
}

/// A NULL inside a nested value differs from '' and is shown as NULL, so the two
/// sides of the report never look the same.
#[test]
fn a_null_inside_a_struct_differs_from_an_empty_string_and_shows_as_null() {
    let source = struct_array(vec![("b", arr(StringArray::from(vec![Some("x"), None])))]);
    let target = struct_array(vec![("b", arr(StringArray::from(vec!["x", ""])))]);
    let run = reconcile_values(source, target);
    assert_eq!(
        diffs(&run),
        vec![diff("1", "v", Some("{b: NULL}"), Some("{b: }"))]
    );
}

fn int_lists(values: &[Option<Vec<Option<i32>>>]) -> ListArray {
    ListArray::from_iter_primitive::<Int32Type, _, _>(values.to_vec())
}

#[test]
fn lists_match_across_list_layouts_and_element_widths() {
    let values = vec![
        Some(vec![Some(1), Some(2)]),
        Some(vec![]),
        None,
        Some(vec![None, Some(3)]),
    ];
    let large = LargeListArray::from_iter_primitive::<Int64Type, _, _>(values.iter().map(|l| {
        l.as_ref()
            .map(|l| l.iter().map(|v| v.map(i64::from)).collect::<Vec<_>>())
    }));
    assert_equivalent(arr(int_lists(&values)), arr(large));
    // Element order in a list matters; an empty list is not NULL.
    let mut swapped = values.clone();
    swapped[0] = Some(vec![Some(2), Some(1)]);
    assert_only_row_differs(arr(int_lists(&values)), arr(int_lists(&swapped)), 0);
    let mut nulled = values.clone();
    nulled[1] = None;
    assert_only_row_differs(arr(int_lists(&values)), arr(int_lists(&nulled)), 1);
}

/// A map column with one map per row, entries in the given order.
fn map_of<V: ArrayBuilder>(
    rows: &[Vec<(&str, i64)>],
    values: V,
    append: impl Fn(&mut V, i64),
) -> ArrayRef {
    let mut b = MapBuilder::new(None, StringBuilder::new(), values);
    for row in rows {
        for (k, v) in row {
            b.keys().append_value(k);
            append(b.values(), *v);
        }
        b.append(true).unwrap();
    }
    arr(b.finish())
}

#[test]
fn maps_match_whatever_the_entry_order_and_value_width() {
    let rows = [vec![("a", 1), ("b", 2)], vec![], vec![("z", -5)]];
    let reordered = [vec![("b", 2), ("a", 1)], vec![], vec![("z", -5)]];
    let changed = [vec![("a", 1), ("b", 3)], vec![], vec![("z", -5)]];
    let int32_map = |rows: &[Vec<(&str, i64)>]| {
        map_of(rows, Int32Builder::new(), |b, v| b.append_value(v as i32))
    };
    let int64_map = map_of(&reordered, Int64Builder::new(), |b, v| b.append_value(v));
    assert_equivalent(int32_map(&rows), int64_map);
    assert_only_row_differs(int32_map(&rows), int32_map(&changed), 0);
}

#[test]
fn nested_struct_of_list_matches_with_other_layouts() {
    let inner =
        |lists: ArrayRef, names: ArrayRef| struct_array(vec![("tags", lists), ("name", names)]);
    let values = vec![Some(vec![Some(1), Some(2)]), None];
    let source = inner(
        arr(int_lists(&values)),
        arr(StringArray::from(vec![Some("p"), None])),
    );
    let target = struct_array(vec![
        ("NAME", arr(StringViewArray::from(vec![Some("p"), None]))),
        (
            "Tags",
            arr(LargeListArray::from_iter_primitive::<Int64Type, _, _>(
                vec![Some(vec![Some(1i64), Some(2)]), None],
            )),
        ),
    ]);
    assert_equivalent(source, target);
}

#[test]
fn floats_of_different_widths_are_different_numbers() {
    // float32 0.1 is not float64 0.1 (docs/hash-encoding.md): a tolerance is needed.
    let run = reconcile_values(
        arr(Float32Array::from(vec![0.1f32, 0.5])),
        arr(Float64Array::from(vec![0.1f64, 0.5])),
    );
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["0"]);
    let tolerant = Lab::with(
        &batch(vec![
            ("id", ids(2)),
            ("v", arr(Float32Array::from(vec![0.1f32, 0.5]))),
        ]),
        &batch(vec![
            ("id", ids(2)),
            ("v", arr(Float64Array::from(vec![0.1f64, 0.5]))),
        ]),
    )
    .run(&["id"], "[pair.columns.v]\nabs_tolerance = 1e-6");
    assert_clean(&tolerant, 2);
}

#[test]
fn a_column_whose_type_family_changes_is_compared_by_value() {
    // decimal in the source, double in the target: compared as float64, reported
    // as a type change.
    let run = reconcile_values(
        decimal(&[Some(150), Some(-1), None], 12, 2),
        arr(Float64Array::from(vec![Some(1.5), Some(-0.01), None])),
    );
    assert_clean(&run, 3);
    let change = &run.report.schema.type_changes;
    assert_eq!(change.len(), 1, "{change:?}");
    assert_eq!(change[0].column, "v");
    assert!(!change[0].compatible);
}

#[test]
fn an_all_null_column_of_the_null_type_compares_with_any_type_and_is_no_drift() {
    // pandas writes a column of only `None` as Arrow's Null type: its NULLs equal the
    // other side's NULLs, differ from its values, and the type is no schema drift.
    let side = |v: ArrayRef| {
        RecordBatch::try_from_iter_with_nullable([("id", ids(3), false), ("v", v, true)]).unwrap()
    };
    let run = Lab::with(
        &side(arr(NullArray::new(3))),
        &side(arr(StringArray::from(vec![None, Some("x"), None]))),
    )
    .run(&["id"], "");
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["1".to_string()]);
    let change = &run.report.schema.type_changes;
    assert_eq!(change.len(), 1, "{change:?}");
    assert!(change[0].compatible, "{change:?}");
    assert!(!run.report.schema.drifted(), "{:?}", run.report.reasons);
}
