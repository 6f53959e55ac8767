//! `catalog_status = true`: a run writes its verdict as parameters of the target's
//! Glue table (read back from moto), keeping the table's other parameters, columns
//! and location; a pair without the key leaves the table alone.

use std::collections::HashMap;

use glue_recon::aws::glue::GlueCatalog;
use glue_recon::catalog::{Catalog, record_statuses};
use glue_recon::config::Config;
use glue_recon::runner::{RunOptions, run_pair};

use super::moto;

/// The target table as moto holds it now.
async fn target(glue: &aws_sdk_glue::Client, db: &str) -> aws_sdk_glue::types::Table {
    let got = glue
        .get_table()
        .database_name(db)
        .name("target")
        .send()
        .await
        .expect("get table");
    got.table.expect("a table")
}

async fn parameters(glue: &aws_sdk_glue::Client, db: &str) -> HashMap<String, String> {
    target(glue, db).await.parameters.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pair_that_opts_in_writes_its_verdict_on_the_target_table() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    moto::sample(dir.path());
    let bucket = moto::unique("gr-status");
    let db = moto::unique("gr_status").replace('-', "_");
    let text = moto::sample_on_aws(&conf, dir.path(), &bucket, &db).await;
    let glue = aws_sdk_glue::Client::new(&conf);
    let before = target(&glue, &db).await;
    let storage = glue_recon::aws::storage(&conf);
    let catalog = GlueCatalog::new(glue.clone(), storage.clone());
    let opts = RunOptions {
        storage,
        catalog: Some(std::sync::Arc::new(catalog.clone())),
        mask_key: Some(glue_recon::mask::MaskKey::new(moto::MASK_SECRET.as_bytes(), "t").unwrap()),
        ..RunOptions::local()
    };

    // Without the key: nothing written.
    let config = Config::parse(&text, "aws.toml").unwrap();
    let report = run_pair(&config.pairs[0], &config.defaults, &opts)
        .await
        .unwrap();
    let pairs: Vec<_> = config.pairs.iter().collect();
    record_statuses(Some(&catalog as &dyn Catalog), &pairs, [&report])
        .await
        .unwrap();
    let params = parameters(&glue, &db).await;
    assert!(
        !params.keys().any(|k| k.starts_with("glue_recon.")),
        "{params:?}"
    );

    // With it: the verdict, the run id and when it finished.
    let opted = text.replace("key = [\"id\"]", "key = [\"id\"]\ncatalog_status = true");
    let config = Config::parse(&opted, "aws.toml").unwrap();
    assert!(config.pairs[0].catalog_status, "{opted}");
    let pairs: Vec<_> = config.pairs.iter().collect();
    record_statuses(Some(&catalog as &dyn Catalog), &pairs, [&report])
        .await
        .unwrap();
    let params = parameters(&glue, &db).await;
    assert_eq!(params["glue_recon.last_status"], report.status.to_string());
    assert_eq!(params["glue_recon.last_status"], "FAIL");
    assert_eq!(params["glue_recon.last_run_id"], report.run_id);
    assert_eq!(params["glue_recon.last_run_at"], report.finished_at);
    let after = target(&glue, &db).await;
    assert_eq!(after.storage_descriptor(), before.storage_descriptor());
    assert_eq!(after.partition_keys(), before.partition_keys());
    assert_eq!(after.table_type(), before.table_type());
    for (k, v) in before.parameters().cloned().unwrap_or_default() {
        assert_eq!(params.get(&k), Some(&v), "parameter {k} lost");
    }

    // A non-Glue target with the key is a config error naming the key.
    let bad = opted.replace(&format!("glue://{db}/target"), "s3://b/t/");
    let err = Config::parse(&bad, "aws.toml").unwrap_err().to_string();
    assert!(
        err.contains("catalog_status") && err.contains("s3://b/t/"),
        "{err}"
    );
}
