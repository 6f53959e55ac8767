//! The events and requests that start a reconciliation, and their contract: the
//! EventBridge event of a Glue job run ([`GlueJobEvent`]), the on-demand request
//! ([`OnDemandRequest`]), the execution name a job run maps to ([`execution_name`]),
//! and what the trigger function returns ([`TriggerOutput`]).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{EventError, Result};

/// The largest event a step accepts (the Step Functions payload limit).
pub const MAX_REQUEST_BYTES: usize = 256 * 1024;
/// The longest Step Functions execution name.
pub const EXECUTION_NAME_MAX: usize = 80;
/// The `detail-type` of the EventBridge events of Glue job runs.
pub const GLUE_JOB_STATE_CHANGE: &str = "Glue Job State Change";

/// An on-demand request: which pairs (none = all) and, per pair, which partitions
/// (none = all). `{"pairs": ["orders"], "partitions": {"orders": ["dt=2024-01-01"]}}`
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnDemandRequest {
    /// Pair names.
    #[serde(default)]
    pub pairs: Vec<String>,
    /// Pair name -> partition labels (`dt=2024-01-01`).
    #[serde(default)]
    pub partitions: BTreeMap<String, Vec<String>>,
}

/// The EventBridge event of a Glue job run (`detail-type: Glue Job State Change`);
/// only the fields glue-recon reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlueJobEvent {
    /// `Glue Job State Change`.
    #[serde(rename = "detail-type")]
    pub detail_type: String,
    /// `aws.glue`.
    #[serde(default)]
    pub source: String,
    /// The job run.
    pub detail: GlueJobDetail,
}

/// The `detail` of a [`GlueJobEvent`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlueJobDetail {
    /// The job name.
    #[serde(rename = "jobName")]
    pub job_name: String,
    /// The run id (`jr_...`).
    #[serde(rename = "jobRunId")]
    pub job_run_id: String,
    /// `SUCCEEDED`, `FAILED`, ...
    pub state: String,
}

/// What the lookup step is asked to do: the execution input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupRequest {
    /// Named pairs and partitions.
    OnDemand(OnDemandRequest),
    /// A Glue job run finished: reconcile the pairs that list the job.
    GlueJob(GlueJobEvent),
}

/// Parse an event, refusing one over [`MAX_REQUEST_BYTES`]; `what` names the
/// expected document in the error.
pub fn parse_event<T: DeserializeOwned>(event: serde_json::Value, what: &str) -> Result<T> {
    let size = serde_json::to_vec(&event).map_or(0, |v| v.len());
    if size > MAX_REQUEST_BYTES {
        return Err(EventError::InvalidInput(format!(
            "the {what} is {size} bytes; the limit is {MAX_REQUEST_BYTES} bytes (name fewer pairs or partitions)"
        )));
    }
    serde_json::from_value(event)
        .map_err(|e| EventError::InvalidInput(format!("not a valid {what}: {e}")))
}

impl LookupRequest {
    /// Tell an on-demand request from a Glue event (it has a `detail-type`).
    pub fn parse(event: serde_json::Value) -> Result<LookupRequest> {
        if event.get("detail-type").is_some() {
            let e: GlueJobEvent = parse_event(event, "Glue Job State Change event")?;
            if e.detail_type != GLUE_JOB_STATE_CHANGE {
                return Err(EventError::InvalidInput(format!(
                    "event detail-type `{}` is not `{GLUE_JOB_STATE_CHANGE}`",
                    e.detail_type
                )));
            }
            Ok(LookupRequest::GlueJob(e))
        } else {
            parse_event(event, "on-demand request (pairs, partitions)").map(LookupRequest::OnDemand)
        }
    }
}

/// What the trigger function did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerOutput {
    /// The execution name (`glue-<jobRunId>`).
    pub execution_name: String,
    /// Whether this call started it (false: it already existed, or the run did not
    /// succeed).
    pub started: bool,
    /// The execution ARN when started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_arn: Option<String>,
}

/// The execution name for a Glue job run: `glue-<jobRunId>`, characters outside
/// `[A-Za-z0-9_-]` replaced by `_`, and when longer than 80 characters shortened
/// with a hash of the full id, so one job run always maps to one name.
pub fn execution_name(job_run_id: &str) -> String {
    let clean: String = job_run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("glue-{clean}");
    if name.len() <= EXECUTION_NAME_MAX {
        return name;
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(job_run_id.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{hash}", &name[..EXECUTION_NAME_MAX - hash.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_names_are_sanitised_and_bounded() {
        let id = format!("jr_{}", "0123456789abcdef".repeat(4));
        assert_eq!(execution_name(&id), format!("glue-{id}"));
        assert_eq!(execution_name("a b/c"), "glue-a_b_c");
        let long = "x".repeat(200);
        let name = execution_name(&long);
        assert_eq!(name.len(), EXECUTION_NAME_MAX);
        assert_ne!(name, execution_name(&"x".repeat(201)));
    }
}
