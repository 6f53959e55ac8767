//! The same values in every file layout a Parquet writer may choose reconcile clean:
//! page versions 1 and 2, every compression codec, dictionary pages that fall back to
//! plain ones within a column chunk, delta and byte-stream-split encodings, pages of a
//! few rows, Spark's legacy INT96 timestamps, and DuckDB's INTERVALs and UUIDs. A
//! changed value in each layout is still found, so "clean" is not "blind".

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use parquet::basic::{BrotliLevel, Compression, Encoding, GzipLevel, ZstdLevel};
use parquet::data_type::{FixedLenByteArray, FixedLenByteArrayType, Int64Type, Int96, Int96Type};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

use super::fixtures::*;
use glue_recon::partial::FindingKind;

const ROWS: usize = 3000;

/// Rows of every common type, with NULLs, '' and NULL, NaN and -0.0, repeated values
/// (so dictionaries pay) and a text column of a distinct value a row (so a small
/// dictionary page limit makes the writer fall back to plain pages mid-chunk).
/// `changed` alters the values of that row.
fn table(changed: Option<usize>) -> RecordBatch {
    let n = ROWS as i64;
    let bump = |i: i64| i64::from(changed == Some(i as usize));
    let text = |i: i64| match i % 13 {
        0 => None,
        1 => Some(String::new()),
        _ => Some(format!("état {} {}", i % 40, "x".repeat((i % 20) as usize))),
    };
    let float = |i: i64| match i % 17 {
        0 => None,
        1 => Some(f64::NAN),
        2 => Some(-0.0),
        _ => Some(i as f64 / 7.0),
    };
    let mut note: Vec<Option<String>> = (0..n).map(text).collect();
    let mut price: Vec<Option<f64>> = (0..n).map(float).collect();
    if let Some(row) = changed {
        note[row] = Some("changed".into());
        price[row] = Some(-1.5);
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("qty", DataType::Int32, true),
        Field::new("note", DataType::Utf8, true),
        Field::new("email", DataType::Utf8, false),
        Field::new("price", DataType::Float64, true),
        Field::new("ratio", DataType::Float32, true),
        Field::new("amount", DataType::Decimal128(12, 2), true),
        Field::new("big", DataType::Decimal128(30, 4), true),
        Field::new("day", DataType::Date32, true),
        Field::new(
            "at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("flag", DataType::Boolean, true),
        Field::new("raw", DataType::Binary, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        arr(Int64Array::from_iter_values(0..n)),
        arr(Int32Array::from_iter((0..n).map(|i| {
            (i % 11 != 0).then_some((i % 50) as i32 + bump(i) as i32)
        }))),
        arr(StringArray::from(note)),
        arr(StringArray::from_iter_values(
            (0..n).map(|i| format!("user{}@example.com", i * 7919 + bump(i))),
        )),
        arr(Float64Array::from(price)),
        arr(Float32Array::from_iter(
            (0..n).map(|i| (i % 7 != 0).then_some(i as f32 / 3.0)),
        )),
        arr(Decimal128Array::from_iter(
            (0..n).map(|i| (i % 5 != 0).then_some(i128::from(i * 1001 % 99_999 + bump(i)))),
        )
        .with_precision_and_scale(12, 2)
        .unwrap()),
        arr(Decimal128Array::from_iter(
            (0..n).map(|i| Some(i128::from(i) * 10_i128.pow(20) + i128::from(bump(i)))),
        )
        .with_precision_and_scale(30, 4)
        .unwrap()),
        arr(Date32Array::from_iter(
            (0..n).map(|i| (i % 9 != 0).then_some(19_000 + (i % 400) as i32)),
        )),
        arr(TimestampMicrosecondArray::from_iter(
            (0..n).map(|i| Some(1_700_000_000_000_000 + i * 1_000_003 + bump(i))),
        )
        .with_timezone("UTC")),
        arr(BooleanArray::from_iter(
            (0..n).map(|i| (i % 3 != 0).then_some((i + bump(i)) % 2 == 0)),
        )),
        arr(BinaryArray::from_iter((0..n).map(|i| {
            (i % 19 != 0).then(|| vec![(i % 256) as u8, 0, 255, bump(i) as u8])
        }))),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

/// Per column of [`table`], the encodings a writer may use without a dictionary.
fn column_encodings(
    mut b: parquet::file::properties::WriterPropertiesBuilder,
    pairs: &[(&str, Encoding)],
) -> parquet::file::properties::WriterPropertiesBuilder {
    for (column, encoding) in pairs {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(*column), false)
            .set_column_encoding(ColumnPath::from(*column), *encoding);
    }
    b
}

/// A writer's settings, and encodings its files must then hold (column, encoding).
struct Layout {
    name: &'static str,
    props: WriterProperties,
    expect: &'static [(&'static str, Encoding)],
}

/// Named writer settings, each far from the arrow writer's defaults.
fn layouts() -> Vec<Layout> {
    let base = || WriterProperties::builder().set_max_row_group_row_count(Some(700));
    vec![
        Layout {
            name: "v1 pages of 7 rows, gzip, dictionaries falling back to plain",
            props: base()
                .set_writer_version(WriterVersion::PARQUET_1_0)
                .set_compression(Compression::GZIP(GzipLevel::default()))
                .set_data_page_row_count_limit(7)
                .set_write_batch_size(7)
                .set_dictionary_page_size_limit(512)
                .build(),
            expect: &[("note", Encoding::RLE_DICTIONARY)],
        },
        Layout {
            name: "v2 pages, zstd, delta encodings",
            props: column_encodings(
                base()
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .set_compression(Compression::ZSTD(ZstdLevel::default())),
                &[
                    ("id", Encoding::DELTA_BINARY_PACKED),
                    ("qty", Encoding::DELTA_BINARY_PACKED),
                    ("day", Encoding::DELTA_BINARY_PACKED),
                    ("at", Encoding::DELTA_BINARY_PACKED),
                    ("amount", Encoding::DELTA_BINARY_PACKED),
                    ("note", Encoding::DELTA_BYTE_ARRAY),
                    ("email", Encoding::DELTA_LENGTH_BYTE_ARRAY),
                    ("raw", Encoding::DELTA_BYTE_ARRAY),
                    ("big", Encoding::DELTA_BYTE_ARRAY),
                ],
            )
            .build(),
            expect: &[
                ("id", Encoding::DELTA_BINARY_PACKED),
                ("note", Encoding::DELTA_BYTE_ARRAY),
                ("email", Encoding::DELTA_LENGTH_BYTE_ARRAY),
                ("big", Encoding::DELTA_BYTE_ARRAY),
            ],
        },
        Layout {
            name: "v2 pages, brotli, byte stream split",
            props: column_encodings(
                base()
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .set_compression(Compression::BROTLI(BrotliLevel::default())),
                &[
                    ("price", Encoding::BYTE_STREAM_SPLIT),
                    ("ratio", Encoding::BYTE_STREAM_SPLIT),
                    ("qty", Encoding::BYTE_STREAM_SPLIT),
                    ("id", Encoding::BYTE_STREAM_SPLIT),
                ],
            )
            .build(),
            expect: &[
                ("price", Encoding::BYTE_STREAM_SPLIT),
                ("id", Encoding::BYTE_STREAM_SPLIT),
            ],
        },
        Layout {
            name: "lz4 raw, plain, no dictionary, small pages",
            props: base()
                .set_compression(Compression::LZ4_RAW)
                .set_dictionary_enabled(false)
                .set_data_page_size_limit(1024)
                .build(),
            expect: &[("email", Encoding::PLAIN)],
        },
        Layout {
            name: "hadoop lz4, one row group",
            props: WriterProperties::builder()
                .set_compression(Compression::LZ4)
                .build(),
            expect: &[],
        },
        Layout {
            name: "snappy, v2 pages, dictionaries falling back to plain",
            props: base()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_compression(Compression::SNAPPY)
                .set_dictionary_page_size_limit(256)
                .build(),
            expect: &[("note", Encoding::RLE_DICTIONARY)],
        },
    ]
}

/// Write `batch` as `lab`'s target in `layout`, checking the file is in that layout:
/// its codec and the encodings it must hold (a setting a writer ignored would make
/// the test prove nothing).
fn write_target(lab: &Lab, batch: &RecordBatch, layout: &Layout) {
    let path = lab.path("target/part-0.parquet");
    write_parquet_with(&path, batch, layout.props.clone());
    let meta = SerializedFileReader::new(File::open(&path).unwrap())
        .unwrap()
        .metadata()
        .clone();
    let codec = layout.props.compression(&ColumnPath::from("id"));
    for group in meta.row_groups() {
        for chunk in group.columns() {
            assert_eq!(
                chunk.compression(),
                codec,
                "{}: {:?}",
                layout.name,
                chunk.column_path()
            );
        }
    }
    for (column, encoding) in layout.expect {
        let chunk = meta
            .row_group(0)
            .columns()
            .iter()
            .find(|c| c.column_path().string() == *column);
        let found: Vec<Encoding> = chunk.expect("the column").encodings().collect();
        assert!(
            found.contains(encoding),
            "{}: {column} is {found:?}, not {encoding:?}",
            layout.name
        );
    }
}

#[test]
fn every_writer_layout_of_the_same_values_reconciles_clean() {
    for layout in layouts() {
        let name = layout.name;
        let lab = Lab::new();
        lab.write_groups("source/part-0.parquet", &table(None), 1 << 20);
        write_target(&lab, &table(None), &layout);
        let run = lab.run(&["id"], "");
        assert_eq!(run.report.totals.findings(), 0, "{name}: {:?}", diffs(&run));
        assert_clean(&run, ROWS as u64);
    }
}

#[test]
fn a_changed_row_is_found_in_every_writer_layout() {
    let row = 1234;
    let every_column = [
        "amount", "at", "big", "email", "flag", "note", "price", "qty", "raw",
    ];
    for layout in layouts() {
        let name = layout.name;
        let lab = Lab::new();
        lab.write_groups("source/part-0.parquet", &table(None), 1 << 20);
        write_target(&lab, &table(Some(row)), &layout);
        let run = lab.run(&["id"], "");
        assert_eq!(run.report.totals.mismatch, 1, "{name}: {:?}", diffs(&run));
        assert_eq!(run.report.totals.matched, ROWS as u64 - 1, "{name}");
        assert_eq!(keys(&run, FindingKind::Mismatch), vec![row.to_string()]);
        let mut columns: Vec<String> = diffs(&run).into_iter().map(|d| d.1).collect();
        columns.sort();
        assert_eq!(columns, every_column, "{name}");
    }
}

/// Write `id` (required int64) and one optional column of `T`, as the message
/// `schema` declares them, with the low-level writer (as Spark and DuckDB write).
fn write_low_level<T: parquet::data_type::DataType>(
    path: &Path,
    schema: &str,
    ids: &[i64],
    values: &[Option<T::T>],
) {
    let schema = parse_message_type(schema).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer =
        SerializedFileWriter::new(File::create(path).unwrap(), Arc::new(schema), props).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut id_column = group.next_column().unwrap().unwrap();
    id_column
        .typed::<Int64Type>()
        .write_batch(ids, None, None)
        .unwrap();
    id_column.close().unwrap();
    let present: Vec<T::T> = values.iter().flatten().cloned().collect();
    let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
    let mut v_column = group.next_column().unwrap().unwrap();
    v_column
        .typed::<T>()
        .write_batch(&present, Some(&levels), None)
        .unwrap();
    v_column.close().unwrap();
    group.close().unwrap();
    writer.close().unwrap();
}

/// Write `id` and Spark's legacy INT96 timestamps `at` (nanoseconds of the day and the
/// Julian day), as Spark and older Glue jobs do.
fn write_int96(path: &Path, ids: &[i64], micros: &[Option<i64>]) {
    const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;
    const DAY_NANOS: i64 = 86_400_000_000_000;
    let values: Vec<Option<Int96>> = micros
        .iter()
        .map(|us| {
            us.map(|us| {
                let nanos = us * 1000;
                let (day, of_day) = (nanos.div_euclid(DAY_NANOS), nanos.rem_euclid(DAY_NANOS));
                let mut v = Int96::new();
                v.set_data(
                    of_day as u32,
                    (of_day >> 32) as u32,
                    (day + UNIX_EPOCH_JULIAN_DAY) as u32,
                );
                v
            })
        })
        .collect();
    let schema = "message spark_schema { required int64 id; optional int96 at; }";
    write_low_level::<Int96Type>(path, schema, ids, &values);
}

#[test]
fn spark_int96_timestamps_match_the_same_instants_in_microseconds() {
    // Before the epoch, at it, within a day, across centuries; and NULL.
    let mut micros: Vec<Option<i64>> = vec![
        Some(-1),
        Some(0),
        Some(1),
        Some(86_399_999_999),
        Some(-2_208_988_800_000_000),
        Some(4_102_444_800_123_456),
        None,
    ];
    micros.extend((0..500).map(|i| Some(1_700_000_000_000_000 + i * 3_600_000_001)));
    // INT96 in the source, microseconds in the target.
    let run_against = |target: &[Option<i64>]| {
        let ids: Vec<i64> = (0..micros.len() as i64).collect();
        let lab = Lab::new();
        write_int96(&lab.path("source/part-0.parquet"), &ids, &micros);
        let at = TimestampMicrosecondArray::from(target.to_vec()).with_timezone("UTC");
        let target = batch(vec![("id", arr(Int64Array::from(ids))), ("at", arr(at))]);
        lab.write("target/part-0.parquet", &target);
        lab.run(&["id"], "")
    };
    assert_clean(&run_against(&micros), micros.len() as u64);

    // One microsecond off on one row, and a NULL where there was a value: both found.
    let mut changed = micros.clone();
    changed[3] = Some(86_399_999_998);
    changed[10] = None;
    let run = run_against(&changed);
    assert_eq!(keys(&run, FindingKind::Mismatch), vec!["10", "3"]);
}

/// Write `id` and one fixed-length byte array column `v` declared as `decl` (e.g.
/// `fixed_len_byte_array(12) v (INTERVAL)`; NULL for `None`), as DuckDB writes its
/// intervals and UUIDs.
fn write_fixed(path: &Path, decl: &str, ids: &[i64], values: &[Option<Vec<u8>>]) {
    let values: Vec<Option<FixedLenByteArray>> = values
        .iter()
        .map(|v| v.clone().map(FixedLenByteArray::from))
        .collect();
    let schema = format!("message duckdb_schema {{ required int64 id; optional {decl}; }}");
    write_low_level::<FixedLenByteArrayType>(path, &schema, ids, &values);
}

/// INTERVAL bytes: months, days and milliseconds, little-endian.
fn interval(months: u32, days: u32, millis: u32) -> Option<Vec<u8>> {
    Some(
        [
            months.to_le_bytes(),
            days.to_le_bytes(),
            millis.to_le_bytes(),
        ]
        .concat(),
    )
}

#[test]
fn intervals_are_compared_whole_months_days_and_milliseconds() {
    const DECL: &str = "fixed_len_byte_array(12) v (INTERVAL)";
    let source = vec![
        interval(0, 5, 0),
        interval(1, 0, 0),
        interval(0, 0, 1),
        interval(14, 3, 86_399_999),
        interval(0, 0, 0),
        None,
    ];
    let ids: Vec<i64> = (0..source.len() as i64).collect();
    let run_against = |target: &[Option<Vec<u8>>]| {
        let lab = Lab::new();
        write_fixed(&lab.path("source/part-0.parquet"), DECL, &ids, &source);
        write_fixed(&lab.path("target/part-0.parquet"), DECL, &ids, target);
        lab.run(&["id"], "")
    };
    assert_clean(&run_against(&source), source.len() as u64);

    // A month more (the parquet crate alone reads intervals without their months), a
    // millisecond more, and a NULL where a zero interval was: each found, and shown.
    let mut changed = source.clone();
    changed[0] = interval(1, 5, 0);
    changed[2] = interval(0, 0, 2);
    changed[4] = None;
    assert_eq!(
        diffs(&run_against(&changed)),
        vec![
            diff("0", "v", Some("5 days"), Some("1 mons 5 days")),
            diff("2", "v", Some("0.001000000 secs"), Some("0.002000000 secs")),
            diff("4", "v", Some("0 secs"), None),
        ]
    );
}

#[test]
fn uuids_match_the_same_uuids_stored_as_text_and_show_as_text() {
    const DECL: &str = "fixed_len_byte_array(16) v (UUID)";
    let uuid = |i: u8| -> Vec<u8> { (0..16).map(|b| b * 16 + i).collect() };
    let text = |i: u8| {
        let hex: String = uuid(i).iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    };
    let values: Vec<Option<Vec<u8>>> = vec![Some(uuid(1)), Some(uuid(2)), None, Some(uuid(3))];
    let ids: Vec<i64> = (0..values.len() as i64).collect();
    // UUIDs in the source; in the target, UUIDs or the same UUIDs as text.
    let run_against = |target: Target| {
        let lab = Lab::new();
        write_fixed(&lab.path("source/part-0.parquet"), DECL, &ids, &values);
        match target {
            Target::Uuids(v) => write_fixed(&lab.path("target/part-0.parquet"), DECL, &ids, &v),
            Target::Text(v) => {
                let t = batch(vec![
                    ("id", arr(Int64Array::from(ids.clone()))),
                    ("v", arr(StringArray::from(v))),
                ]);
                lab.write("target/part-0.parquet", &t);
            }
        }
        lab.run(&["id"], "")
    };
    enum Target {
        Uuids(Vec<Option<Vec<u8>>>),
        Text(Vec<Option<String>>),
    }
    let as_text: Vec<Option<String>> = [Some(1), Some(2), None, Some(3)]
        .iter()
        .map(|i| i.map(text))
        .collect();
    assert_clean(&run_against(Target::Uuids(values.clone())), 4);
    let run = run_against(Target::Text(as_text.clone()));
    assert_clean(&run, 4);
    assert!(
        run.report.schema.type_changes.is_empty(),
        "{:?}",
        run.report.schema
    );

    let mut other = values.clone();
    other[1] = Some(uuid(9));
    let mut other_text = as_text.clone();
    other_text[1] = Some(text(9));
    for run in [
        run_against(Target::Uuids(other)),
        run_against(Target::Text(other_text)),
    ] {
        assert_eq!(
            diffs(&run),
            vec![diff("1", "v", Some(&text(2)), Some(&text(9)))]
        );
    }
    assert_eq!(text(1), "01112131-4151-6171-8191-a1b1c1d1e1f1");
}

/// A decimal mantissa as `width` big-endian two's-complement bytes, as Parquet stores
/// decimals in fixed-length byte arrays.
fn be_mantissa(m: i128, width: usize) -> Vec<u8> {
    m.to_be_bytes()[16 - width..].to_vec()
}

#[test]
fn decimals_in_fixed_length_bytes_of_every_width_match_and_show() {
    // Cents, negative ones among them, that fit 4 bytes; NULL too.
    let cents = [
        Some(100),
        Some(150),
        Some(-1),
        Some(0),
        None,
        Some(-99_999_999),
    ];
    let ids: Vec<i64> = (0..cents.len() as i64).collect();
    // The same values in the target as arrow writes a decimal(38,10): 16 bytes.
    let target = |cents: &[Option<i128>]| {
        let wide: Vec<Option<i128>> = cents.iter().map(|c| c.map(|c| c * 10i128.pow(8))).collect();
        let v = Decimal128Array::from(wide)
            .with_precision_and_scale(38, 10)
            .unwrap();
        batch(vec![
            ("id", arr(Int64Array::from(ids.clone()))),
            ("v", arr(v)),
        ])
    };
    // 4 bytes as pyarrow writes a decimal(9,2), 6 for (12,2) and 8 for (18,2); 9 and
    // 16 are wider than their precision needs (Parquet allows it).
    for (width, precision) in [(4, 9), (6, 12), (8, 18), (9, 12), (16, 20)] {
        let decl = format!("fixed_len_byte_array({width}) v (DECIMAL({precision},2))");
        let bytes: Vec<Option<Vec<u8>>> = cents
            .iter()
            .map(|c| c.map(|c| be_mantissa(c, width)))
            .collect();
        let run_against = |cents: &[Option<i128>]| {
            let lab = Lab::new();
            write_fixed(&lab.path("source/part-0.parquet"), &decl, &ids, &bytes);
            lab.write("target/part-0.parquet", &target(cents));
            lab.run(&["id"], "")
        };
        assert_clean(&run_against(&cents), cents.len() as u64);

        // A cent more on a negative value, and a value where a NULL was: found, shown.
        let mut changed = cents;
        changed[2] = Some(0);
        changed[4] = Some(-5);
        assert_eq!(
            diffs(&run_against(&changed)),
            vec![
                diff("2", "v", Some("-0.01"), Some("0.0000000000")),
                diff("4", "v", None, Some("-0.0500000000")),
            ],
            "{decl}"
        );
    }
}

/// `id` and `v = id`, except `v = -id` on the rows `changed`.
fn ids_and_values(rows: i64, changed: &[i64]) -> RecordBatch {
    let v = (0..rows).map(|i| if changed.contains(&i) { -i } else { i });
    batch(vec![
        ("id", ids(rows as usize)),
        ("v", arr(Int64Array::from_iter_values(v))),
    ])
}

#[test]
fn every_row_of_row_groups_around_the_batch_size_is_compared() {
    // Row groups of 12,288 rows (one batch: half a batch more than 8192), 12,289 (a
    // batch and a remainder) and what is left; the target in one row group.
    const ROWS: i64 = 30_000;
    let changed = [1, 8191, 8192, 12_287, 12_288, 24_576, 24_577, ROWS - 1];
    for source_group in [12_288, 12_289] {
        let lab = Lab::new();
        lab.write_groups(
            "source/part-0.parquet",
            &ids_and_values(ROWS, &[]),
            source_group,
        );
        lab.write("target/part-0.parquet", &ids_and_values(ROWS, &changed));
        let run = lab.run(&["id"], "");
        let mut want: Vec<String> = changed.iter().map(i64::to_string).collect();
        want.sort();
        assert_eq!(
            keys(&run, FindingKind::Mismatch),
            want,
            "groups of {source_group}"
        );
        assert_eq!(
            run.report.totals.matched,
            (ROWS as usize - changed.len()) as u64
        );
        let last = diffs(&run)
            .into_iter()
            .find(|d| d.0 == (ROWS - 1).to_string());
        let (from, to) = ((ROWS - 1).to_string(), (1 - ROWS).to_string());
        assert_eq!(last, Some(diff(&from, "v", Some(&from), Some(&to))));
    }
}
