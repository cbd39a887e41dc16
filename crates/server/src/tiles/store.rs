//! SQL of the tiles area, on both databases: the pyramids of tiles datasets
//! (`tile_pyramids`, migrations 0013 and 0014).
//!
//! A row is the state of one tiles dataset's stored levels: `queued` (a promise that they will
//! be rendered, claimed with a lease that its renderer renews, so a crashed process's pyramid
//! is taken up again by another, or the same restarted, once the lease runs out: the queue is
//! leased as every queue is, `crate::leases`), `stored`, or `given_up`. Replacing the content
//! of the dataset a pyramid draws from queues it again under a new `generation`; every write
//! of a renderer names the generation it claimed, so one still drawing the old content learns
//! at its next renewal that it was superseded.

use chrono::{DateTime, Utc};

use crate::db::{Arg, Db, StoreResult, Tx};
use crate::ids::DatasetId;
use crate::leases::{Counting, LeasedTable, Retry, Update};
use crate::on_tx;

/// The pyramid queue: every claim is an attempt.
const QUEUE: LeasedTable = LeasedTable {
    name: "tile_pyramids",
    key: "dataset_id",
    counting: Counting::PerClaim,
};

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

/// Queues again, under a new generation, the pyramids drawn from `source` (not its own: see
/// [`requeue_drawn_from_in`]), inside the transaction that records new content written in
/// place for it.
pub(crate) async fn requeue_drawn_from_source_in(
    tx: &mut Tx,
    source: DatasetId,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    let queued = on_tx!(tx, |conn| {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "{REQUEUE} WHERE source_dataset_id = $1"
        )))
        .bind(source)
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

impl Hold<'_> {
    /// `update`, of this hold's row only, and only while it is of the generation claimed.
    fn narrow(self, mut update: Update) -> Update {
        let generation = update.arg(Arg::I64(self.generation));
        update
            .row(Arg::Uuid(self.dataset.as_uuid()))
            .and(&format!("generation = {generation}"));
        update
    }
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
    attempts_max: u32,
) -> StoreResult<Option<ClaimedPyramid>> {
    let mut claim = QUEUE.claim(
        worker,
        now,
        lease_until,
        attempts_max,
        "queued_at, dataset_id",
    );
    claim
        .pick("state = 'queued'")
        .recheck("state = 'queued'")
        .returning("dataset_id, attempts, generation, stored_version, rendering_version");
    let mut tx = db.begin().await?;
    let claimed = claim
        .into_sql(db.backend())
        .fetch_optional_in::<ClaimedPyramid>(&mut tx)
        .await?;
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
    attempts_max: u32,
) -> StoreResult<Vec<DatasetId>> {
    let mut give_up = QUEUE.give_up_exhausted(now, attempts_max);
    give_up
        .set(
            "state = 'given_up', stored_version = NULL, rendering_version = NULL, \
             last_error = COALESCE(last_error, 'every attempt stopped before it ended')",
        )
        .and("state = 'queued'")
        .returning("dataset_id");
    let mut tx = db.begin().await?;
    let given_up: Vec<(DatasetId,)> = give_up.into_sql().fetch_all_in(&mut tx).await?;
    tx.finish(!given_up.is_empty()).await?;
    Ok(given_up.into_iter().map(|(dataset,)| dataset).collect())
}

/// Records, under `hold`, the version being rendered and the source drawn from (rows queued
/// before migration 0014 lack it); false when the hold is lost.
pub(crate) async fn start_version(
    db: &Db,
    hold: Hold<'_>,
    version: &str,
    source: DatasetId,
) -> StoreResult<bool> {
    let mut start = QUEUE.held(hold.worker);
    let version = start.arg(Arg::Text(version.to_owned()));
    let source = start.arg(Arg::Uuid(source.as_uuid()));
    start.set(&format!(
        "rendering_version = {version}, source_dataset_id = {source}"
    ));
    let mut tx = db.begin().await?;
    let started = hold.narrow(start).into_sql().execute_in(&mut tx).await?;
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
    let renew = hold.narrow(QUEUE.renew(hold.worker, lease_until));
    let mut tx = db.begin().await?;
    let renewed = renew.into_sql().execute_in(&mut tx).await?;
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
    let mut finish = QUEUE.finish(hold.worker);
    let state = finish.arg(Arg::Text(state.to_owned()));
    let stored_version = finish.arg(Arg::OptText(stored_version.map(str::to_owned)));
    let reason = finish.arg(Arg::OptText(reason.map(str::to_owned)));
    // The next generation's attempts count from zero.
    finish.set(&format!(
        "state = {state}, stored_version = {stored_version}, rendering_version = NULL, \
         last_error = {reason}, attempts = 0"
    ));
    let mut tx = db.begin().await?;
    let ended = hold.narrow(finish).into_sql().execute_in(&mut tx).await?;
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
    attempts_max: u32,
) -> StoreResult<Faulted> {
    let (mut fault, last) = QUEUE.fail(hold.worker, attempts_max, Retry::After(retry_at));
    let error = fault.arg(Arg::Text(error.to_owned()));
    fault
        .set(&format!(
            "last_error = {error}, \
             state = CASE WHEN {last} THEN 'given_up' ELSE state END, \
             stored_version = CASE WHEN {last} THEN NULL ELSE stored_version END, \
             rendering_version = CASE WHEN {last} THEN NULL ELSE rendering_version END"
        ))
        .returning("state");
    let mut tx = db.begin().await?;
    let state: Option<(String,)> = hold
        .narrow(fault)
        .into_sql()
        .fetch_optional_in(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(match state.as_ref().map(|(state,)| state.as_str()) {
        None => Faulted::Lost,
        Some(GIVEN_UP) => Faulted::GivenUp,
        Some(_) => Faulted::Retried,
    })
}

/// Hands `worker`'s lease on `dataset` back, whatever the generation: the process is stopping
/// (its attempt not counted), or new content superseded what it was drawing (the new
/// generation's attempts start from zero, and its claim may come at once).
pub(crate) async fn release_pyramid(db: &Db, dataset: DatasetId, worker: &str) -> StoreResult<()> {
    let mut release = QUEUE.release(worker);
    release.row(Arg::Uuid(dataset.as_uuid()));
    let mut tx = db.begin().await?;
    release.into_sql().execute_in(&mut tx).await?;
    tx.commit().await?;
    Ok(())
}
