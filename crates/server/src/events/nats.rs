//! The NATS JetStream sink: one stream capturing `<prefix>.>`, one subject per event type
//! (`basin.events.transfer.finished`). Each publish waits for JetStream's acknowledgement and
//! carries `Nats-Msg-Id` = the event id, so a relay that published, crashed before recording the
//! delivery and publishes again within the stream's duplicate window is deduplicated by the
//! server.
//!
//! The connection is made lazily and kept, and the stream is created on the first delivery (and
//! again if an operator deletes it): a NATS server that is down when Basin starts delays
//! events (they are retried) but never stops the server from starting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_nats::jetstream;
use tokio::sync::OnceCell;

use crate::config::NatsConfig;
use crate::events::sink::{DeliveryError, Outgoing, Sink};

/// The NATS JetStream sink.
#[derive(Debug)]
pub(crate) struct NatsSink {
    config: NatsConfig,
    context: OnceCell<jetstream::Context>,
    /// Whether the stream is known to exist as configured; cleared when a publish finds no
    /// stream (deleted by an operator), so the next delivery creates it again.
    stream_ready: AtomicBool,
}

impl NatsSink {
    /// The sink of `config`; connects on first use.
    pub(crate) fn new(config: &NatsConfig) -> Self {
        Self {
            config: config.clone(),
            context: OnceCell::new(),
            stream_ready: AtomicBool::new(false),
        }
    }

    /// The subject of events of `event_type`: the prefix, then the type without its `basin.`.
    pub(crate) fn subject(prefix: &str, event_type: &str) -> String {
        let suffix = event_type.strip_prefix("basin.").unwrap_or(event_type);
        format!("{prefix}.{suffix}")
    }

    /// The JetStream context, connecting on first use (the client reconnects by itself).
    async fn context(&self) -> Result<&jetstream::Context, DeliveryError> {
        self.context
            .get_or_try_init(|| async {
                let client = async_nats::ConnectOptions::new()
                    .connection_timeout(Duration::from_secs(5))
                    .connect(self.config.url.as_str())
                    .await
                    .map_err(|error| retry("cannot connect to NATS", &error))?;
                Ok(jetstream::new(client))
            })
            .await
    }

    /// Makes sure the stream exists: created, or its subjects and duplicate window brought in
    /// line with the configuration (its other settings are the operator's).
    async fn ensure_stream(&self, context: &jetstream::Context) -> Result<(), DeliveryError> {
        if self.stream_ready.load(Ordering::Relaxed) {
            return Ok(());
        }
        let wanted = jetstream::stream::Config {
            name: self.config.stream.clone(),
            subjects: vec![format!("{}.>", self.config.subject_prefix)],
            duplicate_window: self.config.duplicate_window_seconds,
            ..Default::default()
        };
        let mut stream = context
            .get_or_create_stream(wanted.clone())
            .await
            .map_err(|error| retry("cannot create the NATS stream", &error))?;
        let info = stream
            .info()
            .await
            .map_err(|error| retry("cannot read the NATS stream", &error))?;
        if info.config.subjects != wanted.subjects
            || info.config.duplicate_window != wanted.duplicate_window
        {
            let mut updated = info.config.clone();
            updated.subjects = wanted.subjects;
            updated.duplicate_window = wanted.duplicate_window;
            context
                .update_stream(updated)
                .await
                .map_err(|error| retry("cannot update the NATS stream", &error))?;
        }
        self.stream_ready.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// A failed publish or acknowledgement as a delivery error; a missing stream is created
    /// again on the next delivery, and a message larger than the server takes is refused.
    fn publish_failed(&self, error: &jetstream::context::PublishError) -> DeliveryError {
        use jetstream::context::PublishErrorKind;
        match error.kind() {
            PublishErrorKind::StreamNotFound => {
                self.stream_ready.store(false, Ordering::Relaxed);
                retry("the NATS stream is gone", error)
            }
            PublishErrorKind::MaxPayloadExceeded => {
                DeliveryError::Refused(format!("NATS refused the event: {error}"))
            }
            _ => retry("cannot publish to NATS", error),
        }
    }
}

fn retry(what: &str, error: &dyn std::fmt::Display) -> DeliveryError {
    DeliveryError::Retry(format!("{what}: {error}"))
}

#[async_trait::async_trait]
impl Sink for NatsSink {
    fn name(&self) -> &str {
        "nats"
    }

    fn accepts(&self, _event_type: &str) -> bool {
        true
    }

    async fn deliver(&self, event: &Outgoing) -> Result<(), DeliveryError> {
        let context = self.context().await?;
        self.ensure_stream(context).await?;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(
            async_nats::header::NATS_MESSAGE_ID,
            event.id.to_string().as_str(),
        );
        headers.insert("content-type", "application/cloudevents+json");
        let subject = Self::subject(&self.config.subject_prefix, &event.event_type);
        let acknowledgement = context
            .publish_with_headers(subject, headers, event.body.clone().into())
            .await
            .map_err(|error| self.publish_failed(&error))?;
        acknowledgement
            .await
            .map_err(|error| self.publish_failed(&error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::NatsSink;

    #[test]
    fn each_event_type_has_its_subject_under_the_prefix() {
        assert_eq!(
            NatsSink::subject("basin.events", "basin.project.recycled"),
            "basin.events.project.recycled"
        );
        assert_eq!(
            NatsSink::subject("acme", "basin.transfer.finished"),
            "acme.transfer.finished"
        );
    }
}
