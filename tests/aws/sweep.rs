//! The trigger's catch-up sweep against moto's Glue job runs and Step Functions, and
//! a Glue-triggered lookup that reconciles only the partitions its job run names.
//!
//! moto completes a job run the moment it is described (StartedOn = CompletedOn =
//! the StartJobRun time, state SUCCEEDED), so a run is always "just completed": the
//! window is moved instead, by sweeping as of a schedule time two days later.

use std::sync::Arc;

use glue_recon::pipeline::{LookupRequest, execution_name, load_config};
use glue_recon::trigger::{SweepOutcome, SweepOutput, SweepSettings, Trigger, TriggerResult};
use recon_events::aws::GlueJobs;
use recon_events::aws::StepFunctions;
use serde_json::{Value, json};

use super::moto;
use super::pipeline::pipeline;

/// A state machine on moto that does nothing (a Pass state).
async fn state_machine(sfn: &aws_sdk_sfn::Client) -> String {
    sfn.create_state_machine()
        .name(moto::unique("gr-sweep"))
        .definition(r#"{"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": true}}}"#)
        .role_arn("arn:aws:iam::123456789012:role/sfn")
        .send()
        .await
        .expect("create state machine")
        .state_machine_arn()
        .to_string()
}

fn scheduled_event(time: chrono::DateTime<chrono::Utc>) -> Value {
    json!({"version": "0", "id": moto::unique("evt"), "detail-type": "Scheduled Event",
        "source": "aws.events", "account": "123456789012", "time": glue_recon::report::rfc3339(time),
        "region": "us-east-1", "resources": [], "detail": {}})
}

async fn sweep(trigger: &Trigger, time: chrono::DateTime<chrono::Utc>) -> SweepOutput {
    match trigger.handle(scheduled_event(time)).await.expect("sweep") {
        TriggerResult::Sweep(out) => out,
        other => panic!("not a sweep: {other:?}"),
    }
}

/// (name, input) of the state machine's executions, sorted by name.
async fn executions(sfn: &aws_sdk_sfn::Client, arn: &str) -> Vec<(String, Value)> {
    let listed = sfn
        .list_executions()
        .state_machine_arn(arn)
        .send()
        .await
        .expect("list executions");
    let mut out = Vec::new();
    for x in listed.executions() {
        let described = sfn
            .describe_execution()
            .execution_arn(x.execution_arn())
            .send()
            .await
            .expect("describe execution");
        let input = serde_json::from_str(described.input().unwrap_or("null")).unwrap();
        out.push((x.name().to_string(), input));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sweep_starts_each_jobs_latest_successful_run_once() {
    let conf = moto::sdk_config().await;
    let glue = aws_sdk_glue::Client::new(&conf);
    let sfn = aws_sdk_sfn::Client::new(&conf);
    let (twice, once, never) = (
        moto::unique("etl-a"),
        moto::unique("etl-b"),
        moto::unique("etl-c"),
    );
    for job in [&twice, &once, &never] {
        moto::glue_job(&glue, job).await;
    }
    let _first = moto::start_job_run(&glue, &twice, &[]).await;
    let latest = moto::start_job_run(&glue, &twice, &[]).await;
    let only = moto::start_job_run(&glue, &once, &[]).await;
    let arn = state_machine(&sfn).await;
    let trigger = Trigger {
        executions: Arc::new(StepFunctions::from_conf(&conf, &arn)),
        job_runs: Arc::new(GlueJobs::from_conf(&conf)),
        sweep: SweepSettings::from_values(Some(&format!("{twice},{once},{never}")), None).unwrap(),
    };
    let now = chrono::Utc::now();

    let out = sweep(&trigger, now).await;
    assert_eq!(
        (
            out.started,
            out.already_reconciled,
            out.no_recent_successful_run
        ),
        (2, 0, 1),
        "{out:?}"
    );
    let jobs: Vec<&str> = out.jobs.iter().map(|j| j.job.as_str()).collect();
    assert_eq!(jobs, vec![twice.as_str(), once.as_str(), never.as_str()]);
    let SweepOutcome::Started {
        job_run_id,
        execution_name: name,
        ..
    } = &out.jobs[0].outcome
    else {
        panic!("{:?}", out.jobs[0])
    };
    assert_eq!(
        (job_run_id, name),
        (&latest, &execution_name(&latest)),
        "the latest run, not the first"
    );
    assert!(
        matches!(&out.jobs[1].outcome, SweepOutcome::Started { job_run_id, .. } if job_run_id == &only)
    );
    assert_eq!(
        out.jobs[2].outcome,
        SweepOutcome::NoRecentSuccessfulRun {
            latest_success_completed_on: None
        }
    );
    let started = executions(&sfn, &arn).await;
    let mut names = vec![execution_name(&latest), execution_name(&only)];
    names.sort();
    assert_eq!(
        started.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        names
    );
    // The input is a Glue Job State Change that lookup reads as the run's own event.
    for (name, input) in &started {
        let LookupRequest::GlueJob(e) = LookupRequest::parse(input.clone()).unwrap() else {
            panic!("{name}: {input}")
        };
        assert_eq!(&execution_name(&e.detail.job_run_id), name);
        assert!(
            e.detail.job_name == twice || e.detail.job_name == once,
            "{input}"
        );
        assert_eq!(e.detail.state, "SUCCEEDED");
    }

    // A second sweep finds the same runs reconciled and starts nothing.
    let again = sweep(&trigger, now).await;
    assert_eq!(
        (
            again.started,
            again.already_reconciled,
            again.no_recent_successful_run
        ),
        (0, 2, 1),
        "{again:?}"
    );
    assert!(
        matches!(&again.jobs[0].outcome, SweepOutcome::AlreadyReconciled { job_run_id, .. } if job_run_id == &latest)
    );
    assert_eq!(executions(&sfn, &arn).await.len(), 2);

    // Two days on, with the default 24 h window, the runs are too old to sweep.
    let later = sweep(&trigger, now + chrono::Duration::hours(48)).await;
    assert_eq!(later.no_recent_successful_run, 3, "{later:?}");
    assert!(matches!(
        &later.jobs[0].outcome,
        SweepOutcome::NoRecentSuccessfulRun {
            latest_success_completed_on: Some(_)
        }
    ));
    assert_eq!(executions(&sfn, &arn).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sweep_names_a_job_glue_does_not_have_and_still_sweeps_the_others() {
    let conf = moto::sdk_config().await;
    let glue = aws_sdk_glue::Client::new(&conf);
    let sfn = aws_sdk_sfn::Client::new(&conf);
    let (real, ghost) = (moto::unique("etl-real"), moto::unique("etl-ghost"));
    moto::glue_job(&glue, &real).await;
    let run = moto::start_job_run(&glue, &real, &[]).await;
    let arn = state_machine(&sfn).await;
    let trigger = Trigger {
        executions: Arc::new(StepFunctions::from_conf(&conf, &arn)),
        job_runs: Arc::new(GlueJobs::from_conf(&conf)),
        sweep: SweepSettings::from_values(Some(&format!("{ghost},{real}")), None).unwrap(),
    };
    let err = trigger
        .handle(scheduled_event(chrono::Utc::now()))
        .await
        .unwrap_err();
    assert_eq!(err.error_type(), "InvalidConfig", "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&ghost) && text.contains("GlueJobNames"),
        "{text}"
    );
    assert!(text.contains("1 started"), "{text}");
    assert_eq!(executions(&sfn, &arn).await[0].0, execution_name(&run));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_run_reconciles_only_the_partitions_its_argument_names() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    moto::sample(dir.path());
    let bucket = moto::unique("gr-args");
    let db = moto::unique("gr_args").replace('-', "_");
    let job = moto::unique("orders-etl");
    let config_text = moto::sample_on_aws(&conf, dir.path(), &bucket, &db).await;
    let config_text = config_text.replace(
        "glue_jobs = [\"orders-etl\"]",
        &format!("glue_jobs = [\"{job}\"]\npartitions_from_argument = \"--partitions\""),
    );
    let s3 = moto::s3(&conf);
    moto::put(&s3, &bucket, "config/recon.toml", config_text.into_bytes()).await;
    let parts = moto::partition_dirs(&dir.path().join("source"));
    assert!(parts.len() >= 3, "{parts:?}");
    let glue = aws_sdk_glue::Client::new(&conf);
    moto::glue_job(&glue, &job).await;
    let wanted = format!("{}, {}", parts[0], parts[2]);
    let named = moto::start_job_run(&glue, &job, &[("--partitions", &wanted)]).await;
    let unnamed = moto::start_job_run(&glue, &job, &[("--other", "x")]).await;

    let p = pipeline(&bucket).await;
    let config = load_config(&p.storage, &format!("s3://{bucket}/config/recon.toml"))
        .await
        .unwrap();
    assert!(
        config.pairs[0].glue_jobs.contains(&job),
        "the pair lists the job"
    );
    let event = |run: &str| {
        let mut e: Value = serde_json::from_str(include_str!(
            "../../functions/trigger/fixtures/glue-job-succeeded.json"
        ))
        .unwrap();
        e["detail"]["jobName"] = job.clone().into();
        e["detail"]["jobRunId"] = run.into();
        LookupRequest::parse(e).unwrap()
    };
    let out = p.lookup(&config, &event(&named)).await.expect("lookup");
    assert_eq!(out.item_count, 2, "{out:?}");
    let manifest: Vec<Value> =
        serde_json::from_slice(&moto::get(&s3, &bucket, &out.manifest_key).await).unwrap();
    let mut got: Vec<&str> = manifest
        .iter()
        .map(|i| i["partition"].as_str().unwrap())
        .collect();
    got.sort();
    assert_eq!(got, vec![parts[0].as_str(), parts[2].as_str()]);

    let err = p.lookup(&config, &event(&unnamed)).await.unwrap_err();
    assert_eq!(err.error_type(), "InvalidInput");
    let text = err.to_string();
    assert!(
        text.contains("--partitions") && text.contains(&unnamed),
        "{text}"
    );

    let err = p
        .lookup(&config, &event("jr_no_such_run"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("jr_no_such_run"), "{err}");
}
