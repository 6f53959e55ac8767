//! Shared wiring of the glue-recon Lambda functions (`recon-trigger`, `recon-lookup`,
//! `recon-hash`, `recon-merge`): the environment they read once at cold start, the
//! tracing setup, the AWS clients, and [`FunctionError`], which gives every failure
//! a stable `errorType` (`TableNotFound`, `CorruptParquet`, `Transient`, ...) for the
//! state machine's Retry and Catch. The decisions live in `recon_events::trigger`
//! and `recon_pipeline`; each function's `main.rs` only adapts.
//!
//! Without the `pipeline` feature (what `recon-trigger` uses) this crate needs no
//! engine: only the events crate and the AWS SDK setup.

use lambda_runtime::Diagnostic;
#[cfg(feature = "pipeline")]
use recon_engine::error::ReconError;
#[cfg(feature = "pipeline")]
use recon_engine::partial::ItemError;
use recon_events::bounded::{ERROR_MESSAGE_MAX, shortened};
use recon_events::error::EventError;
#[cfg(feature = "pipeline")]
use recon_pipeline::Pipeline;

/// The s3:// URI of recon.toml (lookup).
pub const RECON_CONFIG_URI: &str = "RECON_CONFIG_URI";
/// The work and report bucket (lookup, hash, merge).
pub(crate) const RECON_BUCKET: &str = "RECON_BUCKET";
/// The state machine the trigger starts.
pub const STATE_MACHINE_ARN: &str = "STATE_MACHINE_ARN";
/// The Glue database of the ledger (recon-merge: the alert's Athena statements name
/// it); unset or empty: `glue_recon`.
pub const RECON_LEDGER_DATABASE: &str = "RECON_LEDGER_DATABASE";
/// The Secrets Manager secret (ARN) holding the key of masked values' tokens
/// (recon-hash).
pub const RECON_MASK_KEY_SECRET: &str = "RECON_MASK_KEY_SECRET";
/// The CloudWatch namespace of recon-merge's metrics; unset or empty: `glue-recon`.
pub const RECON_METRICS_NAMESPACE: &str = "RECON_METRICS_NAMESPACE";
/// The EventBridge bus recon-merge puts "Reconciliation Completed" events on; unset or
/// empty: no events.
pub const RECON_EVENT_BUS: &str = "RECON_EVENT_BUS";
/// The Glue jobs the trigger's sweep looks at (comma-separated).
pub use recon_events::trigger::SWEEP_GLUE_JOBS;
/// The trigger's sweep window in hours.
pub use recon_events::trigger::SWEEP_LOOKBACK_HOURS;
/// Log filter (`info`, `recon_engine=debug`, ...).
pub(crate) const RUST_LOG: &str = "RUST_LOG";

/// A failed invocation as Lambda reports it: `errorType` and `errorMessage`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error_type}: {message}")]
pub struct FunctionError {
    /// Stable name (see docs/contracts.md): `InvalidConfig`, `InvalidInput`,
    /// `TableNotFound`, `CorruptParquet`, `SchemaMismatch`, `AccessDenied`, `AwsSetup`,
    /// `LocalStorage`, `Io`, `WriteFailed`, `Transient`.
    pub error_type: String,
    /// What went wrong, naming the URI, ARN or table.
    pub message: String,
}

impl From<EventError> for FunctionError {
    fn from(e: EventError) -> Self {
        FunctionError {
            error_type: e.error_type().to_string(),
            message: e.to_string(),
        }
    }
}

#[cfg(feature = "pipeline")]
impl From<ReconError> for FunctionError {
    fn from(e: ReconError) -> Self {
        FunctionError {
            error_type: e.error_type().to_string(),
            message: e.to_string(),
        }
    }
}

#[cfg(feature = "pipeline")]
impl From<ItemError> for FunctionError {
    fn from(e: ItemError) -> Self {
        FunctionError {
            error_type: e.error_type,
            message: e.message,
        }
    }
}

/// What Lambda reports: the message cut to [`ERROR_MESSAGE_MAX`] bytes, since it
/// becomes the failed state's `Cause` and the failure alert quotes it.
impl From<FunctionError> for Diagnostic {
    fn from(e: FunctionError) -> Self {
        Diagnostic {
            error_type: e.error_type,
            error_message: shortened(&e.message, ERROR_MESSAGE_MAX),
        }
    }
}

/// A required environment variable, or [`ReconError::InvalidConfig`] naming it.
pub fn required_env(name: &str) -> Result<String, FunctionError> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| {
            EventError::InvalidConfig {
                file: format!("environment variable {name}"),
                message: "is not set".into(),
            }
            .into()
        })
}

/// JSON logs to stdout (CloudWatch), filtered by `RUST_LOG` (default `info`).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(RUST_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(false)
        .without_time()
        .with_target(false)
        .init();
}

/// The AWS config (standard chain, retries; see `recon_aws_client::load_config`).
pub async fn aws_config(function: &str) -> aws_config::SdkConfig {
    recon_aws_client::load_config(function).await
}

/// Whether a function masks values, so reads the masking key at cold start.
#[cfg(feature = "pipeline")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Masking {
    /// It writes values (recon-hash): reads the secret `RECON_MASK_KEY_SECRET` names.
    ReadsKey,
    /// It never sees a value: the secret is not read even where the variable is set
    /// (as under `cargo lambda watch`, where every function shares one environment).
    NoKey,
}

/// The pipeline over `RECON_BUCKET`, with S3 storage and the Glue catalog; AWS calls
/// carry `function` in their user agent.
#[cfg(feature = "pipeline")]
pub(crate) async fn pipeline_from_env(
    function: &str,
    masking: Masking,
) -> Result<Pipeline, FunctionError> {
    let bucket = required_env(RECON_BUCKET)?;
    let conf = aws_config(function).await;
    let mut pipeline = Pipeline::new(
        recon_aws::storage(&conf),
        Some(recon_aws::glue::catalog(&conf)),
        &bucket,
    );
    if let Some(database) = std::env::var(RECON_LEDGER_DATABASE)
        .ok()
        .filter(|d| !d.trim().is_empty())
    {
        pipeline.athena_database = database;
    }
    if let Some(namespace) = std::env::var(RECON_METRICS_NAMESPACE)
        .ok()
        .filter(|n| !n.trim().is_empty())
    {
        pipeline.metrics_namespace = namespace;
    }
    if let Some(bus) = std::env::var(RECON_EVENT_BUS)
        .ok()
        .filter(|b| !b.trim().is_empty())
    {
        pipeline.events = Some(std::sync::Arc::new(recon_aws::events::EventBus::from_conf(
            &conf, bus,
        )));
    }
    // Only recon-hash masks values, and only its role may read the secret.
    let secret = std::env::var(RECON_MASK_KEY_SECRET).ok();
    if let Some(secret) = secret.filter(|s| !s.trim().is_empty() && masking == Masking::ReadsKey) {
        pipeline.mask_key = Some(recon_aws::secrets::mask_key(&conf, &secret).await?);
    }
    Ok(pipeline)
}

/// Serve events with `handler` over one [`Pipeline`] built at cold start (tracing
/// set up first, a missing `RECON_BUCKET` fails the start). The pipeline lives as
/// long as the process, so handlers borrow it for `'static`. `function` is the
/// binary's name (`env!("CARGO_BIN_NAME")`); `masking` says whether it reads the
/// masking key.
#[cfg(feature = "pipeline")]
pub async fn run_with_pipeline<H, Fut, R>(
    function: &str,
    masking: Masking,
    handler: H,
) -> Result<(), lambda_runtime::Error>
where
    H: Fn(&'static Pipeline, serde_json::Value) -> Fut,
    Fut: Future<Output = Result<R, FunctionError>>,
    R: serde::Serialize,
{
    init_tracing();
    let pipeline: &'static Pipeline =
        Box::leak(Box::new(pipeline_from_env(function, masking).await?));
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: lambda_runtime::LambdaEvent<serde_json::Value>| {
            handler(pipeline, event.payload)
        },
    ))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "pipeline")]
    #[test]
    fn diagnostics_carry_the_stable_name() {
        let e = ReconError::TableNotFound {
            location: "glue://db/t".into(),
            reason: "missing".into(),
        };
        let d: Diagnostic = FunctionError::from(e).into();
        assert_eq!(d.error_type, "TableNotFound");
        assert!(d.error_message.contains("glue://db/t"));
    }

    #[test]
    fn a_long_message_is_cut_to_the_cause_limit() {
        let e = FunctionError {
            error_type: "InvalidInput".into(),
            message: format!("no pair named x (known: {})", "pair, ".repeat(5_000)),
        };
        let d: Diagnostic = e.into();
        assert!(
            d.error_message.len() <= ERROR_MESSAGE_MAX,
            "{}",
            d.error_message.len()
        );
        assert!(d.error_message.starts_with("no pair named x") && d.error_message.ends_with("..."));
    }
}
