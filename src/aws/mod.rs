//! The AWS adapters of the engine's ports: [`s3::S3Store`] ([`crate::storage::ObjectStore`]
//! on S3), [`glue::GlueCatalog`] ([`crate::catalog::Catalog`] on the Glue Data Catalog)
//! [`glue::GlueJobs`] ([`crate::trigger::JobRuns`], Glue job runs),
//! [`sfn::StepFunctions`] ([`crate::trigger::Executions`]) and [`sns::SnsPublisher`] (alerts). Each is built from one shared
//! [`aws_config::SdkConfig`] ([`load_config`]), so credentials, region, retries and an
//! emulator endpoint (`AWS_ENDPOINT_URL`) are decided in one place.
//!
//! ```no_run
//! # async fn demo() {
//! let conf = glue_recon::aws::load_config("glue-recon").await;
//! let storage = glue_recon::aws::storage(&conf);
//! let catalog = glue_recon::aws::glue::GlueCatalog::from_conf(&conf);
//! # }
//! ```

pub mod glue;
pub mod s3;
pub mod sfn;
pub mod sns;

use std::sync::Arc;
use std::time::Duration;

use aws_config::AppName;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

use crate::error::ReconError;
use crate::storage::Storage;

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

/// Check that `conf` has what every AWS call needs, a region and credentials, before
/// the first call: without them each call would fail after its retries with the SDK's
/// whole error chain. The error says what is missing and how to set it.
pub async fn check_setup(conf: &SdkConfig) -> Result<(), ReconError> {
    use aws_credential_types::provider::ProvideCredentials;
    if conf.region().is_none() {
        return Err(ReconError::AwsSetup(
            "no AWS region is set: set AWS_REGION (e.g. `export AWS_REGION=eu-west-1`) or `region` in the profile of AWS_PROFILE".into(),
        ));
    }
    let Some(provider) = conf.credentials_provider() else {
        return Err(ReconError::AwsSetup(NO_CREDENTIALS.into()));
    };
    match tokio::time::timeout(Duration::from_secs(20), provider.provide_credentials()).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(ReconError::AwsSetup(format!("{NO_CREDENTIALS} ({e})"))),
        Err(_) => Err(ReconError::AwsSetup(format!(
            "{NO_CREDENTIALS} (looking them up took over 20 s)"
        ))),
    }
}

const NO_CREDENTIALS: &str = "no AWS credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (run `aws sso login` for an SSO profile), or run where a role provides them; for a local emulator set AWS_ENDPOINT_URL and any dummy keys";

/// Storage that serves local paths and `s3://` URIs (through [`s3::S3Store`]).
pub fn storage(conf: &SdkConfig) -> Storage {
    Storage::with_s3(Arc::new(s3::S3Store::from_conf(conf)))
}

/// How a failed AWS call is classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
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

/// Turn an SDK error into the engine's error, naming `resource` (an s3:// URI, a
/// glue:// table, a topic ARN). `not_found` builds the error for a missing resource
/// (a missing table is [`ReconError::TableNotFound`], a missing topic is not).
pub fn map_sdk_error<E>(
    err: SdkError<E, aws_sdk_s3::config::http::HttpResponse>,
    resource: &str,
    not_found: impl FnOnce(String) -> ReconError,
) -> ReconError
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
    let resource = resource.to_string();
    match kind {
        Failure::NotFound => not_found(reason),
        Failure::Denied => ReconError::AccessDenied { resource, reason },
        Failure::Transient => ReconError::Transient { resource, reason },
        Failure::Invalid => ReconError::InvalidInput(format!("{resource}: {reason}")),
    }
}
