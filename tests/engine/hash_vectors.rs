//! Test vectors of the canonical encoding (docs/hash-encoding.md, version 3).
//!
//! The hex below was computed from the documented byte layout by
//! `scripts/hash_vectors.py`, an encoder written from the document alone, and is
//! pinned on purpose: reports and ledger
//! rows name the encoding version they were computed with, so the bytes of a version
//! never change. A change that breaks one of these vectors must bump
//! `HASH_ENCODING_VERSION` and update the vectors and the document together.

use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{Field, Int32Type};

use super::fixtures::arr;
use glue_recon::canonical::{Encoder, HASH_ENCODING_VERSION, StringRules};
use glue_recon::row_slots::RowSlots;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The canonical bytes of row `row` of `array`.
fn encoded(array: &dyn Array, row: usize) -> String {
    let mut out = Vec::new();
    Encoder::new(array, StringRules::default(), "v")
        .unwrap()
        .encode(row, &mut out);
    hex(&out)
}

#[test]
fn the_vectors_are_of_encoding_version_3() {
    assert_eq!(
        HASH_ENCODING_VERSION, 3,
        "the encoding version changed: update the vectors in this file and docs/hash-encoding.md together"
    );
}

#[test]
fn scalar_value_vectors() {
    let cases: Vec<(ArrayRef, &str)> = vec![
        (arr(Int64Array::from(vec![None::<i64>])), "00"),
        (arr(BooleanArray::from(vec![true])), "0101"),
        (arr(Int8Array::from(vec![5])), "12000a"),
        (arr(Int64Array::from(vec![5])), "12000a"),
        (
            arr(Decimal128Array::from(vec![500])
                .with_precision_and_scale(12, 2)
                .unwrap()),
            "12000a",
        ),
        (
            arr(Decimal128Array::from(vec![15_000_000_000])
                .with_precision_and_scale(38, 10)
                .unwrap()),
            "12011e",
        ),
        (arr(Int32Array::from(vec![-1])), "120001"),
        (arr(Int16Array::from(vec![300])), "22005802"),
        (arr(Float64Array::from(vec![-0.0])), "040000000000000000"),
        (
            arr(Float64Array::from(vec![f64::from_bits(
                0x7ff8_0000_0000_0042,
            )])),
            "04000000000000f87f",
        ),
        (
            arr(Float32Array::from(vec![f32::NAN])),
            "04000000000000f87f",
        ),
        (arr(StringArray::from(vec!["héllo"])), "150668c3a96c6c6f"),
        (
            arr(vec!["héllo"]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>()),
            "150668c3a96c6c6f",
        ),
        (
            arr(BinaryArray::from(vec![b"\x00\xff".as_ref()])),
            "160200ff",
        ),
        (arr(Date32Array::from(vec![19_723])), "27169a"),
        (arr(Date64Array::from(vec![19_723 * 86_400_000])), "27169a"),
        (arr(TimestampSecondArray::from(vec![1])), "4800943577"),
        (
            arr(TimestampNanosecondArray::from(vec![1_000_000_000]).with_timezone("UTC")),
            "4800943577",
        ),
        // Zero takes no bytes after the header (and the scale).
        (arr(Int32Array::from(vec![0])), "0200"),
        (
            arr(Int64Array::from(vec![i64::MIN])),
            "8200ffffffffffffffff",
        ),
        // A mantissa whose zigzag needs 16 bytes is written wide: scale and 32 bytes.
        (
            arr(Decimal128Array::from(vec![i128::MAX])
                .with_precision_and_scale(38, 2)
                .unwrap()),
            "0302ffffffffffffffffffffffffffffff7f00000000000000000000000000000000",
        ),
        (
            arr(IntervalMonthDayNanoArray::from(vec![
                arrow::datatypes::IntervalMonthDayNano::new(14, -3, 5),
            ])),
            "0b0e000000fdffffff0500000000000000",
        ),
    ];
    for (array, expected) in cases {
        assert_eq!(
            encoded(array.as_ref(), 0),
            expected,
            "{}",
            array.data_type()
        );
    }
}

#[test]
fn nested_value_vectors() {
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1), None])]);
    assert_eq!(encoded(&list, 0), "1c0212000200");
    // {B: "x", a: 1}: fields in lower-cased name order.
    let s = StructArray::from(vec![
        (
            Arc::new(Field::new("B", arrow::datatypes::DataType::Utf8, true)),
            arr(StringArray::from(vec!["x"])),
        ),
        (
            Arc::new(Field::new("a", arrow::datatypes::DataType::Int32, true)),
            arr(Int32Array::from(vec![1])),
        ),
    ]);
    assert_eq!(encoded(&s, 0), "1d02150161120002150162150178");
    // {"b": 2, "a": 1}: entries in encoded-key order.
    let mut m = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
    for (k, v) in [("b", 2), ("a", 1)] {
        m.keys().append_value(k);
        m.values().append_value(v);
    }
    m.append(true).unwrap();
    assert_eq!(encoded(&m.finish(), 0), "1e02150161120002150162120004");
}

/// SHA-256 of a row: the encodings of its columns in lower-cased name order, by the
/// engine's hashing path (encoded a column at a time, each row's bytes hashed).
fn row_hashes(columns: Vec<(&str, ArrayRef)>) -> Vec<String> {
    let mut columns = columns;
    columns.sort_by_key(|(n, _)| n.to_lowercase());
    let rows = columns[0].1.len();
    let encoders: Vec<Encoder> = columns
        .iter()
        .map(|(n, a)| Encoder::new(a.as_ref(), StringRules::default(), n).unwrap())
        .collect();
    let bound = encoders.iter().map(|e| e.max_len(0..rows)).sum();
    let mut slots = RowSlots::for_sha256();
    slots.reset(rows, bound);
    for e in &encoders {
        e.encode_rows(0, &mut slots);
    }
    slots.pad_sha256();
    let mut hashes = Vec::new();
    slots.sha256_rows(|_, words| hashes.push(words.iter().map(|w| format!("{w:08x}")).collect()));
    hashes
}

/// The column-at-a-time path (row slots: keys and row hashes) writes exactly what
/// the row path (mismatch details) writes, for every kind of value, NULLs included,
/// after what a slot already holds, and within the bound it reserved.
#[test]
fn encode_rows_writes_what_encode_writes() {
    let mut map = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
    for entries in [vec![("b", 2), ("a", 1)], vec![]] {
        for (k, v) in entries {
            map.keys().append_value(k);
            map.values().append_value(v);
        }
        map.append(true).unwrap();
    }
    map.append(false).unwrap();
    let arrays: Vec<ArrayRef> = vec![
        arr(Int64Array::from(vec![Some(i64::MIN), None, Some(300)])),
        arr(UInt64Array::from(vec![Some(u64::MAX), None, Some(0)])),
        arr(
            Decimal128Array::from(vec![Some(i128::MAX), None, Some(-1050)])
                .with_precision_and_scale(38, 2)
                .unwrap(),
        ),
        arr(Float64Array::from(vec![Some(f64::NAN), None, Some(-0.0)])),
        arr(BooleanArray::from(vec![Some(true), None, Some(false)])),
        arr(StringArray::from(vec![Some("héllo"), None, Some("")])),
        arr(vec![Some("a"), None, Some("a")]
            .into_iter()
            .collect::<DictionaryArray<Int32Type>>()),
        arr(BinaryArray::from(vec![
            Some(b"\x00".as_ref()),
            None,
            Some(b"".as_ref()),
        ])),
        arr(Date32Array::from(vec![Some(-1), None, Some(19_723)])),
        arr(TimestampMillisecondArray::from(vec![
            Some(i64::MAX),
            None,
            Some(-1),
        ])),
        arr(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
        ])),
        arr(map.finish()),
        arr(StringViewArray::from(vec![
            Some("a string longer than twelve bytes"),
            None,
            Some("short"),
        ])),
        arr(LargeStringArray::from(vec![Some("x"), None, Some("")])),
        arr(FixedSizeBinaryArray::try_from_sparse_iter_with_size(
            vec![Some(b"ab".as_ref()), None, Some(b"cd".as_ref())].into_iter(),
            2,
        )
        .unwrap()),
        arr(Decimal128Array::from(vec![Some(i128::MAX), None, Some(7)])
            .with_precision_and_scale(38, -3)
            .unwrap()),
        arr(StructArray::from(vec![
            (
                Arc::new(Field::new("s", arrow::datatypes::DataType::Utf8, true)),
                arr(StringArray::from(vec![
                    Some("long enough to matter"),
                    None,
                    Some(""),
                ])),
            ),
            (
                Arc::new(Field::new("n", arrow::datatypes::DataType::Int32, true)),
                arr(Int32Array::from(vec![Some(1), Some(2), None])),
            ),
        ])),
    ];
    let before = Encoder::constant_text(Some("x"), StringRules::default());
    let mut slots = RowSlots::for_keys();
    for array in arrays {
        let enc = Encoder::new(array.as_ref(), StringRules::default(), "v").unwrap();
        let rows = array.len();
        let bound = enc.max_len(0..rows);
        slots.reset(rows, before.max_len(0..rows) + bound);
        before.encode_rows(0, &mut slots);
        enc.encode_rows(0, &mut slots);
        for row in 0..rows {
            let mut want = Vec::new();
            before.encode(row, &mut want);
            enc.encode(row, &mut want);
            let got = slots.row(row);
            assert_eq!(hex(got), hex(&want), "{} row {row}", array.data_type());
            assert!(
                got.len() - 3 <= bound,
                "{} row {row}: over the bound",
                array.data_type()
            );
        }
    }
}

/// The pinned row hashes of three rows (amount, name, qty, ts):
/// `(10.50, 'ann', 1, 2024-01-01T10:00:00Z)`, `(NULL, '', NULL, NULL)`,
/// `(-0.01, 'héllo', -1, 1970-01-01T00:00:00Z)`.
const ROW_VECTORS: [&str; 3] = [
    "615b088f660f8ffae1ed278b71ba8a1ef9ea95065dfe9a7b6a04d444014c0d83",
    "05db705de1d67525a820002dc8c4c6c5b8ab3617b0fb391177f8a44b16d2db40",
    "e3d18cf551e80ab83d768f1e4a4adcd90b327c7ad10c86dbf1f25f2e82edc42d",
];

#[test]
fn row_hash_vectors() {
    let hashes = row_hashes(vec![
        (
            "amount",
            arr(Decimal128Array::from(vec![Some(1050), None, Some(-1)])
                .with_precision_and_scale(12, 2)
                .unwrap()),
        ),
        ("name", arr(StringArray::from(vec!["ann", "", "héllo"]))),
        ("qty", arr(Int32Array::from(vec![Some(1), None, Some(-1)]))),
        (
            "ts",
            arr(TimestampMillisecondArray::from(vec![
                Some(1_704_103_200_000),
                None,
                Some(0),
            ])),
        ),
    ]);
    assert_eq!(hashes, ROW_VECTORS);
}

#[test]
fn row_hash_vectors_hold_for_other_layouts_and_column_order() {
    // The same values as `row_hash_vectors`, in other physical types and order.
    let hashes = row_hashes(vec![
        (
            "TS",
            arr(
                TimestampMicrosecondArray::from(vec![Some(1_704_103_200_000_000), None, Some(0)])
                    .with_timezone("UTC"),
            ),
        ),
        ("Qty", arr(Int64Array::from(vec![Some(1), None, Some(-1)]))),
        (
            "name",
            arr(vec!["ann", "", "héllo"]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>()),
        ),
        (
            "AMOUNT",
            arr(
                Decimal128Array::from(vec![Some(105_000_000_000), None, Some(-100_000_000)])
                    .with_precision_and_scale(38, 10)
                    .unwrap(),
            ),
        ),
    ]);
    assert_eq!(hashes, ROW_VECTORS);
}
