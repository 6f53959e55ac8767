//! [`SnsPublisher`]: publishes an [`Alert`] to an SNS topic, with the message
//! attributes `status` (String) and `pair` (String.Array) for subscription filter
//! policies.

use aws_config::SdkConfig;
use aws_sdk_sns::Client;
use aws_sdk_sns::types::MessageAttributeValue;

use super::map_sdk_error;
use recon_engine::error::{ReconError, Result};
use recon_history::alert::Alert;

/// Publishes alerts to one topic.
#[derive(Debug, Clone)]
pub struct SnsPublisher {
    client: Client,
    topic_arn: String,
}

/// A message attribute of SNS data type `data_type` (`String`, or `String.Array`
/// whose value is JSON array text).
fn attribute(name: &str, data_type: &str, value: &str) -> Result<MessageAttributeValue> {
    MessageAttributeValue::builder()
        .data_type(data_type)
        .string_value(value)
        .build()
        .map_err(|e| ReconError::InvalidInput(format!("alert attribute `{name}`: {e}")))
}

impl SnsPublisher {
    /// A publisher to `topic_arn` on the given config.
    pub fn from_conf(conf: &SdkConfig, topic_arn: impl Into<String>) -> Self {
        SnsPublisher {
            client: Client::new(conf),
            topic_arn: topic_arn.into(),
        }
    }

    /// The topic.
    pub fn topic_arn(&self) -> &str {
        &self.topic_arn
    }

    /// Publish the alert; returns the SNS message id.
    pub async fn publish(&self, alert: &Alert) -> Result<String> {
        let arn = self.topic_arn.as_str();
        let out = self
            .client
            .publish()
            .topic_arn(arn)
            .subject(&alert.subject)
            .message(&alert.message)
            .message_attributes(
                "status",
                attribute("status", "String", &alert.attributes.status)?,
            )
            .message_attributes(
                "pair",
                attribute("pair", "String.Array", &alert.attributes.pair)?,
            )
            .send()
            .await
            .map_err(|e| {
                map_sdk_error(e, arn, |reason| {
                    ReconError::InvalidInput(format!("SNS topic {arn} does not exist: {reason}"))
                })
            })?;
        Ok(out.message_id().unwrap_or_default().to_string())
    }
}
