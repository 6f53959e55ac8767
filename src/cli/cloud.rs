//! The CLI's AWS side: S3 storage, the Glue catalog and SNS alerts, from the standard
//! credential chain. A build without the `aws` feature (what `make demo` builds) has
//! none of it: a run that needs AWS says how to get a build that has it.

use std::sync::Arc;

use glue_recon::alert::Alert;
use glue_recon::catalog::Catalog;
use glue_recon::completion::Completed;
use glue_recon::storage::Storage;

/// The AWS clients of a run, checked for a region and credentials.
#[cfg(feature = "aws")]
pub struct Aws {
    conf: aws_config::SdkConfig,
}

/// Never made: this build has no AWS support ([`connect`] says so).
#[cfg(not(feature = "aws"))]
pub enum Aws {}

/// The AWS clients, after checking that a region and credentials are set.
#[cfg(feature = "aws")]
pub async fn connect() -> anyhow::Result<Aws> {
    let conf = glue_recon::aws::load_config(env!("CARGO_PKG_NAME")).await;
    glue_recon::aws::check_setup(&conf).await?;
    Ok(Aws { conf })
}

/// This build cannot reach AWS: an error saying how to get one that can.
#[cfg(not(feature = "aws"))]
pub async fn connect() -> anyhow::Result<Aws> {
    anyhow::bail!(
        "this glue-recon was built without AWS support (s3://, glue://, --sns-topic and --event-bus need it); install the full build with `cargo install --path .` or build with `cargo build --release`"
    )
}

#[cfg(feature = "aws")]
impl Aws {
    /// Local storage with S3 added.
    pub fn storage(&self) -> Storage {
        glue_recon::aws::storage(&self.conf)
    }

    /// The Glue Data Catalog.
    pub fn catalog(&self) -> Arc<dyn Catalog> {
        glue_recon::aws::glue::catalog(&self.conf)
    }

    /// Publish `alert` to the SNS topic `topic`; the message id.
    pub async fn publish(&self, topic: &str, alert: &Alert) -> anyhow::Result<String> {
        let publisher = glue_recon::aws::sns::SnsPublisher::from_conf(&self.conf, topic);
        Ok(publisher.publish(alert).await?)
    }

    /// Put `events` on the EventBridge bus `bus`.
    pub async fn put_events(&self, bus: &str, events: &[Completed]) -> anyhow::Result<()> {
        let bus = glue_recon::aws::events::EventBus::from_conf(&self.conf, bus);
        Ok(bus.put(events).await?)
    }
}

#[cfg(not(feature = "aws"))]
impl Aws {
    /// Unreachable: there is no [`Aws`] in this build.
    pub fn storage(&self) -> Storage {
        match *self {}
    }

    /// Unreachable: there is no [`Aws`] in this build.
    pub fn catalog(&self) -> Arc<dyn Catalog> {
        match *self {}
    }

    /// Unreachable: there is no [`Aws`] in this build.
    pub async fn publish(&self, _topic: &str, _alert: &Alert) -> anyhow::Result<String> {
        match *self {}
    }

    /// Unreachable: there is no [`Aws`] in this build.
    pub async fn put_events(&self, _bus: &str, _events: &[Completed]) -> anyhow::Result<()> {
        match *self {}
    }
}
