//! Root-cause hints on a generated table with one planted pattern per partition and
//! two partitions of noise that fits none: each planted pattern is found with its
//! exact count and share, and nothing else is.

use std::path::Path;
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

use super::fixtures::*;
use glue_recon::hints::{Hint, HintKind};
use glue_recon::plan::Side;
use glue_recon::report::Report;

/// Rows of a partition.
const ROWS: i64 = 100;
/// 2024-03-01T00:00:00 in microseconds.
const DAY0_MICROS: i64 = 1_709_251_200_000_000;

/// One table row.
#[derive(Clone)]
struct Row {
    id: i64,
    amount: i128,
    rate: i128,
    ts: i64,
    name: Option<String>,
    note: String,
    qty: Option<i64>,
    code: String,
}

fn base_row(p: i64, i: i64) -> Row {
    Row {
        id: p * 1000 + i,
        amount: 1000 + 37 * i as i128,
        rate: (1000 + 10 * i as i128 + 3) * 100 + 37,
        ts: DAY0_MICROS + p * 86_400_000_000 + i * 61_000_000,
        name: Some(format!("name{i}")),
        note: format!("a fairly long note {i}"),
        qty: Some(i),
        code: format!("c{i}"),
    }
}

fn to_batch(rows: &[Row]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("amount", DataType::Decimal128(12, 2), false),
        Field::new("rate", DataType::Decimal128(12, 4), false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            false,
        ),
        Field::new("name", DataType::Utf8, true),
        Field::new("note", DataType::Utf8, false),
        Field::new("qty", DataType::Int64, true),
        Field::new("code", DataType::Utf8, false),
    ]);
    let decimal = |v: Vec<i128>, s: i8| {
        arr(Decimal128Array::from(v)
            .with_precision_and_scale(12, s)
            .unwrap())
    };
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            arr(Int64Array::from_iter_values(rows.iter().map(|r| r.id))),
            decimal(rows.iter().map(|r| r.amount).collect(), 2),
            decimal(rows.iter().map(|r| r.rate).collect(), 4),
            arr(TimestampMicrosecondArray::from_iter_values(
                rows.iter().map(|r| r.ts),
            )),
            arr(StringArray::from_iter(rows.iter().map(|r| r.name.clone()))),
            arr(StringArray::from_iter_values(rows.iter().map(|r| &r.note))),
            arr(Int64Array::from_iter(rows.iter().map(|r| r.qty))),
            arr(StringArray::from_iter_values(rows.iter().map(|r| &r.code))),
        ],
    )
    .unwrap()
}

/// A planted hint: kind, column, side, partitions, findings.
pub type Planted = (
    HintKind,
    Option<&'static str>,
    Option<Side>,
    Vec<&'static str>,
    u64,
);

/// Write `source/dt=pNN/` and `target/dt=pNN/` under `dir`: 18 partitions of 100
/// rows, partition 0 clean, 1-13 and 16-17 one planted pattern each, 14-15 noise
/// (random changes on the planted columns, scattered missing and extra keys).
/// Returns the hints the planted patterns must give, and nothing more.
pub fn plant_patterns(dir: &Path) -> Vec<Planted> {
    let write = |side: &str, p: i64, rows: &[Row]| {
        write_parquet(
            &dir.join(format!("{side}/dt=p{p:02}/part-0.parquet")),
            &to_batch(rows),
            1 << 20,
        )
    };
    for p in 0..18 {
        let mut source: Vec<Row> = (0..ROWS).map(|i| base_row(p, i)).collect();
        let mut target = source.clone();
        for (i, (s, t)) in source.iter_mut().zip(target.iter_mut()).enumerate() {
            let i = i as i64;
            match p {
                1 if i < 40 => t.amount *= 100,
                2 if i < 35 => t.ts += 2 * 3_600_000_000,
                3 if i < 30 => {
                    s.name = Some(String::new());
                    t.name = None;
                }
                4 if i < 25 => t.name = t.name.as_ref().map(|n| n.to_uppercase()),
                5 if i < 25 => s.name = s.name.as_ref().map(|n| format!("{n}  ")),
                6 if i < 30 => t.note = s.note[..10].to_string(),
                7 if i < 30 => {
                    let ms = 10 * i + 1;
                    s.ts += ms * 1000 + (i * 37 % 999) + 1;
                    t.ts += ms * 1000;
                }
                8 if i < 30 => t.rate = (1000 + 10 * i as i128 + 3) * 100,
                9 => t.qty = None,
                14 if i < 30 => t.amount += (i as i128 * 919 % 1000) + 1,
                14 if i < 45 => t.name = Some(format!("zz{}", i * 31)),
                14 if i < 60 => t.ts += ((i * 37 % 500) + 1) * 1_000_000,
                15 if i < 30 => t.rate += (i as i128 * 13 % 97) + 1,
                15 if i < 50 => t.note = format!("other {}", i * 7),
                17 if i < 20 => {
                    s.qty = None;
                    t.qty = Some(0);
                }
                _ => {}
            }
        }
        match p {
            11 => target.extend(target[..20].to_vec()),
            12 => {
                let conflicting: Vec<Row> = target[..15]
                    .iter()
                    .map(|r| Row {
                        code: format!("{}-again", r.code),
                        ..r.clone()
                    })
                    .collect();
                target.extend(conflicting);
            }
            13 => target.extend((900_001..=900_050).map(|id| Row {
                id,
                ..base_row(p, 0)
            })),
            14 => {
                target.retain(|r| !(r.id % 1000 >= 60 && r.id % 7 == 3));
                target.extend((0..8).map(|j| Row {
                    id: 14_500 + 3 * j,
                    ..base_row(p, 0)
                }));
            }
            _ => {}
        }
        if p != 16 {
            write("source", p, &source);
        }
        if p != 10 {
            write("target", p, &target);
        }
    }
    use HintKind::*;
    vec![
        (PartitionMissing, None, None, vec!["dt=p10"], 100),
        (PartitionExtra, None, None, vec!["dt=p16"], 100),
        (NullVsEmpty, Some("qty"), None, vec!["dt=p17"], 20),
        (ColumnNulled, Some("qty"), None, vec!["dt=p09"], 100),
        (KeyRange, Some("id"), None, vec![], 50),
        (Scaled, Some("amount"), None, vec!["dt=p01"], 40),
        (Shifted, Some("ts"), None, vec!["dt=p02"], 35),
        (NullVsEmpty, Some("name"), None, vec!["dt=p03"], 30),
        (Truncated, Some("note"), None, vec!["dt=p06"], 30),
        (Truncated, Some("ts"), None, vec!["dt=p07"], 30),
        (Rounded, Some("rate"), None, vec!["dt=p08"], 30),
        (CaseOnly, Some("name"), None, vec!["dt=p04"], 25),
        (WhitespaceOnly, Some("name"), None, vec!["dt=p05"], 25),
        (
            DuplicateCopies,
            None,
            Some(Side::Target),
            vec!["dt=p11"],
            20,
        ),
        (
            DuplicateConflicts,
            None,
            Some(Side::Target),
            vec!["dt=p12"],
            15,
        ),
    ]
}

/// A hint as compared: kind, column, side, partitions, findings.
type Found = (HintKind, Option<String>, Option<Side>, Vec<String>, u64);

/// A report's hints as planted tuples, in the report's order.
fn found(hints: &[Hint]) -> Vec<Found> {
    hints
        .iter()
        .map(|h| {
            (
                h.kind,
                h.column.clone(),
                h.side,
                h.partitions.clone(),
                h.findings,
            )
        })
        .collect()
}

/// Check a report's hints against the planted ones: the same set (order: most
/// findings first), each share its findings over the report's, examples and a
/// suggestion each, and the texts that name the planted parameter.
pub fn check_planted_hints(report: &Report, planted: &[Planted]) {
    let mut want: Vec<Found> = planted
        .iter()
        .map(|(k, c, s, p, n)| {
            (
                *k,
                c.map(str::to_string),
                *s,
                p.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                *n,
            )
        })
        .collect();
    let mut got = found(&report.hints);
    let counts: Vec<u64> = got.iter().map(|h| h.4).collect();
    assert!(
        counts.windows(2).all(|w| w[0] >= w[1]),
        "most first: {counts:?}"
    );
    want.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    got.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    assert_eq!(got, want, "hints:\n{:#?}", report.hints);
    let total = report.totals.findings();
    let planted: u64 = planted.iter().map(|h| h.4).sum();
    // The noise: 5 missing and 8 extra keys in dt=p14, 60 + 50 mismatched rows.
    assert_eq!(total, planted + 5 + 8 + 60 + 50);
    for h in &report.hints {
        assert!(
            (h.share - h.findings as f64 / total as f64).abs() <= 5e-7,
            "{h:?}"
        );
        assert!(!h.examples.is_empty() && !h.suggestion.is_empty(), "{h:?}");
        assert!(h.examples.iter().all(|e| e.contains_key("id")), "{h:?}");
    }
    let summary = |kind: HintKind, column: &str| {
        report
            .hints
            .iter()
            .find(|h| h.kind == kind && h.column.as_deref() == Some(column))
            .map(|h| format!("{} | {}", h.summary, h.suggestion))
            .unwrap()
    };
    assert!(summary(HintKind::Scaled, "amount").contains("x 100"));
    assert!(summary(HintKind::Shifted, "ts").contains("+2h"));
    assert!(summary(HintKind::Truncated, "ts").contains("milliseconds"));
    assert!(summary(HintKind::Truncated, "note").contains("at most 10 characters"));
    assert!(summary(HintKind::Rounded, "rate").contains("2 decimal places"));
    assert!(summary(HintKind::CaseOnly, "name").contains("ignore_case = true on name"));
    assert!(summary(HintKind::WhitespaceOnly, "name").contains("trim = true on name"));
    assert!(summary(HintKind::NullVsEmpty, "name").contains("empty_as_null = true on name"));
    assert!(
        summary(HintKind::NullVsEmpty, "qty").contains("NULL in the source where the target has 0")
    );
    assert!(summary(HintKind::KeyRange, "id").contains("id 900001..900050"));
}

#[test]
fn planted_patterns_are_found_with_their_share_and_noise_makes_none() {
    let lab = Lab::new();
    let planted = plant_patterns(lab.root());
    let run = lab.run(&["id"], "");
    check_planted_hints(&run.report, &planted);
    // In report.json, and at the top of report.html under the verdict.
    let loc = lab.write_report(&run);
    let json: Report = serde_json::from_slice(&std::fs::read(&loc.json).unwrap()).unwrap();
    assert_eq!(json.hints, run.report.hints);
    let html = std::fs::read_to_string(&loc.html).unwrap();
    let (verdict, hints, cards) = (
        html.find("class=\"verdict").unwrap(),
        html.find("id=\"hints\"").expect("a hints section"),
        html.find("class=\"cards\"").unwrap(),
    );
    assert!(verdict < hints && hints < cards, "hints under the verdict");
    for h in &run.report.hints {
        assert!(
            html.contains(&glue_recon::html::esc(&h.suggestion)),
            "{}",
            h.suggestion
        );
    }
}

#[test]
fn a_clean_pair_and_noise_alone_have_no_hints() {
    let lab = Lab::new();
    let rows: Vec<Row> = (0..ROWS).map(|i| base_row(0, i)).collect();
    lab.write("source/part-0.parquet", &to_batch(&rows));
    lab.write("target/part-0.parquet", &to_batch(&rows));
    assert!(lab.run(&["id"], "").report.hints.is_empty());
    // Random changes of every planted column, a few of each: no pattern.
    let noisy: Vec<Row> = rows
        .iter()
        .map(|r| {
            let i = r.id;
            let mut t = r.clone();
            match i % 5 {
                0 => t.amount += (i as i128 * 919 % 1000) + 1,
                1 => t.ts += ((i * 37 % 500) + 1) * 1_000_000,
                2 => t.name = Some(format!("zz{}", i * 31)),
                3 => t.rate += (i as i128 * 13 % 97) + 1,
                _ => t.note = format!("other {}", i * 7),
            }
            t
        })
        .collect();
    lab.write("target/part-0.parquet", &to_batch(&noisy));
    let run = lab.run(&["id"], "");
    assert_eq!(run.report.totals.mismatch, ROWS as u64);
    assert!(run.report.hints.is_empty(), "{:#?}", run.report.hints);
}
