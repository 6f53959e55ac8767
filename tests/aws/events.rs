//! The merge's "Reconciliation Completed" event on moto: a rule on the default bus
//! matching `source: glue-recon` and the event's detail-type sends it to an SQS
//! queue, where the test reads the pair, run id, status, counts and report URI. The
//! CLI's `--event-bus` sends the same event.

use std::sync::Arc;

use aws_sdk_sqs::types::QueueAttributeName;
use glue_recon::aws::events::EventBus;
use glue_recon::completion::{DETAIL_TYPE, SOURCE};
use glue_recon::pipeline::{LookupRequest, load_config};
use serde_json::{Value, json};

use super::cli::{receive, run_cli};
use super::moto;
use super::pipeline::{hash_all, merge, pipeline};

/// A queue that receives the events whose detail matches `detail` (an event pattern)
/// through a rule on the default bus; its URL.
async fn queue_for(conf: &aws_config::SdkConfig, detail: Value) -> String {
    let sqs = aws_sdk_sqs::Client::new(conf);
    let name = moto::unique("gr-events");
    let url = sqs
        .create_queue()
        .queue_name(&name)
        .send()
        .await
        .expect("create queue")
        .queue_url()
        .unwrap()
        .to_string();
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("queue attributes");
    let arn = attrs.attributes().unwrap()[&QueueAttributeName::QueueArn].clone();
    let events = aws_sdk_eventbridge::Client::new(conf);
    // The sample rule of docs/deploy.md, narrowed to this test's runs.
    let pattern = json!({
        "source": [SOURCE],
        "detail-type": [DETAIL_TYPE],
        "detail": detail
    });
    events
        .put_rule()
        .name(&name)
        .event_pattern(pattern.to_string())
        .send()
        .await
        .expect("put rule");
    events
        .put_targets()
        .rule(&name)
        .targets(
            aws_sdk_eventbridge::types::Target::builder()
                .id("queue")
                .arn(arn)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("put targets");
    url
}

#[tokio::test(flavor = "multi_thread")]
async fn the_merge_puts_a_completion_event_a_rule_delivers_to_sqs() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    moto::sample(dir.path());
    let bucket = moto::unique("gr-events");
    let db = moto::unique("gr_events").replace('-', "_");
    let config_text = moto::sample_on_aws(&conf, dir.path(), &bucket, &db).await;
    let s3 = moto::s3(&conf);
    moto::put(&s3, &bucket, "config/recon.toml", config_text.into_bytes()).await;
    let mut p = pipeline(&bucket).await;
    p.events = Some(Arc::new(EventBus::from_conf(&conf, "default")));
    let config = load_config(&p.storage, &format!("s3://{bucket}/config/recon.toml"))
        .await
        .unwrap();
    let request = LookupRequest::parse(json!({"pairs": ["orders"]})).unwrap();
    let out = p.lookup(&config, &request).await.expect("lookup");
    let queue = queue_for(&conf, json!({"run_id": [out.run_id]})).await;
    hash_all(&p, &out, &[]).await;
    let merged = merge(&p, &out).await;

    let sqs = aws_sdk_sqs::Client::new(&conf);
    let got = sqs
        .receive_message()
        .queue_url(&queue)
        .max_number_of_messages(10)
        .wait_time_seconds(5)
        .send()
        .await
        .expect("receive");
    let bodies: Vec<Value> = got
        .messages()
        .iter()
        .map(|m| serde_json::from_str(m.body().unwrap()).unwrap())
        .collect();
    assert_eq!(bodies.len(), 1, "one event per pair: {bodies:?}");
    let event = &bodies[0];
    assert_eq!(event["source"], SOURCE);
    assert_eq!(event["detail-type"], DETAIL_TYPE);
    let detail = &event["detail"];
    let report_key = format!("reports/orders/{}/report.json", out.run_id);
    let report: glue_recon::report::Report =
        serde_json::from_slice(&moto::get(&s3, &bucket, &report_key).await).unwrap();
    assert_eq!(detail["pair"], "orders");
    assert_eq!(detail["run_id"], out.run_id.as_str());
    assert_eq!(detail["status"], merged.status.to_string());
    assert_eq!(detail["status"], report.status.to_string());
    assert_eq!(detail["complete"], true);
    assert_eq!(detail["trigger"], "on-demand");
    assert_eq!(detail["report_uri"], format!("s3://{bucket}/{report_key}"));
    assert_eq!(
        detail["counts"],
        serde_json::to_value(report.totals).unwrap()
    );
    assert!(report.totals.mismatch > 0);
    assert_eq!(detail["target"], format!("glue://{db}/target"));
    // Counts and locations only: no masked (or any) row value.
    assert!(!event.to_string().contains('@'), "{event}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_with_an_event_bus_puts_the_same_event() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    moto::sample(dir.path());
    let bucket = moto::unique("gr-cli-events");
    let db = moto::unique("gr_cli_events").replace('-', "_");
    let config = moto::sample_on_aws(&conf, dir.path(), &bucket, &db).await;
    let toml = dir.path().join("aws.toml");
    std::fs::write(&toml, config).unwrap();
    let target = format!("glue://{db}/target");
    let queue = queue_for(&conf, json!({"target": [target]})).await;
    let root = format!("s3://{bucket}/reports");
    let (code, report) = run_cli(
        &[
            "run",
            "--config",
            toml.to_str().unwrap(),
            "--out",
            &root,
            "--json",
            "--event-bus",
            "default",
        ],
        &moto::child_env(),
    );
    assert_eq!(code, 1, "the sample's planted differences FAIL");
    let events = receive(&conf, &queue).await;
    assert_eq!(events.len(), 1, "one event per pair: {events:?}");
    let detail = &events[0]["detail"];
    let run_id = report["run_id"].as_str().unwrap();
    assert_eq!(detail["pair"], "orders");
    assert_eq!(detail["run_id"], run_id);
    assert_eq!(detail["status"], report["status"]);
    assert_eq!(detail["trigger"], report["trigger"]);
    assert_eq!(detail["counts"], report["totals"]);
    assert_eq!(
        detail["report_uri"],
        format!("{root}/orders/{run_id}/report.json")
    );
    assert_eq!(detail["target"], target);
}
