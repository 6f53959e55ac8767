//! The ledger, drift and dashboard with the reports on S3 (a moto server; scripts/test.sh
//! sets GLUE_RECON_MOTO_ENDPOINT). Without the endpoint the test fails.

use std::sync::Arc;

use glue_recon::aws::s3::S3Store;
use glue_recon::config::Config;
use glue_recon::diffrows::write_diff_rows;
use glue_recon::ledger::read_ledger;
use glue_recon::report::RunMeta;
use glue_recon::run_record::{LedgerWrites, RunRecord};
use glue_recon::runner::{RunOptions, run_pair_full};
use glue_recon::storage::Storage;

use super::ledger::assert_rows_match;
use super::{sample, two_pair_config};

#[tokio::test(flavor = "multi_thread")]
async fn ledger_and_dashboard_on_moto_s3() {
    let endpoint = std::env::var("GLUE_RECON_MOTO_ENDPOINT")
        .expect("GLUE_RECON_MOTO_ENDPOINT is not set: run the tests with scripts/test.sh");
    let conf = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(&endpoint)
        .region(aws_config::Region::new("us-east-1"))
        .load()
        .await;
    let s3 = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&conf)
            .force_path_style(true)
            .build(),
    );
    let bucket = format!("history-{}", std::process::id());
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let storage = Storage::with_s3(Arc::new(S3Store::from_conf(&conf)));
    let root = format!("s3://{bucket}/recon");

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(&dir.join("a"), 21, 0.0);
    sample(&dir.join("b"), 22, 0.002);
    let config = Config::from_file(&two_pair_config(dir)).unwrap();

    let mut all = Vec::new();
    for day in 0..3 {
        if day == 2 {
            sample(&dir.join("a"), 23, 0.002);
        }
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let mut opts = RunOptions::local();
        opts.storage = storage.clone();
        let meta = RunMeta {
            run_id: opts.run_id.clone(),
            trigger: opts.trigger.clone(),
            started_at: opts.started_at(),
        };
        // The merge's way: the ledger object is written once, at the end.
        let mut record = RunRecord::start(&storage, &root, &root, meta, LedgerWrites::AtTheEnd);
        let problems = record.history_problems().await.unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        for pair in &config.pairs {
            let run = run_pair_full(pair, &config.defaults, &opts).await.unwrap();
            let diff_rows = write_diff_rows(&run.report.key, &run.partials).unwrap();
            record.report(&config, run.report, diff_rows).await.unwrap();
        }
        let finished = record.finish().await.unwrap();
        let ledger_uri = finished.ledger_uri.unwrap();
        assert!(ledger_uri.starts_with(&format!("{root}/ledger/run_date=")));
        assert_eq!(
            finished.dashboard.unwrap().index,
            format!("{root}/dashboard/index.html")
        );
        all.extend(finished.reports.into_iter().map(|(r, _)| r));
    }

    let ledger = read_ledger(&storage, &root, &Default::default())
        .await
        .unwrap();
    assert!(ledger.problems.is_empty(), "{:?}", ledger.problems);
    assert_eq!(ledger.runs.len(), all.len());
    let rows = super::ledger_rows(&storage, &root).await;
    for r in &all {
        assert_rows_match(&rows, r);
    }
    let alpha = all.iter().rev().find(|r| r.pair == "alpha").unwrap();
    assert!(alpha.drift.as_ref().unwrap().detected);
    let beta = all.iter().rev().find(|r| r.pair == "beta").unwrap();
    assert!(!beta.drift.as_ref().unwrap().detected);

    // The dashboard on S3 links relatively to the reports beside it.
    let html = storage
        .for_uri(&root)
        .unwrap()
        .get(&format!("{root}/dashboard/index.html"))
        .await
        .unwrap();
    let html = String::from_utf8_lossy(&html);
    assert!(html.contains(&format!("href=\"../alpha/{}/report.html\"", alpha.run_id)));
    assert!(!html.contains("s3://"), "links must be relative");

    // `glue-recon dashboard` regenerates it on S3 on demand.
    let index = format!("{root}/dashboard/index.html");
    storage
        .for_uri(&root)
        .unwrap()
        .put(&index, bytes::Bytes::from_static(b"stale"))
        .await
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_glue-recon"))
        .args(["dashboard", "--out", &root])
        .env("AWS_ENDPOINT_URL", &endpoint)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let regenerated = storage.for_uri(&root).unwrap().get(&index).await.unwrap();
    assert!(String::from_utf8_lossy(&regenerated).contains("alpha"));
}
