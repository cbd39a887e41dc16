//! SQL of the tiles area, on both databases: the pyramids of tiles datasets
//! (`tile_pyramids`, migrations 0013 and 0014).
//!
//! A row is the state of one tiles dataset's stored levels: `queued` (a promise that they will
//! be rendered, claimed with a lease that its renderer renews, so a crashed process's pyramid
//! is taken up again by another, or the same restarted, once the lease runs out), `stored`, or
//! `given_up`. Replacing the content of the dataset a pyramid draws from queues it again under
//! a new `generation`; every write of a renderer names the generation it claimed, so one still
//! drawing the old content learns at its next renewal that it was superseded.

use chrono::{DateTime, Utc};

use crate::db::{Db, StoreResult, Tx};
use crate::ids::DatasetId;
use crate::on_tx;

/// A pyramid whose manifest is written.
const STORED: &str = "stored";
/// A pyramid that failed too often or cannot be drawn.
const GIVEN_UP: &str = "given_up";

/// Queues the pyramid of tiles dataset `dataset`, drawn from `source`, inside the
/// transaction that creates it.
pub(crate) async fn insert_pyramid_in(
    tx: &mut Tx,
    dataset: DatasetId,
    source: DatasetId,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO tile_pyramids (dataset_id, source_dataset_id, queued_at) \
             VALUES ($1, $2, $3)",
        )
        .bind(dataset)
        .bind(source)
        .bind(now)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// Queues pyramids again under a new generation, attempts from zero, at `$2`; a lease held
/// stays until its holder learns of the new generation, a fault's waiting time ends.
const REQUEUE: &str = "UPDATE tile_pyramids SET state = 'queued', generation = generation + 1, \
    attempts = 0, queued_at = $2, last_error = NULL, \
    lease_expires_at = CASE WHEN lease_owner IS NULL THEN NULL ELSE lease_expires_at END";

/// Queues again, under a new generation, the pyramids drawn from `dataset` (and its own, if
/// it is a tiles dataset), inside the transaction that replaces its content: they were drawn
/// from content that is no longer there. A renderer holding one keeps its lease until it next
/// renews and learns it was superseded, so no second renderer starts beside it.
pub(crate) async fn requeue_drawn_from_in(
    tx: &mut Tx,
    dataset: DatasetId,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    let queued = on_tx!(tx, |conn| {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "{REQUEUE} WHERE source_dataset_id = $1 OR dataset_id = $1"
        )))
        .bind(dataset)
        .bind(now)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(queued)
}

/// Like [`requeue_drawn_from_in`] for every live dataset whose content is the blob at
/// `data_path`, inside the transaction that records new content written there in place.
pub(crate) async fn requeue_drawn_from_content_in(
    tx: &mut Tx,
    data_path: &str,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    let queued = on_tx!(tx, |conn| {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "{REQUEUE} WHERE source_dataset_id IN \
               (SELECT id FROM datasets WHERE data_path = $1 AND deleted_at IS NULL)"
        )))
        .bind(data_path)
        .bind(now)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(queued)
}

/// A claimed pyramid.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ClaimedPyramid {
    /// The tiles dataset.
    pub(crate) dataset_id: DatasetId,
    /// Claims so far, this one included.
    pub(crate) attempts: i32,
    /// The generation claimed: every later write of the renderer names it.
    pub(crate) generation: i64,
    /// The content version whose pyramid is complete, if any: removed once a newer one is.
    pub(crate) stored_version: Option<String>,
    /// The content version an earlier claim began to render, if any.
    pub(crate) rendering_version: Option<String>,
}

/// One renderer's hold on one pyramid.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hold<'a> {
    /// The tiles dataset.
    pub(crate) dataset: DatasetId,
    /// The renderer.
    pub(crate) worker: &'a str,
    /// The generation it claimed.
    pub(crate) generation: i64,
}

/// Claims the oldest queued pyramid that no live lease holds (nor a fault's waiting time)
/// and that has been tried fewer than `attempts_max` times, for `worker` until `lease_until`.
///
/// The lease test is repeated in the outer `WHERE`: when two PostgreSQL processes pick the
/// same row, the second one's update re-reads it after the first commits and finds it leased,
/// so it claims nothing instead of running the pyramid twice.
pub(crate) async fn claim_pyramid(
    db: &Db,
    worker: &str,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    attempts_max: i32,
) -> StoreResult<Option<ClaimedPyramid>> {
    const FREE: &str = "state = 'queued' AND (lease_expires_at IS NULL OR lease_expires_at < $3) \
                        AND attempts < $4";
    let text = format!(
        "UPDATE tile_pyramids SET lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1 \
         WHERE dataset_id = (SELECT dataset_id FROM tile_pyramids WHERE {FREE} \
           ORDER BY queued_at, dataset_id LIMIT 1) AND {FREE} \
         RETURNING dataset_id, attempts, generation, stored_version, rendering_version"
    );
    let mut tx = db.begin().await?;
    let claimed = on_tx!(&mut tx, |conn| {
        sqlx::query_as::<_, ClaimedPyramid>(sqlx::AssertSqlSafe(text))
            .bind(worker)
            .bind(lease_until)
            .bind(now)
            .bind(attempts_max)
            .fetch_optional(conn)
            .await
    })?;
    // An idle round changed nothing: a rollback leaves the access caches alone
    // (`db::changes`), which a commit every poll interval would empty.
    tx.finish(claimed.is_some()).await?;
    Ok(claimed)
}

/// Gives up queued pyramids tried `attempts_max` times whose last lease ran out (each claim
/// ended in a crash): their tiles stay drawn on demand. Returns the datasets given up.
pub(crate) async fn give_up_exhausted(
    db: &Db,
    now: DateTime<Utc>,
    attempts_max: i32,
) -> StoreResult<Vec<DatasetId>> {
    let mut tx = db.begin().await?;
    let given_up: Vec<DatasetId> = on_tx!(&mut tx, |conn| {
        sqlx::query_scalar(
            "UPDATE tile_pyramids SET state = 'given_up', lease_owner = NULL, \
               lease_expires_at = NULL, stored_version = NULL, rendering_version = NULL, \
               last_error = COALESCE(last_error, 'every attempt stopped before it ended') \
             WHERE state = 'queued' AND attempts >= $1 \
               AND lease_expires_at IS NOT NULL AND lease_expires_at < $2 \
             RETURNING dataset_id",
        )
        .bind(attempts_max)
        .bind(now)
        .fetch_all(conn)
        .await
    })?;
    tx.finish(!given_up.is_empty()).await?;
    Ok(given_up)
}

/// Records, under `hold`, the version being rendered and the source drawn from (rows queued
/// before migration 0014 lack it); false when the hold is lost.
pub(crate) async fn start_version(
    db: &Db,
    hold: Hold<'_>,
    version: &str,
    source: DatasetId,
) -> StoreResult<bool> {
    let mut tx = db.begin().await?;
    let started = on_tx!(&mut tx, |conn| {
        sqlx::query(
            "UPDATE tile_pyramids SET rendering_version = $4, source_dataset_id = $5 \
             WHERE dataset_id = $1 AND lease_owner = $2 AND generation = $3",
        )
        .bind(hold.dataset)
        .bind(hold.worker)
        .bind(hold.generation)
        .bind(version)
        .bind(source)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    tx.commit().await?;
    Ok(started == 1)
}

/// Extends `hold`'s lease until `lease_until`; false when it is lost (the row is gone with
/// its dataset, another worker took it over, or new content superseded it).
pub(crate) async fn renew_pyramid(
    db: &Db,
    hold: Hold<'_>,
    lease_until: DateTime<Utc>,
) -> StoreResult<bool> {
    let mut tx = db.begin().await?;
    let renewed = on_tx!(&mut tx, |conn| {
        sqlx::query(
            "UPDATE tile_pyramids SET lease_expires_at = $4 \
             WHERE dataset_id = $1 AND lease_owner = $2 AND generation = $3",
        )
        .bind(hold.dataset)
        .bind(hold.worker)
        .bind(hold.generation)
        .bind(lease_until)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    tx.commit().await?;
    Ok(renewed == 1)
}

/// Marks `hold`'s pyramid stored as `version`; false when the hold was lost first.
pub(crate) async fn finish_stored(db: &Db, hold: Hold<'_>, version: &str) -> StoreResult<bool> {
    end(db, hold, STORED, Some(version), None).await
}

/// Gives up `hold`'s pyramid, which cannot be drawn, for `reason`; false when the hold was
/// lost first.
pub(crate) async fn finish_given_up(db: &Db, hold: Hold<'_>, reason: &str) -> StoreResult<bool> {
    end(db, hold, GIVEN_UP, None, Some(reason)).await
}

async fn end(
    db: &Db,
    hold: Hold<'_>,
    state: &str,
    stored_version: Option<&str>,
    reason: Option<&str>,
) -> StoreResult<bool> {
    let mut tx = db.begin().await?;
    let ended = on_tx!(&mut tx, |conn| {
        sqlx::query(
            "UPDATE tile_pyramids SET state = $4, stored_version = $5, rendering_version = NULL, \
               last_error = $6, attempts = 0, lease_owner = NULL, lease_expires_at = NULL \
             WHERE dataset_id = $1 AND lease_owner = $2 AND generation = $3",
        )
        .bind(hold.dataset)
        .bind(hold.worker)
        .bind(hold.generation)
        .bind(state)
        .bind(stored_version)
        .bind(reason)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    tx.commit().await?;
    Ok(ended == 1)
}

/// How a faulted attempt was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Faulted {
    /// It will be tried again after the waiting time.
    Retried,
    /// It was the last attempt: the pyramid is given up.
    GivenUp,
    /// The hold was lost first: nothing recorded.
    Lost,
}

/// Records a fault of `hold`'s attempt (the blob store, the database): the pyramid is tried
/// again from `retry_at`, or given up when this was attempt `attempts_max`.
pub(crate) async fn record_fault(
    db: &Db,
    hold: Hold<'_>,
    error: &str,
    retry_at: DateTime<Utc>,
    attempts_max: i32,
) -> StoreResult<Faulted> {
    let mut tx = db.begin().await?;
    let state: Option<String> = on_tx!(&mut tx, |conn| {
        sqlx::query_scalar(
            "UPDATE tile_pyramids SET last_error = $4, lease_owner = NULL, \
               state = CASE WHEN attempts >= $6 THEN 'given_up' ELSE state END, \
               lease_expires_at = CASE WHEN attempts >= $6 THEN NULL ELSE $5 END, \
               stored_version = CASE WHEN attempts >= $6 THEN NULL ELSE stored_version END, \
               rendering_version = CASE WHEN attempts >= $6 THEN NULL ELSE rendering_version END \
             WHERE dataset_id = $1 AND lease_owner = $2 AND generation = $3 RETURNING state",
        )
        .bind(hold.dataset)
        .bind(hold.worker)
        .bind(hold.generation)
        .bind(error)
        .bind(retry_at)
        .bind(attempts_max)
        .fetch_optional(conn)
        .await
    })?;
    tx.commit().await?;
    Ok(match state.as_deref() {
        None => Faulted::Lost,
        Some(GIVEN_UP) => Faulted::GivenUp,
        Some(_) => Faulted::Retried,
    })
}

/// Hands `worker`'s lease on `dataset` back, whatever the generation: the process is stopping
/// (its attempt not counted), or new content superseded what it was drawing (the new
/// generation's attempts start from zero, and its claim may come at once).
pub(crate) async fn release_pyramid(db: &Db, dataset: DatasetId, worker: &str) -> StoreResult<()> {
    let mut tx = db.begin().await?;
    on_tx!(&mut tx, |conn| {
        sqlx::query(
            "UPDATE tile_pyramids SET lease_owner = NULL, lease_expires_at = NULL, \
             attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END \
             WHERE dataset_id = $1 AND lease_owner = $2",
        )
        .bind(dataset)
        .bind(worker)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    tx.commit().await?;
    Ok(())
}
