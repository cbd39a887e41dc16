//! SQL of the tiles area, on both databases: the queue of tile pyramids to render
//! (`tile_pyramids`, migration 0013).
//!
//! A row is a promise that the tiles dataset's stored levels will be rendered; it is claimed
//! with a lease that its renderer renews, so a crashed process's pyramid is taken up again by
//! another (or the same, restarted) once the lease runs out.

use chrono::{DateTime, Utc};

use crate::db::{Db, StoreResult, Tx};
use crate::ids::DatasetId;
use crate::on_tx;

/// Queues the pyramid of tiles dataset `dataset` inside the transaction that creates it.
pub(crate) async fn insert_pyramid_in(
    tx: &mut Tx,
    dataset: DatasetId,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query("INSERT INTO tile_pyramids (dataset_id, queued_at) VALUES ($1, $2)")
            .bind(dataset)
            .bind(now)
            .execute(conn)
            .await
            .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// A claimed pyramid.
#[derive(Debug, Clone, Copy, sqlx::FromRow)]
pub(crate) struct ClaimedPyramid {
    /// The tiles dataset.
    pub(crate) dataset_id: DatasetId,
    /// Claims so far, this one included.
    pub(crate) attempts: i32,
}

/// Claims the oldest pyramid that no live lease holds and that has been tried fewer than
/// `attempts_max` times, for `worker` until `lease_until`.
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
    const FREE: &str = "(lease_expires_at IS NULL OR lease_expires_at < $3) AND attempts < $4";
    let text = format!(
        "UPDATE tile_pyramids SET lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1 \
         WHERE dataset_id = (SELECT dataset_id FROM tile_pyramids WHERE {FREE} \
           ORDER BY queued_at, dataset_id LIMIT 1) AND {FREE} \
         RETURNING dataset_id, attempts"
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

/// Forgets pyramids tried `attempts_max` times whose last lease ran out: their tiles stay
/// drawn on demand. Returns the datasets given up.
pub(crate) async fn give_up_exhausted(
    db: &Db,
    now: DateTime<Utc>,
    attempts_max: i32,
) -> StoreResult<Vec<DatasetId>> {
    let mut tx = db.begin().await?;
    let given_up: Vec<DatasetId> = on_tx!(&mut tx, |conn| {
        sqlx::query_scalar(
            "DELETE FROM tile_pyramids WHERE attempts >= $1 \
             AND (lease_expires_at IS NULL OR lease_expires_at < $2) RETURNING dataset_id",
        )
        .bind(attempts_max)
        .bind(now)
        .fetch_all(conn)
        .await
    })?;
    tx.finish(!given_up.is_empty()).await?;
    Ok(given_up)
}

/// Extends `worker`'s lease on `dataset`'s pyramid; false when the worker no longer holds it
/// (the row is gone with its dataset, or another worker took it over).
pub(crate) async fn renew_pyramid(
    db: &Db,
    dataset: DatasetId,
    worker: &str,
    lease_until: DateTime<Utc>,
) -> StoreResult<bool> {
    let mut tx = db.begin().await?;
    let renewed = on_tx!(&mut tx, |conn| {
        sqlx::query(
            "UPDATE tile_pyramids SET lease_expires_at = $1 \
             WHERE dataset_id = $2 AND lease_owner = $3",
        )
        .bind(lease_until)
        .bind(dataset)
        .bind(worker)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    tx.commit().await?;
    Ok(renewed == 1)
}

/// Ends `worker`'s pyramid of `dataset` (done, or given up); false when it no longer held it.
pub(crate) async fn finish_pyramid(db: &Db, dataset: DatasetId, worker: &str) -> StoreResult<bool> {
    let mut tx = db.begin().await?;
    let finished = on_tx!(&mut tx, |conn| {
        sqlx::query("DELETE FROM tile_pyramids WHERE dataset_id = $1 AND lease_owner = $2")
            .bind(dataset)
            .bind(worker)
            .execute(conn)
            .await
            .map(|done| done.rows_affected())
    })?;
    tx.commit().await?;
    Ok(finished == 1)
}

/// Hands `worker`'s pyramid of `dataset` back to the queue (the process is stopping), its
/// attempt not counted.
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
