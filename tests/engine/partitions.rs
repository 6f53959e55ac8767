//! Hive-partitioned tables: partitions on one side only, URL-encoded values,
//! ignored marker files, partition filters, partition columns as values.

use arrow::array::*;

use super::fixtures::*;
use glue_recon::partial::FindingKind;
use glue_recon::table::Presence;

/// `id, v` rows with ids `from..from + n`.
fn rows(from: i64, n: i64) -> RecordBatch {
    batch(vec![
        ("id", arr(Int64Array::from_iter_values(from..from + n))),
        (
            "v",
            arr(StringArray::from_iter_values(
                (from..from + n).map(|i| format!("v{i}")),
            )),
        ),
    ])
}

/// Keys of a kind's findings with their partition, sorted.
fn keys_by_partition(run: &glue_recon::runner::PairRun, kind: FindingKind) -> Vec<String> {
    let mut k: Vec<String> = findings(run, kind)
        .iter()
        .map(|(p, f)| format!("{p}:{}", key_text(&f.key)))
        .collect();
    k.sort();
    k
}

#[test]
fn partitions_on_one_side_only_are_reported_with_their_keys() {
    let lab = Lab::new();
    lab.write("source/dt=2024-01-01/part-0.parquet", &rows(0, 2));
    lab.write("source/dt=2024-01-02/part-0.parquet", &rows(10, 3));
    lab.write("target/dt=2024-01-02/part-0.parquet", &rows(10, 3));
    lab.write("target/dt=2024-01-03/part-0.parquet", &rows(20, 1));
    let run = lab.run(&["id"], "");
    let presence: Vec<(String, Presence, u64, u64)> = run
        .report
        .partitions
        .iter()
        .map(|p| {
            (
                p.partition.clone(),
                p.presence,
                p.totals.source_rows,
                p.totals.target_rows,
            )
        })
        .collect();
    assert_eq!(
        presence,
        vec![
            ("dt=2024-01-01".into(), Presence::SourceOnly, 2, 0),
            ("dt=2024-01-02".into(), Presence::Both, 3, 3),
            ("dt=2024-01-03".into(), Presence::TargetOnly, 0, 1),
        ]
    );
    assert_eq!(
        keys_by_partition(&run, FindingKind::MissingInTarget),
        vec!["dt=2024-01-01:0", "dt=2024-01-01:1"]
    );
    assert_eq!(
        keys_by_partition(&run, FindingKind::ExtraInTarget),
        vec!["dt=2024-01-03:20"]
    );
    assert_eq!(run.report.totals.matched, 3);
    assert_eq!(run.report.status.to_string(), "FAIL");
}

#[test]
fn a_key_moved_to_another_partition_is_missing_in_one_and_extra_in_the_other() {
    let lab = Lab::new();
    lab.write("source/dt=1/part-0.parquet", &rows(0, 2));
    lab.write("source/dt=2/part-0.parquet", &rows(2, 2));
    lab.write("target/dt=1/part-0.parquet", &rows(0, 1));
    lab.write("target/dt=2/part-0.parquet", &rows(1, 3));
    let run = lab.run(&["id"], "");
    assert_eq!(
        keys_by_partition(&run, FindingKind::MissingInTarget),
        vec!["dt=1:1"]
    );
    assert_eq!(
        keys_by_partition(&run, FindingKind::ExtraInTarget),
        vec!["dt=2:1"]
    );
}

#[test]
fn url_encoded_partition_values_are_decoded() {
    let lab = Lab::new();
    for side in ["source", "target"] {
        lab.write(
            &format!("{side}/city=S%C3%A3o%20Paulo/part-0.parquet"),
            &rows(0, 2),
        );
        lab.write(
            &format!("{side}/city=a%2Fb%3Dc/part-0.parquet"),
            &rows(5, 1),
        );
    }
    let run = lab.run(&["id"], "");
    assert_clean(&run, 3);
    let labels: Vec<&str> = run
        .report
        .partitions
        .iter()
        .map(|p| p.partition.as_str())
        .collect();
    assert_eq!(labels, vec!["city=São Paulo", "city=a/b=c"]);
}

#[test]
fn partition_columns_are_values_of_their_rows() {
    // The source stores `city` in the file; the target only in its folder names.
    let lab = Lab::new();
    lab.write(
        "source/all.parquet",
        &batch(vec![
            ("id", ids(4)),
            (
                "city",
                arr(StringArray::from(vec![
                    "São Paulo",
                    "São Paulo",
                    "Rio",
                    "Rio",
                ])),
            ),
        ]),
    );
    lab.write(
        "target/city=S%C3%A3o%20Paulo/p.parquet",
        &batch(vec![("id", arr(Int64Array::from(vec![0, 1])))]),
    );
    lab.write(
        "target/city=Rio/p.parquet",
        &batch(vec![("id", arr(Int64Array::from(vec![2])))]),
    );
    // Key 3 sits under the wrong city in the target.
    lab.write(
        "target/city=Recife/p.parquet",
        &batch(vec![("id", arr(Int64Array::from(vec![3])))]),
    );
    let run = lab.run(&["id"], "");
    assert_eq!(run.report.totals.matched, 3, "{:?}", diffs(&run));
    assert_eq!(
        diffs(&run),
        vec![diff("3", "city", Some("Rio"), Some("Recife"))]
    );
    assert!(
        run.report
            .schema
            .compared_columns
            .contains(&"city".to_string())
    );
}

#[test]
fn a_partition_key_from_folders_matches_a_typed_column_as_text() {
    // The source is partitioned by `dt=` folders; the target keeps `dt` as a date
    // column of unpartitioned files. The key (dt, id) is compared as text.
    let lab = Lab::new();
    let days = ["2024-01-01", "2024-02-29"];
    let mut target_dt = Vec::new();
    let mut target_id = Vec::new();
    for (d, day) in days.iter().enumerate() {
        lab.write(&format!("source/dt={day}/p.parquet"), &rows(0, 3));
        for id in 0..3 {
            target_dt.push(19_723 + 59 * d as i32);
            target_id.push(id);
        }
    }
    // The last row moves to another day: missing on one, extra on the other.
    *target_dt.last_mut().unwrap() = 19_724;
    lab.write(
        "target/all.parquet",
        &batch(vec![
            ("dt", arr(Date32Array::from(target_dt))),
            ("id", arr(Int64Array::from(target_id))),
            (
                "v",
                arr(StringArray::from_iter_values(
                    [0, 1, 2, 0, 1, 2].map(|i| format!("v{i}")),
                )),
            ),
        ]),
    );
    let run = lab.run(&["dt", "id"], "");
    assert_eq!(run.report.totals.matched, 5, "{:?}", run.report.totals);
    assert_eq!(
        keys(&run, FindingKind::MissingInTarget),
        vec!["2024-02-29|2"]
    );
    assert_eq!(keys(&run, FindingKind::ExtraInTarget), vec!["2024-01-02|2"]);
}

#[test]
fn a_partition_column_can_be_a_key() {
    let lab = Lab::new();
    for side in ["source", "target"] {
        lab.write(&format!("{side}/region=eu/p.parquet"), &rows(0, 2));
    }
    lab.write("source/region=us/p.parquet", &rows(0, 2));
    lab.write("target/region=us/p.parquet", &rows(0, 1));
    let run = lab.run(&["region", "id"], "");
    assert_eq!(keys(&run, FindingKind::MissingInTarget), vec!["us|1"]);
    assert_eq!(run.report.totals.matched, 3);
}

#[test]
fn marker_files_crc_files_folder_markers_and_temporary_folders_are_ignored() {
    let lab = Lab::new();
    for side in ["source", "target"] {
        lab.write(&format!("{side}/dt=1/part-0.parquet"), &rows(0, 3));
        lab.put(&format!("{side}/_SUCCESS"), b"");
        lab.put(&format!("{side}/dt=1/_SUCCESS"), b"");
        lab.put(&format!("{side}/dt=1/.part-0.parquet.crc"), b"not parquet");
        lab.put(&format!("{side}/dt=1/notes.txt"), b"not parquet");
        lab.put(&format!("{side}/.hidden/part-9.parquet"), b"not parquet");
        // EMR's folder markers (Hadoop's S3 file systems), beside the partition.
        lab.put(&format!("{side}/dt=1_$folder$"), b"");
    }
    // A half-written task output with other rows must not count.
    lab.write("target/_temporary/0/dt=1/part-0.parquet", &rows(100, 5));
    lab.write("target/dt=1/_temporary/part-1.parquet", &rows(200, 5));
    let run = lab.run(&["id"], "");
    assert_clean(&run, 3);
    assert_eq!(run.report.partitions.len(), 1);
}

#[test]
fn partition_filter_selects_partitions() {
    let lab = Lab::new();
    for (dt, from) in [("2024-01-01", 0), ("2024-01-02", 10), ("2024-01-03", 20)] {
        lab.write(&format!("source/dt={dt}/p.parquet"), &rows(from, 2));
        // Only the first partition differs.
        let n = if dt == "2024-01-01" { 1 } else { 2 };
        lab.write(&format!("target/dt={dt}/p.parquet"), &rows(from, n));
    }
    let run = lab.run(&["id"], "partition_filter = \"dt >= '2024-01-02'\"");
    let labels: Vec<&str> = run
        .report
        .partitions
        .iter()
        .map(|p| p.partition.as_str())
        .collect();
    assert_eq!(labels, vec!["dt=2024-01-02", "dt=2024-01-03"]);
    assert_clean(&run, 4);
    let run = lab.run(&["id"], "partition_filter = \"dt IN ('2024-01-01')\"");
    assert_eq!(keys(&run, FindingKind::MissingInTarget), vec!["1"]);
}

#[test]
fn a_partition_filter_on_an_unknown_column_is_an_error() {
    let lab = Lab::new();
    for side in ["source", "target"] {
        lab.write(&format!("{side}/dt=1/p.parquet"), &rows(0, 1));
    }
    let err = lab
        .try_run(&["id"], "partition_filter = \"region = 'eu'\"")
        .err()
        .expect("an unknown partition column is refused")
        .to_string();
    assert!(err.contains("region") && err.contains("dt"), "{err}");
}

#[test]
fn multi_level_partitions_and_the_hive_default_partition() {
    let lab = Lab::new();
    for side in ["source", "target"] {
        lab.write(&format!("{side}/dt=1/region=eu/p.parquet"), &rows(0, 2));
        lab.write(
            &format!("{side}/dt=1/region=__HIVE_DEFAULT_PARTITION__/p.parquet"),
            &rows(2, 1),
        );
    }
    lab.write("source/dt=2/region=us/p.parquet", &rows(3, 1));
    let run = lab.run(&["id"], "");
    let labels: Vec<(&str, Presence)> = run
        .report
        .partitions
        .iter()
        .map(|p| (p.partition.as_str(), p.presence))
        .collect();
    assert_eq!(
        labels,
        vec![
            ("dt=1/region=__HIVE_DEFAULT_PARTITION__", Presence::Both),
            ("dt=1/region=eu", Presence::Both),
            ("dt=2/region=us", Presence::SourceOnly),
        ]
    );
    assert_eq!(keys(&run, FindingKind::MissingInTarget), vec!["3"]);
    assert_eq!(run.report.totals.matched, 3);
}

/// What a run told its progress, in order.
#[derive(Default)]
struct Told(std::sync::Mutex<Vec<String>>);

impl glue_recon::scan::Progress for Told {
    fn rows(&self, _: u64) {
        self.0.lock().unwrap().push("rows".into());
    }
    fn item_done(&self, _: &str) {}
    fn planned(&self, rows: u64, items: usize) {
        self.0
            .lock()
            .unwrap()
            .push(format!("planned {rows} {items}"));
    }
    fn footers_differ(&self, c: &glue_recon::runner::FooterCounts) {
        self.0.lock().unwrap().push(c.describe());
    }
}

#[test]
fn partitions_whose_footers_differ_are_told_before_a_row_is_hashed() {
    let lab = Lab::new();
    lab.write("source/dt=1/part-0.parquet", &rows(0, 10));
    lab.write("target/dt=1/part-0.parquet", &rows(0, 10));
    lab.write("source/dt=2/part-0.parquet", &rows(100, 1000));
    lab.write("target/dt=2/part-0.parquet", &rows(100, 997));
    lab.write("target/dt=3/part-0.parquet", &rows(200, 5));
    // Equal counts, other keys: the key ranges of the footers differ.
    lab.write("source/dt=4/part-0.parquet", &rows(300, 4));
    lab.write("target/dt=4/part-0.parquet", &rows(400, 4));
    // Equal counts and ranges, a NULL key in the source: the null counts differ.
    let with_null = batch(vec![
        (
            "id",
            arr(Int64Array::from(vec![Some(500), None, Some(502)])),
        ),
        ("v", arr(StringArray::from(vec!["a", "b", "c"]))),
    ]);
    lab.write("source/dt=5/part-0.parquet", &with_null);
    lab.write("target/dt=5/part-0.parquet", &rows(500, 3));
    // Equal counts, ranges and nulls, one value changed: only the hashing can tell.
    lab.write("source/dt=6/part-0.parquet", &rows(600, 3));
    let changed = batch(vec![
        ("id", arr(Int64Array::from_iter_values(600..603))),
        ("v", arr(StringArray::from(vec!["v600", "changed", "v602"]))),
    ]);
    lab.write("target/dt=6/part-0.parquet", &changed);
    let told = std::sync::Arc::new(Told::default());
    let opts = glue_recon::runner::RunOptions {
        progress: told.clone(),
        ..local_options()
    };
    let run = lab.run_with(&["id"], "", &opts);
    let told = told.0.lock().unwrap().clone();
    let first_rows = told.iter().position(|t| t == "rows").expect("rows hashed");
    assert_eq!(
        told[..first_rows],
        [
            "planned 2042 6".to_string(), // 20 + 1,997 + 5 + 8 + 6 + 6 rows
            "dt=2: the footers already differ: 1,000 source rows, 997 target rows; \
             key range 100..1099 vs 100..1096"
                .into(),
            "dt=3: the footers already differ: 0 source rows, 5 target rows".into(),
            "dt=4: the footers already differ: key range 300..303 vs 400..403".into(),
            "dt=5: the footers already differ: NULL keys 1 vs 0".into(),
        ]
    );
    assert!(!told[first_rows..].iter().any(|t| t.contains("differ")));
    assert_eq!(run.report.totals.missing_in_target, 3 + 4);
    assert_eq!(run.report.totals.extra_in_target, 5 + 4 + 1);
    assert_eq!(run.report.totals.null_key_source, 1);
    assert_eq!(
        run.report.totals.mismatch,
        1 + 2,
        "dt=6, and dt=5 whose values differ"
    );
}
