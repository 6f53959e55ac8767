//! The trigger's ports on AWS: [`StepFunctions`] ([`Executions`]: StartExecution on the
//! reconcile state machine) and [`GlueJobs`] ([`JobRuns`]: GetJobRuns for the sweep).

use aws_config::SdkConfig;
use aws_sdk_sfn::operation::start_execution::StartExecutionError;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_runtime_api::http::Response;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use futures::FutureExt;
use futures::future::BoxFuture;
use recon_aws_client::{Failure, SdkFailure, job_permission_hint, sdk_failure};

use crate::error::{EventError, Result};
use crate::trigger::{
    Executions, JOB_RUNS_PER_PAGE, JobRunInfo, JobRuns, JobRunsPage, SWEEP_GLUE_JOBS, Start,
};

/// The trigger's error for a failed call on `resource`; `denied` adds the permission
/// the role needs, `not_found` builds the error for a missing resource.
fn event_error<E>(
    err: SdkError<E, Response>,
    resource: &str,
    denied: impl FnOnce(String) -> String,
    not_found: impl FnOnce(String) -> EventError,
) -> EventError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let SdkFailure { kind, reason } = sdk_failure(err);
    let resource = resource.to_string();
    match kind {
        Failure::NotFound => not_found(reason),
        Failure::Denied => EventError::AccessDenied {
            resource,
            reason: denied(reason),
        },
        Failure::Transient => EventError::Transient { resource, reason },
        Failure::Invalid => EventError::InvalidInput(format!("{resource}: {reason}")),
    }
}

/// The state machine `state_machine_arn`, started through Step Functions.
#[derive(Clone)]
pub struct StepFunctions {
    client: aws_sdk_sfn::Client,
    state_machine_arn: String,
}

impl StepFunctions {
    /// The state machine on the given config.
    pub fn from_conf(conf: &SdkConfig, state_machine_arn: &str) -> Self {
        StepFunctions {
            client: aws_sdk_sfn::Client::new(conf),
            state_machine_arn: state_machine_arn.to_string(),
        }
    }

    async fn start_execution(&self, name: &str, input: &str) -> Result<Start> {
        let arn = &self.state_machine_arn;
        let sent = self
            .client
            .start_execution()
            .state_machine_arn(arn)
            .name(name)
            .input(input)
            .send()
            .await;
        match sent {
            Ok(out) => Ok(Start::Started {
                execution_arn: out.execution_arn().to_string(),
            }),
            Err(e)
                if matches!(
                    e.as_service_error(),
                    Some(StartExecutionError::ExecutionAlreadyExists(_))
                ) =>
            {
                Ok(Start::AlreadyExists)
            }
            Err(e) => Err(event_error(
                e,
                arn,
                |reason| {
                    format!("{reason}; the trigger's role needs states:StartExecution on {arn}")
                },
                |reason| EventError::InvalidConfig {
                    file: "environment variable STATE_MACHINE_ARN".into(),
                    message: format!("state machine {arn} not found: {reason}"),
                },
            )),
        }
    }
}

impl Executions for StepFunctions {
    fn start<'a>(&'a self, name: &'a str, input: &'a str) -> BoxFuture<'a, Result<Start>> {
        self.start_execution(name, input).boxed()
    }
}

/// Glue's job runs.
#[derive(Clone)]
pub struct GlueJobs {
    client: aws_sdk_glue::Client,
}

/// A run as the trigger reads it.
fn job_run_info(run: &aws_sdk_glue::types::JobRun) -> JobRunInfo {
    let time = |t: Option<&aws_sdk_glue::primitives::DateTime>| {
        t.and_then(|t| chrono::DateTime::from_timestamp(t.secs(), t.subsec_nanos()))
    };
    JobRunInfo {
        id: run.id().unwrap_or_default().to_string(),
        state: run
            .job_run_state()
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
        started_on: time(run.started_on()),
        completed_on: time(run.completed_on()),
        arguments: run.arguments().cloned().unwrap_or_default(),
    }
}

impl GlueJobs {
    /// Job runs on the given config.
    pub fn from_conf(conf: &SdkConfig) -> Self {
        GlueJobs {
            client: aws_sdk_glue::Client::new(conf),
        }
    }

    async fn page(&self, job: &str, next_token: Option<String>) -> Result<JobRunsPage> {
        let out = self
            .client
            .get_job_runs()
            .job_name(job)
            .set_next_token(next_token)
            .max_results(JOB_RUNS_PER_PAGE)
            .send()
            .await
            .map_err(|e| {
                event_error(
                    e,
                    &format!("Glue job `{job}`"),
                    |reason| job_permission_hint(&reason, job, "GetJobRuns", "the trigger's role"),
                    |reason| EventError::InvalidConfig {
                        file: format!(
                            "environment variable {SWEEP_GLUE_JOBS} (the GlueJobNames parameter)"
                        ),
                        message: format!(
                            "Glue job `{job}` does not exist ({reason}); correct or remove it in GlueJobNames"
                        ),
                    },
                )
            })?;
        Ok(JobRunsPage {
            runs: out.job_runs().iter().map(job_run_info).collect(),
            next_token: out.next_token().map(str::to_string),
        })
    }
}

impl JobRuns for GlueJobs {
    fn runs_page<'a>(
        &'a self,
        job: &'a str,
        next_token: Option<String>,
    ) -> BoxFuture<'a, Result<JobRunsPage>> {
        self.page(job, next_token).boxed()
    }
}
