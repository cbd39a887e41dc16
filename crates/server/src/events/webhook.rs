//! The webhook sink: an HTTP POST of the CloudEvents JSON (structured mode), signed as the
//! Standard Webhooks specification says.
//!
//! Status decisions: 2xx is delivered. 408, 425, 429 and 5xx, timeouts and connection errors
//! are retried with backoff. Any other 4xx means the receiver refuses this event (bad
//! signature, unknown type, gone): retrying the same bytes cannot help, so it is dead-lettered
//! at once, and an operator replays it after fixing the receiver. 3xx is not followed (the
//! configured URL is the endpoint) and counts as a refusal.

use secrecy::ExposeSecret;

use crate::clock::Clock;
use crate::config::WebhookConfig;
use crate::events::sink::{DeliveryError, Outgoing, Sink};
use crate::webhook_signature::WebhookSecret;

/// Content type of CloudEvents JSON in structured mode.
const CLOUDEVENTS_JSON: &str = "application/cloudevents+json";

/// One configured webhook endpoint.
#[derive(Debug)]
pub(crate) struct WebhookSink {
    name: String,
    url: String,
    secret: WebhookSecret,
    types: Vec<String>,
    client: reqwest::Client,
    clock: std::sync::Arc<dyn Clock>,
}

impl WebhookSink {
    /// The sink of `config`; fails on a malformed secret (config checks it first).
    pub(crate) fn new(
        config: &WebhookConfig,
        clock: std::sync::Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let secret = WebhookSecret::parse(config.secret.expose_secret())?;
        let client = reqwest::Client::builder()
            .timeout(config.timeout_ms)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            name: format!("webhook:{}", config.name),
            url: config.url.clone(),
            secret,
            types: config.types.clone(),
            client,
            clock,
        })
    }
}

#[async_trait::async_trait]
impl Sink for WebhookSink {
    fn name(&self) -> &str {
        &self.name
    }

    fn accepts(&self, event_type: &str) -> bool {
        self.types.is_empty() || self.types.iter().any(|wanted| wanted == event_type)
    }

    async fn deliver(&self, event: &Outgoing) -> Result<(), DeliveryError> {
        let id = event.id.to_string();
        let timestamp = self.clock.now().timestamp();
        let signature = self.secret.sign(&id, timestamp, event.body.as_bytes());
        let response = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, CLOUDEVENTS_JSON)
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(event.body.clone())
            .send()
            .await
            .map_err(|error| DeliveryError::Retry(describe(error)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let message = format!("the endpoint answered {status}");
        let retry = status.is_server_error() || matches!(status.as_u16(), 408 | 425 | 429);
        Err(if retry {
            DeliveryError::Retry(message)
        } else {
            DeliveryError::Refused(message)
        })
    }
}

/// A transport error without the URL (it may carry credentials in its query).
fn describe(error: reqwest::Error) -> String {
    if error.is_timeout() {
        "the endpoint did not answer in time".to_owned()
    } else if error.is_connect() {
        "cannot connect to the endpoint".to_owned()
    } else {
        format!("the request failed: {}", error.without_url())
    }
}
