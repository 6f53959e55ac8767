//! Bad input: a clear message and exit 2 (could not run), or a report section and
//! FAIL (a partition could not be read); never a panic, never a silent PASS.

use std::path::Path;

use arrow::array::*;

use super::fixtures::*;
use glue_recon::partial::FindingKind;
use glue_recon::report::Status;

fn table(n: usize) -> RecordBatch {
    batch(vec![
        ("id", ids(n)),
        (
            "v",
            arr(StringArray::from_iter_values(
                (0..n).map(|i| format!("v{i}")),
            )),
        ),
    ])
}

#[test]
fn a_missing_folder_cannot_run() {
    let lab = Lab::new();
    lab.write("source/p.parquet", &table(2));
    let target = lab.loc("target");
    assert_cannot_run(&lab, &["id"], "", &["table not found", &target]);
}

#[test]
fn an_empty_folder_cannot_run() {
    let lab = Lab::new();
    lab.write("source/p.parquet", &table(2));
    std::fs::create_dir_all(lab.path("target")).unwrap();
    assert_cannot_run(&lab, &["id"], "", &[&lab.loc("target"), "no Parquet files"]);
}

#[test]
fn a_folder_without_parquet_files_cannot_run() {
    let lab = Lab::new();
    lab.write("target/p.parquet", &table(2));
    lab.put("source/_SUCCESS", b"");
    lab.put("source/readme.txt", b"hello");
    lab.put("source/dt=1/.p.parquet.crc", b"crc");
    assert_cannot_run(&lab, &["id"], "", &[&lab.loc("source"), "no Parquet files"]);
}

#[test]
fn a_key_column_missing_on_one_side_cannot_run() {
    let lab = Lab::with(
        &table(2),
        &batch(vec![
            ("ident", ids(2)),
            ("v", arr(StringArray::from(vec!["a", "b"]))),
        ]),
    );
    assert_cannot_run(
        &lab,
        &["id"],
        "",
        &["key column `id`", "missing in the target"],
    );
}

#[test]
fn incompatible_key_types_cannot_run() {
    let lab = Lab::with(
        &table(2),
        &batch(vec![
            ("id", arr(StringArray::from(vec!["0", "1"]))),
            ("v", arr(StringArray::from(vec!["v0", "v1"]))),
        ]),
    );
    assert_cannot_run(
        &lab,
        &["id"],
        "",
        &["`id`", "incompatible", "Int64", "Utf8"],
    );
}

#[test]
fn mixed_partition_layouts_cannot_run() {
    let lab = Lab::new();
    lab.write("source/p.parquet", &table(2));
    lab.write("target/dt=1/p.parquet", &table(1));
    lab.write("target/stray.parquet", &table(1));
    assert_cannot_run(
        &lab,
        &["id"],
        "",
        &["inconsistent partition layout", "stray.parquet"],
    );
}

#[test]
fn delta_iceberg_and_hudi_folders_cannot_run_as_plain_parquet() {
    // Their folders keep the Parquet files of earlier versions: reading them all would
    // count rows the table no longer has, so the pair stops and says why.
    for (metadata, format) in [
        ("_delta_log/00000000000000000000.json", "a Delta Lake table"),
        (
            "metadata/00000-3f2a.metadata.json",
            "an Apache Iceberg table",
        ),
        (".hoodie/hoodie.properties", "an Apache Hudi table"),
    ] {
        let lab = Lab::new();
        lab.write("source/p.parquet", &table(2));
        lab.write("target/data/p-v1.parquet", &table(2));
        lab.write("target/data/p-v2.parquet", &table(2));
        lab.put(&format!("target/{metadata}"), b"{}");
        assert_cannot_run(
            &lab,
            &["id"],
            "",
            &[&lab.loc("target"), format, "earlier versions"],
        );
    }
}

/// Three partitions on each side; `dt=3` has a planted MISMATCH.
fn three_partitions() -> Lab {
    let lab = Lab::new();
    for (dt, from) in [(1, 0), (2, 10), (3, 20)] {
        let rows = table(5);
        let shifted = batch(vec![
            ("id", arr(Int64Array::from_iter_values(from..from + 5))),
            ("v", rows.column(1).clone()),
        ]);
        lab.write(&format!("source/dt={dt}/part-0.parquet"), &shifted);
        let target = if dt == 3 {
            batch(vec![
                ("id", shifted.column(0).clone()),
                (
                    "v",
                    arr(StringArray::from(vec!["v0", "v1", "v2", "v3", "changed"])),
                ),
            ])
        } else {
            shifted
        };
        lab.write(&format!("target/dt={dt}/part-0.parquet"), &target);
    }
    lab
}

/// Replace a file of the lab with `bytes`, run, and check that only its partition
/// failed, naming the file, that the others were reconciled, and that the run is
/// incomplete and FAIL (exit 1).
fn assert_partition_fails(rel: &str, bytes: impl Fn(&[u8]) -> Vec<u8>) {
    let lab = three_partitions();
    let path = lab.path(rel);
    let corrupted = bytes(&std::fs::read(&path).unwrap());
    std::fs::write(&path, corrupted).unwrap();
    let file = path.to_string_lossy().into_owned();
    let failed_dt = rel.split('/').nth(1).unwrap();

    let run = lab
        .try_run(&["id"], "")
        .unwrap_or_else(|e| panic!("{rel}: the whole run failed instead of its partition: {e}"));
    let r = &run.report;
    assert!(!r.complete);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.reasons.iter().any(|x| x.contains("incomplete")),
        "{:?}",
        r.reasons
    );
    for p in &r.partitions {
        if p.partition == failed_dt {
            assert_eq!(p.status, "failed");
            let e = p.error.as_ref().expect("an error");
            assert_eq!(e.error_type, "CorruptParquet", "{e:?}");
            assert!(e.message.contains(&file), "{e:?}");
        } else {
            assert_eq!(p.status, "ok", "{p:?}");
            assert_eq!(p.totals.source_rows, 5, "{p:?}");
        }
    }
    if failed_dt != "dt=3" {
        assert_eq!(keys(&run, FindingKind::Mismatch), vec!["24"]);
    }

    let config = lab.write_config(&["id"], "");
    let out = lab
        .cli(&["run", "--config", config.to_str().unwrap(), "--out", "out"])
        .expect_code(1);
    assert!(out.stdout.contains("INCOMPLETE"), "{out:#?}");
    assert!(out.stdout.contains(&file), "{out:#?}");
    let json = lab.run_json(&config, 1);
    assert_eq!(json["complete"], false);
    assert_eq!(json["status"], "FAIL");
}

fn garbage(_: &[u8]) -> Vec<u8> {
    b"PAR1 this is not a parquet file PAR1".to_vec()
}

fn truncated(valid: &[u8]) -> Vec<u8> {
    valid[..valid.len() / 2].to_vec()
}

fn empty(_: &[u8]) -> Vec<u8> {
    Vec::new()
}

#[test]
fn a_corrupt_target_file_fails_its_partition_only() {
    assert_partition_fails("target/dt=2/part-0.parquet", garbage);
}

#[test]
fn a_truncated_target_file_fails_its_partition_only() {
    assert_partition_fails("target/dt=3/part-0.parquet", truncated);
}

#[test]
fn an_empty_parquet_file_fails_its_partition_only() {
    assert_partition_fails("source/dt=2/part-0.parquet", empty);
}

#[test]
fn corrupt_first_file_fails_its_partition_not_the_whole_pair() {
    // Regression: the schema was read from the first file of each side only, so a
    // corrupt first file stopped the whole pair (exit 2) instead of its partition.
    assert_partition_fails("source/dt=1/part-0.parquet", garbage);
    assert_partition_fails("target/dt=1/part-0.parquet", truncated);
}

#[test]
fn a_file_without_the_key_column_fails_its_partition() {
    let lab = three_partitions();
    lab.write(
        "target/dt=2/part-1.parquet",
        &batch(vec![("v", arr(StringArray::from(vec!["x"])))]),
    );
    let run = lab.run(&["id"], "");
    assert!(!run.report.complete);
    assert_eq!(run.report.status, Status::Fail);
    let failed: Vec<(&str, String)> = run
        .report
        .partitions
        .iter()
        .filter_map(|p| Some((p.partition.as_str(), p.error.as_ref()?.message.clone())))
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "dt=2");
    assert!(
        failed[0].1.contains("part-1.parquet") && failed[0].1.contains("`id`"),
        "{failed:?}"
    );
}

#[test]
fn an_empty_target_table_is_all_missing_not_a_pass() {
    let lab = Lab::with(&table(3), &table(0));
    let run = lab.run(&["id"], "");
    assert_eq!(run.report.totals.missing_in_target, 3);
    assert_eq!(run.report.status, Status::Fail);
}

#[test]
fn two_empty_tables_warn_that_nothing_was_compared() {
    let lab = Lab::with(&table(0), &table(0));
    let run = lab.run(&["id"], "");
    assert_eq!(run.report.totals.findings(), 0);
    assert_eq!(run.report.status, Status::Warn, "{:?}", run.report.reasons);
    assert!(
        run.report
            .reasons
            .iter()
            .any(|r| r.contains("both tables are empty")),
        "{:?}",
        run.report.reasons
    );
    // One row on a side is a comparison, not an empty run.
    let one = Lab::with(&table(1), &table(1)).run(&["id"], "");
    assert_eq!(one.report.status, Status::Pass, "{:?}", one.report.reasons);
}

#[test]
fn cli_errors_exit_2_with_a_message() {
    let lab = Lab::with(&table(1), &table(1));
    let missing = lab.cli(&["run", "--config", "nope.toml"]).expect_code(2);
    assert!(missing.stderr.contains("nope.toml"), "{missing:#?}");

    std::fs::write(lab.path("empty.toml"), "").unwrap();
    let empty = lab.cli(&["run", "--config", "empty.toml"]).expect_code(2);
    assert!(empty.stderr.contains("no [[pair]]"), "{empty:#?}");

    let text = format!("{}colour = 'red'\n", lab.config_text(&["id"], ""));
    std::fs::write(lab.path("unknown.toml"), text).unwrap();
    let unknown = lab.cli(&["run", "--config", "unknown.toml"]).expect_code(2);
    assert!(
        unknown.stderr.contains("colour") && unknown.stderr.contains("line 7"),
        "{unknown:#?}"
    );

    let config = lab.write_config(&["id"], "");
    let config = config.to_str().unwrap();
    let pair = lab
        .cli(&["run", "--config", config, "--pair", "nope"])
        .expect_code(2);
    assert!(
        pair.stderr.contains("nope") && pair.stderr.contains("known: t"),
        "{pair:#?}"
    );

    let partition = lab
        .cli(&[
            "run",
            "--config",
            config,
            "--partition",
            "dt=9",
            "--out",
            "out",
        ])
        .expect_code(2);
    assert!(partition.stderr.contains("dt=9"), "{partition:#?}");

    let no_key = lab.cli(&["diff", "source", "target"]).expect_code(2);
    assert!(no_key.stderr.contains("--key"), "{no_key:#?}");
}

#[test]
fn a_missing_table_in_diff_exits_2() {
    let lab = Lab::new();
    lab.write("source/p.parquet", &table(1));
    let out = lab
        .cli(&["diff", "source", "nowhere", "--key", "id", "--out", "out"])
        .expect_code(2);
    assert!(out.stderr.contains("nowhere"), "{out:#?}");
    assert!(!Path::new(&lab.loc("out/diff")).exists());
}

/// With `--json`, a pair that could not run is an error object in the output, in its
/// place among the reports, so a script sees every pair.
#[test]
fn json_output_names_the_pairs_that_could_not_run() {
    let lab = Lab::new();
    lab.write("source/p.parquet", &table(2));
    lab.write("target/p.parquet", &table(2));
    let text = format!(
        "{}\n[[pair]]\nname = \"gone\"\nsource = '{}'\ntarget = '{}'\nkey = [\"id\"]\n",
        lab.config_text(&["id"], ""),
        lab.loc("source"),
        lab.loc("nowhere"),
    );
    lab.put("two.toml", text.as_bytes());
    let config = lab.path("two.toml");
    let json = lab.run_json(&config, 2);
    let pairs = json.as_array().expect("one entry a pair");
    assert_eq!(pairs.len(), 2, "{json:#}");
    assert_eq!(pairs[0]["pair"], "t");
    assert_eq!(pairs[0]["status"], "PASS");
    assert_eq!(pairs[1]["pair"], "gone");
    assert_eq!(pairs[1]["status"], "ERROR");
    assert_eq!(pairs[1]["error_type"], "TableNotFound");
    assert!(
        pairs[1]["error"].as_str().unwrap().contains("nowhere"),
        "{json:#}"
    );

    // One pair: the object itself.
    let one = lab
        .cli(&[
            "diff", "source", "nowhere", "--key", "id", "--out", "out", "--json",
        ])
        .expect_code(2)
        .json();
    assert_eq!(one["status"], "ERROR", "{one:#}");
    assert_eq!(one["error_type"], "TableNotFound");
}

#[test]
fn a_temporary_folder_without_room_fails_each_partition_naming_the_settings() {
    let lab = three_partitions();
    let config = lab.write_config(&["id"], "");
    // TMPDIR names a file: the spill file cannot be made there, as in a full /tmp.
    let not_a_folder = lab.put("not-a-folder", b"");
    let not_a_folder = not_a_folder.to_str().unwrap();
    let out = lab.cli_env(
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--out",
            "out",
            "--json",
            "--index-memory",
            "0",
        ],
        &[("TMPDIR", not_a_folder)],
    );
    let json = out.expect_code(1).json();
    assert_eq!(json["status"], "FAIL", "{json:#}");
    assert_eq!(json["complete"], false, "{json:#}");
    let partitions = json["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 3, "{json:#}");
    for p in partitions {
        assert_eq!(p["status"], "failed", "{p:#}");
        assert_eq!(p["error"]["error_type"], "LocalStorage", "{p:#}");
        let message = p["error"]["message"].as_str().unwrap();
        for named in [not_a_folder, "TMPDIR", "HashTmpStorage"] {
            assert!(message.contains(named), "`{named}` not in: {message}");
        }
    }
}
