//! Issue 37, item 7: what the report and the terminal put first. A partition wholly
//! missing or extra is a reason under the verdict; warn reasons stay under a FAIL;
//! samples come from every partition, keys in the order of their values; '' is not
//! NULL on the page; a huge value is cut in the report, whole in diffs.parquet; an
//! incomplete run says what its counts are of; a partition with no target rows is
//! not "ok".

use arrow::array::*;

use super::fixtures::*;
use glue_recon::partial::FindingKind;

fn ids_names(ids: &[i64], names: &[Option<&str>]) -> arrow::record_batch::RecordBatch {
    batch(vec![
        ("id", arr(Int64Array::from(ids.to_vec()))),
        ("name", arr(StringArray::from(names.to_vec()))),
    ])
}

fn ids_only(ids: impl IntoIterator<Item = i64>) -> arrow::record_batch::RecordBatch {
    let ids: Vec<i64> = ids.into_iter().collect();
    let names: Vec<Option<&str>> = ids.iter().map(|_| Some("x")).collect();
    ids_names(&ids, &names)
}

fn reasons(run: &glue_recon::runner::PairRun) -> String {
    run.report.reasons.join("\n")
}

fn status_of<'a>(run: &'a glue_recon::runner::PairRun, partition: &str) -> &'a str {
    &run.report
        .partitions
        .iter()
        .find(|p| p.partition == partition)
        .unwrap_or_else(|| panic!("no {partition} in {:?}", run.report.partitions))
        .status
}

#[test]
fn a_partition_wholly_missing_or_extra_is_a_reason_and_not_ok() {
    let lab = Lab::new();
    // dt=1: one key missing. dt=2: the target's file has no rows. dt=3: no target
    // folder. dt=4: only in the target.
    lab.write("source/dt=1/p.parquet", &ids_only(1..=3));
    lab.write("target/dt=1/p.parquet", &ids_only(1..=2));
    lab.write("source/dt=2/p.parquet", &ids_only(10..=12));
    lab.write("target/dt=2/p.parquet", &ids_only(std::iter::empty()));
    lab.write("source/dt=3/p.parquet", &ids_only(20..=23));
    lab.write("target/dt=4/p.parquet", &ids_only(30..=31));
    let run = lab.run(&["id"], "");
    let why = reasons(&run);
    assert!(
        why.contains("dt=3 is missing in the target: 4 of the 8 missing keys"),
        "{why}"
    );
    assert!(
        why.contains("dt=2 has no rows in the target: 3 of the 8 missing keys"),
        "{why}"
    );
    assert!(
        why.contains("dt=4 is only in the target: 2 of the 2 extra keys"),
        "{why}"
    );
    assert!(!why.contains("dt=1 "), "dt=1 is partly missing: {why}");
    assert_eq!(status_of(&run, "dt=1"), "ok");
    assert_eq!(status_of(&run, "dt=2"), "missing_in_target");
    assert_eq!(status_of(&run, "dt=3"), "missing_in_target");
    assert_eq!(status_of(&run, "dt=4"), "extra_in_target");

    // The terminal says the same under the verdict.
    let config = lab.write_config(&["id"], "");
    let out = lab
        .cli(&["run", "--config", config.to_str().unwrap(), "--out", "out"])
        .expect_code(1);
    assert!(
        out.stdout
            .contains("  - dt=3 is missing in the target: 4 of the 8 missing keys"),
        "{out:#?}"
    );
}

#[test]
fn many_whole_partitions_name_five_and_count_the_rest() {
    let lab = Lab::new();
    for day in 1..=8 {
        // Day d has d rows, so the largest are named first.
        lab.write(
            &format!("source/dt={day}/p.parquet"),
            &ids_only((0..day).map(|i| day * 100 + i)),
        );
    }
    lab.write("target/dt=1/p.parquet", &ids_only([100]));
    let run = lab.run(&["id"], "");
    let listed: Vec<&String> = run
        .report
        .reasons
        .iter()
        .filter(|r| r.contains("missing in the target"))
        .collect();
    assert_eq!(listed.len(), 6, "{listed:?}");
    assert!(listed[0].starts_with("dt=8 is missing"), "{listed:?}");
    assert!(listed[4].starts_with("dt=4 is missing"), "{listed:?}");
    // dt=2 and dt=3: 5 keys of the 35 missing.
    assert_eq!(
        listed[5], "2 more partitions missing in the target: 5 of the 35 missing keys",
        "{listed:?}"
    );
}

#[test]
fn warn_reasons_stay_under_a_fail_and_counts_have_separators() {
    let source = ids_names(&(0..2_000).collect::<Vec<_>>(), &vec![Some("a"); 2_000]);
    let mut names = vec![Some("a"); 500];
    names[0] = Some("changed");
    let target = ids_names(&(1_500..2_000).collect::<Vec<_>>(), &names);
    let lab = Lab::with(&source, &target);
    let run = lab.run(
        &["id"],
        "[pair.thresholds.fail]\nmissing_in_target = 0\nmismatch = 10\n[pair.thresholds.warn]\nmismatch = 0\n",
    );
    assert_eq!(run.report.status.to_string(), "FAIL");
    let why = reasons(&run);
    assert!(why.contains("MISSING_IN_TARGET 1,500 > 0"), "{why}");
    assert!(why.contains("MISMATCH 1 > 0 (warn limit)"), "{why}");
}

#[test]
fn samples_come_from_every_partition_and_keys_sort_as_numbers() {
    let lab = Lab::new();
    for day in 1..=4 {
        lab.write(
            &format!("source/dt={day}/p.parquet"),
            &ids_only([2, 10, 9, 100, 1_000].map(|i| i + day * 10_000)),
        );
        lab.write(
            &format!("target/dt={day}/p.parquet"),
            &ids_only([day * 10_000 + 7]),
        );
    }
    let run = lab.run(&["id"], "sample_limit = 8\n");
    let samples = &run.report.samples[&FindingKind::MissingInTarget];
    assert_eq!(samples.len(), 8);
    for day in 1..=4 {
        let from: Vec<&str> = samples
            .iter()
            .filter(|s| s.partition == format!("dt={day}"))
            .map(|s| s.key["id"].as_deref().unwrap())
            .collect();
        let (a, b) = (
            (day * 10_000 + 2).to_string(),
            (day * 10_000 + 9).to_string(),
        );
        assert_eq!(from, [a.as_str(), b.as_str()], "dt={day}: {samples:?}");
    }
    // The findings (and diffs.parquet) list keys in numeric order too.
    let keys: Vec<String> = findings(&run, FindingKind::MissingInTarget)
        .into_iter()
        .filter(|(p, _)| p == "dt=1")
        .map(|(_, f)| key_text(&f.key))
        .collect();
    assert_eq!(keys, ["10002", "10009", "10010", "10100", "11000"]);
}

#[test]
fn empty_text_and_null_look_different_on_the_page() {
    let source = ids_names(&[1, 2], &[Some(""), None]);
    let target = ids_names(&[1, 2], &[None, Some("")]);
    let lab = Lab::with(&source, &target);
    let run = lab.run(&["id"], "");
    assert_eq!(run.report.totals.mismatch, 2);
    let html = std::fs::read_to_string(&lab.write_report(&run).html).unwrap();
    let rows: Vec<&str> = html
        .split("<tr>")
        .filter(|r| r.contains("<td>name</td><td><span"))
        .collect();
    assert_eq!(rows.len(), 2, "{html}");
    let empty = "<span class=\"empty\" title=\"empty string\">''</span>";
    let null = "<span class=\"null\">NULL</span>";
    assert!(
        rows[0].contains(&format!("<td>{empty}</td><td>{null}</td>")),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains(&format!("<td>{null}</td><td>{empty}</td>")),
        "{}",
        rows[1]
    );
}

#[test]
fn a_huge_value_is_cut_in_the_report_and_whole_in_diffs_parquet() {
    let huge = "é".repeat(5_000_000);
    let source = ids_names(&[1], &[Some(huge.as_str())]);
    let target = ids_names(&[1], &[Some("short")]);
    let lab = Lab::with(&source, &target);
    let run = lab.run(&["id"], "");
    let loc = lab.write_report(&run);
    let json = std::fs::read(&loc.json).unwrap();
    let html = std::fs::read(&loc.html).unwrap();
    assert!(json.len() < 50_000, "report.json is {} bytes", json.len());
    assert!(html.len() < 50_000, "report.html is {} bytes", html.len());
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let diff = &report["samples"]["MISMATCH"][0]["diffs"][0];
    assert_eq!(diff["source"].as_str().unwrap().chars().count(), 1_000);
    assert_eq!(diff["source_chars"], 5_000_000);
    assert_eq!(diff["target"], "short");
    assert!(diff.get("target_chars").is_none(), "{diff}");
    let html = String::from_utf8(html).unwrap();
    assert!(
        html.contains("5,000,000 characters"),
        "the page says it cut"
    );
    let rows = read_rows_as_text(std::path::Path::new(&loc.diff_rows));
    let whole = rows
        .iter()
        .find_map(|r| r.get("source_value").cloned().flatten())
        .expect("the source value in diffs.parquet");
    assert_eq!(whole, huge);
}

#[test]
fn an_incomplete_run_says_what_its_counts_are_of() {
    let lab = Lab::new();
    lab.write("source/dt=1/p.parquet", &ids_only(1..=3));
    lab.write("target/dt=1/p.parquet", &ids_only(1..=3));
    lab.write("source/dt=2/p.parquet", &ids_only(10..=12));
    lab.put("target/dt=2/p.parquet", b"PAR1 this is not parquet PAR1");
    let config = lab.write_config(&["id"], "");
    let out = lab
        .cli(&["run", "--config", config.to_str().unwrap(), "--out", "out"])
        .expect_code(1);
    let head = out.stdout.lines().next().unwrap();
    assert_eq!(
        head, "FAIL t INCOMPLETE  (3 source rows, 3 target rows, in 1 of 2 partitions reconciled)",
        "{out:#?}"
    );
    assert!(
        out.stdout.contains(
            "  - incomplete: 1 of 2 partitions could not be reconciled; the counts are of the others"
        ),
        "{out:#?}"
    );
    let html = std::fs::read_to_string(run_dir(&lab.path("out"), "t").join("report.html")).unwrap();
    assert!(
        html.contains("Counts of the 1 partition reconciled; 1 partition not reconciled"),
        "{html}"
    );
    let failed_row = html
        .split("<tr>")
        .find(|r| r.starts_with("<td>dt=2</td>"))
        .unwrap();
    assert!(failed_row.contains("not reconciled"), "{failed_row}");
    assert!(!failed_row.contains("<td class=n>0</td>"), "{failed_row}");
}
