//! # recon-aws
//!
//! The AWS adapters of the engine's and the history's ports: [`s3::S3Store`]
//! (`recon_engine::storage::ObjectStore` on S3), [`glue::GlueCatalog`]
//! (`recon_engine::catalog::Catalog` on the Glue Data Catalog) and
//! [`sns::SnsPublisher`] (alerts), [`events::EventBus`] (completion events), and the masking key from Secrets Manager
//! ([`secrets::mask_key`]). Each is built from one shared
//! [`aws_config::SdkConfig`] ([`load_config`]), so credentials, region, retries and an
//! emulator endpoint (`AWS_ENDPOINT_URL`) are decided in one place.
//!
//! ```no_run
//! # async fn demo() {
//! let conf = recon_aws::load_config("glue-recon").await;
//! let storage = recon_aws::storage(&conf);
//! let catalog = recon_aws::glue::GlueCatalog::from_conf(&conf);
//! # }
//! ```

pub mod events;
pub mod glue;
pub mod s3;
pub mod secrets;
pub mod sns;

use std::sync::Arc;
use std::time::Duration;

use aws_config::SdkConfig;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use recon_aws_client::{Failure, SdkFailure, sdk_failure};
pub use recon_aws_client::{MAX_ATTEMPTS, load_config};

use recon_engine::error::ReconError;
use recon_engine::storage::Storage;

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

/// Turn an SDK error into the engine's error, naming `resource` (an s3:// URI, a
/// glue:// table, a topic ARN). `not_found` builds the error for a missing resource
/// (a missing table is [`ReconError::TableNotFound`], a missing topic is not).
pub(crate) fn map_sdk_error<E>(
    err: SdkError<E, aws_sdk_s3::config::http::HttpResponse>,
    resource: &str,
    not_found: impl FnOnce(String) -> ReconError,
) -> ReconError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let SdkFailure { kind, reason } = sdk_failure(err);
    let resource = resource.to_string();
    match kind {
        Failure::NotFound => not_found(reason),
        Failure::Denied => ReconError::AccessDenied { resource, reason },
        Failure::Transient => ReconError::Transient { resource, reason },
        Failure::Invalid => ReconError::InvalidInput(format!("{resource}: {reason}")),
    }
}
