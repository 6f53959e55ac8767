//! recon-trigger: EventBridge target for Glue Job State Change events and for the
//! catch-up sweep's schedule (a Scheduled Event). Starts the reconcile state machine
//! (`STATE_MACHINE_ARN`) with the execution name `glue-<jobRunId>`, so a run is
//! reconciled once: `ExecutionAlreadyExists` is success. The sweep looks at the jobs
//! of `SWEEP_GLUE_JOBS` over the last `SWEEP_LOOKBACK_HOURS` (default 24). The
//! decisions are in `recon_events::trigger`.

use std::sync::Arc;

use lambda_runtime::{Error, LambdaEvent, service_fn};
use recon_events::aws::{GlueJobs, StepFunctions};
use recon_events::trigger::{SweepSettings, Trigger, TriggerResult};
use recon_functions::{FunctionError, STATE_MACHINE_ARN, required_env};

async fn handle(
    trigger: &Trigger,
    event: serde_json::Value,
) -> Result<TriggerResult, FunctionError> {
    Ok(trigger.handle(event).await?)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    recon_functions::init_tracing();
    let arn = required_env(STATE_MACHINE_ARN)?;
    let sweep = SweepSettings::from_env()?;
    let conf = recon_functions::aws_config(env!("CARGO_BIN_NAME")).await;
    let trigger = Trigger {
        executions: Arc::new(StepFunctions::from_conf(&conf, &arn)),
        job_runs: Arc::new(GlueJobs::from_conf(&conf)),
        sweep,
    };
    let trigger = &trigger;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| {
        handle(trigger, event.payload)
    }))
    .await
}
