//! The masking key from AWS Secrets Manager: the secret the template creates
//! (`MaskKeySecret`), named to the hash function by `RECON_MASK_KEY_SECRET`.

use aws_config::SdkConfig;
use recon_engine::error::{ReconError, Result};
use recon_engine::mask::MaskKey;

use crate::map_sdk_error;

/// The masking key held by secret `secret_id` (an ARN or a name): its string value,
/// or its binary value.
pub async fn mask_key(conf: &SdkConfig, secret_id: &str) -> Result<MaskKey> {
    let client = aws_sdk_secretsmanager::Client::new(conf);
    let out = client
        .get_secret_value()
        .secret_id(secret_id)
        .send()
        .await
        .map_err(|e| {
            match map_sdk_error(e, secret_id, |reason| ReconError::InvalidConfig {
                file: "environment variable RECON_MASK_KEY_SECRET".into(),
                message: format!("secret {secret_id} not found: {reason}"),
            }) {
                ReconError::AccessDenied { resource, reason } => ReconError::AccessDenied {
                    reason: format!(
                        "{reason}; the function's role needs secretsmanager:GetSecretValue on \
                         {resource} and kms:Decrypt on its key"
                    ),
                    resource,
                },
                e => e,
            }
        })?;
    let bytes: &[u8] = match (out.secret_string(), out.secret_binary()) {
        (Some(text), _) => text.as_bytes(),
        (None, Some(blob)) => blob.as_ref(),
        (None, None) => &[],
    };
    MaskKey::new(bytes, &format!("secret {secret_id}"))
}
