//! Bad inputs against moto: each fails with the right `error_type` and a message
//! that names the table, URI or ARN.

use glue_recon::catalog::Catalog;
use glue_recon::config::Config;
use glue_recon::error::ReconError;
use glue_recon::pipeline::{LookupRequest, from_event, parse_item};
use glue_recon::storage::ObjectStore;

use super::moto;
use super::pipeline::pipeline;

fn expect_err<T: std::fmt::Debug>(
    r: Result<T, ReconError>,
    error_type: &str,
    mentions: &str,
) -> String {
    let e = r.expect_err("an error");
    let text = e.to_string();
    assert_eq!(e.error_type(), error_type, "{text}");
    assert!(
        text.contains(mentions),
        "`{text}` does not name `{mentions}`"
    );
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_database_table_and_missing_locations_are_table_not_found() {
    let conf = moto::sdk_config().await;
    let s3 = moto::s3(&conf);
    let glue = aws_sdk_glue::Client::new(&conf);
    let catalog = glue_recon::aws::glue::GlueCatalog::from_conf(&conf);
    let bucket = moto::unique("gr-bad");
    moto::bucket(&s3, &bucket).await;
    let db = moto::unique("gr_bad").replace('-', "_");
    moto::database(&glue, &db).await;

    let nodb = moto::unique("nodb").replace('-', "_");
    expect_err(
        catalog.resolve(&nodb, "orders", None, None).await,
        "TableNotFound",
        &format!("glue://{nodb}/orders"),
    );
    expect_err(
        catalog.resolve(&db, "nope", None, None).await,
        "TableNotFound",
        &format!("glue://{db}/nope"),
    );

    moto::table(&glue, &db, "no_location", None, &[]).await;
    let text = expect_err(
        catalog.resolve(&db, "no_location", None, None).await,
        "TableNotFound",
        &format!("glue://{db}/no_location"),
    );
    assert!(text.contains("no storage location"), "{text}");

    // Tables that are not plain Parquet files: versioned formats, other file formats.
    let loc = format!("s3://{bucket}/t/");
    for (name, parameter, input_format, expected) in [
        (
            "ice",
            Some(("table_type", "ICEBERG")),
            None,
            "an Apache Iceberg table",
        ),
        (
            "delta",
            Some(("spark.sql.sources.provider", "delta")),
            None,
            "a Delta Lake table",
        ),
        (
            "csv",
            Some(("classification", "csv")),
            None,
            "its data is csv",
        ),
        (
            "hudi",
            Some(("classification", "hudi")),
            None,
            "an Apache Hudi table",
        ),
        (
            "orc",
            None,
            Some("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"),
            "OrcInputFormat",
        ),
    ] {
        let mut sd = aws_sdk_glue::types::StorageDescriptor::builder().location(&loc);
        if let Some(f) = input_format {
            sd = sd.input_format(f);
        }
        let mut input = aws_sdk_glue::types::TableInput::builder()
            .name(name)
            .storage_descriptor(sd.build());
        if let Some((k, v)) = parameter {
            input = input.parameters(k, v);
        }
        glue.create_table()
            .database_name(&db)
            .table_input(input.build().unwrap())
            .send()
            .await
            .unwrap_or_else(|e| panic!("create table {name}: {e:?}"));
        let text = expect_err(
            catalog.resolve(&db, name, None, None).await,
            "InvalidInput",
            &format!("glue://{db}/{name}"),
        );
        assert!(text.contains(expected), "{text}");
    }
    moto::table(
        &glue,
        &db,
        "on_hdfs",
        Some("hdfs://namenode/warehouse/t"),
        &[],
    )
    .await;
    let text = expect_err(
        catalog.resolve(&db, "on_hdfs", None, None).await,
        "TableNotFound",
        "hdfs://namenode/warehouse/t",
    );
    assert!(text.contains("not on S3"), "{text}");

    let table_loc = format!("s3://{bucket}/t/");
    moto::table(&glue, &db, "gone", Some(&table_loc), &["dt"]).await;
    let nowhere = format!("s3://{bucket}/nowhere/dt=2024-01-01/");
    moto::partition(&glue, &db, "gone", &["2024-01-01"], &nowhere).await;
    // A registered partition with no files is an empty partition (issue 36), not an
    // error: the side has no files there, and its rows on the other side are missing.
    let gone = catalog.resolve(&db, "gone", None, None).await.unwrap();
    assert!(gone.files.is_empty(), "{gone:?}");
    assert_eq!(gone.partition_columns, vec!["dt"]);

    let store = glue_recon::aws::s3::S3Store::from_conf(&conf);
    let missing_bucket = format!("s3://{}/t/", moto::unique("gr-missing"));
    expect_err(
        store.list(&missing_bucket).await,
        "TableNotFound",
        &missing_bucket,
    );
    let missing_key = format!("s3://{bucket}/no/such.json");
    expect_err(store.get(&missing_key).await, "TableNotFound", &missing_key);
}

#[tokio::test(flavor = "multi_thread")]
async fn corrupt_object_is_corrupt_parquet_naming_the_uri() {
    let conf = moto::sdk_config().await;
    let s3 = moto::s3(&conf);
    let bucket = moto::unique("gr-corrupt");
    moto::bucket(&s3, &bucket).await;
    moto::put(
        &s3,
        &bucket,
        "src/dt=1/part-0.parquet",
        b"this is not parquet at all".to_vec(),
    )
    .await;
    moto::put(
        &s3,
        &bucket,
        "tgt/dt=1/part-0.parquet",
        b"PAR1 nor this".to_vec(),
    )
    .await;
    let p = pipeline(&bucket).await;
    let config = Config::parse(
        &format!(
            "[[pair]]\nname = \"bad\"\nsource = \"s3://{bucket}/src/\"\ntarget = \"s3://{bucket}/tgt/\"\nkey = [\"id\"]\n"
        ),
        "test",
    )
    .unwrap();
    let request = LookupRequest::parse(serde_json::json!({})).unwrap();
    expect_err(
        p.lookup(&config, &request).await,
        "CorruptParquet",
        &format!("s3://{bucket}/src/dt=1/part-0.parquet"),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_manifests_and_config_are_invalid() {
    let conf = moto::sdk_config().await;
    let s3 = moto::s3(&conf);
    let bucket = moto::unique("gr-invalid");
    moto::bucket(&s3, &bucket).await;
    let p = pipeline(&bucket).await;

    // A manifest item that does not parse.
    expect_err(
        parse_item(serde_json::json!({"run_id": "r1", "pair": "orders"})),
        "InvalidInput",
        "manifest item",
    );
    expect_err(
        parse_item(
            serde_json::json!({"run_id": "../etc", "item_id": "x", "pair": "p",
            "partition": "*", "presence": "both", "source": [], "target": []}),
        ),
        "InvalidInput",
        "../etc",
    );
    // An oversize request.
    let huge = serde_json::json!({"pairs": vec!["p".repeat(1000); 300]});
    expect_err(
        LookupRequest::parse(huge).map_err(from_event),
        "InvalidInput",
        "limit",
    );
    // An unknown pair.
    let config = Config::parse(
        "[[pair]]\nname = \"orders\"\nsource = \"s3://x/a/\"\ntarget = \"s3://x/b/\"\nkey = [\"id\"]\n",
        "test",
    )
    .unwrap();
    let request = LookupRequest::parse(serde_json::json!({"pairs": ["nope"]})).unwrap();
    expect_err(p.lookup(&config, &request).await, "InvalidInput", "nope");
    // A manifest in S3 that does not parse.
    moto::put(
        &s3,
        &bucket,
        "runs/r1/manifest.json",
        b"[{\"run_id\": 5}]".to_vec(),
    )
    .await;
    let out = glue_recon::pipeline::LookupOutput {
        run_id: "r1".into(),
        bucket: bucket.clone(),
        manifest_key: "runs/r1/manifest.json".into(),
        item_count: 1,
        pairs: vec!["orders".into()],
        pair_count: 1,
        trigger: "on-demand".into(),
    };
    expect_err(
        p.merge(&out).await,
        "InvalidInput",
        &format!("s3://{bucket}/runs/r1/manifest.json"),
    );
    // A config URI with nothing there, and a config that does not parse.
    let missing = format!("s3://{bucket}/config/missing.toml");
    expect_err(
        glue_recon::pipeline::load_config(&p.storage, &missing).await,
        "InvalidConfig",
        &missing,
    );
    moto::put(
        &s3,
        &bucket,
        "config/bad.toml",
        b"[[pair]]\nname = 5\n".to_vec(),
    )
    .await;
    let bad = format!("s3://{bucket}/config/bad.toml");
    expect_err(
        glue_recon::pipeline::load_config(&p.storage, &bad).await,
        "InvalidConfig",
        &bad,
    );
    // A topic that does not exist.
    let arn = "arn:aws:sns:us-east-1:123456789012:gr-no-such-topic";
    let publisher = glue_recon::aws::sns::SnsPublisher::from_conf(&conf, arn);
    let alert = glue_recon::alert::Alert {
        subject: "s".into(),
        message: "m".into(),
        attributes: glue_recon::alert::AlertAttributes {
            status: "FAIL".into(),
            pair: "p".into(),
        },
    };
    expect_err(publisher.publish(&alert).await, "InvalidInput", arn);
}
