//! [`StepFunctions`]: the reconcile state machine as the trigger's
//! [`crate::trigger::Executions`] port (StartExecution).

use aws_config::SdkConfig;
use aws_sdk_sfn::Client;
use aws_sdk_sfn::operation::start_execution::StartExecutionError;
use futures::FutureExt;
use futures::future::BoxFuture;

use super::map_sdk_error;
use crate::error::{ReconError, Result};
use crate::trigger::{Executions, Start};

/// The state machine `state_machine_arn`, started through Step Functions.
#[derive(Clone)]
pub struct StepFunctions {
    client: Client,
    state_machine_arn: String,
}

impl StepFunctions {
    /// The state machine on the given config.
    pub fn from_conf(conf: &SdkConfig, state_machine_arn: &str) -> Self {
        StepFunctions {
            client: Client::new(conf),
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
            Err(e) => Err(
                match map_sdk_error(e, arn, |reason| ReconError::InvalidConfig {
                    file: "environment variable STATE_MACHINE_ARN".into(),
                    message: format!("state machine {arn} not found: {reason}"),
                }) {
                    ReconError::AccessDenied { resource, reason } => ReconError::AccessDenied {
                        resource,
                        reason: format!(
                            "{reason}; the trigger's role needs states:StartExecution on {arn}"
                        ),
                    },
                    e => e,
                },
            ),
        }
    }
}

impl Executions for StepFunctions {
    fn start<'a>(&'a self, name: &'a str, input: &'a str) -> BoxFuture<'a, Result<Start>> {
        self.start_execution(name, input).boxed()
    }
}
