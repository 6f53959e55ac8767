//! A partition large enough to be joined in many buckets, read from many files and
//! row groups, with the target in another row order: every finding is still found
//! once, with the right key, side, count and values.

use arrow::array::*;

use super::fixtures::*;
use glue_recon::budget::MemoryBudget;
use glue_recon::partial::FindingKind;
use glue_recon::plan::Side;
use glue_recon::runner::RunOptions;

const N: i64 = 60_000;

/// The value column of key `id` (the source's).
fn value(id: i64) -> String {
    format!("v{}", id * 7 % 1000)
}

fn table(rows: &[(Option<i64>, String)]) -> RecordBatch {
    batch(vec![
        ("id", arr(Int64Array::from_iter(rows.iter().map(|r| r.0)))),
        (
            "v",
            arr(StringArray::from_iter_values(
                rows.iter().map(|r| r.1.as_str()),
            )),
        ),
    ])
}

#[test]
fn a_large_shuffled_partition_finds_every_kind_exactly() {
    check_large_partition(&RunOptions::local());
}

/// Without memory to keep the decoded batches in, the mismatched rows are read back
/// from their files: the same findings and values.
#[test]
fn without_a_retain_budget_mismatched_rows_are_read_back_the_same() {
    let mut opts = RunOptions::local();
    opts.retain = MemoryBudget::new(0);
    check_large_partition(&opts);
}

/// Without memory for the key index, the index waits in a temporary file and is
/// joined a bucket at a time: the same findings and values.
#[test]
fn without_an_index_budget_the_index_on_disk_finds_the_same() {
    let mut opts = RunOptions::local();
    opts.index = MemoryBudget::new(0);
    check_large_partition(&opts);
}

fn check_large_partition(opts: &RunOptions) {
    let source: Vec<(Option<i64>, String)> = (0..N)
        .map(|id| (Some(id), value(id)))
        // Key 5 twice, far apart (other files and row groups); one NULL key.
        .chain([(Some(5), value(5)), (None, "null".into())])
        .collect();
    let mut target = Vec::new();
    let (mut missing, mut changed, mut extra) = (Vec::new(), Vec::new(), Vec::new());
    for id in 0..N {
        if id % 1000 == 999 {
            missing.push(id);
        } else if id % 997 == 3 && id != 5 {
            changed.push(id);
            target.push((Some(id), format!("{}!", value(id))));
        } else {
            target.push((Some(id), value(id)));
        }
    }
    for id in [N + 1, N + 50_000, -3] {
        extra.push(id);
        target.push((Some(id), "extra".into()));
    }
    // Key 77 three times in the target.
    target.push((Some(77), value(77)));
    target.push((Some(77), value(77)));
    // Another row order: a fixed permutation (stride coprime with the length).
    let len = target.len();
    let stride = (1..len)
        .rev()
        .find(|s| gcd(*s, len) == 1 && *s < len / 3)
        .unwrap();
    let target: Vec<_> = (0..len).map(|i| target[i * stride % len].clone()).collect();

    let lab = Lab::new();
    lab.write_files("source", &table(&source), 3, 5_000);
    lab.write_files("target", &table(&target), 4, 7_000);
    let run = lab.run_with(&["id"], "", opts);
    let t = run.report.totals;

    assert_eq!(t.source_rows, source.len() as u64);
    assert_eq!(t.target_rows, target.len() as u64);
    assert_eq!(t.missing_in_target, missing.len() as u64, "{t:?}");
    assert_eq!(t.extra_in_target, extra.len() as u64, "{t:?}");
    assert_eq!(t.mismatch, changed.len() as u64, "{t:?}");
    assert_eq!((t.duplicate_key_source, t.duplicate_key_target), (1, 1));
    assert_eq!((t.null_key_source, t.null_key_target), (1, 0));
    // Every key of the source that is neither missing, changed nor duplicated matched.
    let odd = missing.len() + changed.len() + 2;
    assert_eq!(t.matched, N as u64 - odd as u64, "{t:?}");

    let sorted = |mut v: Vec<i64>| {
        v.sort_unstable();
        v.into_iter().map(|k| k.to_string()).collect::<Vec<_>>()
    };
    let mut got_missing = keys(&run, FindingKind::MissingInTarget);
    got_missing.sort_by_key(|k| k.parse::<i64>().unwrap());
    assert_eq!(got_missing, sorted(missing));
    let mut got_extra = keys(&run, FindingKind::ExtraInTarget);
    got_extra.sort_by_key(|k| k.parse::<i64>().unwrap());
    assert_eq!(got_extra, sorted(extra));

    // Each mismatch is read back from its own row, on both sides.
    let mut got = diffs(&run);
    got.sort_by_key(|d| d.0.parse::<i64>().unwrap());
    let want: Vec<Diff> = changed
        .iter()
        .map(|id| {
            let v = value(*id);
            diff(&id.to_string(), "v", Some(&v), Some(&format!("{v}!")))
        })
        .collect();
    assert_eq!(got, want);

    assert_eq!(
        duplicate_counts(&run),
        vec![
            ("5".into(), Some(Side::Source), Some(2)),
            ("77".into(), Some(Side::Target), Some(3)),
        ]
    );
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}
