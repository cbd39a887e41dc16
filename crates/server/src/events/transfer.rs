//! The events of the conversion service: a transfer started, progressed, finished. Built here
//! so that their `data` is defined in one place, next to docs/events.md; recorded by the
//! transfer store in the transaction that changes the transfer's status.
//!
//! Progress is throttled by the worker: at most one event per 10 % step, checked at each
//! heartbeat, so a transfer yields at most ten progress events however long it runs.
//! Events carry no signed download URL (it would outlive its lifetime in a stream and grant
//! access to whoever reads the stream): `downloadReady` says that the transfer record, read
//! through the API, now has a `downloadPath`.

use serde_json::json;
use uuid::Uuid;

use crate::events::{EventType, NewEvent};
use crate::ids::{ProjectId, TenantId, TransferId};

/// Who and what a transfer event is about, read from the transfer row being changed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct TransferSubject {
    /// The transfer.
    pub(crate) id: TransferId,
    /// Its tenant (`customerid`).
    pub(crate) tenant_id: TenantId,
    /// Its project (`projectid`).
    pub(crate) project_id: Option<ProjectId>,
    /// Its creator (`userid`).
    pub(crate) created_by: Uuid,
    /// Import, Export, ...
    pub(crate) kind: String,
}

impl TransferSubject {
    fn event(&self, kind: EventType, data: serde_json::Value) -> NewEvent {
        NewEvent {
            kind,
            tenant: self.tenant_id,
            project: self.project_id,
            user: Some(self.created_by),
            resource: self.id.as_uuid(),
            data,
        }
    }

    /// A worker began running the transfer (attempt 1, or a later one after a worker died).
    pub(crate) fn started(&self, attempt: i64) -> NewEvent {
        self.event(
            EventType::TransferStarted,
            json!({ "kind": self.kind, "status": "InProgress", "attempt": attempt }),
        )
    }

    /// The running transfer reached `progress` percent.
    pub(crate) fn progress(&self, progress: u8) -> NewEvent {
        self.event(
            EventType::TransferProgress,
            json!({ "kind": self.kind, "status": "InProgress", "progress": progress }),
        )
    }

    /// The transfer ended with `status` (`Completed` or `Error`).
    pub(crate) fn finished(
        &self,
        status: &str,
        error_message: Option<&str>,
        import_results: &str,
        download_ready: bool,
    ) -> NewEvent {
        let import_results: serde_json::Value =
            serde_json::from_str(import_results).unwrap_or_else(|_| json!([]));
        self.event(
            EventType::TransferFinished,
            json!({
                "kind": self.kind,
                "status": status,
                "errorMessage": error_message,
                "importResults": import_results,
                "downloadReady": download_ready,
            }),
        )
    }
}

/// The columns of a [`TransferSubject`], for `RETURNING`.
pub(crate) const SUBJECT_COLUMNS: &str = "id, tenant_id, project_id, created_by, kind";
