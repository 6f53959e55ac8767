//! Root-cause hints through the merge on moto: the planted table of
//! `engine::hints` on S3, reconciled by lookup -> hash (one partial per partition)
//! -> merge with a sample limit of 2, so the hints can only come from every finding
//! of the partials, not from the samples the merge keeps. report.json, the alert and
//! the engineer dashboard show them, and they equal a local run's.

use glue_recon::config::Config;
use glue_recon::html::esc;
use glue_recon::pipeline::{LookupRequest, load_config};
use glue_recon::runner::{RunOptions, run_pair};

use super::moto;
use super::pipeline::{hash_all, merge, pipeline};
use crate::engine::hints::{check_planted_hints, plant_patterns};

fn config(source: &str, target: &str) -> String {
    format!(
        "[defaults]\nsample_limit = 2\n\n[[pair]]\nname = \"planted\"\nsource = '{source}'\ntarget = '{target}'\nkey = [\"id\"]\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_merge_finds_the_planted_hints_in_every_finding_of_the_partials() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    let planted = plant_patterns(dir.path());
    let bucket = moto::unique("gr-hints");
    let s3 = moto::s3(&conf);
    moto::bucket(&s3, &bucket).await;
    for side in ["source", "target"] {
        moto::upload_dir(
            &s3,
            &dir.path().join(side),
            &bucket,
            &format!("data/{side}"),
        )
        .await;
    }
    let text = config(
        &format!("s3://{bucket}/data/source"),
        &format!("s3://{bucket}/data/target"),
    );
    moto::put(&s3, &bucket, "config/recon.toml", text.into_bytes()).await;

    let p = pipeline(&bucket).await;
    let config_uri = format!("s3://{bucket}/config/recon.toml");
    let cfg = load_config(&p.storage, &config_uri).await.unwrap();
    let request = LookupRequest::parse(serde_json::json!({"pairs": ["planted"]})).unwrap();
    let out = p.lookup(&cfg, &request).await.expect("lookup");
    assert_eq!(out.item_count, 18, "one work item per partition");
    hash_all(&p, &out, &[]).await;
    let merged = merge(&p, &out).await;

    let report_key = format!("reports/planted/{}/report.json", out.run_id);
    let report: glue_recon::report::Report =
        serde_json::from_slice(&moto::get(&s3, &bucket, &report_key).await).unwrap();
    assert!(report.samples.values().all(|s| s.len() <= 2));
    check_planted_hints(&report, &planted);

    let local_text = config(
        &dir.path().join("source").to_string_lossy(),
        &dir.path().join("target").to_string_lossy(),
    );
    let local_cfg = Config::parse(&local_text, "local").unwrap();
    let local = run_pair(
        &local_cfg.pairs[0],
        &local_cfg.defaults,
        &RunOptions::local(),
    )
    .await
    .unwrap();
    assert_eq!(report.hints, local.hints, "the merge and a local run agree");

    // The alert e-mail: the five largest, each with its suggestion.
    let message = &merged.alert.message;
    assert!(message.contains("likely causes:"), "{message}");
    for (i, h) in report.hints.iter().enumerate() {
        let line = format!("{} {}: {}", h.kind.as_str(), h.share_text(), h.summary);
        let suggestion = format!("-> {}", h.suggestion);
        let shown = message.contains(&line) && message.contains(&suggestion);
        assert_eq!(shown, i < 5, "hint {i} in the alert: {line}\n{message}");
    }
    // The engineer view of the dashboard the merge regenerated.
    let engineer = moto::get(&s3, &bucket, "dashboard/engineer.html").await;
    let engineer = String::from_utf8(engineer).unwrap();
    assert!(engineer.contains("Likely causes"), "{engineer}");
    for h in &report.hints {
        assert!(engineer.contains(&esc(&h.summary)), "{}", h.summary);
        assert!(engineer.contains(&esc(&h.suggestion)), "{}", h.suggestion);
    }
}
