//! Where the relay delivers events: one trait, one module per kind of sink (webhook, NATS).
//! A sink delivers one event and says whether it got there; retries, order and dead letters
//! are the relay's, so every sink gets the same guarantees.

use std::sync::Arc;

use uuid::Uuid;

/// One event on its way to a sink: the stored CloudEvents JSON and what routing needs.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// The CloudEvents `id` (also the webhook id and the NATS message id).
    pub(crate) id: Uuid,
    /// The CloudEvents `type` (`basin.transfer.finished`).
    pub(crate) event_type: String,
    /// The CloudEvents JSON, exactly as recorded.
    pub(crate) body: String,
}

/// Why a delivery failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DeliveryError {
    /// It may work later (timeout, connection refused, 5xx, 429): retry with backoff.
    #[error("{0}")]
    Retry(String),
    /// The sink refused this event and would refuse it again (a 4xx): dead-letter it now.
    #[error("{0}")]
    Refused(String),
}

/// A destination of events.
#[async_trait::async_trait]
pub(crate) trait Sink: Send + Sync + std::fmt::Debug {
    /// The sink's stable name in delivery rows (`webhook:<name>`, `nats`).
    fn name(&self) -> &str;

    /// Whether this sink takes events of `event_type` (webhook type filters).
    fn accepts(&self, event_type: &str) -> bool;

    /// Delivers one event. Must be idempotent for the receiver's sake: the relay may deliver an
    /// event again after a crash (at least once).
    async fn deliver(&self, event: &Outgoing) -> Result<(), DeliveryError>;
}

/// The configured sinks.
pub(crate) type Sinks = Vec<Arc<dyn Sink>>;
