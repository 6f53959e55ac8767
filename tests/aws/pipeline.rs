//! lookup -> hash -> merge over moto, through the library functions the Lambda
//! handlers call (the handlers add only event parsing and error conversion), with
//! the same counts as a local run of the same data.

use glue_recon::config::Config;
use glue_recon::mask::MaskKey;
use glue_recon::pipeline::{
    LookupOutput, LookupRequest, MergeOutput, OnDemandRequest, Pipeline, load_config, parse_item,
    parse_lookup_output,
};
use glue_recon::runner::{RunOptions, run_pair};
use serde_json::Value;

use super::moto;

/// A pipeline on moto over `bucket`, with the masking key read from a Secrets Manager
/// secret holding [`moto::MASK_SECRET`], as recon-hash reads the template's.
pub async fn pipeline(bucket: &str) -> Pipeline {
    let conf = moto::sdk_config().await;
    let mut p = Pipeline::new(
        glue_recon::aws::storage(&conf),
        Some(glue_recon::aws::glue::catalog(&conf)),
        bucket,
    );
    let secret = moto::mask_secret(&conf).await;
    p.mask_key = Some(
        glue_recon::aws::secrets::mask_key(&conf, &secret)
            .await
            .expect("the masking key from Secrets Manager"),
    );
    p
}

/// Every manifest item of a lookup through hash (as the Distributed Map would),
/// except those whose item id is in `skip`.
pub(super) async fn hash_all(p: &Pipeline, out: &LookupOutput, skip: &[String]) -> Vec<Value> {
    let conf = moto::sdk_config().await;
    let manifest: Vec<Value> =
        serde_json::from_slice(&moto::get(&moto::s3(&conf), &out.bucket, &out.manifest_key).await)
            .unwrap();
    assert_eq!(manifest.len(), out.item_count);
    let mut results = Vec::new();
    for raw in manifest {
        let item = parse_item(raw.clone()).expect("manifest item parses");
        if skip.contains(&item.item.item_id) {
            continue;
        }
        let done = p.hash(&item).await.expect("hash");
        assert_eq!(done.error, None, "{item:?}");
        results.push(serde_json::to_value(done).unwrap());
    }
    results
}

pub(super) async fn merge(p: &Pipeline, out: &LookupOutput) -> MergeOutput {
    // The state machine passes the lookup output on as JSON.
    let event = serde_json::to_value(out).unwrap();
    p.merge(&parse_lookup_output(event).unwrap())
        .await
        .expect("merge")
}

#[tokio::test(flavor = "multi_thread")]
async fn lookup_hash_merge_on_moto_match_a_local_run() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    moto::sample(dir.path());
    let bucket = moto::unique("gr-pipe");
    let db = moto::unique("gr_pipe").replace('-', "_");
    // `status` masked too: its values differ, so findings show its tokens.
    let mask_status =
        |text: &str| text.replace(r#"masked = ["email"]"#, r#"masked = ["email", "status"]"#);
    let config_text = mask_status(&moto::sample_on_aws(&conf, dir.path(), &bucket, &db).await);
    let s3 = moto::s3(&conf);
    moto::put(&s3, &bucket, "config/recon.toml", config_text.into_bytes()).await;
    let local_toml = dir.path().join("recon.toml");
    let masked = mask_status(&std::fs::read_to_string(&local_toml).unwrap());
    assert!(masked.contains(r#""status"]"#), "{masked}");
    std::fs::write(&local_toml, masked).unwrap();
    let local_config = Config::from_file(&local_toml).unwrap();
    // The same key as the deployment's secret: the same tokens.
    let local_opts = RunOptions {
        mask_key: Some(MaskKey::new(moto::MASK_SECRET.as_bytes(), "test").unwrap()),
        ..RunOptions::local()
    };
    let local = run_pair(&local_config.pairs[0], &local_config.defaults, &local_opts)
        .await
        .unwrap();

    let mut p = pipeline(&bucket).await;
    // As deployed with LedgerDatabaseName=analytics_recon (RECON_LEDGER_DATABASE).
    p.athena_database = "analytics_recon".into();
    let config = load_config(&p.storage, &format!("s3://{bucket}/config/recon.toml"))
        .await
        .unwrap();
    let request = LookupRequest::parse(serde_json::json!({"pairs": ["orders"]})).unwrap();
    let out = p.lookup(&config, &request).await.expect("lookup");
    assert_eq!(out.pairs, vec!["orders".to_string()]);
    assert_eq!(out.trigger, "on-demand");
    assert_eq!(
        out.manifest_key,
        format!("runs/{}/manifest.json", out.run_id)
    );
    assert_eq!(out.item_count, local.partitions.len());

    let hashed = hash_all(&p, &out, &[]).await;
    for h in &hashed {
        let key = h["partial_key"].as_str().unwrap();
        assert!(!moto::get(&s3, &bucket, key).await.is_empty(), "{key}");
    }
    let merged = merge(&p, &out).await;
    assert_eq!(merged.status, local.status);
    assert!(merged.complete);
    let report_key = format!("reports/orders/{}/report.json", out.run_id);
    assert_eq!(merged.report_uri, format!("s3://{bucket}/{report_key}"));
    let report: glue_recon::report::Report =
        serde_json::from_slice(&moto::get(&s3, &bucket, &report_key).await).unwrap();
    assert_eq!(
        report.totals, local.totals,
        "S3/Glue totals differ from local"
    );
    // Masked values show the tokens of the secret's key, the same as locally with it.
    assert_eq!(report.samples, local.samples);
    let tokens: Vec<&str> = report.samples[&glue_recon::partial::FindingKind::Mismatch]
        .iter()
        .flat_map(|s| &s.diffs)
        .filter(|d| d.column == "status")
        .flat_map(|d| [d.source.as_deref(), d.target.as_deref()])
        .flatten()
        .collect();
    assert!(
        !tokens.is_empty()
            && tokens
                .iter()
                .all(|t| t.starts_with("hmac:") && t.len() == 17),
        "{tokens:?}"
    );
    assert_eq!(report.trigger, "on-demand");
    assert_eq!(merged.alert.attributes.status, local.status.to_string());
    assert_eq!(merged.alert.attributes.pair, r#"["orders"]"#);
    assert!(merged.alert.message.contains(&merged.html_uri));
    // The run's metrics: one Embedded Metric Format line for the pair, one for the run.
    assert_eq!(merged.metrics.len(), 2, "{:?}", merged.metrics);
    let pair: Value = serde_json::from_str(&merged.metrics[0]).unwrap();
    assert_eq!(pair["pair"], "orders");
    assert_eq!(pair["status"], local.status.to_string());
    assert_eq!(pair["SourceRows"], local.totals.source_rows as f64);
    assert_eq!(pair["Mismatch"], local.totals.mismatch as f64);
    assert_eq!(
        pair["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
        serde_json::json!([["pair", "status"]])
    );
    let run: Value = serde_json::from_str(&merged.metrics[1]).unwrap();
    assert_eq!(run["Pairs"], 1.0);
    // The offending keys' Athena statements name the deployed ledger database.
    assert!(
        merged
            .alert
            .message
            .contains("CREATE EXTERNAL TABLE IF NOT EXISTS analytics_recon.diffs_orders_")
            && !merged.alert.message.contains("glue_recon."),
        "{}",
        merged.alert.message
    );
    // The merge recorded the run: one ledger object and the regenerated dashboard.
    let ledger_key = format!(
        "ledger/run_date={}/{}.parquet",
        &report.started_at[..10],
        out.run_id
    );
    assert!(
        !moto::get(&s3, &bucket, &ledger_key).await.is_empty(),
        "{ledger_key}"
    );
    let dashboard = moto::get(&s3, &bucket, "dashboard/index.html").await;
    assert!(String::from_utf8_lossy(&dashboard).contains("orders"));
    assert!(merged.alert.message.contains("dashboard/index.html"));
    let merged_json = serde_json::to_value(&merged).unwrap();
    for field in [
        "run_id",
        "status",
        "complete",
        "report_uri",
        "html_uri",
        "alert",
    ] {
        assert!(
            merged_json.get(field).is_some(),
            "merge output lacks {field}"
        );
    }

    // A partition whose hash step never finished: reported, the run incomplete.
    let items: Vec<Value> =
        serde_json::from_slice(&moto::get(&s3, &bucket, &out.manifest_key).await).unwrap();
    let lost = items[0]["item_id"].as_str().unwrap().to_string();
    s3.delete_object()
        .bucket(&bucket)
        .key(format!("runs/{}/partials/{lost}.json", out.run_id))
        .send()
        .await
        .unwrap();
    let merged = merge(&p, &out).await;
    assert!(!merged.complete);
    assert_eq!(merged.status.to_string(), "FAIL");
    let report: glue_recon::report::Report =
        serde_json::from_slice(&moto::get(&s3, &bucket, &report_key).await).unwrap();
    let failed: Vec<_> = report
        .partitions
        .iter()
        .filter(|p| p.error.is_some())
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].item_id, lost);
    assert!(
        merged.alert.message.contains("not reconciled"),
        "{}",
        merged.alert.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_glue_job_that_no_pair_lists_is_nothing_to_do() {
    let conf = moto::sdk_config().await;
    let bucket = moto::unique("gr-nojob");
    moto::bucket(&moto::s3(&conf), &bucket).await;
    let p = pipeline(&bucket).await;
    let config = Config::parse(
        "[[pair]]\nname = \"orders\"\nsource = \"s3://x/a/\"\ntarget = \"s3://x/b/\"\nkey = [\"id\"]\nglue_jobs = [\"orders-etl\"]\n",
        "test",
    )
    .unwrap();
    let event: Value = serde_json::from_str(include_str!(
        "../../functions/trigger/fixtures/glue-job-succeeded.json"
    ))
    .unwrap();
    let request = LookupRequest::parse(event).unwrap();
    let out = p.lookup(&config, &request).await.unwrap();
    assert_eq!(out.item_count, 0);
    assert!(out.pairs.is_empty());
    assert!(
        out.trigger.starts_with("glue:load-orders:jr_"),
        "{}",
        out.trigger
    );
    assert_eq!(
        LookupRequest::parse(serde_json::to_value(OnDemandRequest::default()).unwrap()).unwrap(),
        LookupRequest::OnDemand(OnDemandRequest::default())
    );
}
