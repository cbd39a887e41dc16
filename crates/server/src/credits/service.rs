//! The rules of the credit ledger: who may do what, and every change as one transaction that
//! first takes its pool, settles what is due (expiry, timeouts), checks, and then writes each
//! lot's change together with its journal entry.
//!
//! Guarantees (docs/credits.md): amounts never go negative (checked here, and by the tables);
//! a reservation leaves `Reserved` at most once (the resolving update only matches a row still
//! `Reserved`); every retry of an add (sales order id), reserve, spend, release (operation id)
//! or move (idempotency key) is answered from what the first one did; credits past their date
//! are never reserved, spent or moved.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use uuid::Uuid;

use crate::auth::{Principal, TenantRole};
use crate::clock::Clock;
use crate::config::CreditsConfig;
use crate::credits::amount::{Credits, POOL_RECEIVED_MAX};
use crate::credits::model::{
    AddCreditsRequest, AddCreditsResponse, Balances, BillingReference, BillingReferenceDto,
    BreakdownDto, CreditStatus, ExtendedLotDto, JournalKind, JournalRow, LotDto, LotOperationDto,
    LotRow, MoveRequest, MoveResponse, MovedLotDto, OperationDto, OperationLotRow, OperationRow,
    OperationState, PoolId, ReleaseRequest, ReserveRequest, SpendRequest, TEXT_CHARS_MAX,
};
use crate::credits::store::{self, Entry, LotChoice, Sums};
use crate::db::{Db, StoreError, Tx};
use crate::http::time::WireTime;
use crate::identity::service::IdentityService;
use crate::ids::TenantId;

/// The scope that lets a service reserve, spend and release any tenant's credits, and read
/// tenant balances.
pub(crate) const SPEND_SCOPE: &str = "platform_iam_credit_spend";

/// Lots read per step when reserving, moving or settling.
const LOTS_PER_STEP: i64 = 256;
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
            settle_interval: Duration::from_secs(config.settle_interval_seconds.max(1)),
        }
    }
}

/// The credit ledger.
#[derive(Debug, Clone)]
pub(crate) struct CreditService {
    db: Db,
    clock: Arc<dyn Clock>,
    identity: IdentityService,
    settings: CreditSettings,
}

/// Who asks, as the ledger sees it.
struct Actor<'a> {
    principal: &'a Principal,
}

impl<'a> Actor<'a> {
    fn of(principal: &'a Principal) -> Self {
        Self { principal }
    }

    fn journal_actor(&self) -> Option<(Uuid, &'static str)> {
        Some((self.principal.id, self.principal.principal_type.as_str()))
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

/// An allocation: how much of which lot.
type Plan = Vec<(LotRow, Credits)>;

impl CreditService {
    /// The ledger on `db`.
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        identity: IdentityService,
        settings: CreditSettings,
    ) -> Self {
        Self {
            db,
            clock,
            identity,
            settings,
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
        let add = Add {
            actor: &actor,
            pool,
            credits: request.credits,
            reference: &reference,
            expires_on,
            sales_order: sales_order.as_deref(),
            fingerprint: &fingerprint,
        };
        // Two adds of one new sales order to different pools do not wait for each other; the
        // second fails on the order's key and, run again, finds the first.
        match self.add_once(&add).await {
            Err(CreditError::Store(StoreError::Duplicate(_))) => self.add_once(&add).await?,
            other => other?,
        }
        Ok(response)
    }

    async fn add_once(&self, add: &Add<'_>) -> CreditResult<()> {
        let (now, today) = self.now_and_today();
        let mut tx = self.db.begin().await?;
        store::create_pool_in(&mut tx, add.pool).await?;
        let received = store::lock_pool_in(&mut tx, add.pool)
            .await?
            .unwrap_or(Credits::ZERO);
        if let Some(order) = add.sales_order
            && let Some((request, _)) = store::order_in(&mut tx, order).await?
        {
            return if request == add.fingerprint {
                Ok(())
            } else {
                Err(conflict(
                    "sales-order-conflict",
                    format!("Sales order '{order}' was added already with another body."),
                ))
            };
        }
        if add.expires_on < today {
            return Err(CreditError::Invalid {
                field: "expiresAt",
                message: format!("the date {} has passed", add.expires_on),
            });
        }
        let total = received.checked_add(add.credits);
        if total.is_none_or(|total| total > POOL_RECEIVED_MAX) {
            return Err(conflict(
                "credit-limit",
                format!("A pool can receive at most {POOL_RECEIVED_MAX} credits in all."),
            ));
        }
        let lot = store::lot_in(&mut tx, add.pool, add.reference, add.expires_on, now).await?;
        let entry = Entry {
            change_id: Uuid::now_v7(),
            at: now,
            kind: JournalKind::Add,
            actor: add.actor.journal_actor(),
            operation_id: None,
            sales_order_id: add.sales_order,
            counterpart: None,
        };
        let change = Balances {
            available: add.credits,
            ..Balances::default()
        };
        store::apply_in(&mut tx, &lot, &change, &entry).await?;
        store::add_received_in(&mut tx, add.pool, add.credits).await?;
        if let Some(order) = add.sales_order {
            store::insert_order_in(
                &mut tx,
                order,
                add.fingerprint,
                add.pool,
                add.credits,
                now,
                add.actor.principal.id,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
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
        let timeout = self.reservation_timeout(&request)?;
        let fingerprint = serde_json::json!([
            "reserve",
            request.credits.to_string(),
            request.project_id,
            timeout
        ])
        .to_string();
        let tenant = request.tenant_id;
        let pool = PoolId::of(tenant);
        let (now, today) = self.now_and_today();
        let mut tx = self.db.begin().await?;
        if store::lock_pool_in(&mut tx, pool).await?.is_none() {
            drop(tx);
            self.require_tenant(tenant).await?;
            return Err(insufficient(request.credits, Credits::ZERO));
        }
        self.settle_in(&mut tx, pool, now, today).await?;
        if let Some(existing) = store::operation_in(&mut tx, tenant, &operation_id).await? {
            if existing.direct || existing.request != fingerprint {
                return Err(operation_conflict(&operation_id));
            }
            let lots = store::operation_lots_in(&mut tx, existing.id).await?;
            return Ok(OperationDto::of(&existing, &lots));
        }
        let plan = allocate(&mut tx, pool, request.credits, LotChoice::default()).await?;
        let timeout_at = timeout
            .and_then(|seconds| i64::try_from(seconds).ok())
            .map(|seconds| now + TimeDelta::seconds(seconds));
        let operation = OperationRow {
            id: Uuid::now_v7(),
            tenant_id: tenant,
            operation_id,
            state: OperationState::Reserved,
            direct: false,
            credits: request.credits,
            spent: Credits::ZERO,
            project_id: request.project_id,
            request: fingerprint,
            resolution: None,
            created_at: now,
            created_by: principal.id,
            timeout_at,
            resolved_at: None,
        };
        let lots = write_reservation(&mut tx, &actor, &operation, plan).await?;
        tx.commit().await?;
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
        let tenant = request.tenant_id;
        let pool = PoolId::of(tenant);
        let (now, today) = self.now_and_today();
        let mut tx = self.db.begin().await?;
        if store::lock_pool_in(&mut tx, pool).await?.is_none() {
            drop(tx);
            self.require_tenant(tenant).await?;
            return Err(if request.direct {
                insufficient(request.credits.unwrap_or_default(), Credits::ZERO)
            } else {
                CreditError::NotFound("operation")
            });
        }
        self.settle_in(&mut tx, pool, now, today).await?;
        let existing = store::operation_in(&mut tx, tenant, &operation_id).await?;
        let context = Resolve {
            actor: &actor,
            now,
            today,
        };
        let (operation, lots) = match existing {
            None if request.direct => {
                let credits = request.credits.unwrap_or_default();
                self.spend_directly(&mut tx, &context, tenant, operation_id, credits, &request)
                    .await?
            }
            None => return Err(CreditError::NotFound("operation")),
            Some(existing) if request.direct => {
                let fingerprint = direct_fingerprint(&request);
                if !existing.direct || existing.request != fingerprint {
                    return Err(operation_conflict(&operation_id));
                }
                let lots = store::operation_lots_in(&mut tx, existing.id).await?;
                (existing, lots)
            }
            Some(existing) if existing.direct => return Err(operation_conflict(&operation_id)),
            Some(existing) => spend_existing(&mut tx, &context, existing, request.credits).await?,
        };
        tx.commit().await?;
        Ok(OperationDto::of(&operation, &lots))
    }

    async fn spend_directly(
        &self,
        tx: &mut Tx,
        context: &Resolve<'_>,
        tenant: TenantId,
        operation_id: String,
        credits: Credits,
        request: &SpendRequest,
    ) -> CreditResult<(OperationRow, Vec<OperationLotRow>)> {
        let pool = PoolId::of(tenant);
        let plan = allocate(tx, pool, credits, LotChoice::default()).await?;
        let fingerprint = direct_fingerprint(request);
        let operation = OperationRow {
            id: Uuid::now_v7(),
            tenant_id: tenant,
            operation_id,
            state: OperationState::Spent,
            direct: true,
            credits,
            spent: credits,
            project_id: request.project_id,
            request: fingerprint.clone(),
            resolution: Some(fingerprint),
            created_at: context.now,
            created_by: context.actor.principal.id,
            timeout_at: None,
            resolved_at: Some(context.now),
        };
        store::insert_operation_in(tx, &operation).await?;
        let entry = Entry {
            change_id: Uuid::now_v7(),
            at: context.now,
            kind: JournalKind::Spend,
            actor: context.actor.journal_actor(),
            operation_id: Some(&operation.operation_id),
            sales_order_id: None,
            counterpart: None,
        };
        let mut lots = Vec::with_capacity(plan.len());
        for (lot, amount) in plan {
            let change = Balances {
                available: amount.negated(),
                spent: amount,
                ..Balances::default()
            };
            store::apply_in(tx, &lot, &change, &entry).await?;
            store::put_operation_lot_in(tx, operation.id, lot.id, Credits::ZERO, amount).await?;
            lots.push(OperationLotRow {
                lot,
                reserved: Credits::ZERO,
                spent: amount,
            });
        }
        Ok((operation, lots))
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
        let operation_id = identifier("operationId", &request.operation_id)?;
        let tenant = request.tenant_id;
        let pool = PoolId::of(tenant);
        let (now, today) = self.now_and_today();
        let mut tx = self.db.begin().await?;
        if store::lock_pool_in(&mut tx, pool).await?.is_none() {
            drop(tx);
            self.require_tenant(tenant).await?;
            return Err(CreditError::NotFound("operation"));
        }
        self.settle_in(&mut tx, pool, now, today).await?;
        let existing = store::operation_in(&mut tx, tenant, &operation_id)
            .await?
            .ok_or(CreditError::NotFound("operation"))?;
        let context = Resolve {
            actor: &actor,
            now,
            today,
        };
        let (operation, lots) = match existing.state {
            OperationState::Reserved if !existing.direct => {
                give_back(&mut tx, &context, existing, OperationState::Released).await?
            }
            OperationState::Released => {
                let lots = store::operation_lots_in(&mut tx, existing.id).await?;
                (existing, lots)
            }
            _ => return Err(resolved_already(&existing)),
        };
        tx.commit().await?;
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
        self.settle_if_due(PoolId::of(tenant)).await?;
        let operation = store::operation(&self.db, tenant, operation_id)
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
        let MoveOrder {
            source,
            target,
            reference,
            key,
            fingerprint,
        } = self.move_order(&actor, &request, idempotency_key).await?;
        let (now, today) = self.now_and_today();
        let mut tx = self.db.begin().await?;
        let (source_exists, target_received) = lock_pair(&mut tx, source, target).await?;
        if let Some(key) = key.as_deref()
            && let Some((stored, change_id)) = store::move_in(&mut tx, key).await?
        {
            if stored != fingerprint {
                return Err(conflict(
                    "idempotency-conflict",
                    format!("Idempotency-Key '{key}' was used already for another request."),
                ));
            }
            let entries = store::change_entries_in(&mut tx, change_id).await?;
            return Ok(move_response(&request, &entries));
        }
        let between_tenants = source.tenant().is_some() && target.tenant().is_some();
        if !source_exists {
            // A source that never received credits answers as one whose lots hold none.
            return Err(if between_tenants {
                reference_mismatch()
            } else {
                insufficient(request.credits, Credits::ZERO)
            });
        }
        self.settle_in(&mut tx, source, now, today).await?;
        let choice = LotChoice {
            reference: reference.as_ref(),
            shared_with: between_tenants.then_some(target),
        };
        let plan = allocate(&mut tx, source, request.credits, choice).await?;
        let total = target_received
            .unwrap_or(Credits::ZERO)
            .checked_add(request.credits);
        if total.is_none_or(|total| total > POOL_RECEIVED_MAX) {
            return Err(conflict(
                "credit-limit",
                format!("A pool can receive at most {POOL_RECEIVED_MAX} credits in all."),
            ));
        }
        let out = Entry {
            change_id: Uuid::now_v7(),
            at: now,
            kind: JournalKind::MoveOut,
            actor: actor.journal_actor(),
            operation_id: None,
            sales_order_id: None,
            counterpart: Some(target),
        };
        let moved = write_move(&mut tx, &out, source, target, plan).await?;
        store::add_received_in(&mut tx, target, request.credits).await?;
        if let Some(key) = key.as_deref() {
            store::insert_move_in(&mut tx, key, &fingerprint, out.change_id, now, principal.id)
                .await?;
        }
        tx.commit().await?;
        Ok(MoveResponse {
            credits: request.credits,
            source_tenant_id: request.source_tenant_id,
            target_tenant_id: request.target_tenant_id,
            lots: moved,
        })
    }

    /// Checks a move request: who asks, the pools, the billing reference and key.
    async fn move_order(
        &self,
        actor: &Actor<'_>,
        request: &MoveRequest,
        idempotency_key: Option<&str>,
    ) -> CreditResult<MoveOrder> {
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
        Ok(MoveOrder {
            source,
            target,
            reference,
            key,
            fingerprint,
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
                            project_name: op.project_name.clone(),
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

    /// Whether a pool's balances equal the sum of its journal, with both.
    pub(crate) async fn audit(
        &self,
        principal: &Principal,
        query: PoolQuery,
    ) -> CreditResult<(Balances, Balances)> {
        self.authorize_read(principal, query, Reading::Journal)
            .await?;
        let pool = pool_of(query);
        let mut tx = self.db.begin().await?;
        store::lock_pool_in(&mut tx, pool).await?;
        let balances = store::sums_in(&mut tx, pool, Sums::Lots).await?;
        let journal = store::sums_in(&mut tx, pool, Sums::Journal).await?;
        tx.commit().await?;
        Ok((balances, journal))
    }

    // ---- settling expiry and timeouts ----

    /// Settles `pool` if anything is due, so that a read shows expiries and timeouts the
    /// moment they happen.
    async fn settle_if_due(&self, pool: PoolId) -> CreditResult<()> {
        let (now, today) = self.now_and_today();
        if !store::is_due(&self.db, pool, now, today).await? {
            return Ok(());
        }
        self.settle_pool(pool).await
    }

    async fn settle_pool(&self, pool: PoolId) -> CreditResult<()> {
        let (now, today) = self.now_and_today();
        let mut tx = self.db.begin().await?;
        if store::lock_pool_in(&mut tx, pool).await?.is_some() {
            self.settle_in(&mut tx, pool, now, today).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Gives back reservations past their timeout and expires available credits past their
    /// date, in a transaction holding the pool.
    async fn settle_in(
        &self,
        tx: &mut Tx,
        pool: PoolId,
        now: DateTime<Utc>,
        today: NaiveDate,
    ) -> CreditResult<()> {
        if let Some(tenant) = pool.tenant() {
            let context = Resolve {
                actor: &Actor::of(&SYSTEM),
                now,
                today,
            };
            loop {
                let due = store::due_operations_in(tx, tenant, now, LOTS_PER_STEP).await?;
                let more = i64::try_from(due.len()).unwrap_or(i64::MAX) >= LOTS_PER_STEP;
                for operation in due {
                    give_back(tx, &context, operation, OperationState::TimedOut).await?;
                }
                if !more {
                    break;
                }
            }
        }
        loop {
            let lapsed = store::lapsed_lots_in(tx, pool, today, LOTS_PER_STEP).await?;
            let more = i64::try_from(lapsed.len()).unwrap_or(i64::MAX) >= LOTS_PER_STEP;
            let entry = Entry {
                change_id: Uuid::now_v7(),
                at: now,
                kind: JournalKind::Expire,
                actor: None,
                operation_id: None,
                sales_order_id: None,
                counterpart: None,
            };
            for lot in lapsed {
                let change = Balances {
                    available: lot.balances.available.negated(),
                    expired: lot.balances.available,
                    ..Balances::default()
                };
                store::apply_in(tx, &lot, &change, &entry).await?;
            }
            if !more {
                break;
            }
        }
        Ok(())
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
                self.settle_pool(pool).await?;
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

/// The principal the settle job journals as: none (its entries carry no actor).
static SYSTEM: std::sync::LazyLock<Principal> = std::sync::LazyLock::new(Principal::operator);

/// What resolving an operation needs to know.
struct Resolve<'a> {
    actor: &'a Actor<'a>,
    now: DateTime<Utc>,
    today: NaiveDate,
}

impl Resolve<'_> {
    /// The journal's actor: the caller, or none for the settle job.
    fn journal_actor(&self, kind: JournalKind) -> Option<(Uuid, &'static str)> {
        (kind != JournalKind::Timeout)
            .then(|| self.actor.journal_actor())
            .flatten()
    }
}

/// A checked move request.
struct MoveOrder {
    source: PoolId,
    target: PoolId,
    reference: Option<BillingReference>,
    key: Option<String>,
    fingerprint: String,
}

/// The parts of an add.
struct Add<'a> {
    actor: &'a Actor<'a>,
    pool: PoolId,
    credits: Credits,
    reference: &'a BillingReference,
    expires_on: NaiveDate,
    sales_order: Option<&'a str>,
    fingerprint: &'a str,
}

fn pool_of(query: PoolQuery) -> PoolId {
    match query {
        PoolQuery::Tenant(tenant) => PoolId::of(tenant),
        PoolQuery::Unassigned => PoolId::GENERIC,
    }
}

/// Takes both pools of a move, always in the same order so that two opposite moves cannot
/// deadlock, creating the target; whether the source exists, and what the target received.
async fn lock_pair(
    tx: &mut Tx,
    source: PoolId,
    target: PoolId,
) -> CreditResult<(bool, Option<Credits>)> {
    store::create_pool_in(tx, target).await?;
    let (first, second) = if source < target {
        (source, target)
    } else {
        (target, source)
    };
    let first_received = store::lock_pool_in(tx, first).await?;
    let second_received = store::lock_pool_in(tx, second).await?;
    Ok(if first == source {
        (first_received.is_some(), second_received)
    } else {
        (second_received.is_some(), first_received)
    })
}

/// Moves each lot's share of `plan` from `source` to the same billing reference and expiry
/// date in `target`, journalled on both sides under `out`'s change.
async fn write_move(
    tx: &mut Tx,
    out: &Entry<'_>,
    source: PoolId,
    target: PoolId,
    plan: Plan,
) -> CreditResult<Vec<MovedLotDto>> {
    let into = Entry {
        kind: JournalKind::MoveIn,
        counterpart: Some(source),
        ..out.clone()
    };
    let mut moved = Vec::with_capacity(plan.len());
    for (lot, amount) in plan {
        let taken = Balances {
            available: amount.negated(),
            ..Balances::default()
        };
        store::apply_in(tx, &lot, &taken, out).await?;
        let destination = store::lot_in(tx, target, &lot.reference, lot.expires_on, out.at).await?;
        let given = Balances {
            available: amount,
            ..Balances::default()
        };
        store::apply_in(tx, &destination, &given, &into).await?;
        moved.push(MovedLotDto {
            billing_reference: BillingReferenceDto::from(&lot.reference),
            expires_at: lot.expires_on,
            credits: amount,
        });
    }
    Ok(moved)
}

/// Takes `amount` from the available lots of `pool` that `choice` allows, earliest expiry
/// first; a conflict naming what is available when they hold too little. Reads only.
async fn allocate(
    tx: &mut Tx,
    pool: PoolId,
    amount: Credits,
    choice: LotChoice<'_>,
) -> CreditResult<Plan> {
    let mut plan = Plan::new();
    let mut remaining = amount;
    let mut taken = Credits::ZERO;
    let mut after: Option<LotRow> = None;
    loop {
        let position = after.as_ref().map(|lot| (lot.expires_on, &lot.reference));
        let lots = store::available_lots_in(tx, pool, choice, position, LOTS_PER_STEP).await?;
        let last_step = i64::try_from(lots.len()).unwrap_or(i64::MAX) < LOTS_PER_STEP;
        for lot in lots {
            let share = remaining.min(lot.balances.available);
            remaining = remaining.checked_sub(share).unwrap_or(Credits::ZERO);
            taken = taken.checked_add(share).unwrap_or(taken);
            after = Some(lot.clone());
            plan.push((lot, share));
            if !remaining.is_positive() {
                return Ok(plan);
            }
        }
        if last_step {
            return Err(if choice.shared_with.is_some() && plan.is_empty() {
                reference_mismatch()
            } else {
                insufficient(amount, taken)
            });
        }
    }
}

/// Spends `credits` (all when `None`) of an existing reservation, or answers a retry of the
/// spend that resolved it.
async fn spend_existing(
    tx: &mut Tx,
    context: &Resolve<'_>,
    existing: OperationRow,
    credits: Option<Credits>,
) -> CreditResult<(OperationRow, Vec<OperationLotRow>)> {
    let amount = credits.unwrap_or(existing.credits);
    let resolution = serde_json::json!(["spend", amount.to_string()]).to_string();
    match existing.state {
        OperationState::Reserved if amount > existing.credits => Err(conflict(
            "exceeds-reservation",
            format!(
                "Operation '{}' reserved {} credits; it cannot spend {amount}.",
                existing.operation_id, existing.credits
            ),
        )),
        OperationState::Reserved => {
            spend_reservation(tx, context, existing, amount, resolution).await
        }
        OperationState::Spent if existing.resolution.as_deref() == Some(&resolution) => {
            let lots = store::operation_lots_in(tx, existing.id).await?;
            Ok((existing, lots))
        }
        _ => Err(resolved_already(&existing)),
    }
}

/// Writes a new reservation of `plan`: the operation, each lot's change and its share.
async fn write_reservation(
    tx: &mut Tx,
    actor: &Actor<'_>,
    operation: &OperationRow,
    plan: Plan,
) -> CreditResult<Vec<OperationLotRow>> {
    store::insert_operation_in(tx, operation).await?;
    let entry = Entry {
        change_id: Uuid::now_v7(),
        at: operation.created_at,
        kind: JournalKind::Reserve,
        actor: actor.journal_actor(),
        operation_id: Some(&operation.operation_id),
        sales_order_id: None,
        counterpart: None,
    };
    let mut lots = Vec::with_capacity(plan.len());
    for (lot, amount) in plan {
        let change = Balances {
            available: amount.negated(),
            reserved: amount,
            ..Balances::default()
        };
        store::apply_in(tx, &lot, &change, &entry).await?;
        store::put_operation_lot_in(tx, operation.id, lot.id, amount, Credits::ZERO).await?;
        lots.push(OperationLotRow {
            lot,
            reserved: amount,
            spent: Credits::ZERO,
        });
    }
    Ok(lots)
}

/// Spends `amount` of a reservation, earliest-expiring lots first; the rest goes back.
async fn spend_reservation(
    tx: &mut Tx,
    context: &Resolve<'_>,
    mut operation: OperationRow,
    amount: Credits,
    resolution: String,
) -> CreditResult<(OperationRow, Vec<OperationLotRow>)> {
    let lots = store::operation_lots_in(tx, operation.id).await?;
    let entry = Entry {
        change_id: Uuid::now_v7(),
        at: context.now,
        kind: JournalKind::Spend,
        actor: context.journal_actor(JournalKind::Spend),
        operation_id: Some(&operation.operation_id),
        sales_order_id: None,
        counterpart: None,
    };
    let mut remaining = amount;
    let mut after = Vec::with_capacity(lots.len());
    for held in lots {
        let used = remaining.min(held.reserved);
        remaining = remaining.checked_sub(used).unwrap_or(Credits::ZERO);
        let back = held.reserved.checked_sub(used).unwrap_or(Credits::ZERO);
        let mut change = Balances {
            reserved: held.reserved.negated(),
            spent: used,
            ..Balances::default()
        };
        returned_to(&mut change, &held.lot, back, context.today);
        if held.reserved.is_positive() {
            store::apply_in(tx, &held.lot, &change, &entry).await?;
        }
        let spent = held.spent.checked_add(used).unwrap_or(held.spent);
        store::put_operation_lot_in(tx, operation.id, held.lot.id, Credits::ZERO, spent).await?;
        after.push(OperationLotRow {
            lot: held.lot,
            reserved: Credits::ZERO,
            spent,
        });
    }
    operation.state = OperationState::Spent;
    operation.spent = amount;
    operation.resolution = Some(resolution);
    operation.resolved_at = Some(context.now);
    store::resolve_operation_in(tx, &operation, Some(context.actor.principal.id)).await?;
    Ok((operation, after))
}

/// Gives all of a reservation's credits back (release or timeout).
async fn give_back(
    tx: &mut Tx,
    context: &Resolve<'_>,
    mut operation: OperationRow,
    state: OperationState,
) -> CreditResult<(OperationRow, Vec<OperationLotRow>)> {
    let kind = if state == OperationState::TimedOut {
        JournalKind::Timeout
    } else {
        JournalKind::Release
    };
    let lots = store::operation_lots_in(tx, operation.id).await?;
    let entry = Entry {
        change_id: Uuid::now_v7(),
        at: context.now,
        kind,
        actor: context.journal_actor(kind),
        operation_id: Some(&operation.operation_id),
        sales_order_id: None,
        counterpart: None,
    };
    let mut after = Vec::with_capacity(lots.len());
    for held in lots {
        if held.reserved.is_positive() {
            let mut change = Balances {
                reserved: held.reserved.negated(),
                ..Balances::default()
            };
            returned_to(&mut change, &held.lot, held.reserved, context.today);
            store::apply_in(tx, &held.lot, &change, &entry).await?;
            store::put_operation_lot_in(tx, operation.id, held.lot.id, Credits::ZERO, held.spent)
                .await?;
        }
        after.push(OperationLotRow {
            reserved: Credits::ZERO,
            ..held
        });
    }
    operation.state = state;
    operation.resolution = Some(serde_json::json!([state.as_str()]).to_string());
    operation.resolved_at = Some(context.now);
    let by = (kind != JournalKind::Timeout).then_some(context.actor.principal.id);
    store::resolve_operation_in(tx, &operation, by).await?;
    Ok((operation, after))
}

/// Credits a reservation gives back return to Available, or to Expired when their lot's date
/// passed while they were reserved.
fn returned_to(change: &mut Balances, lot: &LotRow, amount: Credits, today: NaiveDate) {
    if lot.is_expired(today) {
        change.expired = amount;
    } else {
        change.available = amount;
    }
}

fn direct_fingerprint(request: &SpendRequest) -> String {
    serde_json::json!([
        "direct",
        request.credits.unwrap_or_default().to_string(),
        request.project_id
    ])
    .to_string()
}

fn move_response(request: &MoveRequest, entries: &[JournalRow]) -> MoveResponse {
    MoveResponse {
        credits: request.credits,
        source_tenant_id: request.source_tenant_id,
        target_tenant_id: request.target_tenant_id,
        lots: entries
            .iter()
            .filter(|entry| entry.kind == JournalKind::MoveOut)
            .map(|entry| MovedLotDto {
                billing_reference: BillingReferenceDto::from(&entry.reference),
                expires_at: entry.expires_on,
                credits: entry.change.available.negated(),
            })
            .collect(),
    }
}

fn conflict(kind: &'static str, detail: String) -> CreditError {
    CreditError::Conflict { kind, detail }
}

fn insufficient(wanted: Credits, available: Credits) -> CreditError {
    conflict(
        "insufficient-credits",
        format!("{wanted} credits were asked for; {available} are available."),
    )
}

fn reference_mismatch() -> CreditError {
    conflict(
        "billing-reference-mismatch",
        "Credits move between tenants only for billing references both hold; the target holds \
         none of the source's available credits' references."
            .into(),
    )
}

fn operation_conflict(operation_id: &str) -> CreditError {
    conflict(
        "operation-conflict",
        format!("Operation '{operation_id}' exists already with another request."),
    )
}

fn resolved_already(operation: &OperationRow) -> CreditError {
    conflict(
        "operation-resolved",
        format!(
            "Operation '{}' is {} already; a reservation resolves once.",
            operation.operation_id, operation.state
        ),
    )
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
