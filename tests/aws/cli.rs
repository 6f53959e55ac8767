//! The CLI against glue:// and s3:// tables on moto gives the same counts as the
//! same data in local folders, writes its report to S3 and alerts SNS.

use std::process::Command;

use aws_sdk_sqs::types::QueueAttributeName;
use serde_json::Value;

use super::moto;

pub(super) fn run_cli(args: &[&str], env: &[(&str, String)]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_glue-recon"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run glue-recon");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "glue-recon {args:?} exited {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not the report JSON ({e}):\n{stdout}\n{stderr}"));
    (code, report)
}

/// An SQS queue subscribed to a new SNS topic; returns (topic ARN, queue URL).
pub async fn topic_with_queue(conf: &aws_config::SdkConfig, name: &str) -> (String, String) {
    let sns = aws_sdk_sns::Client::new(conf);
    let sqs = aws_sdk_sqs::Client::new(conf);
    let topic = sns
        .create_topic()
        .name(name)
        .send()
        .await
        .expect("create topic");
    let topic_arn = topic.topic_arn().unwrap().to_string();
    let queue = sqs
        .create_queue()
        .queue_name(name)
        .send()
        .await
        .expect("create queue");
    let queue_url = queue.queue_url().unwrap().to_string();
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&queue_url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("queue attributes");
    let queue_arn = attrs.attributes().unwrap()[&QueueAttributeName::QueueArn].clone();
    sns.subscribe()
        .topic_arn(&topic_arn)
        .protocol("sqs")
        .endpoint(queue_arn)
        .send()
        .await
        .expect("subscribe");
    (topic_arn, queue_url)
}

/// The SNS envelopes (JSON) waiting on a queue.
pub async fn receive(conf: &aws_config::SdkConfig, queue_url: &str) -> Vec<Value> {
    let sqs = aws_sdk_sqs::Client::new(conf);
    let out = sqs
        .receive_message()
        .queue_url(queue_url)
        .max_number_of_messages(10)
        .wait_time_seconds(5)
        .send()
        .await
        .expect("receive");
    out.messages()
        .iter()
        .map(|m| serde_json::from_str(m.body().unwrap()).expect("SNS envelope JSON"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_on_glue_and_s3_matches_local_writes_s3_and_alerts_sns() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    let planted = moto::sample(dir.path());
    let bucket = moto::unique("gr-cli");
    let db = moto::unique("gr_cli").replace('-', "_");
    let config = moto::sample_on_aws(&conf, dir.path(), &bucket, &db).await;
    let aws_toml = dir.path().join("aws.toml");
    std::fs::write(&aws_toml, config).unwrap();
    let (topic_arn, queue_url) = topic_with_queue(&conf, &moto::unique("gr-cli-alerts")).await;

    let local_out = dir.path().join("local-out");
    let (local_code, local) = run_cli(
        &[
            "run",
            "--config",
            dir.path().join("recon.toml").to_str().unwrap(),
            "--out",
            local_out.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    let root = format!("s3://{bucket}/reports");
    let (code, report) = run_cli(
        &[
            "run",
            "--config",
            aws_toml.to_str().unwrap(),
            "--out",
            &root,
            "--json",
            "--sns-topic",
            &topic_arn,
        ],
        &moto::child_env(),
    );

    assert_eq!(code, local_code, "exit codes differ");
    assert_eq!(code, 1, "planted differences must FAIL");
    assert_eq!(
        report["totals"], local["totals"],
        "S3/Glue totals differ from local"
    );
    assert_eq!(report["status"], local["status"]);
    assert_eq!(report["complete"], Value::Bool(true));
    assert_eq!(
        report["totals"]["missing_in_target"].as_u64().unwrap(),
        planted.missing_in_target
    );
    assert_eq!(
        report["totals"]["extra_in_target"].as_u64().unwrap(),
        planted.extra_in_target
    );
    let partitions = |r: &Value| -> Vec<(String, Value)> {
        r["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["partition"].as_str().unwrap().to_string(),
                    p["totals"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(partitions(&report), partitions(&local));
    assert_eq!(report["target"], format!("glue://{db}/target"));

    let run_id = report["run_id"].as_str().unwrap();
    let s3 = moto::s3(&conf);
    let prefix = format!("reports/orders/{run_id}/");
    let mut written = moto::keys(&s3, &bucket, &prefix).await;
    written.sort();
    for name in ["diffs.parquet", "report.html", "report.json"] {
        assert!(
            written.contains(&format!("{prefix}{name}")),
            "{name} not in {written:?}"
        );
    }
    let stored: Value =
        serde_json::from_slice(&moto::get(&s3, &bucket, &format!("{prefix}report.json")).await)
            .unwrap();
    assert_eq!(stored["totals"], report["totals"]);

    let messages = receive(&conf, &queue_url).await;
    assert_eq!(messages.len(), 1, "one alert expected: {messages:?}");
    let m = &messages[0];
    let subject = m["Subject"].as_str().unwrap();
    assert!(subject.starts_with("glue-recon FAIL: orders"), "{subject}");
    assert!(subject.len() <= 100 && !subject.contains('\n'), "{subject}");
    let body = m["Message"].as_str().unwrap();
    assert!(
        body.starts_with("glue-recon reconciliation: FAIL"),
        "{body}"
    );
    assert!(
        body.contains(&format!("report: {root}/orders/{run_id}/report.json")),
        "{body}"
    );
    assert!(
        body.contains(&format!("html:   {root}/orders/{run_id}/report.html")),
        "{body}"
    );
    assert!(body.contains("MISSING_IN_TARGET"), "{body}");
    assert!(
        !body.contains('@'),
        "masked e-mail values must not appear: {body}"
    );
    assert_eq!(m["MessageAttributes"]["status"]["Value"], "FAIL");
    assert_eq!(m["MessageAttributes"]["pair"]["Value"], r#"["orders"]"#);
    assert_eq!(m["MessageAttributes"]["pair"]["Type"], "String.Array");
}

/// A pair that cannot run (its source is gone) still reaches the subscribers: an
/// `ERROR` alert naming the pair and the error, as the state machine sends one when
/// a reconciliation cannot run; the CLI exits 2 and `--json` names the pair.
#[tokio::test(flavor = "multi_thread")]
async fn a_pair_that_cannot_run_alerts_sns_as_error() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    let bucket = moto::unique("gr-cli-gone");
    moto::bucket(&moto::s3(&conf), &bucket).await;
    let (topic_arn, queue_url) = topic_with_queue(&conf, &moto::unique("gr-cli-errors")).await;
    let config = dir.path().join("gone.toml");
    std::fs::write(
        &config,
        format!(
            "[[pair]]\nname = \"orders\"\nsource = \"s3://{bucket}/gone/\"\ntarget = \"s3://{bucket}/also-gone/\"\nkey = [\"id\"]\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_glue-recon"))
        .args(["run", "--config", config.to_str().unwrap(), "--json"])
        .args(["--out", dir.path().join("out").to_str().unwrap()])
        .args(["--sns-topic", &topic_arn])
        .envs(moto::child_env())
        .output()
        .expect("run glue-recon");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["pair"], "orders");
    assert_eq!(printed["status"], "ERROR");

    let messages = receive(&conf, &queue_url).await;
    assert_eq!(messages.len(), 1, "one alert expected: {messages:?}");
    let m = &messages[0];
    let subject = m["Subject"].as_str().unwrap();
    assert!(
        subject.starts_with("glue-recon ERROR: 1 pair could not run: orders"),
        "{subject}"
    );
    let body = m["Message"].as_str().unwrap();
    assert!(body.contains("orders (TableNotFound)"), "{body}");
    assert!(body.contains(&format!("s3://{bucket}/gone/")), "{body}");
    assert_eq!(m["MessageAttributes"]["status"]["Value"], "ERROR");
    assert_eq!(m["MessageAttributes"]["pair"]["Value"], r#"["orders"]"#);
    assert_eq!(m["MessageAttributes"]["pair"]["Type"], "String.Array");
}

/// An `--out` on S3 that cannot be written (its bucket does not exist) fails before
/// any table is read, naming the report root: the tables here do not exist either,
/// and a run that read them first would say that instead.
#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_s3_out_fails_before_any_table_is_read() {
    let conf = moto::sdk_config().await;
    let bucket = moto::unique("gr-cli-data");
    moto::bucket(&moto::s3(&conf), &bucket).await;
    let out = format!("s3://{}/reports", moto::unique("gr-cli-no-such-bucket"));
    let o = Command::new(env!("CARGO_BIN_EXE_glue-recon"))
        .args([
            "diff",
            &format!("s3://{bucket}/gone/"),
            &format!("s3://{bucket}/also-gone/"),
        ])
        .args(["--key", "id", "--out", &out])
        .envs(moto::child_env())
        .output()
        .expect("run glue-recon");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("could not write {out}")),
        "{stderr}"
    );
    assert!(stderr.contains("choose another --out"), "{stderr}");
    assert!(!stderr.contains("table not found"), "{stderr}");
}
