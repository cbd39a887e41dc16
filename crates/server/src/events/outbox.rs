//! SQL of the outbox: the one write areas make.

use chrono::{DateTime, Utc};

use crate::db::{StoreResult, Tx};
use crate::events::{CloudEvent, NewEvent};
use crate::on_tx;

/// Records `event`, happening at `now`, inside the transaction of the change it reports.
pub(crate) async fn record_in(
    tx: &mut Tx,
    event: &NewEvent,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    let envelope = CloudEvent::of(event, now);
    let body = serde_json::to_string(&envelope).unwrap_or_default();
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO event_outbox (id, event_type, ordering_key, body, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(envelope.id)
        .bind(envelope.event_type)
        .bind(event.resource.to_string())
        .bind(body)
        .bind(now)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(())
}
