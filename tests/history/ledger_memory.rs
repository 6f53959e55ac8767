//! The ledger read holds a summary per pair run and the partition rows of each pair's
//! latest run only: checked against a model built from every row, over a history of
//! many runs of many partitions, accepted resolutions, and refreshes that change them.

use std::collections::BTreeMap;

use glue_recon::ledger::{
    LedgerRead, LedgerRow, LedgerRun, read_ledger, refresh_ledger, write_run_rows,
};
use glue_recon::resolution::{Resolution, ResolveRequest, accepted, prepare};
use glue_recon::storage::Storage;

use super::ledger_rows;

const RUNS: usize = 40;
const PAIRS: [&str; 2] = ["orders", "refunds"];
const PARTITIONS: usize = 150;

fn run_id(i: usize) -> String {
    format!("run-{i:03}")
}

/// Run `i` starts on day `i / 3` (several runs a day, so keys share a date folder).
fn run_time(i: usize) -> String {
    format!("2026-03-{:02}T{:02}:00:00Z", 1 + i / 3, 1 + (i % 3) * 7)
}

/// The rows of run `i`: findings in a pattern that moves from run to run, a failed
/// partition now and then, and one run (13) where every partition of `orders` has
/// findings (a broken target).
fn rows_of_run(i: usize) -> Vec<LedgerRow> {
    let mut rows = Vec::new();
    for pair in PAIRS {
        for p in 0..PARTITIONS {
            let broken = i == 13 && pair == "orders";
            let dirty = broken || (i * 7 + p * 3).is_multiple_of(17);
            let failed = (i + p).is_multiple_of(97);
            rows.push(LedgerRow {
                run_id: run_id(i),
                run_time: run_time(i),
                trigger: "on-demand".into(),
                pair: pair.into(),
                partition: format!("dt=2026-01-{p:03}"),
                partition_status: if failed { "failed" } else { "ok" }.into(),
                source_rows: 1_000 + p as u64,
                target_rows: 1_000 + p as u64 - u64::from(dirty),
                missing_in_target: u64::from(dirty),
                extra_in_target: 0,
                mismatch: if dirty { (i % 5) as u64 } else { 0 },
                duplicate_key: 0,
                null_key: 0,
                status: if dirty { "FAIL" } else { "PASS" }.into(),
                complete: !failed,
                drift: i.is_multiple_of(11).then(|| "findings 3 vs 0".to_string()),
                report_uri: format!("/reports/{pair}/{}/report.json", run_id(i)),
                engine_version: "test".into(),
                hash_encoding_version: 1,
                ledger_version: 1,
            });
        }
    }
    rows
}

fn resolution(pair: &str, run: usize, partitions: &[String], accepted: bool) -> Resolution {
    Resolution {
        schema_version: 1,
        pair: pair.into(),
        run_id: run_id(run),
        partitions: partitions.to_vec(),
        resolved_at: "2026-04-01T00:00:00Z".into(),
        resolved_by: "dana".into(),
        note: "known".into(),
        findings: 1,
        open_since: run_time(run),
        time_to_resolve_seconds: 0,
        accepted,
    }
}

/// What a read must hold, from every row: runs summed, findings covered by accepted
/// resolutions counted, partition rows of each pair's latest run only.
fn model(rows: &[LedgerRow], resolutions: &[Resolution]) -> Vec<LedgerRun> {
    let mut runs: BTreeMap<(String, String, String), (LedgerRun, Vec<LedgerRow>)> = BTreeMap::new();
    for r in rows {
        let (run, parts) = runs
            .entry((r.run_time.clone(), r.run_id.clone(), r.pair.clone()))
            .or_insert_with(|| {
                let run = LedgerRun {
                    run_id: r.run_id.clone(),
                    run_time: r.run_time.clone(),
                    pair: r.pair.clone(),
                    status: r.status.clone(),
                    complete: r.complete,
                    drift: r.drift.clone(),
                    report_uri: r.report_uri.clone(),
                    source_rows: 0,
                    target_rows: 0,
                    findings: 0,
                    failed_partitions: 0,
                    partitions: Vec::new(),
                    accepted_findings: 0,
                };
                (run, Vec::new())
            });
        run.source_rows += r.source_rows;
        run.target_rows += r.target_rows;
        run.findings += r.findings();
        run.failed_partitions += u64::from(r.failed());
        if resolutions.iter().any(|s| s.accepted && s.covers(r)) {
            run.accepted_findings += r.findings();
        }
        parts.push(r.clone());
    }
    let mut latest: BTreeMap<String, (String, String, String)> = BTreeMap::new();
    for k in runs.keys() {
        latest.insert(k.2.clone(), k.clone());
    }
    runs.into_iter()
        .map(|(k, (mut run, mut parts))| {
            if latest[&k.2] == k {
                parts.sort_by(|a, b| a.partition.cmp(&b.partition));
                run.partitions = parts;
            }
            run
        })
        .collect()
}

fn find<'a>(read: &'a LedgerRead, pair: &str, run: usize) -> &'a LedgerRun {
    read.runs
        .iter()
        .find(|r| r.pair == pair && r.run_id == run_id(run))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_history_is_read_as_run_summaries_equal_to_every_row_grouped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("out");
    let root = root.to_str().unwrap();
    let storage = Storage::local_only();
    for i in 0..RUNS {
        let rows = rows_of_run(i);
        let date = &run_time(i)[..10];
        write_run_rows(&storage, root, date, &run_id(i), &rows)
            .await
            .unwrap();
    }
    let dirty_13: Vec<String> = (0..PARTITIONS)
        .map(|p| format!("dt=2026-01-{p:03}"))
        .collect();
    let resolutions = vec![
        // The broken run accepted partition by partition, in two records.
        resolution("orders", 13, &dirty_13[..70], true),
        resolution("orders", 13, &dirty_13[70..], true),
        // A whole run accepted, and one only fixed (not accepted).
        resolution("refunds", 22, &[], true),
        resolution("orders", 22, &[], false),
        // Part of a run accepted: its run is not accepted.
        resolution("orders", 5, &dirty_13[..1], true),
    ];

    let rows = ledger_rows(&storage, root).await;
    assert_eq!(rows.len(), RUNS * PAIRS.len() * PARTITIONS);
    let read = read_ledger(&storage, root, &accepted(&resolutions))
        .await
        .unwrap();
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    assert_eq!(read.runs, model(&rows, &resolutions));
    assert_eq!(read.runs.len(), RUNS * PAIRS.len());
    assert_eq!(read.rows_held(), PAIRS.len() * PARTITIONS);
    assert!(find(&read, "orders", 13).accepted());
    assert!(find(&read, "orders", 13).findings >= PARTITIONS as u64);
    assert_eq!(
        find(&read, "refunds", 22).accepted(),
        find(&read, "refunds", 22).findings > 0
    );
    assert!(!find(&read, "orders", 22).accepted());
    assert!(!find(&read, "orders", 5).accepted());

    // An older run's rows are read back on demand, as written.
    let older = find(&read, "orders", 13);
    assert!(older.partitions.is_empty());
    let mut written: Vec<LedgerRow> = rows_of_run(13)
        .into_iter()
        .filter(|r| r.pair == "orders")
        .collect();
    written.sort_by(|a, b| a.partition.cmp(&b.partition));
    assert_eq!(read.partitions_of(&storage, older).await.unwrap(), written);

    // Resolving partitions of an older run: the streak of runs dirty in those
    // partitions is walked back through their objects.
    let partition = "dt=2026-01-006".to_string();
    let dirty_at = |i: usize| {
        rows_of_run(i).iter().any(|r| {
            r.pair == "orders"
                && r.partition == partition
                && r.findings() + u64::from(r.failed()) > 0
        })
    };
    let target = (1..RUNS - 1)
        .find(|&i| dirty_at(i) && dirty_at(i - 1))
        .expect("a streak of two dirty runs");
    let mut start = target;
    while start > 0 && dirty_at(start - 1) {
        start -= 1;
    }
    let req = ResolveRequest {
        pair: "orders".into(),
        run_id: Some(run_id(target)),
        partitions: vec![partition.clone()],
        by: "dana".into(),
        note: "reloaded".into(),
        accepted: false,
    };
    let record = prepare(&storage, &read, &req, "2026-04-02T00:00:00Z")
        .await
        .unwrap();
    assert_eq!(record.open_since, run_time(start));
    assert_eq!(record.run_id, run_id(target));

    // A new accepted resolution: the refresh re-counts that run, as a new read does.
    let mut more = resolutions.clone();
    more.push(resolution("orders", 30, &[], true));
    let refreshed = refresh_ledger(&storage, root, read, None, &accepted(&more))
        .await
        .unwrap();
    assert_eq!(refreshed.runs, model(&rows, &more));
    assert_eq!(
        find(&refreshed, "orders", 30).accepted(),
        find(&refreshed, "orders", 30).findings > 0
    );

    // The latest run's object is deleted: the run before it becomes the pair's latest
    // and its rows are read back.
    let last = RUNS - 1;
    std::fs::remove_file(tmp.path().join(format!(
        "out/ledger/run_date={}/{}.parquet",
        &run_time(last)[..10],
        run_id(last)
    )))
    .unwrap();
    let rows = ledger_rows(&storage, root).await;
    let after = refresh_ledger(&storage, root, refreshed, None, &accepted(&more))
        .await
        .unwrap();
    assert_eq!(after.runs, model(&rows, &more));
    assert_eq!(after.rows_held(), PAIRS.len() * PARTITIONS);
    assert_eq!(
        after.runs.last().unwrap().run_id,
        run_id(last - 1),
        "the new latest"
    );
    let fresh = read_ledger(&storage, root, &accepted(&more)).await.unwrap();
    assert_eq!(fresh.runs, after.runs);
    assert_eq!(fresh.objects, after.objects);
}
