//! Platform events (docs/events.md): CloudEvents 1.0 written to an outbox in the
//! same transaction as the change they report, then relayed to webhooks and NATS JetStream.
//!
//! Areas call [`record_in`] inside their write transaction and nothing else: whether and where
//! an event goes is the relay's business, so a failing sink can never undo or delay a change.

pub(crate) mod admin;
mod nats;
mod outbox;
pub(crate) mod relay;
pub(crate) mod routes;
mod sink;
mod store;
pub(crate) mod transfer;
mod webhook;

pub(crate) use outbox::record_in;
pub(crate) use routes::router;

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::clock::Clock;
use crate::config::EventsConfig;
use crate::ids::{ProjectId, TenantId};

/// The sinks `config` names: each webhook, then NATS. Fails on a malformed webhook secret.
pub(crate) fn sinks_from(
    config: &EventsConfig,
    clock: &std::sync::Arc<dyn Clock>,
) -> anyhow::Result<sink::Sinks> {
    let mut sinks: sink::Sinks = Vec::new();
    for webhook in &config.webhooks {
        sinks.push(std::sync::Arc::new(webhook::WebhookSink::new(
            webhook,
            clock.clone(),
        )?));
    }
    if let Some(nats) = &config.nats {
        sinks.push(std::sync::Arc::new(nats::NatsSink::new(nats)));
    }
    Ok(sinks)
}

crate::wire_enum! {
    /// Every event type Basin emits; docs/events.md shows each with an example.
    pub(crate) enum EventType {
        /// A project or subproject went to the recycle bin.
        ProjectRecycled,
        /// A project or subproject came back from the recycle bin.
        ProjectRestored,
        /// A project or subproject was removed for good (purge or retention).
        ProjectPurged,
        /// A dataset went to the recycle bin.
        DatasetRecycled,
        /// A dataset came back from the recycle bin.
        DatasetRestored,
        /// A dataset was removed for good (purge, retention, or with its project).
        DatasetPurged,
        /// A transfer began running.
        TransferStarted,
        /// A running transfer reported progress.
        TransferProgress,
        /// A transfer ended (Completed or Error).
        TransferFinished,
    }
}

impl EventType {
    /// The CloudEvents `type` attribute.
    pub(crate) fn cloud_event_type(self) -> &'static str {
        match self {
            Self::ProjectRecycled => "basin.project.recycled",
            Self::ProjectRestored => "basin.project.restored",
            Self::ProjectPurged => "basin.project.purged",
            Self::DatasetRecycled => "basin.dataset.recycled",
            Self::DatasetRestored => "basin.dataset.restored",
            Self::DatasetPurged => "basin.dataset.purged",
            Self::TransferStarted => "basin.transfer.started",
            Self::TransferProgress => "basin.transfer.progress",
            Self::TransferFinished => "basin.transfer.finished",
        }
    }

    /// The CloudEvents `source` attribute: the service that made the change.
    fn source(self) -> &'static str {
        match self {
            Self::TransferStarted | Self::TransferProgress | Self::TransferFinished => {
                "/basin/conversion"
            }
            _ => "/basin/metadata",
        }
    }

    /// The collection the subject names (`projects/<id>`).
    fn collection(self) -> &'static str {
        match self {
            Self::ProjectRecycled | Self::ProjectRestored | Self::ProjectPurged => "projects",
            Self::DatasetRecycled | Self::DatasetRestored | Self::DatasetPurged => "datasets",
            Self::TransferStarted | Self::TransferProgress | Self::TransferFinished => "transfers",
        }
    }
}

/// Records `count` `basin.transfer.progress` events about `resources` made-up transfers
/// (round robin; `data` is `{"n": <0..count>, "progress": 0}`), in transactions of at most
/// 1,000 events, with the store's ordinary write path. For the relay's tests and benchmark
/// only: not part of Basin's interface.
#[doc(hidden)]
pub async fn record_sample_events(
    db: &crate::db::Db,
    tenant: TenantId,
    count: usize,
    resources: usize,
) -> anyhow::Result<Vec<Uuid>> {
    let subjects: Vec<Uuid> = (0..resources.max(1)).map(|_| Uuid::now_v7()).collect();
    let mut n = 0;
    while n < count {
        let mut tx = db.begin().await?;
        for _ in 0..1_000 {
            if n == count {
                break;
            }
            let resource = subjects
                .get(n % subjects.len())
                .copied()
                .unwrap_or_default();
            let event = NewEvent {
                kind: EventType::TransferProgress,
                tenant,
                project: None,
                user: None,
                resource,
                data: serde_json::json!({ "n": n, "progress": 0 }),
            };
            record_in(&mut tx, &event, Utc::now()).await?;
            n += 1;
        }
        tx.commit().await?;
    }
    Ok(subjects)
}

/// One event as an area reports it.
#[derive(Debug, Clone)]
pub(crate) struct NewEvent {
    /// What happened.
    pub(crate) kind: EventType,
    /// The tenant (CloudEvents extension `customerid`).
    pub(crate) tenant: TenantId,
    /// The project concerned (`projectid`): the project itself, or the one holding the
    /// dataset or transfer.
    pub(crate) project: Option<ProjectId>,
    /// Who made the change (`userid`); `None` for the platform's own jobs (retention).
    pub(crate) user: Option<Uuid>,
    /// The resource the event is about (`resourceid`); events of one resource are delivered
    /// in the order they were recorded.
    pub(crate) resource: Uuid,
    /// The `data` member.
    pub(crate) data: serde_json::Value,
}

/// The CloudEvents 1.0 JSON form of an event (structured content mode).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CloudEvent {
    /// Always `1.0`.
    pub(crate) specversion: &'static str,
    /// Unique per event; receivers deduplicate on it (delivery is at least once).
    pub(crate) id: Uuid,
    /// The service that made the change.
    pub(crate) source: &'static str,
    /// The event type.
    #[serde(rename = "type")]
    pub(crate) event_type: &'static str,
    /// When the change happened, RFC 3339 in UTC.
    pub(crate) time: String,
    /// `projects/<id>`, `datasets/<id>` or `transfers/<id>`.
    pub(crate) subject: String,
    /// Always `application/json`.
    pub(crate) datacontenttype: &'static str,
    /// Tenant id.
    pub(crate) customerid: TenantId,
    /// Project id, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) projectid: Option<ProjectId>,
    /// User id, when a user made the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) userid: Option<Uuid>,
    /// The resource's id.
    pub(crate) resourceid: Uuid,
    /// Type-specific payload.
    pub(crate) data: serde_json::Value,
}

impl CloudEvent {
    /// The envelope of `event`, happening at `time`.
    pub(crate) fn of(event: &NewEvent, time: DateTime<Utc>) -> Self {
        Self {
            specversion: "1.0",
            id: Uuid::now_v7(),
            source: event.kind.source(),
            event_type: event.kind.cloud_event_type(),
            time: time.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            subject: format!("{}/{}", event.kind.collection(), event.resource),
            datacontenttype: "application/json",
            customerid: event.tenant,
            projectid: event.project,
            userid: event.user,
            resourceid: event.resource,
            data: event.data.clone(),
        }
    }
}
