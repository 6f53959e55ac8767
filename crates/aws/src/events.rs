//! [`EventBus`]: puts "Reconciliation Completed" events
//! ([`recon_history::completion`]) on an EventBridge bus (`default` unless the stack
//! names another), ten to a PutEvents call, as EventBridge takes them.

use aws_config::SdkConfig;
use aws_sdk_eventbridge::Client;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use futures::FutureExt;
use futures::future::BoxFuture;

use super::map_sdk_error;
use recon_engine::error::{ReconError, Result};
use recon_history::completion::{Completed, DETAIL_TYPE, EventSink, SOURCE};

/// Entries per PutEvents call (EventBridge's limit).
const ENTRIES_PER_CALL: usize = 10;

/// An EventBridge bus, by name or ARN.
#[derive(Debug, Clone)]
pub struct EventBus {
    client: Client,
    bus: String,
}

impl EventBus {
    /// The bus `bus` (`default`, a name or an ARN) on the given config.
    pub fn from_conf(conf: &SdkConfig, bus: impl Into<String>) -> Self {
        EventBus {
            client: Client::new(conf),
            bus: bus.into(),
        }
    }

    /// Put every event on the bus; an entry EventBridge refuses is an error naming
    /// the bus and the pair (PutEvents is retried by the caller's retry of the run).
    pub async fn put(&self, events: &[Completed]) -> Result<()> {
        let bus = self.bus.as_str();
        for chunk in events.chunks(ENTRIES_PER_CALL) {
            let entries = chunk
                .iter()
                .map(|e| {
                    Ok(PutEventsRequestEntry::builder()
                        .event_bus_name(bus)
                        .source(SOURCE)
                        .detail_type(DETAIL_TYPE)
                        .detail(serde_json::to_string(e).map_err(|err| {
                            ReconError::InvalidInput(format!("event of pair {}: {err}", e.pair))
                        })?)
                        .build())
                })
                .collect::<Result<Vec<_>>>()?;
            let out = self
                .client
                .put_events()
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| {
                    map_sdk_error(e, bus, |reason| {
                        ReconError::InvalidInput(format!(
                            "EventBridge bus {bus} does not exist: {reason}"
                        ))
                    })
                })?;
            if out.failed_entry_count() > 0 {
                let (pair, why) = chunk
                    .iter()
                    .zip(out.entries())
                    .find(|(_, r)| r.error_code().is_some())
                    .map(|(e, r)| {
                        (
                            e.pair.clone(),
                            format!(
                                "{}: {}",
                                r.error_code().unwrap_or_default(),
                                r.error_message().unwrap_or_default()
                            ),
                        )
                    })
                    .unwrap_or_default();
                return Err(ReconError::Transient {
                    resource: bus.to_string(),
                    reason: format!(
                        "EventBridge refused {} of {} events (first: pair {pair}, {why})",
                        out.failed_entry_count(),
                        chunk.len()
                    ),
                });
            }
        }
        Ok(())
    }
}

impl EventSink for EventBus {
    fn send<'a>(&'a self, events: &'a [Completed]) -> BoxFuture<'a, Result<()>> {
        self.put(events).boxed()
    }
}
