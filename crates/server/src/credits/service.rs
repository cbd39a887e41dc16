//! Who may do what with credits, and the checks of every request, before the ledger's
//! transactions in `ledger.rs` run: on the SQLite writer thread (one hand-off per request, see
//! `db/sqlite_write.rs`) or in a PostgreSQL transaction.
//!
//! Guarantees (docs/credits.md): amounts never go negative (checked, and by the tables);
//! a reservation leaves `Reserved` at most once (the resolving update only matches a row still
//! `Reserved`); every retry of an add (sales order id), reserve, spend, release (operation id)
//! or move (idempotency key) is answered from what the first one did; credits past their date
//! are never reserved, spent or moved.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::auth::{Principal, TenantRole};
use crate::clock::Clock;
use crate::config::CreditsConfig;
use crate::credits::ProjectNameLookup;
use crate::credits::amount::Credits;
use crate::credits::ledger::{self, ActorRef, AddCredits, Move, Release, Reserve, Spend};
use crate::credits::model::{
    AddCreditsRequest, AddCreditsResponse, Balances, BillingReference, BillingReferenceDto,
    BreakdownDto, CreditStatus, ExtendedLotDto, JournalRow, LotDto, LotOperationDto, MoveRequest,
    MoveResponse, OperationDto, PoolId, ReleaseRequest, ReserveRequest, SpendRequest,
    TEXT_CHARS_MAX,
};
use crate::credits::store;
use crate::db::{Db, SqliteWriter, StoreError};
use crate::http::time::WireTime;
use crate::identity::service::IdentityService;
use crate::ids::TenantId;

use crate::auth::SPEND_SCOPE;

/// Pools the settle job takes per round.
const POOLS_PER_ROUND: i64 = 100;

/// Errors of the credit rules.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CreditError {
    /// A field breaks a rule.
    #[error("{field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The caller may not do this.
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// The tenant or operation does not exist (or the caller may not know it).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The request conflicts with the ledger: not enough credits, a retry with another body, a
    /// reservation resolved already.
    #[error("{kind}: {detail}")]
    Conflict {
        /// Stable kind.
        kind: &'static str,
        /// What conflicts.
        detail: String,
    },
    /// The pool a transaction needs does not exist; the service turns this into the answer
    /// for an unknown tenant or an empty pool, and it never reaches a client.
    #[error("no credit pool")]
    NoPool,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Result of the credit rules.
pub(crate) type CreditResult<T> = Result<T, CreditError>;

/// Settings of the ledger.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CreditSettings {
    /// Timeout of reservations that name none; `None` for no timeout.
    pub(crate) timeout_default: Option<u64>,
    /// Longest timeout a reservation may ask for, in seconds.
    pub(crate) timeout_max: u64,
    /// How often the job settles expiries and timeouts.
    pub(crate) settle_interval: Duration,
}

impl From<&CreditsConfig> for CreditSettings {
    fn from(config: &CreditsConfig) -> Self {
        Self {
            timeout_default: (config.reservation_timeout_default_seconds > 0)
                .then_some(config.reservation_timeout_default_seconds),
            timeout_max: config.reservation_timeout_max_seconds,
            settle_interval: config.settle_interval_seconds,
        }
    }
}

/// The credit ledger.
#[derive(Debug, Clone)]
pub(crate) struct CreditService {
    db: Db,
    /// SQLite: the thread the ledger's transactions run on; `None` on PostgreSQL.
    writer: Option<Arc<SqliteWriter>>,
    clock: Arc<dyn Clock>,
    identity: IdentityService,
    settings: CreditSettings,
    /// Names the projects of operations, for the extended details.
    project_names: Arc<dyn ProjectNameLookup>,
}

/// Runs `$work(conn, $input)`, a transaction of `ledger.rs`, on the SQLite writer thread or in
/// an sqlx transaction (committed when it succeeds, rolled back otherwise).
macro_rules! in_transaction {
    ($service:expr, $work:path, $($input:expr),+) => {
        match &$service.writer {
            Some(writer) => {
                writer
                    .transaction(move |conn| {
                        SqliteWriter::ready($work(conn, $($input),+))
                            .unwrap_or_else(|error| Err(error.into()))
                    })
                    .await
            }
            None => {
                let mut tx = $service.db.begin().await?;
                let result = $work(&mut tx, $($input),+).await;
                if result.is_ok() {
                    tx.commit().await?;
                }
                result
            }
        }
    };
}

/// Who asks, as the rules see it.
struct Actor<'a> {
    principal: &'a Principal,
}

impl<'a> Actor<'a> {
    fn of(principal: &'a Principal) -> Self {
        Self { principal }
    }

    fn journal(&self) -> ActorRef {
        ActorRef {
            id: self.principal.id,
            kind: self.principal.principal_type.as_str(),
        }
    }

    /// BackOffice and CloudAdministrator: add, move, and everything else.
    fn administers(&self) -> bool {
        self.principal.is_platform_admin()
    }

    /// Reserve, spend and release: platform admins and services with the credit scope.
    fn uses_credits(&self) -> bool {
        self.administers() || self.principal.scopes.contains(SPEND_SCOPE)
    }
}

/// What a credit request with a body asks, for the check made before the body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CreditCall {
    /// Add credits.
    Add,
    /// Move credits between pools.
    Move,
    /// Reserve, spend or release.
    Use,
    /// The details of a tenant's lots (the tenant may be named in the body).
    Details,
}

impl CreditService {
    /// 403 unless the caller may make `call` for some pool: the body, read after this, names
    /// the pool, so a caller that may make it for none learns nothing of the body's rules.
    pub(crate) fn authorize(principal: &Principal, call: CreditCall) -> CreditResult<()> {
        let actor = Actor::of(principal);
        let (allowed, needs) = match call {
            CreditCall::Add => (
                actor.administers(),
                "adding credits needs the BackOffice or CloudAdministrator role",
            ),
            CreditCall::Move => (
                actor.administers(),
                "moving credits needs the BackOffice or CloudAdministrator role",
            ),
            CreditCall::Use => (
                actor.uses_credits(),
                "reserving, spending and releasing credits needs the BackOffice role or the platform_iam_credit_spend scope",
            ),
            CreditCall::Details => (
                actor.uses_credits()
                    || principal
                        .tenant_id
                        .is_some_and(|tenant| principal.role_in(tenant) == Some(TenantRole::Owner)),
                "a tenant's credits are shown to its Owners",
            ),
        };
        if allowed {
            Ok(())
        } else {
            Err(CreditError::Forbidden(needs))
        }
    }
}

/// Which pool a query is about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PoolQuery {
    /// A tenant's.
    Tenant(TenantId),
    /// The generic pool.
    Unassigned,
}

/// What a read of a pool may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Balances and details.
    Balances,
    /// The journal.
    Journal,
}

impl CreditService {
    /// The ledger on `db`. On SQLite its transactions get a writer thread of their own; when
    /// that cannot open, they run through sqlx like PostgreSQL's.
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        identity: IdentityService,
        settings: CreditSettings,
        project_names: Arc<dyn ProjectNameLookup>,
    ) -> Self {
        let writer = match db.sqlite_writer() {
            Ok(writer) => writer.map(Arc::new),
            Err(error) => {
                tracing::warn!(%error, "cannot open the SQLite writer thread for credits; using sqlx");
                None
            }
        };
        Self {
            db,
            writer,
            clock,
            identity,
            settings,
            project_names,
        }
    }

    fn now_and_today(&self) -> (DateTime<Utc>, NaiveDate) {
        let now = self.clock.now();
        (now, now.date_naive())
    }

    async fn require_tenant(&self, tenant: TenantId) -> CreditResult<()> {
        if self.identity.tenant_exists(tenant).await? {
            Ok(())
        } else {
            Err(CreditError::NotFound("tenant"))
        }
    }

    /// `result`, with a missing pool told apart: an unknown tenant is 404, a tenant without
    /// credits answers `empty`.
    async fn for_tenant<T>(
        &self,
        tenant: TenantId,
        result: CreditResult<T>,
        empty: impl FnOnce() -> CreditError,
    ) -> CreditResult<T> {
        match result {
            Err(CreditError::NoPool) => {
                self.require_tenant(tenant).await?;
                Err(empty())
            }
            other => other,
        }
    }

    // ---- add ----

    /// Adds credits to a tenant's pool or the generic pool. A sales order is added once: the
    /// same order again answers as the first time, another body with its id is a conflict.
    pub(crate) async fn add(
        &self,
        principal: &Principal,
        request: AddCreditsRequest,
    ) -> CreditResult<AddCreditsResponse> {
        let actor = Actor::of(principal);
        if !actor.administers() {
            return Err(CreditError::Forbidden(
                "adding credits needs the BackOffice or CloudAdministrator role",
            ));
        }
        let reference = billing_reference(&request.billing_reference)?;
        let expires_on = expiry_date(&request.expires_at)?;
        let sales_order = request
            .sales_order_id
            .as_deref()
            .map(|id| identifier("salesOrderId", id))
            .transpose()?;
        if let Some(tenant) = request.tenant_id {
            self.require_tenant(tenant).await?;
        }
        let pool = PoolId::of_optional(request.tenant_id);
        let fingerprint = serde_json::json!([
            "add",
            request.credits.to_string(),
            reference.reference,
            reference.tag,
            reference.kind,
            expires_on.to_string(),
            pool.as_uuid()
        ])
        .to_string();
        let response = AddCreditsResponse {
            credits: request.credits,
            tenant_id: request.tenant_id,
            sales_order_id: sales_order.clone(),
            billing_reference: BillingReferenceDto::from(&reference),
            expires_at: expires_on,
        };
        let add = AddCredits {
            actor: actor.journal(),
            pool,
            credits: request.credits,
            reference,
            expires_on,
            sales_order,
            fingerprint,
            now: self.clock.now(),
        };
        // Two adds of one new sales order to different pools do not wait for each other on
        // PostgreSQL; the second fails on the order's key and, run again, finds the first.
        let retry = add.clone();
        match in_transaction!(self, ledger::add, add) {
            Err(CreditError::Store(StoreError::Duplicate(_))) => {
                in_transaction!(self, ledger::add, retry)?;
            }
            other => other?,
        }
        Ok(response)
    }

    // ---- reserve, spend, release ----

    /// Reserves credits of a tenant, earliest expiry first. The same operation id with the same
    /// body answers with the reservation as it stands; with another body it is a conflict.
    pub(crate) async fn reserve(
        &self,
        principal: &Principal,
        request: ReserveRequest,
    ) -> CreditResult<OperationDto> {
        let actor = Actor::of(principal);
        if !actor.uses_credits() {
            return Err(CreditError::Forbidden(
                "reserving credits needs the BackOffice role or the platform_iam_credit_spend scope",
            ));
        }
        let operation_id = match request.operation_id.as_deref() {
            Some(id) => identifier("operationId", id)?,
            None => format!("reservation-{}", Uuid::now_v7()),
        };
        let timeout_seconds = self.reservation_timeout(&request)?;
        let fingerprint = serde_json::json!([
            "reserve",
            request.credits.to_string(),
            request.project_id,
            timeout_seconds
        ])
        .to_string();
        let reserve = Reserve {
            actor: actor.journal(),
            tenant: operation_tenant(request.tenant_id)?,
            operation_id,
            credits: request.credits,
            project_id: request.project_id,
            timeout_seconds,
            fingerprint,
            now: self.clock.now(),
        };
        let result = in_transaction!(self, ledger::reserve, reserve);
        let (operation, lots) = self
            .for_tenant(request.tenant_id, result, || {
                ledger::insufficient(request.credits, Credits::ZERO)
            })
            .await?;
        Ok(OperationDto::of(&operation, &lots))
    }

    /// The timeout a reservation asks for (0: none), within the configured maximum, or the
    /// default.
    fn reservation_timeout(&self, request: &ReserveRequest) -> CreditResult<Option<u64>> {
        match request.timeout_seconds.map(|seconds| seconds.0) {
            Some(0) => Ok(None),
            Some(seconds) if seconds > self.settings.timeout_max => Err(CreditError::Invalid {
                field: "timeoutSeconds",
                message: format!("must be at most {}", self.settings.timeout_max),
            }),
            Some(seconds) => Ok(Some(seconds)),
            None => Ok(self.settings.timeout_default),
        }
    }

    /// Spends a reservation wholly or partly (the rest goes back), or, with `direct`,
    /// available credits without one.
    pub(crate) async fn spend(
        &self,
        principal: &Principal,
        request: SpendRequest,
    ) -> CreditResult<OperationDto> {
        let actor = Actor::of(principal);
        if !actor.uses_credits() {
            return Err(CreditError::Forbidden(
                "spending credits needs the BackOffice role or the platform_iam_credit_spend scope",
            ));
        }
        let operation_id = identifier("operationId", &request.operation_id)?;
        if request.direct && request.credits.is_none() {
            return Err(CreditError::Invalid {
                field: "credits",
                message: "a direct spend must name the credits".into(),
            });
        }
        let spend = Spend {
            actor: actor.journal(),
            tenant: operation_tenant(request.tenant_id)?,
            operation_id,
            credits: request.credits,
            direct: request.direct,
            project_id: request.project_id,
            now: self.clock.now(),
        };
        let result = in_transaction!(self, ledger::spend, spend);
        let (operation, lots) = self
            .for_tenant(request.tenant_id, result, || {
                if request.direct {
                    ledger::insufficient(request.credits.unwrap_or_default(), Credits::ZERO)
                } else {
                    CreditError::NotFound("operation")
                }
            })
            .await?;
        Ok(OperationDto::of(&operation, &lots))
    }

    /// Gives a reservation's credits back. Releasing again answers the same; a reservation
    /// spent or timed out cannot be released.
    pub(crate) async fn release(
        &self,
        principal: &Principal,
        request: ReleaseRequest,
    ) -> CreditResult<OperationDto> {
        let actor = Actor::of(principal);
        if !actor.uses_credits() {
            return Err(CreditError::Forbidden(
                "releasing credits needs the BackOffice role or the platform_iam_credit_spend scope",
            ));
        }
        let release = Release {
            actor: actor.journal(),
            tenant: operation_tenant(request.tenant_id)?,
            operation_id: identifier("operationId", &request.operation_id)?,
            now: self.clock.now(),
        };
        let result = in_transaction!(self, ledger::release, release);
        let (operation, lots) = self
            .for_tenant(request.tenant_id, result, || {
                CreditError::NotFound("operation")
            })
            .await?;
        Ok(OperationDto::of(&operation, &lots))
    }

    /// One operation of a tenant, as it stands.
    pub(crate) async fn operation(
        &self,
        principal: &Principal,
        tenant: TenantId,
        operation_id: &str,
    ) -> CreditResult<OperationDto> {
        self.authorize_read(principal, PoolQuery::Tenant(tenant), Reading::Balances)
            .await?;
        let operation_id = identifier("operationId", operation_id)?;
        self.settle_if_due(PoolId::of(tenant)).await?;
        let operation = store::operation(&self.db, tenant, &operation_id)
            .await?
            .ok_or(CreditError::NotFound("operation"))?;
        let lots = store::operation_lots(&self.db, operation.id).await?;
        Ok(OperationDto::of(&operation, &lots))
    }

    // ---- move ----

    /// Moves available credits between a tenant's pool and the generic pool, or between two
    /// tenants' pools for billing references both hold. The moved credits keep their billing
    /// reference and expiry date.
    pub(crate) async fn move_credits(
        &self,
        principal: &Principal,
        request: MoveRequest,
        idempotency_key: Option<&str>,
    ) -> CreditResult<MoveResponse> {
        let actor = Actor::of(principal);
        if !actor.administers() {
            return Err(CreditError::Forbidden(
                "moving credits needs the BackOffice or CloudAdministrator role",
            ));
        }
        if request.source_tenant_id == request.target_tenant_id {
            return Err(CreditError::Invalid {
                field: "targetTenantId",
                message: "the source and target pools must differ".into(),
            });
        }
        let reference = request
            .billing_reference
            .as_ref()
            .map(billing_reference)
            .transpose()?;
        let key = idempotency_key
            .map(|key| identifier("Idempotency-Key", key))
            .transpose()?;
        for tenant in [request.source_tenant_id, request.target_tenant_id]
            .into_iter()
            .flatten()
        {
            self.require_tenant(tenant).await?;
        }
        let source = PoolId::of_optional(request.source_tenant_id);
        let target = PoolId::of_optional(request.target_tenant_id);
        let fingerprint = serde_json::json!([
            "move",
            request.credits.to_string(),
            source.as_uuid(),
            target.as_uuid(),
            reference
                .as_ref()
                .map(|r| [r.reference.clone(), r.tag.clone(), r.kind.clone()])
        ])
        .to_string();
        let order = Move {
            actor: actor.journal(),
            source,
            target,
            credits: request.credits,
            reference,
            key,
            fingerprint,
            now: self.clock.now(),
        };
        let lots = in_transaction!(self, ledger::move_credits, order)?;
        Ok(MoveResponse {
            credits: request.credits,
            source_tenant_id: request.source_tenant_id,
            target_tenant_id: request.target_tenant_id,
            lots,
        })
    }

    // ---- queries ----

    async fn authorize_read(
        &self,
        principal: &Principal,
        query: PoolQuery,
        reading: Reading,
    ) -> CreditResult<()> {
        let actor = Actor::of(principal);
        match query {
            PoolQuery::Unassigned if actor.administers() => Ok(()),
            PoolQuery::Unassigned => Err(CreditError::Forbidden(
                "the unassigned pool is shown to the BackOffice and CloudAdministrator roles only",
            )),
            PoolQuery::Tenant(tenant) => {
                if actor.administers() || (reading == Reading::Balances && actor.uses_credits()) {
                    return self.require_tenant(tenant).await;
                }
                if actor.uses_credits() && principal.role_in(tenant) != Some(TenantRole::Owner) {
                    return Err(CreditError::Forbidden(
                        "the journal is shown to platform administrators and the tenant's Owners",
                    ));
                }
                match principal.role_in(tenant) {
                    Some(TenantRole::Owner) => Ok(()),
                    Some(_) => Err(CreditError::Forbidden(
                        "a tenant's credits are shown to its Owners",
                    )),
                    None => Err(CreditError::NotFound("tenant")),
                }
            }
        }
    }

    /// Totals per status of a pool.
    pub(crate) async fn breakdown(
        &self,
        principal: &Principal,
        query: PoolQuery,
        statuses: &[CreditStatus],
    ) -> CreditResult<BreakdownDto> {
        self.authorize_read(principal, query, Reading::Balances)
            .await?;
        let pool = pool_of(query);
        self.settle_if_due(pool).await?;
        let balances = store::balances(&self.db, pool).await?;
        Ok(BreakdownDto {
            tenant_id: pool.tenant(),
            statuses: balances.listed(statuses),
        })
    }

    /// A page of a pool's lots with their amounts per status.
    pub(crate) async fn details(
        &self,
        principal: &Principal,
        query: PoolQuery,
        statuses: &[CreditStatus],
        window: (u32, u32),
    ) -> CreditResult<(Vec<LotDto>, u64)> {
        self.authorize_read(principal, query, Reading::Balances)
            .await?;
        let pool = pool_of(query);
        self.settle_if_due(pool).await?;
        let (lots, total) = store::lots_page(&self.db, pool, statuses, window.0, window.1).await?;
        let (_, today) = self.now_and_today();
        Ok((
            lots.iter()
                .map(|lot| LotDto::of(lot, statuses, today))
                .collect(),
            total,
        ))
    }

    /// [`Self::details`] with the operations that reserved or spent each lot's credits.
    pub(crate) async fn extended_details(
        &self,
        principal: &Principal,
        tenant: TenantId,
        statuses: &[CreditStatus],
        window: (u32, u32),
        per_lot: u32,
    ) -> CreditResult<(Vec<ExtendedLotDto>, u64)> {
        let query = PoolQuery::Tenant(tenant);
        self.authorize_read(principal, query, Reading::Balances)
            .await?;
        let pool = pool_of(query);
        self.settle_if_due(pool).await?;
        let (lots, total) = store::lots_page(&self.db, pool, statuses, window.0, window.1).await?;
        let ids: Vec<Uuid> = lots.iter().map(|lot| lot.id).collect();
        let operations = store::lot_operations(&self.db, &ids, statuses, per_lot).await?;
        let named: BTreeSet<Uuid> = operations.iter().filter_map(|op| op.project_id).collect();
        let named: Vec<Uuid> = named.into_iter().collect();
        let names: HashMap<(Uuid, TenantId), String> = self
            .project_names
            .names(&self.db, &named)
            .await?
            .into_iter()
            .map(|project| ((project.id, project.tenant), project.name))
            .collect();
        let (_, today) = self.now_and_today();
        let page = lots
            .iter()
            .map(|lot| {
                let mine: Vec<_> = operations.iter().filter(|op| op.lot_id == lot.id).collect();
                ExtendedLotDto {
                    lot: LotDto::of(lot, statuses, today),
                    operations_total: mine
                        .first()
                        .map_or(0, |op| u64::try_from(op.total).unwrap_or(0)),
                    operations: mine
                        .iter()
                        .map(|op| LotOperationDto {
                            operation_id: op.operation_id.clone(),
                            state: op.state,
                            project_id: op.project_id,
                            project_name: op
                                .project_id
                                .and_then(|id| names.get(&(id, op.tenant_id)).cloned()),
                            reserved: Credits::from_micros(op.held),
                            spent: Credits::from_micros(op.used),
                            created_at: WireTime(op.created_at),
                            resolved_at: op.resolved_at.map(WireTime),
                        })
                        .collect(),
                }
            })
            .collect();
        Ok((page, total))
    }

    /// Up to `limit + 1` journal entries of a pool after `after`.
    pub(crate) async fn journal(
        &self,
        principal: &Principal,
        query: PoolQuery,
        after: Option<i64>,
        descending: bool,
        limit: i64,
    ) -> CreditResult<Vec<JournalRow>> {
        self.authorize_read(principal, query, Reading::Journal)
            .await?;
        let pool = pool_of(query);
        self.settle_if_due(pool).await?;
        Ok(store::journal_page(&self.db, pool, after, descending, limit).await?)
    }

    /// A pool's balances and the sum of its journal, read at one point of its history.
    pub(crate) async fn audit(
        &self,
        principal: &Principal,
        query: PoolQuery,
    ) -> CreditResult<(Balances, Balances)> {
        self.authorize_read(principal, query, Reading::Journal)
            .await?;
        let pool = pool_of(query);
        let now = self.clock.now();
        in_transaction!(self, ledger::audit, pool, now)
    }

    // ---- settling expiry and timeouts ----

    /// Settles `pool` if anything is due, so that a read shows expiries and timeouts the
    /// moment they happen.
    async fn settle_if_due(&self, pool: PoolId) -> CreditResult<()> {
        let (now, today) = self.now_and_today();
        if !store::is_due(&self.db, pool, now, today).await? {
            return Ok(());
        }
        in_transaction!(self, ledger::settle, pool, now)
    }

    /// Settles every pool with something due; what the periodic job runs. Safe on several
    /// replicas: each pool is settled under its lock, and settling twice changes nothing.
    pub(crate) async fn settle_due(&self) -> CreditResult<usize> {
        let mut settled = 0;
        loop {
            let (now, today) = self.now_and_today();
            let pools = store::due_pools(&self.db, now, today, POOLS_PER_ROUND).await?;
            let count = pools.len();
            for pool in pools {
                in_transaction!(self, ledger::settle, pool, now)?;
            }
            settled += count;
            if i64::try_from(count).unwrap_or(i64::MAX) < POOLS_PER_ROUND {
                return Ok(settled);
            }
        }
    }

    /// How often the settle job runs.
    pub(crate) fn settle_interval(&self) -> Duration {
        self.settings.settle_interval
    }
}

/// The tenant an operation (reserve, spend, release) names. The nil uuid, which names the
/// generic pool elsewhere, is refused: credits of the generic pool are only moved.
fn operation_tenant(tenant: TenantId) -> CreditResult<TenantId> {
    if PoolId::of(tenant) == PoolId::GENERIC {
        return Err(CreditError::Invalid {
            field: "tenantId",
            message: "must name a tenant: credits of the generic pool are never reserved or \
                      spent, only moved"
                .into(),
        });
    }
    Ok(tenant)
}

fn pool_of(query: PoolQuery) -> PoolId {
    match query {
        PoolQuery::Tenant(tenant) => PoolId::of(tenant),
        PoolQuery::Unassigned => PoolId::GENERIC,
    }
}

/// A billing reference from its wire form: the reference is required; all parts are trimmed,
/// at most 255 characters and free of control characters.
fn billing_reference(dto: &BillingReferenceDto) -> CreditResult<BillingReference> {
    let part = |field: &'static str, value: Option<&str>| -> CreditResult<String> {
        let value = value.unwrap_or_default().trim();
        if value.chars().count() > TEXT_CHARS_MAX {
            return Err(CreditError::Invalid {
                field,
                message: format!("must be at most {TEXT_CHARS_MAX} characters"),
            });
        }
        if value.chars().any(char::is_control) {
            return Err(CreditError::Invalid {
                field,
                message: "must not contain control characters".into(),
            });
        }
        Ok(value.to_owned())
    };
    let reference = part(
        "billingReference.billingReference",
        Some(&dto.billing_reference),
    )?;
    if reference.is_empty() {
        return Err(CreditError::Invalid {
            field: "billingReference.billingReference",
            message: "is required".into(),
        });
    }
    Ok(BillingReference {
        reference,
        tag: part(
            "billingReference.billingReferenceTag",
            dto.billing_reference_tag.as_deref(),
        )?,
        kind: part(
            "billingReference.billingReferenceType",
            dto.billing_reference_type.as_deref(),
        )?,
    })
}

/// An id chosen by the caller (operation, sales order, idempotency key): 1 to 255
/// characters, no control characters, kept exactly as sent.
fn identifier(field: &'static str, value: &str) -> CreditResult<String> {
    let invalid = |message: &str| CreditError::Invalid {
        field,
        message: message.to_owned(),
    };
    if value.trim().is_empty() {
        return Err(invalid("must not be empty"));
    }
    if value.chars().count() > TEXT_CHARS_MAX {
        return Err(invalid("must be at most 255 characters"));
    }
    if value.chars().any(char::is_control) {
        return Err(invalid("must not contain control characters"));
    }
    Ok(value.to_owned())
}

/// The expiry date: `YYYY-MM-DD`, or a timestamp read as its UTC date.
fn expiry_date(text: &str) -> CreditResult<NaiveDate> {
    let text = text.trim();
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .or_else(|| WireTime::parse(text).map(|time| time.0.date_naive()))
        .ok_or_else(|| CreditError::Invalid {
            field: "expiresAt",
            message: "must be a date, YYYY-MM-DD".into(),
        })
}
