//! Ledger, resolutions and drift over several runs in a local folder, through the CLI.

use std::collections::BTreeMap;
use std::path::Path;

use glue_recon::layout::{ReportLocation, report_dir};
use glue_recon::ledger::{LedgerRow, append_run, read_ledger, refresh_ledger};
use glue_recon::report::{Report, Status};
use glue_recon::storage::Storage;

use super::{bin, ledger_rows, run_cli, sample, two_pair_config};

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else {
            let meta = std::fs::metadata(&p).unwrap();
            out.insert(
                p.display().to_string(),
                (std::fs::read(&p).unwrap(), meta.modified().unwrap()),
            );
        }
    }
    out
}

/// The ledger rows a report should have produced.
pub fn assert_rows_match(rows: &[LedgerRow], report: &Report) {
    let mine: Vec<&LedgerRow> = rows
        .iter()
        .filter(|r| r.run_id == report.run_id && r.pair == report.pair)
        .collect();
    assert_eq!(mine.len(), report.partitions.len(), "{}", report.pair);
    for p in &report.partitions {
        let row = mine
            .iter()
            .find(|r| r.partition == p.partition)
            .unwrap_or_else(|| panic!("no ledger row for {}", p.partition));
        let t = &p.totals;
        assert_eq!(row.source_rows, t.source_rows);
        assert_eq!(row.target_rows, t.target_rows);
        assert_eq!(row.missing_in_target, t.missing_in_target);
        assert_eq!(row.extra_in_target, t.extra_in_target);
        assert_eq!(row.mismatch, t.mismatch);
        assert_eq!(
            row.duplicate_key,
            t.duplicate_key_source + t.duplicate_key_target
        );
        assert_eq!(row.null_key, t.null_key_source + t.null_key_target);
        assert_eq!(row.status, report.status.to_string());
        assert_eq!(row.complete, report.complete);
        assert_eq!(row.run_time, report.started_at);
        assert_eq!(row.trigger, report.trigger);
        assert_eq!(row.partition_status, p.status);
        assert_eq!(row.engine_version, report.engine_version);
        assert_eq!(
            row.hash_encoding_version as u32,
            report.hash_encoding_version
        );
        assert!(
            row.report_uri
                .ends_with(&format!("{}/{}/report.json", report.pair, report.run_id))
        );
        assert_eq!(
            row.drift.is_some(),
            report.drift.as_ref().is_some_and(|d| d.detected)
        );
    }
}

fn open_count(root: &Path) -> u64 {
    let o = bin()
        .arg("dashboard")
        .arg("--out")
        .arg(root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    // `dashboard: <index> (1,234 open findings)`
    text.lines()
        .filter(|l| l.starts_with("dashboard: "))
        .find_map(|l| l.rsplit_once(" (")?.1.split_once(" open finding"))
        .unwrap_or_else(|| panic!("no open count in {text}"))
        .0
        .replace(',', "")
        .parse()
        .unwrap()
}

fn resolve(root: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .arg("resolve")
        .args(args)
        .args(["--by", "dana", "--note", "reloaded from the source extract"])
        .arg("--out")
        .arg(root)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn ledger_resolution_and_drift_over_changing_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    let root = out.to_str().unwrap();
    sample(&dir.join("a"), 1, 0.0);
    sample(&dir.join("b"), 2, 0.002);
    let config = two_pair_config(dir);

    let (_, run1) = run_cli(&config, &out);
    let (_, run2) = run_cli(&config, &out);
    // Day 3: alpha turns unclean; beta's data changes but stays within its band.
    sample(&dir.join("a"), 3, 0.002);
    sample(&dir.join("b"), 4, 0.002);
    let (code3, run3) = run_cli(&config, &out);
    assert_eq!(code3, 1, "alpha and beta fail their thresholds");

    // The ledger holds one object per run and rows that match the reports.
    let ledger = read_ledger(&Storage::local_only(), root, &Default::default())
        .await
        .unwrap();
    assert!(ledger.problems.is_empty(), "{:?}", ledger.problems);
    let rows = ledger_rows(&Storage::local_only(), root).await;
    let all: Vec<&Report> = run1.iter().chain(&run2).chain(&run3).collect();
    assert_eq!(
        rows.len(),
        all.iter().map(|r| r.partitions.len()).sum::<usize>()
    );
    for r in &all {
        assert_rows_match(&rows, r);
    }
    // The read holds a summary per pair run and the rows of each pair's latest only.
    assert_eq!(ledger.runs.len(), all.len());
    assert_eq!(
        ledger.rows_held(),
        run3.iter().map(|r| r.partitions.len()).sum::<usize>()
    );
    for r in &run3 {
        let latest = ledger.runs.iter().rev().find(|l| l.pair == r.pair).unwrap();
        assert_eq!(latest.run_id, r.run_id);
        assert_rows_match(&latest.partitions, r);
    }
    let objects: Vec<_> = walk(&out.join("ledger"));
    assert_eq!(objects.len(), 3, "{objects:?}");
    for r in &run3 {
        let key = format!(
            "ledger/run_date={}/{}.parquet",
            &r.started_at[..10],
            r.run_id
        );
        assert!(out.join(&key).is_file(), "{key}");
    }

    // Drift: none on the first run (no baseline), alpha drifts on day 3, beta does not.
    assert!(
        run1.iter()
            .all(|r| r.drift.as_ref().unwrap().baseline_runs == 0)
    );
    let alpha = run3.iter().find(|r| r.pair == "alpha").unwrap();
    let beta = run3.iter().find(|r| r.pair == "beta").unwrap();
    let ad = alpha.drift.as_ref().unwrap();
    assert!(ad.detected, "{ad:?}");
    assert_eq!(ad.baseline_runs, 2);
    assert!(
        ad.reasons[0].contains("clean for the last 2 runs"),
        "{ad:?}"
    );
    assert!(alpha.reasons.iter().any(|r| r.starts_with("DRIFT:")));
    let bd = beta.drift.as_ref().unwrap();
    assert!(!bd.detected, "beta stays within its band: {bd:?}");
    assert_eq!(bd.baseline_runs, 2);
    assert!(bd.baseline_finding_rate > 0.0);
    assert_eq!(beta.status, Status::Fail);

    // Open findings = the latest run of each pair.
    let findings = |r: &Report| r.totals.findings();
    let open = open_count(&out);
    assert_eq!(open, findings(alpha) + findings(beta));

    // Resolving changes the open count and never rewrites history.
    let before = snapshot(&out.join("ledger"));
    let before_res = snapshot(&out.join("resolutions"));
    let o = resolve(&out, &["--pair", "beta"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(open_count(&out), findings(alpha));
    let first_part = &alpha.partitions[0];
    let o = resolve(
        &out,
        &[
            "--pair",
            "alpha",
            "--run",
            &alpha.run_id,
            "--partition",
            &first_part.partition,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        open_count(&out),
        findings(alpha) - first_part.totals.findings()
    );
    assert_eq!(
        snapshot(&out.join("ledger")),
        before,
        "ledger objects rewritten"
    );
    let after_res = snapshot(&out.join("resolutions"));
    assert_eq!(after_res.len(), before_res.len() + 2);
    for (k, v) in &before_res {
        assert_eq!(after_res.get(k), Some(v));
    }
    let record: glue_recon::resolution::Resolution =
        serde_json::from_slice(&after_res.values().next().unwrap().0).unwrap();
    assert!(!record.open_since.is_empty() && record.time_to_resolve_seconds >= 0);
    // beta had findings in every run: its streak starts at run 1.
    let beta_record = after_res
        .values()
        .map(|(b, _)| serde_json::from_slice::<glue_recon::resolution::Resolution>(b).unwrap())
        .find(|r| r.pair == "beta")
        .unwrap();
    assert_eq!(beta_record.open_since, run1[1].started_at);
    assert_eq!(beta_record.run_id, beta.run_id);

    // A resolve for a pair or run that does not exist is a clear error.
    let o = resolve(&out, &["--pair", "gamma"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("no pair `gamma`") && err.contains("alpha"),
        "{err}"
    );
    let o = resolve(
        &out,
        &["--pair", "alpha", "--run", "20990101T000000Z-ffffffff"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("has no run `20990101T000000Z-ffffffff`"),
        "{err}"
    );
    assert!(err.contains(&alpha.run_id), "{err}");
}

fn walk(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn unreadable_ledger_objects_are_reported_and_runs_still_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    sample(&dir.join("a"), 5, 0.0);
    sample(&dir.join("b"), 6, 0.0);
    let config = two_pair_config(dir);
    run_cli(&config, &out);

    // A truncated object and one of a future ledger version.
    let bad = out.join("ledger/run_date=2024-01-01/broken.parquet");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, b"PAR1 not really").unwrap();
    let future = out.join("ledger/run_date=2024-01-02/future.parquet");
    std::fs::create_dir_all(future.parent().unwrap()).unwrap();
    std::fs::write(&future, future_version_object()).unwrap();

    let o = bin()
        .arg("dashboard")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("broken.parquet"), "{err}");
    assert!(err.contains("ledger schema version 99"), "{err}");
    let html = std::fs::read_to_string(out.join("dashboard/index.html")).unwrap();
    assert!(html.contains("id=\"problems\"") && html.contains("future.parquet"));

    let (code, reports) = run_cli(&config, &out);
    assert_eq!(code, 0);
    let ledger = read_ledger(
        &Storage::local_only(),
        out.to_str().unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(ledger.problems.len(), 2);
    for r in &reports {
        let latest = ledger.runs.iter().rev().find(|l| l.pair == r.pair).unwrap();
        assert_rows_match(&latest.partitions, r);
    }
}

/// A Parquet object that says it is ledger version 99.
fn future_version_object() -> Vec<u8> {
    use std::sync::Arc;

    use arrow::array::{Int32Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;

    let schema = Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("ledger_version", arrow::datatypes::DataType::Int32, false),
    ]));
    let batch =
        RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![99]))]).unwrap();
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![KeyValue::new(
            glue_recon::ledger::VERSION_KEY.to_string(),
            "99".to_string(),
        )]))
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_run_writes_the_same_ledger_key() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    let root = out.to_str().unwrap();
    sample(&dir.join("a"), 7, 0.001);
    sample(&dir.join("b"), 8, 0.0);
    let config = two_pair_config(dir);
    let (_, reports) = run_cli(&config, &out);
    let locations = locations_of(root, &reports);
    let before = snapshot(&out.join("ledger"));
    assert_eq!(before.len(), 1);
    let storage = Storage::local_only();
    let uri = append_run(&storage, root, &reports, &locations)
        .await
        .unwrap();
    let after = snapshot(&out.join("ledger"));
    assert_eq!(after.len(), 1, "a retry must not add an object");
    assert_eq!(after.keys().next().unwrap(), &uri);
    assert_eq!(
        after.values().next().unwrap().0,
        before.values().next().unwrap().0,
        "same rows, same bytes"
    );
}

/// The report locations `run_cli`'s reports were written to under `root`.
fn locations_of(root: &str, reports: &[Report]) -> Vec<ReportLocation> {
    reports
        .iter()
        .map(|r| ReportLocation::of(report_dir(root, &r.pair, &r.run_id), &r.artifacts))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refreshed_ledger_read_equals_a_new_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    let root = out.to_str().unwrap();
    sample(&dir.join("a"), 9, 0.001);
    sample(&dir.join("b"), 10, 0.0);
    let config = two_pair_config(dir);
    let (_, run1) = run_cli(&config, &out);
    let (_, run2) = run_cli(&config, &out);
    let storage = Storage::local_only();
    let known = read_ledger(&storage, root, &Default::default())
        .await
        .unwrap();
    assert_eq!(known.objects.len(), 2);

    // Since the read: a run is added, and a copy of the second run's object under
    // another name; a refresh reads both.
    let (_, run3) = run_cli(&config, &out);
    let object = |r: &Report| {
        out.join(format!(
            "ledger/run_date={}/{}.parquet",
            &r.started_at[..10],
            r.run_id
        ))
    };
    let copy = out.join("ledger/run_date=2024-01-01/copy.parquet");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(object(&run2[0]), &copy).unwrap();
    let known = refresh_ledger(&storage, root, known, None, &Default::default())
        .await
        .unwrap();
    assert_eq!(known.objects.len(), 4);
    // Then the first run's object is deleted, the second run's is written again with
    // other counts (its copy keeps the old ones), and a broken object appears.
    std::fs::remove_file(object(&run1[0])).unwrap();
    let mut changed = run2.clone();
    for r in &mut changed {
        for p in &mut r.partitions {
            p.totals.source_rows += 1;
        }
    }
    let rewritten = append_run(&storage, root, &changed, &locations_of(root, &changed))
        .await
        .unwrap();
    let broken = out.join("ledger/run_date=2024-01-01/broken.parquet");
    std::fs::write(&broken, b"PAR1 not really").unwrap();

    let fresh = read_ledger(&storage, root, &Default::default())
        .await
        .unwrap();
    let refreshed = refresh_ledger(&storage, root, known, Some(&rewritten), &Default::default())
        .await
        .unwrap();
    assert_eq!(refreshed.runs, fresh.runs);
    assert_eq!(refreshed.problems, fresh.problems);
    assert_eq!(refreshed.objects, fresh.objects);
    // What the runs say: run 1 gone, run 2 rewritten, run 3 and the broken object new.
    assert!(!refreshed.runs.iter().any(|r| r.run_id == run1[0].run_id));
    // Run 2 sums its rewritten rows and its copy's: a refresh that forgot the run
    // must read the copy again too.
    for r in &run2 {
        let summed = refreshed
            .runs
            .iter()
            .find(|l| l.run_id == r.run_id && l.pair == r.pair)
            .unwrap();
        let partitions = r.partitions.len() as u64;
        assert_eq!(
            summed.source_rows,
            2 * r.totals.source_rows + partitions,
            "{summed:?}"
        );
    }
    for r in &run3 {
        let latest = refreshed
            .runs
            .iter()
            .rev()
            .find(|l| l.pair == r.pair)
            .unwrap();
        assert_rows_match(&latest.partitions, r);
    }
    assert_eq!(refreshed.problems.len(), 1);
    assert!(refreshed.problems[0].uri.ends_with("broken.parquet"));

    // Known objects are not read again: spoiling one after it was read changes
    // nothing in the next refresh.
    std::fs::write(object(&run3[0]), b"PAR1 spoiled").unwrap();
    let again = refresh_ledger(&storage, root, refreshed.clone(), None, &Default::default())
        .await
        .unwrap();
    assert_eq!(again.runs, refreshed.runs);
    assert_eq!(again.problems, refreshed.problems);
}
