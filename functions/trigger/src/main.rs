//! recon-trigger: EventBridge target for Glue Job State Change events. Starts the
//! reconcile state machine (`STATE_MACHINE_ARN`) with the event as input and the
//! execution name `glue-<jobRunId>`, so a re-delivered event starts nothing new:
//! `ExecutionAlreadyExists` is success. Runs that did not succeed start nothing.

use aws_sdk_sfn::Client;
use aws_sdk_sfn::operation::start_execution::StartExecutionError;
use glue_recon::pipeline::{GlueJobEvent, TriggerOutput, execution_name};
use lambda_runtime::{Error, LambdaEvent, service_fn};
use recon_functions::{FunctionError, STATE_MACHINE_ARN, required_env};

async fn handle(
    client: &Client,
    state_machine_arn: &str,
    event: serde_json::Value,
) -> Result<TriggerOutput, FunctionError> {
    let input = event.to_string();
    let parsed: GlueJobEvent = serde_json::from_value(event).map_err(|e| FunctionError {
        error_type: "InvalidInput".into(),
        message: format!("not a Glue Job State Change event: {e}"),
    })?;
    let name = execution_name(&parsed.detail.job_run_id);
    if parsed.detail.state != "SUCCEEDED" {
        tracing::info!(job = %parsed.detail.job_name, state = %parsed.detail.state, "not a successful run; nothing started");
        return Ok(TriggerOutput {
            execution_name: name,
            started: false,
            execution_arn: None,
        });
    }
    let sent = client
        .start_execution()
        .state_machine_arn(state_machine_arn)
        .name(&name)
        .input(input)
        .send()
        .await;
    match sent {
        Ok(out) => {
            tracing::info!(execution = %name, "started");
            Ok(TriggerOutput {
                execution_name: name,
                started: true,
                execution_arn: Some(out.execution_arn().to_string()),
            })
        }
        Err(e)
            if matches!(
                e.as_service_error(),
                Some(StartExecutionError::ExecutionAlreadyExists(_))
            ) =>
        {
            tracing::info!(execution = %name, "already started (re-delivered event)");
            Ok(TriggerOutput {
                execution_name: name,
                started: false,
                execution_arn: None,
            })
        }
        Err(e) => Err(
            glue_recon::aws::map_sdk_error(e, state_machine_arn, |reason| {
                glue_recon::error::ReconError::InvalidConfig {
                    file: format!("environment variable {STATE_MACHINE_ARN}"),
                    message: format!("state machine {state_machine_arn} not found: {reason}"),
                }
            })
            .into(),
        ),
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    recon_functions::init_tracing();
    let arn = required_env(STATE_MACHINE_ARN)?;
    let conf = recon_functions::aws_config(env!("CARGO_BIN_NAME")).await;
    let client = Client::new(&conf);
    let (client, arn) = (&client, arn.as_str());
    lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| {
        handle(client, arn, event.payload)
    }))
    .await
}
