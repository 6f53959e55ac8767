//! Keys of every type (string, int, decimal, date, timestamp), written with other
//! physical types on each side, and composite keys.

use arrow::array::*;
use arrow::datatypes::Int32Type;

use super::fixtures::*;
use glue_recon::partial::FindingKind;

/// What a pair of three-row tables with keys `[A, B, C]` and `[A, B, D]` (B's value
/// changed) should report, by displayed key.
struct Expect<'a> {
    missing: &'a str,
    extra: &'a str,
    mismatch: &'a str,
}

fn assert_key_findings(source_keys: ArrayRef, target_keys: ArrayRef, expect: Expect) {
    let source = batch(vec![
        ("k", source_keys),
        ("v", arr(Int32Array::from(vec![1, 2, 3]))),
    ]);
    let target = batch(vec![
        ("k", target_keys),
        ("v", arr(Int32Array::from(vec![1, 20, 3]))),
    ]);
    let run = Lab::with(&source, &target).run(&["k"], "");
    let t = &run.report.totals;
    assert_eq!(
        (
            t.matched,
            t.mismatch,
            t.missing_in_target,
            t.extra_in_target
        ),
        (1, 1, 1, 1),
        "{t:?}"
    );
    assert_eq!(
        keys(&run, FindingKind::MissingInTarget),
        vec![expect.missing]
    );
    assert_eq!(keys(&run, FindingKind::ExtraInTarget), vec![expect.extra]);
    assert_eq!(
        diffs(&run),
        vec![diff(expect.mismatch, "v", Some("2"), Some("20"))]
    );
}

#[test]
fn string_keys_in_utf8_and_dictionary() {
    assert_key_findings(
        arr(StringArray::from(vec!["a", "b", "c"])),
        arr(vec!["a", "b", "d"]
            .into_iter()
            .collect::<DictionaryArray<Int32Type>>()),
        Expect {
            missing: "c",
            extra: "d",
            mismatch: "b",
        },
    );
}

#[test]
fn int_keys_in_int32_and_int64() {
    assert_key_findings(
        arr(Int32Array::from(vec![10, 20, 30])),
        arr(Int64Array::from(vec![10, 20, 40])),
        Expect {
            missing: "30",
            extra: "40",
            mismatch: "20",
        },
    );
}

#[test]
fn decimal_keys_in_different_precisions_and_scales() {
    let dec = |m: Vec<i128>, p, s| {
        arr(Decimal128Array::from(m)
            .with_precision_and_scale(p, s)
            .unwrap())
    };
    // 1.50, 2.00, 3.25 | 1.5000, 2.0000, 4.0000
    assert_key_findings(
        dec(vec![150, 200, 325], 12, 2),
        dec(vec![15_000, 20_000, 40_000], 18, 4),
        Expect {
            missing: "3.25",
            extra: "4",
            mismatch: "2",
        },
    );
}

#[test]
fn date_keys_in_date32_and_date64() {
    let day = 19_723; // 2024-01-01
    assert_key_findings(
        arr(Date32Array::from(vec![day, day + 1, day + 2])),
        arr(Date64Array::from(
            [day, day + 1, day + 3]
                .iter()
                .map(|d| i64::from(*d) * 86_400_000)
                .collect::<Vec<_>>(),
        )),
        Expect {
            missing: "2024-01-03",
            extra: "2024-01-04",
            mismatch: "2024-01-02",
        },
    );
}

#[test]
fn timestamp_keys_in_milliseconds_and_microseconds() {
    let t0 = 1_704_103_200_000i64; // 2024-01-01T10:00:00Z in ms
    assert_key_findings(
        arr(TimestampMillisecondArray::from(vec![
            t0,
            t0 + 500,
            t0 + 1_000,
        ])),
        arr(TimestampMicrosecondArray::from(vec![
            t0 * 1000,
            (t0 + 500) * 1000,
            (t0 + 2_000) * 1000,
        ])
        .with_timezone("UTC")),
        Expect {
            missing: "2024-01-01T10:00:01",
            extra: "2024-01-01T10:00:02",
            mismatch: "2024-01-01T10:00:00.5",
        },
    );
}

#[test]
fn composite_keys_match_on_every_part() {
    // (region, order_id, line): the same order id in another region is another key.
    let source = batch(vec![
        (
            "region",
            arr(StringArray::from(vec!["eu", "eu", "us", "eu", "eu"])),
        ),
        ("order_id", arr(Int32Array::from(vec![1, 1, 1, 2, 3]))),
        ("line", arr(Int16Array::from(vec![1, 2, 1, 1, 1]))),
        ("qty", arr(Int32Array::from(vec![5, 6, 7, 8, 9]))),
    ]);
    let target = batch(vec![
        (
            "Line",
            arr(Int32Array::from(vec![
                Some(1),
                Some(2),
                Some(1),
                Some(1),
                None,
            ])),
        ),
        (
            "region",
            arr(vec!["eu", "eu", "us", "us", "eu"]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>()),
        ),
        ("order_id", arr(Int64Array::from(vec![1, 1, 1, 2, 3]))),
        ("qty", arr(Int64Array::from(vec![5, 60, 7, 8, 9]))),
    ]);
    let run = Lab::with(&source, &target).run(&["region", "order_id", "line"], "");
    let t = &run.report.totals;
    assert_eq!(t.matched, 2, "{t:?}");
    assert_eq!(
        diffs(&run),
        vec![diff("eu|1|2", "qty", Some("6"), Some("60"))]
    );
    assert_eq!(
        keys(&run, FindingKind::MissingInTarget),
        vec!["eu|2|1", "eu|3|1"]
    );
    assert_eq!(keys(&run, FindingKind::ExtraInTarget), vec!["us|2|1"]);
    assert_eq!(keys(&run, FindingKind::NullKey), vec!["eu|3|NULL"]);
    assert_eq!((t.null_key_source, t.null_key_target), (0, 1));
    // Samples and diffs.parquet name each key column.
    let sample = &run.report.samples[&FindingKind::Mismatch][0];
    assert_eq!(
        sample.key.keys().collect::<Vec<_>>(),
        vec!["line", "order_id", "region"]
    );
}
