//! SQL of the relay: turning outbox rows into one delivery row per sink (dispatch), claiming
//! the deliveries that may go now, recording how they went, pruning, and the dead letters.
//!
//! The deliveries are a leased queue (`crate::leases`) whose attempts are the failures a relay
//! records: a relay that dies mid-delivery costs an event nothing, and its lease runs out.
//! What is the relay's own: a claim takes a batch of one sink's deliveries, a delivery that
//! arrived is deleted, and one that failed waits for its `next_attempt_at` or, refused or out
//! of attempts, is a dead letter.
//!
//! Order per resource: a delivery may be claimed only when no earlier delivery of its
//! `ordering_key` for the same sink is still pending, no other one is in flight, and no earlier
//! outbox row of the key is undispatched. Dead letters do not hold later events back (see
//! docs/events.md, "Dead letters").

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::{Arg, Db, Sql, StoreResult, Tx};
use crate::events::sink::{Outgoing, Sinks};
use crate::leases::{Counting, LeasedTable, Retry};
use crate::{on_db, on_tx};

/// The delivery queue: a claim picks by `seq` within one sink, and only a recorded failure is
/// an attempt.
const DELIVERIES: LeasedTable = LeasedTable {
    name: "event_deliveries",
    key: "seq",
    counting: Counting::PerFailure,
};

/// The advisory lock that lets one relay at a time dispatch on PostgreSQL ("basin ev").
const DISPATCH_LOCK: i64 = 0x6261_7369_6e20_6576;

/// An outbox row being dispatched.
#[derive(Debug, sqlx::FromRow)]
struct Undispatched {
    seq: i64,
    id: Uuid,
    event_type: String,
    ordering_key: String,
    body: String,
}

/// Delivery rows one INSERT makes at most: 4 values each keeps a statement far below SQLite's
/// 32,766 bound parameters.
const DELIVERIES_PER_INSERT: usize = 500;

/// Makes the delivery rows of up to `limit` undispatched outbox rows, oldest first, one per
/// sink that takes the event's type; rows no sink takes are logged (and later pruned). Returns
/// how many outbox rows were dispatched.
///
/// On PostgreSQL one relay dispatches at a time (a transaction-scoped advisory lock; the others
/// skip this step for the round). Rows are marked by their own seq, never by a seq range: a
/// lower seq may commit after a higher one was dispatched, and must still be found later.
pub(crate) async fn dispatch(
    db: &Db,
    sinks: &Sinks,
    now: DateTime<Utc>,
    limit: u32,
) -> StoreResult<u64> {
    let mut tx = db.begin().await?;
    if let Tx::Postgres(transaction) = &mut tx {
        let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
            .bind(DISPATCH_LOCK)
            .fetch_one(&mut **transaction)
            .await?;
        if !locked {
            return Ok(0);
        }
    }
    let rows: Vec<Undispatched> = on_tx!(&mut tx, |conn| {
        sqlx::query_as(
            "UPDATE event_outbox SET dispatched = TRUE WHERE seq IN (SELECT seq FROM event_outbox \
             WHERE dispatched = FALSE ORDER BY seq LIMIT $1) \
             RETURNING seq, id, event_type, ordering_key, body",
        )
        .bind(i64::from(limit))
        .fetch_all(conn)
        .await
    })?;
    if rows.is_empty() {
        tx.rollback().await?;
        return Ok(0);
    }
    let mut pairs = Vec::new();
    for row in &rows {
        let mut taken = false;
        for sink in sinks.iter().filter(|sink| sink.accepts(&row.event_type)) {
            taken = true;
            pairs.push((row, sink.name()));
        }
        if !taken {
            tracing::debug!(event = %row.id, r#type = %row.event_type, body = %row.body, "event (no sink takes it)");
        }
    }
    for chunk in pairs.chunks(DELIVERIES_PER_INSERT) {
        let mut sql = Sql::new(
            "INSERT INTO event_deliveries (seq, sink, ordering_key, state, attempts, next_attempt_at) VALUES ",
        );
        let time = sql.arg(Arg::Time(now));
        for (index, (row, sink)) in chunk.iter().enumerate() {
            let seq = sql.arg(Arg::I64(row.seq));
            let sink = sql.arg(Arg::Text((*sink).to_owned()));
            let key = sql.arg(Arg::Text(row.ordering_key.clone()));
            let separator = if index == 0 { "" } else { ", " };
            sql.push(&format!(
                "{separator}({seq}, {sink}, {key}, 'pending', 0, {time})"
            ));
        }
        sql.push(" ON CONFLICT (seq, sink) DO NOTHING RETURNING seq");
        sql.fetch_all_in::<(i64,)>(&mut tx).await?;
    }
    tx.commit().await?;
    Ok(u64::try_from(rows.len()).unwrap_or(u64::MAX))
}

/// A delivery claimed by a relay.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Claimed {
    /// Outbox position.
    pub(crate) seq: i64,
    /// Attempts made before this one.
    pub(crate) attempts: i32,
    /// The event id.
    pub(crate) id: Uuid,
    /// The CloudEvents type.
    pub(crate) event_type: String,
    /// The CloudEvents JSON.
    pub(crate) body: String,
}

impl Claimed {
    /// The event as sinks take it.
    pub(crate) fn outgoing(&self) -> Outgoing {
        Outgoing {
            id: self.id,
            event_type: self.event_type.clone(),
            body: self.body.clone(),
        }
    }
}

/// Claims up to `limit` deliveries to `sink` that may go now, for the claim `token` until
/// `lease_until`: due, not leased by a live relay, and first of their key (see the module doc).
/// `attempts_max` is the queue's limit, which a claim need not test (see
/// [`LeasedTable::claim`]).
pub(crate) async fn claim(
    db: &Db,
    sink: &str,
    token: &str,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: u32,
    attempts_max: u32,
) -> StoreResult<Vec<Claimed>> {
    let mut claim = DELIVERIES.claim(token, now, lease_until, attempts_max, "d.seq");
    let at = claim.arg(Arg::Time(now));
    let sink_name = claim.arg(Arg::Text(sink.to_owned()));
    claim
        .alias("d")
        .pick(&format!(
            "d.sink = {sink_name} AND d.state = 'pending' AND d.next_attempt_at <= {at} \
             AND NOT EXISTS (SELECT 1 FROM event_deliveries e \
               WHERE e.sink = d.sink AND e.ordering_key = d.ordering_key AND e.state = 'pending' \
               AND e.seq <> d.seq AND (e.seq < d.seq OR e.lease_expires_at >= {at})) \
             AND NOT EXISTS (SELECT 1 FROM event_outbox o \
               WHERE o.ordering_key = d.ordering_key AND o.seq < d.seq AND o.dispatched = FALSE)"
        ))
        .up_to(limit)
        .skip_locked()
        .recheck(&format!("state = 'pending' AND sink = {sink_name}"));
    let updated = claim.into_sql(db.backend()).execute(db).await?;
    if updated == 0 {
        return Ok(Vec::new());
    }
    Ok(on_db!(db, |pool| {
        sqlx::query_as(
            "SELECT d.seq, d.attempts, o.id, o.event_type, o.body \
             FROM event_deliveries d JOIN event_outbox o ON o.seq = d.seq \
             WHERE d.sink = $1 AND d.lease_owner = $2 ORDER BY d.seq",
        )
        .bind(sink)
        .bind(token)
        .fetch_all(pool)
        .await
    })?)
}

/// Records deliveries of the claim `token` that arrived: their rows go, in one statement.
pub(crate) async fn acknowledge(db: &Db, sink: &str, token: &str, seqs: &[i64]) -> StoreResult<()> {
    for chunk in seqs.chunks(DELIVERIES_PER_INSERT) {
        let mut sql = Sql::new("DELETE FROM event_deliveries WHERE sink = ");
        let sink = sql.arg(Arg::Text(sink.to_owned()));
        let token = sql.arg(Arg::Text(token.to_owned()));
        sql.push(&format!("{sink} AND lease_owner = {token} AND seq IN ("));
        for (index, seq) in chunk.iter().enumerate() {
            let seq = sql.arg(Arg::I64(*seq));
            sql.push(if index == 0 { "" } else { ", " }).push(&seq);
        }
        sql.push(") RETURNING seq");
        sql.fetch_all::<(i64,)>(db).await?;
    }
    Ok(())
}

/// How a failed attempt is recorded.
#[derive(Debug)]
pub(crate) struct Failure<'a> {
    /// Outbox position.
    pub(crate) seq: i64,
    /// What went wrong (shown in the dead-letter list).
    pub(crate) error: &'a str,
    /// Dead-letter now, whatever the attempts left (the sink refused the event).
    pub(crate) refused: bool,
    /// When to try again.
    pub(crate) next_attempt_at: DateTime<Utc>,
}

/// Records a failed attempt of the claim `token`; the delivery is dead once it has had
/// `attempts_max` attempts or was refused. Returns whether it is dead.
pub(crate) async fn fail(
    db: &Db,
    sink: &str,
    token: &str,
    failure: &Failure<'_>,
    attempts_max: u32,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let (mut fail, last) = DELIVERIES.fail(token, attempts_max, Retry::Free);
    let error = fail.arg(Arg::Text(failure.error.to_owned()));
    let next_attempt_at = fail.arg(Arg::Time(failure.next_attempt_at));
    let refused = fail.arg(Arg::Bool(failure.refused));
    let at = fail.arg(Arg::Time(now));
    let sink = fail.arg(Arg::Text(sink.to_owned()));
    fail.row(Arg::I64(failure.seq))
        .and(&format!("sink = {sink}"))
        .set(&format!(
            "last_error = {error}, next_attempt_at = {next_attempt_at}, \
             state = CASE WHEN {refused} OR {last} THEN 'dead' ELSE 'pending' END, \
             dead_at = CASE WHEN {refused} OR {last} THEN {at} ELSE NULL END"
        ))
        .returning("state");
    let state: Option<(String,)> = fail.into_sql().fetch_optional(db).await?;
    Ok(state.is_some_and(|(state,)| state == "dead"))
}

/// Gives back the deliveries of the claim `token` (the relay is stopping).
pub(crate) async fn release(db: &Db, token: &str) -> StoreResult<()> {
    DELIVERIES.release(token).into_sql().execute(db).await?;
    Ok(())
}

/// Deletes up to `limit` outbox rows that every sink has (dispatched, no delivery row left).
pub(crate) async fn prune(db: &Db, limit: u32) -> StoreResult<u64> {
    Ok(on_db!(db, |pool| {
        sqlx::query(
            "DELETE FROM event_outbox WHERE seq IN (SELECT o.seq FROM event_outbox o \
             WHERE o.dispatched = TRUE \
             AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.seq = o.seq) \
             ORDER BY o.seq LIMIT $1)",
        )
        .bind(i64::from(limit))
        .execute(pool)
        .await
        .map(|done| done.rows_affected())
    })?)
}

/// A dead-lettered delivery with its event.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct DeadLetter {
    /// Outbox position.
    pub(crate) seq: i64,
    /// The sink that did not get it.
    pub(crate) sink: String,
    /// Attempts made.
    pub(crate) attempts: i32,
    /// The last error.
    pub(crate) last_error: Option<String>,
    /// When it was given up.
    pub(crate) dead_at: Option<DateTime<Utc>>,
    /// The event id.
    pub(crate) id: Uuid,
    /// The CloudEvents type.
    pub(crate) event_type: String,
    /// The CloudEvents JSON.
    pub(crate) body: String,
    /// When the event was recorded.
    pub(crate) created_at: DateTime<Utc>,
}

/// A page of dead letters, oldest event first, and how many there are.
pub(crate) async fn list_dead(
    db: &Db,
    offset: u32,
    limit: u32,
) -> StoreResult<(u64, Vec<DeadLetter>)> {
    let total: i64 = on_db!(db, |pool| {
        sqlx::query_scalar("SELECT COUNT(*) FROM event_deliveries WHERE state = 'dead'")
            .fetch_one(pool)
            .await
    })?;
    let rows = on_db!(db, |pool| {
        sqlx::query_as(
            "SELECT d.seq, d.sink, d.attempts, d.last_error, d.dead_at, o.id, o.event_type, o.body, o.created_at \
             FROM event_deliveries d JOIN event_outbox o ON o.seq = d.seq \
             WHERE d.state = 'dead' ORDER BY d.seq, d.sink LIMIT $1 OFFSET $2",
        )
        .bind(i64::from(limit))
        .bind(i64::from(offset))
        .fetch_all(pool)
        .await
    })?;
    Ok((u64::try_from(total).unwrap_or(0), rows))
}

/// Sends dead letters back to pending with fresh attempts: those of the event `event`, or all.
/// Returns how many.
pub(crate) async fn replay(db: &Db, event: Option<Uuid>, now: DateTime<Utc>) -> StoreResult<u64> {
    let filter = if event.is_some() {
        " AND seq IN (SELECT seq FROM event_outbox WHERE id = $2)"
    } else {
        ""
    };
    let text = format!(
        "UPDATE event_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, \
         dead_at = NULL, lease_owner = NULL, lease_expires_at = NULL WHERE state = 'dead'{filter}"
    );
    Ok(on_db!(db, |pool| {
        let query = sqlx::query(sqlx::AssertSqlSafe(text)).bind(now);
        match event {
            Some(event) => query.bind(event).execute(pool).await,
            None => query.execute(pool).await,
        }
        .map(|done| done.rows_affected())
    })?)
}
