//! Credit endpoints under `/api/iam/credit` (API version 4; docs/credits.md#endpoints). HTTP
//! only: the ledger's rules live in `service.rs`. Bodies with amounts are read with
//! [`JsonBody::read_exact`], so no amount passes through binary floating point, and every body
//! only after [`CreditService::authorize`] let the caller in.

use axum::extract::{FromRef, State};
use axum::http::HeaderMap;
use axum::middleware::from_fn_with_state;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Principal;
use crate::credits::model::{
    AddCreditsRequest, AddCreditsResponse, BreakdownDto, CreditStatus, ExtendedLotDto,
    JournalEntryDto, LotDto, MoveRequest, MoveResponse, OperationDto, ReleaseRequest,
    ReserveRequest, SpendRequest, StatusAmount, TenantSelector,
};
use crate::credits::service::{CreditCall, CreditError, CreditService, PoolQuery};
use crate::error::ApiError;
use crate::http::api_version::{self, CREDITS};
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{
    Cursor, CursorPage, CursorRequest, OffsetPage, OffsetRequest, PageLimits,
};
use crate::http::wire_enum::sort::SortOrder;
use crate::ids::TenantId;

/// Result of credit handlers.
type CreditApiResult<T> = Result<Json<T>, ApiError>;

/// The header naming a move, so that its retry moves nothing more.
pub(crate) const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Most operations shown per lot in the extended details.
const OPERATIONS_PER_LOT_MAX: u32 = 1000;
/// Operations shown per lot in the extended details when the request names no number.
const OPERATIONS_PER_LOT_DEFAULT: u32 = 100;

/// What the credit endpoints need.
#[derive(Debug, Clone)]
pub(crate) struct CreditsState {
    /// The ledger.
    pub(crate) credits: CreditService,
    /// Page sizes.
    pub(crate) page_limits: PageLimits,
}

/// Credit routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    CreditsState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(add_credits))
        .routes(routes!(tenant_breakdown))
        .routes(routes!(unassigned_breakdown, unassigned_breakdown_get))
        .routes(routes!(details))
        .routes(routes!(unassigned_details))
        .routes(routes!(extended_details))
        .routes(routes!(reserve))
        .routes(routes!(spend))
        .routes(routes!(release))
        .routes(routes!(move_credits))
        .routes(routes!(operation))
        .routes(routes!(tenant_journal))
        .routes(routes!(unassigned_journal))
        .routes(routes!(tenant_audit))
        .layer(from_fn_with_state(CREDITS, api_version::enforce))
}

impl From<CreditError> for ApiError {
    fn from(error: CreditError) -> Self {
        match error {
            CreditError::Invalid { field, message } => ApiError::field(field, message),
            CreditError::Forbidden(detail) => ApiError::Forbidden(format!("Forbidden: {detail}.")),
            CreditError::NotFound(what) => ApiError::NotFound(format!(
                "The {what} does not exist, or is not visible to you."
            )),
            CreditError::Conflict { kind, detail } => ApiError::Conflict { kind, detail },
            CreditError::NoPool => {
                ApiError::NotFound("The tenant has no credits, or is not visible to you.".into())
            }
            CreditError::Store(error) => error.into(),
        }
    }
}

/// Statuses asked for with `filter` (repeatable; commas also separate).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct FilterQuery {
    /// Status names: `Available`, `Reserved`, `Spent`, `Expired`; all when absent.
    #[serde(default)]
    #[param(value_type = Option<Vec<CreditStatus>>)]
    filter: Vec<String>,
}

impl FilterQuery {
    /// The statuses, in their fixed order, without repeats; all of them when none is named.
    fn statuses(&self) -> Result<Vec<CreditStatus>, ApiError> {
        let mut named = Vec::new();
        for raw in self.filter.iter().flat_map(|value| value.split(',')) {
            let raw = raw.trim();
            if raw.is_empty() {
                continue;
            }
            let status: CreditStatus =
                raw.parse()
                    .map_err(|error: crate::http::wire_enum::UnknownVariant| {
                        ApiError::field("filter", error.to_string())
                    })?;
            named.push(status);
        }
        if named.is_empty() {
            return Ok(CreditStatus::ALL.to_vec());
        }
        Ok(CreditStatus::ALL
            .iter()
            .copied()
            .filter(|status| named.contains(status))
            .collect())
    }
}

/// Query of the details endpoints.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct DetailsQuery {
    /// Status names; all when absent.
    #[serde(default)]
    #[param(value_type = Option<Vec<CreditStatus>>)]
    filter: Vec<String>,
    /// The tenant, when the body does not name it; else the caller's tenant.
    #[param(value_type = Option<Uuid>)]
    tenant_id: Option<String>,
    /// Lots to skip.
    offset: Option<u32>,
    /// Page size.
    limit: Option<u32>,
    /// Extended details: most operations listed per lot (default 100, at most 1000).
    operations_limit: Option<u32>,
}

impl DetailsQuery {
    fn statuses(&self) -> Result<Vec<CreditStatus>, ApiError> {
        FilterQuery {
            filter: self.filter.clone(),
        }
        .statuses()
    }

    /// The tenant: the body's, the query's, else the caller's.
    fn tenant(&self, body: &TenantSelector, principal: &Principal) -> Result<TenantId, ApiError> {
        if let Some(tenant) = body.tenant_id {
            return Ok(tenant);
        }
        if let Some(raw) = self
            .tenant_id
            .as_deref()
            .map(str::trim)
            .filter(|raw| !raw.is_empty())
        {
            return Uuid::parse_str(raw)
                .map(TenantId::from_uuid)
                .map_err(|_| ApiError::field("tenantId", "must be a tenant id (a uuid)"));
        }
        principal
            .tenant_id
            .ok_or_else(|| ApiError::field("tenantId", "name the tenant: you act in none"))
    }
}

/// Adds credits to a tenant, or without `tenantId` to the generic pool. The same
/// `salesOrderId` and body again adds nothing; another body with it is 409.
#[utoipa::path(post, path = "/api/iam/credit", tag = "credits", request_body = AddCreditsRequest,
    responses((status = 200, body = AddCreditsResponse), (status = 400), (status = 403), (status = 404),
        (status = 409, description = "sales-order-conflict, credit-limit")))]
async fn add_credits(
    State(state): State<CreditsState>,
    principal: Principal,
    body: JsonBody<AddCreditsRequest>,
) -> CreditApiResult<AddCreditsResponse> {
    CreditService::authorize(&principal, CreditCall::Add)?;
    let request = body.read_exact().await?;
    Ok(Json(state.credits.add(&principal, request).await?))
}

/// Credits of a tenant per status.
#[utoipa::path(get, path = "/api/iam/credit/{tenantId}", tag = "credits",
    params(("tenantId" = Uuid, Path), FilterQuery),
    responses((status = 200, body = BreakdownDto), (status = 400), (status = 403), (status = 404)))]
async fn tenant_breakdown(
    State(state): State<CreditsState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
    Query(query): Query<FilterQuery>,
) -> CreditApiResult<BreakdownDto> {
    let statuses = query.statuses()?;
    let breakdown = state
        .credits
        .breakdown(&principal, PoolQuery::Tenant(tenant), &statuses)
        .await?;
    Ok(Json(breakdown))
}

/// Credits of the generic (unassigned) pool per status.
#[utoipa::path(post, path = "/api/iam/credit/unassigned", tag = "credits", params(FilterQuery),
    responses((status = 200, body = BreakdownDto), (status = 400), (status = 403)))]
async fn unassigned_breakdown(
    State(state): State<CreditsState>,
    principal: Principal,
    Query(query): Query<FilterQuery>,
) -> CreditApiResult<BreakdownDto> {
    let statuses = query.statuses()?;
    let breakdown = state
        .credits
        .breakdown(&principal, PoolQuery::Unassigned, &statuses)
        .await?;
    Ok(Json(breakdown))
}

/// The same as the POST form.
#[utoipa::path(get, path = "/api/iam/credit/unassigned", tag = "credits", params(FilterQuery),
    responses((status = 200, body = BreakdownDto), (status = 400), (status = 403)))]
async fn unassigned_breakdown_get(
    state: State<CreditsState>,
    principal: Principal,
    query: Query<FilterQuery>,
) -> CreditApiResult<BreakdownDto> {
    unassigned_breakdown(state, principal, query).await
}

/// A tenant's credits per billing reference and expiry date (an offset page of lots).
#[utoipa::path(post, path = "/api/iam/credit/details", tag = "credits", params(DetailsQuery),
    request_body(content = Option<TenantSelector>),
    responses((status = 200, body = OffsetPage<LotDto>), (status = 400), (status = 403), (status = 404)))]
async fn details(
    State(state): State<CreditsState>,
    principal: Principal,
    Query(query): Query<DetailsQuery>,
    body: JsonBody<TenantSelector>,
) -> CreditApiResult<OffsetPage<LotDto>> {
    CreditService::authorize(&principal, CreditCall::Details)?;
    let tenant = query.tenant(&body.read().await?, &principal)?;
    lots_page(&state, &principal, PoolQuery::Tenant(tenant), &query).await
}

/// The generic pool's credits per billing reference and expiry date.
#[utoipa::path(post, path = "/api/iam/credit/unassigned/details", tag = "credits", params(DetailsQuery),
    responses((status = 200, body = OffsetPage<LotDto>), (status = 400), (status = 403)))]
async fn unassigned_details(
    State(state): State<CreditsState>,
    principal: Principal,
    Query(query): Query<DetailsQuery>,
) -> CreditApiResult<OffsetPage<LotDto>> {
    lots_page(&state, &principal, PoolQuery::Unassigned, &query).await
}

async fn lots_page(
    state: &CreditsState,
    principal: &Principal,
    pool: PoolQuery,
    query: &DetailsQuery,
) -> CreditApiResult<OffsetPage<LotDto>> {
    let statuses = query.statuses()?;
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let (data, total) = state
        .credits
        .details(principal, pool, &statuses, (page.offset, page.limit))
        .await?;
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data,
    }))
}

/// The details with the operations (and their projects) that reserved or spent each lot.
#[utoipa::path(post, path = "/api/iam/credit/details/extended", tag = "credits", params(DetailsQuery),
    request_body(content = Option<TenantSelector>),
    responses((status = 200, body = OffsetPage<ExtendedLotDto>), (status = 400), (status = 403), (status = 404)))]
async fn extended_details(
    State(state): State<CreditsState>,
    principal: Principal,
    Query(query): Query<DetailsQuery>,
    body: JsonBody<TenantSelector>,
) -> CreditApiResult<OffsetPage<ExtendedLotDto>> {
    CreditService::authorize(&principal, CreditCall::Details)?;
    let tenant = query.tenant(&body.read().await?, &principal)?;
    let statuses = query.statuses()?;
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let per_lot = match query.operations_limit {
        None => OPERATIONS_PER_LOT_DEFAULT,
        Some(limit) if (1..=OPERATIONS_PER_LOT_MAX).contains(&limit) => limit,
        Some(_) => {
            return Err(ApiError::field(
                "operationsLimit",
                format!("must be between 1 and {OPERATIONS_PER_LOT_MAX}"),
            ));
        }
    };
    let (data, total) = state
        .credits
        .extended_details(
            &principal,
            tenant,
            &statuses,
            (page.offset, page.limit),
            per_lot,
        )
        .await?;
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data,
    }))
}

/// Reserves credits of a tenant for an operation, earliest expiry first.
#[utoipa::path(put, path = "/api/iam/credit/reserve", tag = "credits", request_body = ReserveRequest,
    responses((status = 200, body = OperationDto), (status = 400), (status = 403), (status = 404),
        (status = 409, description = "insufficient-credits, operation-conflict")))]
async fn reserve(
    State(state): State<CreditsState>,
    principal: Principal,
    body: JsonBody<ReserveRequest>,
) -> CreditApiResult<OperationDto> {
    CreditService::authorize(&principal, CreditCall::Use)?;
    let request = body.read_exact().await?;
    Ok(Json(state.credits.reserve(&principal, request).await?))
}

/// Spends a reservation wholly or partly (the rest returns to Available), or with `direct`
/// spends available credits without one.
#[utoipa::path(put, path = "/api/iam/credit/spend", tag = "credits", request_body = SpendRequest,
    responses((status = 200, body = OperationDto), (status = 400), (status = 403), (status = 404),
        (status = 409, description = "insufficient-credits, exceeds-reservation, operation-resolved, operation-conflict")))]
async fn spend(
    State(state): State<CreditsState>,
    principal: Principal,
    body: JsonBody<SpendRequest>,
) -> CreditApiResult<OperationDto> {
    CreditService::authorize(&principal, CreditCall::Use)?;
    let request = body.read_exact().await?;
    Ok(Json(state.credits.spend(&principal, request).await?))
}

/// Gives a reservation's credits back.
#[utoipa::path(put, path = "/api/iam/credit/release", tag = "credits", request_body = ReleaseRequest,
    responses((status = 200, body = OperationDto), (status = 400), (status = 403), (status = 404),
        (status = 409, description = "operation-resolved")))]
async fn release(
    State(state): State<CreditsState>,
    principal: Principal,
    body: JsonBody<ReleaseRequest>,
) -> CreditApiResult<OperationDto> {
    CreditService::authorize(&principal, CreditCall::Use)?;
    let request = body.read_exact().await?;
    Ok(Json(state.credits.release(&principal, request).await?))
}

/// Moves available credits between a tenant and the generic pool, or between tenants for
/// billing references both hold. An `Idempotency-Key` header makes a retry move nothing more.
#[utoipa::path(put, path = "/api/iam/credit/move", tag = "credits", request_body = MoveRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "Names the move; a retry with the same key and body answers without moving again")),
    responses((status = 200, body = MoveResponse), (status = 400), (status = 403), (status = 404),
        (status = 409, description = "insufficient-credits, billing-reference-mismatch, idempotency-conflict, credit-limit")))]
async fn move_credits(
    State(state): State<CreditsState>,
    principal: Principal,
    headers: HeaderMap,
    body: JsonBody<MoveRequest>,
) -> CreditApiResult<MoveResponse> {
    CreditService::authorize(&principal, CreditCall::Move)?;
    let request = body.read_exact().await?;
    let key = match headers.get(IDEMPOTENCY_KEY) {
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| ApiError::field("Idempotency-Key", "must be text"))?,
        ),
        None => None,
    };
    Ok(Json(
        state.credits.move_credits(&principal, request, key).await?,
    ))
}

/// One reservation or direct spend of a tenant, as it stands.
#[utoipa::path(get, path = "/api/iam/credit/{tenantId}/operation/{operationId}", tag = "credits",
    params(("tenantId" = Uuid, Path), ("operationId" = String, Path)),
    responses((status = 200, body = OperationDto), (status = 403), (status = 404)))]
async fn operation(
    State(state): State<CreditsState>,
    principal: Principal,
    Path((tenant, operation_id)): Path<(TenantId, String)>,
) -> CreditApiResult<OperationDto> {
    Ok(Json(
        state
            .credits
            .operation(&principal, tenant, &operation_id)
            .await?,
    ))
}

/// Query of the journal.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct JournalQuery {
    /// From the previous page.
    cursor: Option<String>,
    /// Page size.
    limit: Option<u32>,
    /// `Asc` (default, oldest first) or `Desc`.
    #[param(value_type = Option<SortOrder>)]
    sort_order: Option<SortOrder>,
}

/// Every change to a tenant's credits, oldest first: who, when, what, and the change of each
/// status. Summed, the entries give the balances.
#[utoipa::path(get, path = "/api/iam/credit/{tenantId}/journal", tag = "credits",
    params(("tenantId" = Uuid, Path), JournalQuery),
    responses((status = 200, body = CursorPage<JournalEntryDto>), (status = 400), (status = 403), (status = 404)))]
async fn tenant_journal(
    State(state): State<CreditsState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
    Query(query): Query<JournalQuery>,
) -> CreditApiResult<CursorPage<JournalEntryDto>> {
    journal_page(&state, &principal, PoolQuery::Tenant(tenant), &query).await
}

/// Every change to the generic pool.
#[utoipa::path(get, path = "/api/iam/credit/unassigned/journal", tag = "credits", params(JournalQuery),
    responses((status = 200, body = CursorPage<JournalEntryDto>), (status = 400), (status = 403)))]
async fn unassigned_journal(
    State(state): State<CreditsState>,
    principal: Principal,
    Query(query): Query<JournalQuery>,
) -> CreditApiResult<CursorPage<JournalEntryDto>> {
    journal_page(&state, &principal, PoolQuery::Unassigned, &query).await
}

async fn journal_page(
    state: &CreditsState,
    principal: &Principal,
    pool: PoolQuery,
    query: &JournalQuery,
) -> CreditApiResult<CursorPage<JournalEntryDto>> {
    let descending = query.sort_order == Some(SortOrder::Desc);
    let list = if descending {
        "credit-journal:desc"
    } else {
        "credit-journal:asc"
    };
    let page = CursorRequest::parse(
        query.cursor.as_deref(),
        query.limit,
        list,
        state.page_limits,
    )?;
    let after = page
        .after
        .as_ref()
        .map(|cursor| cursor.key.as_i64().ok_or(ApiError::InvalidCursor))
        .transpose()?;
    let rows = state
        .credits
        .journal(principal, pool, after, descending, page.fetch_count())
        .await?;
    Ok(Json(CursorPage::from_rows(
        rows,
        &page,
        |row| Cursor {
            sort: list.to_owned(),
            key: row.sequence.into(),
            id: Uuid::nil(),
        },
        |row| JournalEntryDto::from(&row),
    )))
}

/// A pool's balances beside the sum of its journal.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct AuditDto {
    /// The tenant.
    #[schema(value_type = Uuid)]
    tenant_id: TenantId,
    /// Balances per status.
    balances: Vec<StatusAmount>,
    /// The journal's sum per status.
    journal: Vec<StatusAmount>,
    /// Whether the two agree.
    consistent: bool,
}

/// Checks that a tenant's balances equal the sum of its journal.
#[utoipa::path(get, path = "/api/iam/credit/{tenantId}/audit", tag = "credits",
    params(("tenantId" = Uuid, Path)),
    responses((status = 200, body = AuditDto), (status = 403), (status = 404)))]
async fn tenant_audit(
    State(state): State<CreditsState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
) -> CreditApiResult<AuditDto> {
    let (balances, journal) = state
        .credits
        .audit(&principal, PoolQuery::Tenant(tenant))
        .await?;
    Ok(Json(AuditDto {
        tenant_id: tenant,
        balances: balances.listed(CreditStatus::ALL),
        journal: journal.listed(CreditStatus::ALL),
        consistent: balances == journal,
    }))
}
