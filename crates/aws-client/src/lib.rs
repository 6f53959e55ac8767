//! # recon-aws-client
//!
//! What every AWS adapter of glue-recon shares, and nothing of tables or events: one
//! [`aws_config::SdkConfig`] ([`load_config`]: credentials, region, retries, timeouts
//! and an emulator endpoint from `AWS_ENDPOINT_URL`, decided in one place) and the
//! classification of a failed SDK call ([`SdkFailure`]), which each adapter turns into
//! its crate's error.

use std::time::Duration;

use aws_config::AppName;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_runtime_api::http::Response;
use aws_smithy_types::error::display::DisplayErrorContext;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

/// Attempts per AWS call (the first one included) under the SDK's standard retry
/// mode: throttling, 5xx and timeouts are retried with exponential backoff and jitter.
pub const MAX_ATTEMPTS: u32 = 5;

/// Load the AWS config from the standard chain (environment, profile, SSO, web
/// identity, container and instance credentials; `AWS_REGION`; `AWS_ENDPOINT_URL`),
/// with standard-mode retries ([`MAX_ATTEMPTS`]) and connect/attempt timeouts.
/// `app` (`glue-recon`, `recon-hash`, ...) goes into the user agent of every call
/// (`app/<app>`), so CloudTrail and S3 access logs tell which part made it.
pub async fn load_config(app: &str) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    match AppName::new(app.to_string()) {
        Ok(name) => loader = loader.app_name(name),
        Err(e) => tracing::warn!(app, "not a valid user-agent app name: {e}"),
    }
    loader
        .retry_config(RetryConfig::standard().with_max_attempts(MAX_ATTEMPTS))
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(10))
                .operation_attempt_timeout(Duration::from_secs(120))
                .build(),
        )
        .load()
        .await
}

/// How a failed AWS call is classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The bucket, key, database, table or topic does not exist.
    NotFound,
    /// Credentials were refused or lack a permission.
    Denied,
    /// Worth retrying later: throttling, 5xx, timeouts, connection failures.
    Transient,
    /// The request itself is wrong.
    Invalid,
}

fn classify<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>, status: Option<u16>) -> Failure {
    match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            return Failure::Transient;
        }
        SdkError::ConstructionFailure(_) => return Failure::Invalid,
        _ => {}
    }
    let code = err.code().unwrap_or_default();
    match code {
        "NoSuchBucket"
        | "NoSuchKey"
        | "NotFound"
        | "EntityNotFoundException"
        | "NotFoundException" => return Failure::NotFound,
        "AccessDenied"
        | "AccessDeniedException"
        | "AuthorizationError"
        | "InvalidAccessKeyId"
        | "SignatureDoesNotMatch"
        | "ExpiredToken"
        | "UnrecognizedClientException" => {
            return Failure::Denied;
        }
        _ => {}
    }
    if code.contains("Throttl") || code == "SlowDown" || code.contains("Timeout") {
        return Failure::Transient;
    }
    match status {
        Some(403) | Some(401) => Failure::Denied,
        Some(404) => Failure::NotFound,
        Some(s) if s >= 500 || s == 429 => Failure::Transient,
        _ => Failure::Invalid,
    }
}

/// A failed SDK call: its class and a reason naming the service's code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkFailure {
    /// What kind of failure it is.
    pub kind: Failure,
    /// `Code: message` from the service, or the SDK's own description.
    pub reason: String,
}

/// Classify an SDK error of any client.
pub fn sdk_failure<E>(err: SdkError<E, Response>) -> SdkFailure
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let status = err.raw_response().map(|r| r.status().as_u16());
    let kind = classify(&err, status);
    let reason = match (err.code(), err.message()) {
        (Some(code), Some(msg)) => format!("{code}: {msg}"),
        (Some(code), None) => code.to_string(),
        _ => DisplayErrorContext(&err).to_string(),
    };
    SdkFailure { kind, reason }
}

/// The reason of a refused call on Glue job `job`, with the permission `role` needs.
pub fn job_permission_hint(reason: &str, job: &str, call: &str, role: &str) -> String {
    format!(
        "{reason}; {role} needs glue:{call} on the job (arn:<partition>:glue:<region>:<account>:job/{job}; \
         the template grants it for the jobs of its GlueJobNames parameter)"
    )
}
