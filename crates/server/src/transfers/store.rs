//! SQL for transfers and their queue, on both databases.
//!
//! The queue is the table, leased as every queue is (`crate::leases`): a worker claims the
//! oldest queued transfer (or one whose lease ran out) in one statement, each claim an
//! attempt. PostgreSQL skips rows another worker is claiming (`FOR UPDATE SKIP LOCKED`), so
//! any number of workers claim without waiting on each other; SQLite runs one writer at a
//! time, so the same statement without the lock clause is already exclusive. Every later
//! write of a running transfer names the worker's lease, so a worker that lost its lease (it
//! stalled, and another took the transfer over) changes nothing. What is the transfers' own:
//! the statuses (`Pending` to claim, `InProgress` while leased, `Completed` or `Error` at the
//! end), the progress and its events, the cancel flag, and the Kubernetes dispatch.

use chrono::{DateTime, Utc};

use crate::db::{Arg, Db, JsonText, Sql, StoreResult, Tx};
use crate::events::transfer::{SUBJECT_COLUMNS, TransferSubject};
use crate::ids::{DatasetId, ProjectId, TenantId, TransferId};
use crate::leases::{Counting, LeasedTable};
use crate::transfers::model::{TransferRow, TransferStatus};
use crate::{on_db, on_tx};

/// The transfer queue.
const QUEUE: LeasedTable = LeasedTable {
    name: "transfers",
    key: "id",
    counting: Counting::PerClaim,
};

const COLUMNS: &str = "id, tenant_id, kind, status, format, project_id, dataset_id, request, progress, \
    error_message, import_results, download_blob, attempts, created_at, created_by, \
    created_by_type, started_at, finished_at, updated_at";

/// A transfer to queue.
#[derive(Debug, Clone)]
pub(crate) struct NewTransfer {
    /// The row, status `Pending`.
    pub(crate) row: TransferRow,
    /// The address to fetch from when it carries credentials.
    pub(crate) source_secret: Option<String>,
    /// The blob key of the upload it reads, if it reads one.
    pub(crate) upload_key: Option<String>,
}

/// Queues a transfer (the Kubernetes executor's tests queue transfers without a request).
#[cfg(all(test, feature = "kubernetes"))]
pub(crate) async fn insert(db: &Db, transfer: &NewTransfer) -> StoreResult<()> {
    let mut tx = db.begin().await?;
    insert_in(&mut tx, transfer).await?;
    tx.commit().await
}

/// Queues a transfer inside `tx`.
pub(crate) async fn insert_in(tx: &mut Tx, transfer: &NewTransfer) -> StoreResult<()> {
    let row = &transfer.row;
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO transfers (id, tenant_id, kind, status, format, project_id, dataset_id, request, \
             source_secret, progress, error_message, import_results, download_blob, attempts, \
             cancel_requested, created_at, created_by, created_by_type, started_at, finished_at, updated_at, \
             upload_key) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, NULL, $10, NULL, 0, FALSE, $11, $12, $13, NULL, NULL, $11, $14)",
        )
        .bind(row.id)
        .bind(row.tenant_id)
        .bind(&row.kind)
        .bind(&row.status)
        .bind(&row.format)
        .bind(row.project_id)
        .bind(row.dataset_id)
        .bind(&row.request)
        .bind(&transfer.source_secret)
        .bind(&row.import_results)
        .bind(row.created_at)
        .bind(row.created_by)
        .bind(&row.created_by_type)
        .bind(&transfer.upload_key)
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

/// A transfer of `tenant`.
pub(crate) async fn find(
    db: &Db,
    tenant: TenantId,
    id: TransferId,
) -> StoreResult<Option<TransferRow>> {
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM transfers WHERE id = "));
    let id = sql.arg(Arg::Uuid(id.as_uuid()));
    sql.push(&id).push(" AND tenant_id = ");
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    Ok(sql.fetch_all(db).await?.into_iter().next())
}

/// The full source address of a transfer (credentials included), while it runs; `None` once
/// it has ended or when it has none.
pub(crate) async fn source_secret(db: &Db, id: TransferId) -> StoreResult<Option<String>> {
    let secret: Option<Option<String>> = on_db!(db, |pool| {
        sqlx::query_scalar("SELECT source_secret FROM transfers WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await
    })?;
    Ok(secret.flatten())
}

/// A transfer, whoever's.
pub(crate) async fn find_any(db: &Db, id: TransferId) -> StoreResult<Option<TransferRow>> {
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM transfers WHERE id = "));
    let id = sql.arg(Arg::Uuid(id.as_uuid()));
    sql.push(&id);
    Ok(sql.fetch_all(db).await?.into_iter().next())
}

/// Filters of the transfer list.
#[derive(Debug, Clone, Default)]
pub(crate) struct TransferFilter {
    /// Only transfers started by this principal.
    pub(crate) created_by: Option<uuid::Uuid>,
    /// Only transfers of these projects (the caller may see their content).
    pub(crate) projects: Option<Vec<ProjectId>>,
    /// Only transfers reading or changing this dataset.
    pub(crate) dataset: Option<DatasetId>,
    /// Created at or after.
    pub(crate) from: Option<DateTime<Utc>>,
    /// Created at or before.
    pub(crate) to: Option<DateTime<Utc>>,
    /// Any of these statuses.
    pub(crate) statuses: Vec<TransferStatus>,
}

fn filtered(select: &str, tenant: TenantId, filter: &TransferFilter) -> Sql {
    let mut sql = Sql::new(select);
    sql.push(" FROM transfers WHERE tenant_id = ");
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    match (filter.created_by, &filter.projects) {
        (Some(creator), Some(projects)) => {
            // Visible: started by the caller, or in a project whose content the caller sees.
            sql.push(" AND (created_by = ");
            let creator = sql.arg(Arg::Uuid(creator));
            sql.push(&creator);
            push_in_projects(&mut sql, projects, " OR ");
            sql.push(")");
        }
        (Some(creator), None) => {
            sql.push(" AND created_by = ");
            let creator = sql.arg(Arg::Uuid(creator));
            sql.push(&creator);
        }
        (None, Some(projects)) => {
            sql.push(" AND (1 = 0");
            push_in_projects(&mut sql, projects, " OR ");
            sql.push(")");
        }
        (None, None) => {}
    }
    if let Some(dataset) = filter.dataset {
        sql.push(" AND dataset_id = ");
        let dataset = sql.arg(Arg::Uuid(dataset.as_uuid()));
        sql.push(&dataset);
    }
    if let Some(from) = filter.from {
        sql.push(" AND created_at >= ");
        let from = sql.arg(Arg::Time(from));
        sql.push(&from);
    }
    if let Some(to) = filter.to {
        sql.push(" AND created_at <= ");
        let to = sql.arg(Arg::Time(to));
        sql.push(&to);
    }
    if !filter.statuses.is_empty() {
        sql.push(" AND status IN (");
        for (index, status) in filter.statuses.iter().enumerate() {
            if index > 0 {
                sql.push(", ");
            }
            let status = sql.arg(Arg::Text(status.as_str().to_owned()));
            sql.push(&status);
        }
        sql.push(")");
    }
    sql
}

fn push_in_projects(sql: &mut Sql, projects: &[ProjectId], joiner: &str) {
    if projects.is_empty() {
        return;
    }
    sql.push(joiner).push("project_id IN (");
    for (index, project) in projects.iter().enumerate() {
        if index > 0 {
            sql.push(", ");
        }
        let project = sql.arg(Arg::Uuid(project.as_uuid()));
        sql.push(&project);
    }
    sql.push(")");
}

/// One offset page of transfers, newest first, and the number of all that match.
pub(crate) async fn list(
    db: &Db,
    tenant: TenantId,
    filter: &TransferFilter,
    offset: u32,
    limit: u32,
) -> StoreResult<(Vec<TransferRow>, i64)> {
    let count = filtered("SELECT COUNT(*)", tenant, filter)
        .fetch_count(db)
        .await?;
    let mut sql = filtered(&format!("SELECT {COLUMNS}"), tenant, filter);
    sql.push(" ORDER BY created_at DESC, id DESC LIMIT ");
    let limit = sql.arg(Arg::I64(i64::from(limit)));
    sql.push(&limit).push(" OFFSET ");
    let offset = sql.arg(Arg::I64(i64::from(offset)));
    sql.push(&offset);
    Ok((sql.fetch_all(db).await?, count))
}

/// Ends every running transfer whose lease ran out after its last allowed attempt, so that no
/// transfer stays `InProgress` for ever. Returns how many.
pub(crate) async fn fail_exhausted(
    db: &Db,
    now: DateTime<Utc>,
    attempts_max: u32,
) -> StoreResult<u64> {
    let message = format!(
        "The transfer was stopped: the worker running it stopped responding {attempts_max} times."
    );
    let mut give_up = QUEUE.give_up_exhausted(now, attempts_max);
    let error = give_up.arg(Arg::Text(message.clone()));
    let at = give_up.arg(Arg::Time(now));
    give_up
        .set(&format!(
            "status = 'Error', error_message = {error}, finished_at = {at}, updated_at = {at}, \
             source_secret = NULL"
        ))
        .and("status = 'InProgress'")
        .returning(SUBJECT_COLUMNS);
    let mut tx = db.begin().await?;
    let ended: Vec<TransferSubject> = give_up.into_sql().fetch_all_in(&mut tx).await?;
    for subject in &ended {
        let event = subject.finished("Error", Some(&message), "[]", false);
        crate::events::record_in(&mut tx, &event, now).await?;
    }
    tx.commit().await?;
    Ok(u64::try_from(ended.len()).unwrap_or(u64::MAX))
}

/// Claims the oldest queued transfer (or one whose worker's lease ran out), or `only` that
/// transfer, for `worker` until `lease_until`.
pub(crate) async fn claim(
    db: &Db,
    worker: &str,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    attempts_max: u32,
    only: Option<TransferId>,
) -> StoreResult<Option<TransferRow>> {
    // A queued transfer has no lease, and a running one is taken over once its lease ran
    // out: the claim's own test of the lease tells them apart.
    let mut claim = QUEUE.claim(worker, now, lease_until, attempts_max, "created_at, id");
    let at = claim.arg(Arg::Time(now));
    claim
        .set(&format!(
            "status = 'InProgress', started_at = COALESCE(started_at, {at}), updated_at = {at}"
        ))
        .pick("status IN ('Pending', 'InProgress') AND cancel_requested = FALSE")
        .skip_locked()
        .returning(COLUMNS);
    if let Some(only) = only {
        let only = claim.arg(Arg::Uuid(only.as_uuid()));
        claim.pick(&format!("id = {only}"));
    }
    let mut tx = db.begin().await?;
    let claimed = claim
        .into_sql(db.backend())
        .fetch_optional_in::<TransferRow>(&mut tx)
        .await?;
    let Some(row) = claimed else {
        tx.rollback().await?;
        return Ok(None);
    };
    let subject = TransferSubject {
        id: row.id,
        tenant_id: row.tenant_id,
        project_id: row.project_id,
        created_by: row.created_by,
        kind: row.kind.clone(),
    };
    crate::events::record_in(&mut tx, &subject.started(row.attempts), now).await?;
    tx.commit().await?;
    Ok(Some(row))
}

/// What a heartbeat learns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Heartbeat {
    /// The lease is renewed.
    Renewed,
    /// The caller asked to cancel.
    CancelRequested,
    /// Another worker holds the transfer now, or it ended: stop and publish nothing.
    Lost,
}

/// What a heartbeat's update returns.
#[derive(Debug, sqlx::FromRow)]
struct Beat {
    cancel_requested: bool,
    #[sqlx(flatten)]
    subject: TransferSubject,
}

/// Renews `worker`'s lease on `id` and records progress; with `report_progress`, also a
/// progress event (the caller throttles them).
pub(crate) async fn heartbeat(
    db: &Db,
    id: TransferId,
    worker: &str,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    progress: u8,
    report_progress: bool,
) -> StoreResult<Heartbeat> {
    let mut renew = QUEUE.renew(worker, lease_until);
    let progress_value = renew.arg(Arg::I64(i64::from(progress)));
    let at = renew.arg(Arg::Time(now));
    renew
        .row(Arg::Uuid(id.as_uuid()))
        .set(&format!("progress = {progress_value}, updated_at = {at}"))
        .and("status = 'InProgress'")
        .returning(&format!("cancel_requested, {SUBJECT_COLUMNS}"));
    let mut tx = db.begin().await?;
    let beat: Option<Beat> = renew.into_sql().fetch_optional_in(&mut tx).await?;
    if report_progress && let Some(beat) = &beat {
        crate::events::record_in(&mut tx, &beat.subject.progress(progress), now).await?;
    }
    tx.commit().await?;
    Ok(match beat.map(|beat| beat.cancel_requested) {
        None => Heartbeat::Lost,
        Some(true) => Heartbeat::CancelRequested,
        Some(false) => Heartbeat::Renewed,
    })
}

/// How a transfer ended.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// `Completed` or `Error`.
    pub(crate) status: TransferStatus,
    /// Why it failed.
    pub(crate) error_message: Option<String>,
    /// Datasets made or changed.
    pub(crate) import_results: JsonText,
    /// Blob key of an export's result.
    pub(crate) download_blob: Option<String>,
    /// The result's dataset format, when it differs from the one planned (`.zip` for a
    /// writer's several files); `None` keeps the planned one.
    pub(crate) format: Option<String>,
}

/// Ends `worker`'s transfer inside `tx`, which also publishes its result; false when the
/// worker no longer holds it (the caller must then roll back and publish nothing).
pub(crate) async fn finish_in(
    tx: &mut Tx,
    id: TransferId,
    worker: &str,
    now: DateTime<Utc>,
    outcome: &Outcome,
) -> StoreResult<bool> {
    let mut finish = QUEUE.finish(worker);
    let status = finish.arg(Arg::Text(outcome.status.as_str().to_owned()));
    let error = finish.arg(Arg::OptText(outcome.error_message.clone()));
    let results = finish.arg(Arg::Text(outcome.import_results.as_str().to_owned()));
    let download = finish.arg(Arg::OptText(outcome.download_blob.clone()));
    let at = finish.arg(Arg::Time(now));
    let format = finish.arg(Arg::OptText(outcome.format.clone()));
    finish
        .row(Arg::Uuid(id.as_uuid()))
        .set(&format!(
            "status = {status}, error_message = {error}, import_results = {results}, \
             download_blob = {download}, \
             progress = CASE WHEN {status} = 'Completed' THEN 100 ELSE progress END, \
             finished_at = {at}, updated_at = {at}, source_secret = NULL, \
             format = COALESCE({format}, format)"
        ))
        .and("status = 'InProgress'")
        .returning(SUBJECT_COLUMNS);
    let ended: Option<TransferSubject> = finish.into_sql().fetch_optional_in(&mut *tx).await?;
    let Some(subject) = ended else {
        return Ok(false);
    };
    let event = subject.finished(
        outcome.status.as_str(),
        outcome.error_message.as_deref(),
        outcome.import_results.as_str(),
        outcome.download_blob.is_some(),
    );
    crate::events::record_in(tx, &event, now).await?;
    Ok(true)
}

/// Gives `worker`'s transfer back to the queue, because the worker is shutting down: it is
/// `Pending` again for any worker, and the attempt it was on does not count, since the
/// transfer did not fail. Its Kubernetes Job (if any) ends with this worker, so the transfer
/// needs a new one. False when the worker no longer held it.
pub(crate) async fn release(
    db: &Db,
    id: TransferId,
    worker: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let mut release = QUEUE.release(worker);
    let at = release.arg(Arg::Time(now));
    release
        .row(Arg::Uuid(id.as_uuid()))
        .set(&format!(
            "status = 'Pending', progress = 0, started_at = NULL, updated_at = {at}, \
             dispatched_job = NULL"
        ))
        .and("status = 'InProgress'");
    Ok(release.into_sql().execute(db).await? == 1)
}

/// Asks a transfer to stop: a queued one ends at once in `Error`; a running one is flagged,
/// and its worker stops at its next heartbeat. Returns the status it had, or `None` when it
/// had ended already.
pub(crate) async fn cancel(
    db: &Db,
    id: TransferId,
    now: DateTime<Utc>,
    message: &str,
) -> StoreResult<bool> {
    let text = format!(
        "UPDATE transfers SET \
           cancel_requested = TRUE, updated_at = $1, \
           status = CASE WHEN status = 'Pending' THEN 'Error' ELSE status END, \
           error_message = CASE WHEN status = 'Pending' THEN $2 ELSE error_message END, \
           finished_at = CASE WHEN status = 'Pending' THEN $1 ELSE finished_at END, \
           source_secret = CASE WHEN status = 'Pending' THEN NULL ELSE source_secret END \
         WHERE id = $3 AND status IN ('Pending', 'InProgress') RETURNING status, {SUBJECT_COLUMNS}"
    );
    let mut tx = db.begin().await?;
    let changed: Option<Cancelled> = on_tx!(&mut tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(text))
            .bind(now)
            .bind(message)
            .bind(id)
            .fetch_optional(conn)
            .await
    })?;
    // A queued transfer ends here; a running one ends when its worker sees the request.
    if let Some(changed) = &changed
        && changed.status == TransferStatus::Error.as_str()
    {
        let event = changed
            .subject
            .finished("Error", Some(message), "[]", false);
        crate::events::record_in(&mut tx, &event, now).await?;
    }
    tx.commit().await?;
    Ok(changed.is_some())
}

/// What a cancel's update returns.
#[derive(Debug, sqlx::FromRow)]
struct Cancelled {
    status: String,
    #[sqlx(flatten)]
    subject: TransferSubject,
}

/// Export results older than `before`: (transfer, blob key) pairs to remove.
pub(crate) async fn expired_downloads(
    db: &Db,
    before: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<(TransferId, String)>> {
    Ok(on_db!(db, |pool| {
        sqlx::query_as::<_, (TransferId, String)>(
            "SELECT id, download_blob FROM transfers WHERE download_blob IS NOT NULL AND finished_at < $1 \
             ORDER BY finished_at LIMIT $2",
        )
        .bind(before)
        .bind(limit)
        .fetch_all(pool)
        .await
    })?)
}

/// Forgets an export's result once its blob is gone.
pub(crate) async fn clear_download(db: &Db, id: TransferId) -> StoreResult<()> {
    on_db!(db, |pool| {
        sqlx::query("UPDATE transfers SET download_blob = NULL WHERE id = $1")
            .bind(id)
            .execute(pool)
            .await
            .map(|_| ())
    })?;
    Ok(())
}

/// A transfer that needs a Kubernetes Job.
#[cfg(feature = "kubernetes")]
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct Undispatched {
    /// The transfer.
    pub(crate) id: TransferId,
    /// Its plan, which holds the resources it asked for.
    pub(crate) request: JsonText,
    /// Jobs created for it so far.
    pub(crate) dispatches: i64,
}

/// Transfers that need a Kubernetes Job, oldest first: queued ones without a Job (new, or
/// given back by their Job's worker), and running ones whose worker died (lease ran out) and
/// that got no Job since. Cancelled transfers and those out of attempts get none.
#[cfg(feature = "kubernetes")]
pub(crate) async fn list_undispatched(
    db: &Db,
    now: DateTime<Utc>,
    attempts_max: u32,
    limit: i64,
) -> StoreResult<Vec<Undispatched>> {
    Ok(on_db!(db, |pool| {
        sqlx::query_as::<_, Undispatched>(
            "SELECT id, request, dispatches FROM transfers \
             WHERE cancel_requested = FALSE AND attempts < $2 AND ( \
               (status = 'Pending' AND dispatched_job IS NULL) \
               OR (status = 'InProgress' AND lease_expires_at < $1 \
                   AND (dispatched_at IS NULL OR dispatched_at < lease_expires_at))) \
             ORDER BY created_at, id LIMIT $3",
        )
        .bind(now)
        .bind(i64::from(attempts_max))
        .bind(limit)
        .fetch_all(pool)
        .await
    })?)
}

/// Records that Job `job` was created for `id`, its `seen + 1`-th. False when another
/// dispatcher recorded one first (it saw the same count and created the same Job name, so
/// there is still one Job).
#[cfg(feature = "kubernetes")]
pub(crate) async fn mark_dispatched(
    db: &Db,
    id: TransferId,
    seen: i64,
    job: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let updated = on_db!(db, |pool| {
        sqlx::query(
            "UPDATE transfers SET dispatched_job = $1, dispatched_at = $2, dispatches = dispatches + 1 \
             WHERE id = $3 AND dispatches = $4",
        )
        .bind(job)
        .bind(now)
        .bind(id)
        .bind(seen)
        .execute(pool)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(updated == 1)
}

/// Ends a transfer that no Job can run (Kubernetes refuses it), if it is still waiting for
/// one. False when it was not (a worker took it meanwhile, or it ended).
#[cfg(feature = "kubernetes")]
pub(crate) async fn fail_undispatchable(
    db: &Db,
    id: TransferId,
    now: DateTime<Utc>,
    message: &str,
) -> StoreResult<bool> {
    let text = format!(
        "UPDATE transfers SET status = 'Error', error_message = $1, finished_at = $2, updated_at = $2, \
         lease_owner = NULL, lease_expires_at = NULL, source_secret = NULL \
         WHERE id = $3 AND (status = 'Pending' OR (status = 'InProgress' AND lease_expires_at < $2)) \
         RETURNING {SUBJECT_COLUMNS}"
    );
    let mut tx = db.begin().await?;
    let ended: Option<TransferSubject> = on_tx!(&mut tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(text))
            .bind(message)
            .bind(now)
            .bind(id)
            .fetch_optional(conn)
            .await
    })?;
    if let Some(subject) = &ended {
        let event = subject.finished("Error", Some(message), "[]", false);
        crate::events::record_in(&mut tx, &event, now).await?;
    }
    tx.commit().await?;
    Ok(ended.is_some())
}

/// Queued transfers whose Job was created before `dispatched_before` and whose worker has not
/// taken them yet: (transfer, Job name), oldest first.
#[cfg(feature = "kubernetes")]
pub(crate) async fn list_unstarted(
    db: &Db,
    dispatched_before: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<(TransferId, String)>> {
    Ok(on_db!(db, |pool| {
        sqlx::query_as::<_, (TransferId, String)>(
            "SELECT id, dispatched_job FROM transfers \
             WHERE status = 'Pending' AND cancel_requested = FALSE AND dispatched_job IS NOT NULL \
             AND dispatched_at < $1 ORDER BY dispatched_at, id LIMIT $2",
        )
        .bind(dispatched_before)
        .bind(limit)
        .fetch_all(pool)
        .await
    })?)
}

/// What the dispatcher found out about the Job of a queued transfer.
#[cfg(feature = "kubernetes")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnstartedJob {
    /// The Job ended or was deleted without running the transfer: forget it, so the transfer
    /// gets a new one.
    Gone,
    /// The Job is still there (its pod waits for a node, an image...): look again one
    /// start timeout after this.
    Waiting(DateTime<Utc>),
}

/// Records what became of queued transfer `id`'s Job `job`. False when the transfer moved on
/// meanwhile (a worker took it, it was cancelled, or it has another Job).
#[cfg(feature = "kubernetes")]
pub(crate) async fn update_unstarted(
    db: &Db,
    id: TransferId,
    job: &str,
    found: UnstartedJob,
) -> StoreResult<bool> {
    let looked_at = match found {
        UnstartedJob::Gone => None,
        UnstartedJob::Waiting(now) => Some(now),
    };
    // NULL forgets the Job; a time keeps it and moves the next look-up on.
    let updated = on_db!(db, |pool| {
        sqlx::query(
            "UPDATE transfers SET \
               dispatched_job = CASE WHEN $1 IS NULL THEN NULL ELSE dispatched_job END, \
               dispatched_at = COALESCE($1, dispatched_at) \
             WHERE id = $2 AND dispatched_job = $3 AND status = 'Pending'",
        )
        .bind(looked_at)
        .bind(id)
        .bind(job)
        .execute(pool)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(updated == 1)
}

// ---- uploads ----
//
// The rows of committed uploads (migration 0015); how removals and transfer starts agree
// through them is in `uploads.rs`.

/// Records a committed write at the upload `key` of `tenant` inside `tx`: its size, and now as
/// the time of its last write (which the retention counts from).
pub(crate) async fn record_upload_in(
    tx: &mut Tx,
    key: &str,
    tenant: TenantId,
    size: u64,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO uploads (blob_key, tenant_id, size, committed_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (blob_key) DO UPDATE SET size = excluded.size, committed_at = excluded.committed_at",
        )
        .bind(key)
        .bind(tenant)
        .bind(size)
        .bind(now)
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

/// Locks the row of the upload `key`; false when there is none.
pub(crate) async fn lock_upload_in(tx: &mut Tx, key: &str) -> StoreResult<bool> {
    let found: Option<String> = match tx {
        Tx::Sqlite(transaction) => {
            sqlx::query_scalar("SELECT blob_key FROM uploads WHERE blob_key = $1")
                .bind(key)
                .fetch_optional(&mut **transaction)
                .await?
        }
        Tx::Postgres(transaction) => {
            sqlx::query_scalar("SELECT blob_key FROM uploads WHERE blob_key = $1 FOR UPDATE")
                .bind(key)
                .fetch_optional(&mut **transaction)
                .await?
        }
    };
    Ok(found.is_some())
}

/// Adds a row for the upload `key` (`size`, `committed_at`) inside `tx` unless it has one
/// already; true when it was added.
pub(crate) async fn add_upload_in(
    tx: &mut Tx,
    key: &str,
    tenant: TenantId,
    size: u64,
    committed_at: DateTime<Utc>,
) -> StoreResult<bool> {
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    let added = on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO uploads (blob_key, tenant_id, size, committed_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (blob_key) DO NOTHING",
        )
        .bind(key)
        .bind(tenant)
        .bind(size)
        .bind(committed_at)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(added > 0)
}

/// Deletes the row of the upload `key` inside `tx` (locking it first) unless a queued or
/// running transfer reads it or (with `written_before`) it was written again since. True when
/// it was deleted; its blob is then the caller's to queue for deletion.
pub(crate) async fn delete_upload_in(
    tx: &mut Tx,
    key: &str,
    written_before: Option<DateTime<Utc>>,
) -> StoreResult<bool> {
    if !lock_upload_in(tx, key).await? {
        return Ok(false);
    }
    let removed = on_tx!(&mut *tx, |conn| {
        sqlx::query(
            "DELETE FROM uploads WHERE blob_key = $1 AND ($2 IS NULL OR committed_at < $2) \
             AND NOT EXISTS (SELECT 1 FROM transfers WHERE upload_key = $1 \
                             AND status IN ('None', 'Pending', 'InProgress'))",
        )
        .bind(key)
        .bind(written_before)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(removed > 0)
}

/// Up to `limit` uploads last written before `before`, oldest first.
pub(crate) async fn uploads_written_before(
    db: &Db,
    before: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<String>> {
    Ok(on_db!(db, |pool| {
        sqlx::query_scalar(
            "SELECT blob_key FROM uploads WHERE committed_at < $1 ORDER BY committed_at, blob_key LIMIT $2",
        )
        .bind(before)
        .bind(limit)
        .fetch_all(pool)
        .await
    })?)
}

/// The bytes of the uploads of `tenant` that have a row: not yet imported, or unused and not yet
/// past their retention.
pub(crate) async fn upload_bytes(db: &Db, tenant: TenantId) -> StoreResult<i64> {
    Ok(on_db!(db, |pool| {
        sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM uploads WHERE tenant_id = $1",
        )
        .bind(tenant)
        .fetch_one(pool)
        .await
    })?)
}
