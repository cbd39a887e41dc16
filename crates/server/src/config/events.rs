//! `[events]`: platform events, the outbox relay and its sinks (docs/events.md).

use std::collections::BTreeSet;
use std::num::NonZeroU32;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::secrets::mask_required_secret;
use super::values::{AtLeast, Between, as_millis, as_seconds, count_u32};
use crate::limits;

/// Platform events: how the relay polls, retries and gives up, and where it delivers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EventsConfig {
    /// Whether this process runs a relay (`basin serve`). Several replicas may all run one.
    pub relay: bool,
    /// How often an idle relay looks for new or due events (`poll_interval_ms`, in
    /// milliseconds, at least 10).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<10>::millis"
    )]
    pub poll_interval_ms: Duration,
    /// Events one relay claims per sink and round, 1 to 1000.
    #[serde(deserialize_with = "Between::<1, { limits::EVENTS_BATCH_SIZE_MAX as u64 }>::count")]
    pub batch_size: NonZeroU32,
    /// A claimed delivery whose relay has not finished it within this long is taken up by
    /// another relay (`lease_ms`, in milliseconds, at least 100). Longer than every webhook's
    /// timeout.
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<100>::millis"
    )]
    pub lease_ms: Duration,
    /// Delivery attempts per event and sink before it is dead-lettered; at least 1.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub attempts_max: NonZeroU32,
    /// Wait before the first retry (`backoff_initial_ms`, in milliseconds); doubles with each
    /// attempt. At most `backoff_max_ms`.
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<0>::millis"
    )]
    pub backoff_initial_ms: Duration,
    /// Longest wait between two attempts (`backoff_max_ms`, in milliseconds).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<0>::millis"
    )]
    pub backoff_max_ms: Duration,
    /// Webhook endpoints, each receiving every event (or the types it lists).
    pub webhooks: Vec<WebhookConfig>,
    /// The NATS JetStream sink, when set.
    pub nats: Option<NatsConfig>,
}

impl Default for EventsConfig {
    fn default() -> Self {
        Self {
            relay: true,
            poll_interval_ms: Duration::from_millis(limits::EVENTS_POLL_INTERVAL_MS),
            batch_size: count_u32(limits::EVENTS_BATCH_SIZE),
            lease_ms: Duration::from_millis(limits::EVENTS_LEASE_MS),
            attempts_max: count_u32(limits::EVENTS_ATTEMPTS_MAX),
            backoff_initial_ms: Duration::from_millis(limits::EVENTS_BACKOFF_INITIAL_MS),
            backoff_max_ms: Duration::from_millis(limits::EVENTS_BACKOFF_MAX_MS),
            webhooks: Vec::new(),
            nats: None,
        }
    }
}

impl EventsConfig {
    /// Webhooks: unique names of a bounded length (they key the deliveries), http(s) URLs and
    /// well-formed signing secrets.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let mut names = BTreeSet::new();
        for webhook in &self.webhooks {
            if !names.insert(webhook.name.as_str()) {
                return Err(ConfigError::Inconsistent(format!(
                    "events.webhooks: the name '{}' is used twice",
                    webhook.name
                )));
            }
            if webhook.name.is_empty() || webhook.name.len() > limits::EVENTS_SINK_NAME_CHARS_MAX {
                return Err(ConfigError::Inconsistent(format!(
                    "events.webhooks: a name must have 1 to {} characters",
                    limits::EVENTS_SINK_NAME_CHARS_MAX
                )));
            }
            if url::Url::parse(&webhook.url)
                .map_or(true, |url| !matches!(url.scheme(), "http" | "https"))
            {
                return Err(ConfigError::Inconsistent(format!(
                    "events.webhooks '{}': url must be http(s)",
                    webhook.name
                )));
            }
            crate::webhook_signature::WebhookSecret::parse(webhook.secret.expose_secret())
                .map_err(|error| {
                    ConfigError::Inconsistent(format!(
                        "events.webhooks '{}': {error}",
                        webhook.name
                    ))
                })?;
        }
        Ok(())
    }
}

/// A webhook endpoint (Standard Webhooks signatures).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// A stable name, shown in dead letters; renaming it orphans the pending deliveries.
    pub name: String,
    /// Where events are POSTed.
    pub url: String,
    /// The signing secret, `whsec_` and base64 (Standard Webhooks).
    #[serde(serialize_with = "mask_required_secret")]
    pub secret: SecretString,
    /// Event types sent (`basin.transfer.finished`); every type when empty.
    #[serde(default)]
    pub types: Vec<String>,
    /// How long one POST may take (`timeout_ms`, in milliseconds, at least 1; shorter than
    /// `events.lease_ms`).
    #[serde(
        default = "default_webhook_timeout",
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<1>::millis"
    )]
    pub timeout_ms: Duration,
}

/// The NATS JetStream sink.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NatsConfig {
    /// Server URL (`nats://127.0.0.1:4222`).
    pub url: String,
    /// The stream, created on start if missing; it captures `<subject_prefix>.>`.
    #[serde(default = "default_nats_stream")]
    pub stream: String,
    /// Subjects are `<subject_prefix>.<type without "basin.">` (`basin.events.project.recycled`).
    #[serde(default = "default_nats_subject_prefix")]
    pub subject_prefix: String,
    /// JetStream's duplicate window on the stream (`duplicate_window_seconds`, in seconds): a
    /// redelivery within it is dropped by the server (`Nats-Msg-Id` is the event id).
    #[serde(
        default = "default_nats_duplicate_window",
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<0>::seconds"
    )]
    pub duplicate_window_seconds: Duration,
}

// The defaults of the two sink sections: each has a required key (`url`, `secret`), so
// neither has a `Default`, and its optional keys take these.

fn default_webhook_timeout() -> Duration {
    Duration::from_millis(limits::EVENTS_WEBHOOK_TIMEOUT_MS)
}

fn default_nats_stream() -> String {
    "BASIN_EVENTS".into()
}

fn default_nats_subject_prefix() -> String {
    "basin.events".into()
}

fn default_nats_duplicate_window() -> Duration {
    Duration::from_secs(limits::EVENTS_NATS_DUPLICATE_WINDOW_SECONDS)
}
