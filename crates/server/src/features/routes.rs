//! Feature endpoints (docs/features.md): status messages of a feature and
//! global ones under `/api/admin/feature/...`, the banner, the tenant owner's feature list and
//! switch, and BackOffice's catalogue and licenses under `/api/admin/features`. HTTP only: the
//! rules live in `service.rs`.

use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::features::model::{
    EnabledDto, Expiry, FeatureDto, FeatureId, FeatureRequest, FeatureType, LicenseDto,
    LicenseRequest, MessageDto, MessageFields, MessageSort, Scope, TenantFeatureDto,
};
use crate::features::service::{FeatureError, FeatureService, MessageQuery};
use crate::http::api_version::{self, IAM};
use crate::http::etag::matches_etag;
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{Cursor, CursorPage, CursorRequest, DataList, PageLimits};
use crate::http::time::WireTime;
use crate::http::wire_enum::sort::SortOrder;
use crate::ids::TenantId;

/// The header that names the tenant on the owner's switch (docs/features.md#the-tenant-owner).
const PROJECT_ID_HEADER: &str = "svc-project-id";

/// What the feature endpoints need.
#[derive(Debug, Clone)]
pub(crate) struct FeaturesState {
    /// The rules.
    pub(crate) features: FeatureService,
    /// Page sizes.
    pub(crate) page_limits: PageLimits,
}

/// Feature routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    FeaturesState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_feature_messages, create_feature_message))
        .routes(routes!(update_feature_message, delete_feature_message))
        .routes(routes!(list_global_messages, create_global_message))
        .routes(routes!(update_global_message, delete_global_message))
        .routes(routes!(banner))
        .routes(routes!(purge_expired))
        .routes(routes!(my_tenant_features))
        .routes(routes!(switch_tenant_feature))
        .routes(routes!(list_features, create_feature))
        .routes(routes!(get_feature, replace_feature, delete_feature))
        .routes(routes!(feature_licenses))
        .routes(routes!(grant_license, revoke_license))
        .routes(routes!(tenant_licenses))
        .layer(from_fn_with_state(IAM, api_version::enforce))
}

impl From<FeatureError> for ApiError {
    fn from(error: FeatureError) -> Self {
        match error {
            FeatureError::Invalid(errors) => {
                let detail = errors
                    .iter()
                    .flat_map(|(field, messages)| {
                        messages
                            .iter()
                            .map(move |message| format!("{field}: {message}"))
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                ApiError::Validation { detail, errors }
            }
            FeatureError::Forbidden(detail) => ApiError::Forbidden(format!("Forbidden: {detail}.")),
            FeatureError::NotFound(what) => ApiError::NotFound(format!(
                "The {what} does not exist, or is not visible to you."
            )),
            FeatureError::Conflict { kind, detail } => ApiError::Conflict { kind, detail },
            FeatureError::Store(error) => error.into(),
        }
    }
}

fn feature_id(raw: &str) -> Result<FeatureId, ApiError> {
    FeatureId::parse(raw).map_err(|message| ApiError::InvalidPath(format!("featureId: {message}")))
}

fn tenant_id(raw: &str) -> Result<TenantId, ApiError> {
    Uuid::parse_str(raw.trim())
        .map(TenantId::from_uuid)
        .map_err(|_| ApiError::InvalidPath("tenantId: must be a tenant id (a uuid)".into()))
}

// ---- messages ----

/// Query of the message lists.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct MessageListQuery {
    /// `All`, `NonExpired` (default: active now), `Expired` or `Pending`.
    #[param(value_type = Option<String>)]
    expiry: Option<Expiry>,
    /// `StartDate` (default) or `ExpiringDate`.
    #[param(value_type = Option<String>)]
    sort_by: Option<MessageSort>,
    /// `Desc` (default) or `Asc`.
    #[param(value_type = Option<String>)]
    sort_order: Option<SortOrder>,
    /// From the previous page.
    cursor: Option<String>,
    /// Page size.
    limit: Option<u32>,
}

/// A message list page, with the cursor of its last row.
async fn message_page(
    state: &FeaturesState,
    principal: &Principal,
    scope: Scope,
    query: MessageListQuery,
) -> Result<Json<CursorPage<MessageDto>>, ApiError> {
    let expiry = query.expiry.unwrap_or(Expiry::NonExpired);
    let sort = query.sort_by.unwrap_or(MessageSort::StartDate);
    let descending = query.sort_order.unwrap_or(SortOrder::Desc) == SortOrder::Desc;
    let list = format!(
        "feature-messages:{}:{expiry}:{sort}:{}",
        scope.column().unwrap_or_default(),
        if descending { "desc" } else { "asc" }
    );
    let page = CursorRequest::parse(
        query.cursor.as_deref(),
        query.limit,
        &list,
        state.page_limits,
    )?;
    let after = page.after.as_ref().map(position_of).transpose()?;
    let rows = state
        .features
        .list_messages(
            principal,
            scope,
            MessageQuery {
                expiry,
                sort,
                descending,
                after,
                fetch: page.fetch_count(),
            },
        )
        .await?;
    Ok(Json(CursorPage::from_rows(
        rows,
        &page,
        |row| {
            let date = match sort {
                MessageSort::StartDate => row.start_date,
                MessageSort::ExpiringDate => row.expiring_date,
            };
            Cursor {
                sort: list.clone(),
                key: serde_json::json!([date.to_rfc3339_opts(SecondsFormat::Micros, true), row.id]),
                id: Uuid::nil(),
            }
        },
        |row| MessageDto::from(&row),
    )))
}

/// The date and id a message cursor holds.
fn position_of(cursor: &Cursor) -> Result<(DateTime<Utc>, i64), ApiError> {
    let (Some(date), Some(id)) = (
        cursor.key.get(0).and_then(serde_json::Value::as_str),
        cursor.key.get(1).and_then(serde_json::Value::as_i64),
    ) else {
        return Err(ApiError::InvalidCursor);
    };
    let date = DateTime::parse_from_rfc3339(date)
        .map_err(|_| ApiError::InvalidCursor)?
        .with_timezone(&Utc);
    Ok((date, id))
}

/// The messages of a feature merged with the global messages (docs/features.md#endpoints).
#[utoipa::path(get, path = "/api/admin/feature/{featureId}/message", tag = "features",
    params(("featureId" = String, Path), MessageListQuery),
    responses((status = 200, body = CursorPage<MessageDto>), (status = 400), (status = 401), (status = 403)))]
async fn list_feature_messages(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(feature): Path<String>,
    Query(query): Query<MessageListQuery>,
) -> Result<Json<CursorPage<MessageDto>>, ApiError> {
    let scope = Scope::Feature(feature_id(&feature)?);
    message_page(&state, &principal, scope, query).await
}

/// Creates a message of the feature in the path (any `featureId` in the body is ignored).
#[utoipa::path(post, path = "/api/admin/feature/{featureId}/message", tag = "features",
    params(("featureId" = String, Path)), request_body = MessageFields,
    responses((status = 201, body = MessageDto), (status = 400), (status = 401), (status = 403)))]
async fn create_feature_message(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(feature): Path<String>,
    body: JsonBody<MessageFields>,
) -> Result<Response, ApiError> {
    FeatureService::authorize_write(&principal)?;
    let fields = body.read().await?;
    let scope = Scope::Feature(feature_id(&feature)?);
    let row = state
        .features
        .create_message(&principal, &scope, fields)
        .await?;
    Ok((StatusCode::CREATED, Json(MessageDto::from(&row))).into_response())
}

/// Changes the named fields of a message of the feature; 404 for another feature's message.
#[utoipa::path(patch, path = "/api/admin/feature/{featureId}/message/{messageId}", tag = "features",
    params(("featureId" = String, Path), ("messageId" = i64, Path)), request_body = MessageFields,
    responses((status = 200, body = MessageDto), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn update_feature_message(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path((feature, message)): Path<(String, i64)>,
    body: JsonBody<MessageFields>,
) -> Result<Json<MessageDto>, ApiError> {
    FeatureService::authorize_write(&principal)?;
    let fields = body.read().await?;
    let scope = Scope::Feature(feature_id(&feature)?);
    let row = state
        .features
        .update_message(&principal, &scope, message, fields)
        .await?;
    Ok(Json(MessageDto::from(&row)))
}

/// Deletes a message of the feature; 404 for another feature's message.
#[utoipa::path(delete, path = "/api/admin/feature/{featureId}/message/{messageId}", tag = "features",
    params(("featureId" = String, Path), ("messageId" = i64, Path)),
    responses((status = 204), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn delete_feature_message(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path((feature, message)): Path<(String, i64)>,
) -> Result<StatusCode, ApiError> {
    let scope = Scope::Feature(feature_id(&feature)?);
    state
        .features
        .delete_message(&principal, &scope, message)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The global messages only.
#[utoipa::path(get, path = "/api/admin/feature/message", tag = "features", params(MessageListQuery),
    responses((status = 200, body = CursorPage<MessageDto>), (status = 400), (status = 401), (status = 403)))]
async fn list_global_messages(
    State(state): State<FeaturesState>,
    principal: Principal,
    Query(query): Query<MessageListQuery>,
) -> Result<Json<CursorPage<MessageDto>>, ApiError> {
    message_page(&state, &principal, Scope::Global, query).await
}

/// Creates a global message (`featureId` null).
#[utoipa::path(post, path = "/api/admin/feature/message", tag = "features", request_body = MessageFields,
    responses((status = 201, body = MessageDto), (status = 400), (status = 401), (status = 403)))]
async fn create_global_message(
    State(state): State<FeaturesState>,
    principal: Principal,
    body: JsonBody<MessageFields>,
) -> Result<Response, ApiError> {
    FeatureService::authorize_write(&principal)?;
    let fields = body.read().await?;
    let row = state
        .features
        .create_message(&principal, &Scope::Global, fields)
        .await?;
    Ok((StatusCode::CREATED, Json(MessageDto::from(&row))).into_response())
}

/// Changes a global message; 404 for a message that is not global.
#[utoipa::path(patch, path = "/api/admin/feature/message/{messageId}", tag = "features",
    params(("messageId" = i64, Path)), request_body = MessageFields,
    responses((status = 200, body = MessageDto), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn update_global_message(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(message): Path<i64>,
    body: JsonBody<MessageFields>,
) -> Result<Json<MessageDto>, ApiError> {
    FeatureService::authorize_write(&principal)?;
    let fields = body.read().await?;
    let row = state
        .features
        .update_message(&principal, &Scope::Global, message, fields)
        .await?;
    Ok(Json(MessageDto::from(&row)))
}

/// Deletes a global message; 404 for a message that is not global.
#[utoipa::path(delete, path = "/api/admin/feature/message/{messageId}", tag = "features",
    params(("messageId" = i64, Path)),
    responses((status = 204), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn delete_global_message(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(message): Path<i64>,
) -> Result<StatusCode, ApiError> {
    state
        .features
        .delete_message(&principal, &Scope::Global, message)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// What the banner answers.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct BannerDto {
    /// The feature asked for.
    feature_id: String,
    /// Active messages of the feature and global ones, most severe first.
    data: Vec<MessageDto>,
    /// When the answer next changes by time alone (a start or an end); null for never.
    next_change_at: Option<WireTime>,
}

/// The active messages of a feature and the global ones, for applications to show; with
/// `ETag` and `If-None-Match` (304) so that polling costs little.
#[utoipa::path(get, path = "/api/admin/feature/{featureId}/banner", tag = "features",
    params(("featureId" = String, Path),
        ("If-None-Match" = Option<String>, Header, description = "an ETag of an earlier answer")),
    responses((status = 200, body = BannerDto), (status = 304), (status = 400), (status = 401)))]
async fn banner(
    State(state): State<FeaturesState>,
    _principal: Principal,
    Path(feature): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let feature = feature_id(&feature)?;
    let banner = state.features.banner(&feature).await?;
    let etag = HeaderValue::from_str(&banner.etag)
        .map_err(|error| ApiError::Internal(anyhow::Error::new(error)))?;
    let cache_control = HeaderValue::from_str(&banner.cache_control)
        .map_err(|error| ApiError::Internal(anyhow::Error::new(error)))?;
    let unchanged = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| matches_etag(value, &banner.etag));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        Json(BannerDto {
            feature_id: feature.as_str().to_owned(),
            data: banner.messages.iter().map(MessageDto::from).collect(),
            next_change_at: banner.next_change.map(WireTime),
        })
        .into_response()
    };
    response.headers_mut().insert(header::ETAG, etag);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, cache_control);
    Ok(response)
}

/// What the retention job removed.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct PurgedDto {
    /// Messages removed.
    removed: u64,
}

/// Runs the retention job now: removes messages that ended more than
/// `features.message_retention_days` ago, global ones too (BackOffice).
#[utoipa::path(post, path = "/api/admin/feature-messages/purge-expired", tag = "features",
    responses((status = 200, body = PurgedDto), (status = 401), (status = 403)))]
async fn purge_expired(
    State(state): State<FeaturesState>,
    principal: Principal,
) -> Result<Json<PurgedDto>, ApiError> {
    let removed = state.features.purge_expired_as(&principal).await?;
    Ok(Json(PurgedDto { removed }))
}

// ---- the tenant owner (docs/features.md#the-tenant-owner) ----

/// Query of the tenant feature list.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct FeatureTypeQuery {
    /// `Service` or `Application`; all when absent.
    #[param(value_type = Option<String>)]
    feature_type: Option<FeatureType>,
}

/// The features licensed to the caller's tenant, with the owner's switch.
#[utoipa::path(get, path = "/api/admin/feature/tenant/list", tag = "features", params(FeatureTypeQuery),
    responses((status = 200, body = DataList<TenantFeatureDto>), (status = 400), (status = 401), (status = 403)))]
async fn my_tenant_features(
    State(state): State<FeaturesState>,
    principal: Principal,
    Query(query): Query<FeatureTypeQuery>,
) -> Result<Json<DataList<TenantFeatureDto>>, ApiError> {
    let rows = state
        .features
        .my_features(&principal, query.feature_type)
        .await?;
    Ok(Json(DataList {
        data: rows.iter().map(TenantFeatureDto::from).collect(),
    }))
}

/// Switches a licensed feature of the tenant on or off (the license is not changed). The
/// header `svc-project-id` must name the tenant of the path.
#[utoipa::path(patch, path = "/api/admin/feature/{featureId}/tenant/{tenantId}", tag = "features",
    params(("featureId" = String, Path), ("tenantId" = Uuid, Path),
        ("svc-project-id" = Uuid, Header, description = "the tenant id, again")),
    request_body = EnabledDto,
    responses((status = 200, body = EnabledDto), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn switch_tenant_feature(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path((feature, tenant)): Path<(String, String)>,
    headers: HeaderMap,
    body: JsonBody<EnabledDto>,
) -> Result<Json<EnabledDto>, ApiError> {
    let named = headers
        .get(PROJECT_ID_HEADER)
        .ok_or_else(|| {
            ApiError::field(
                PROJECT_ID_HEADER,
                "the header svc-project-id must name the tenant",
            )
        })?
        .to_str()
        .ok()
        .and_then(|raw| Uuid::parse_str(raw.trim()).ok())
        .ok_or_else(|| {
            ApiError::field(
                PROJECT_ID_HEADER,
                "the header svc-project-id must be the tenant id (a uuid)",
            )
        })?;
    let tenant = tenant_id(&tenant)?;
    if named != tenant.as_uuid() {
        return Err(ApiError::field(
            PROJECT_ID_HEADER,
            "the header svc-project-id must be the tenant id of the path",
        ));
    }
    FeatureService::authorize_switch(&principal, tenant)?;
    let feature = feature_id(&feature)?;
    let enabled = state
        .features
        .set_enabled(&principal, &feature, tenant, body.read().await?.enabled)
        .await?;
    Ok(Json(EnabledDto { enabled }))
}

// ---- the catalogue and licenses (BackOffice) ----

/// Query of the catalogue.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct CatalogueQuery {
    /// `Service` or `Application`; all when absent.
    #[param(value_type = Option<String>)]
    feature_type: Option<FeatureType>,
    /// From the previous page.
    cursor: Option<String>,
    /// Page size.
    limit: Option<u32>,
}

/// The feature catalogue, by id.
#[utoipa::path(get, path = "/api/admin/features", tag = "features", params(CatalogueQuery),
    responses((status = 200, body = CursorPage<FeatureDto>), (status = 400), (status = 401), (status = 403)))]
async fn list_features(
    State(state): State<FeaturesState>,
    principal: Principal,
    Query(query): Query<CatalogueQuery>,
) -> Result<Json<CursorPage<FeatureDto>>, ApiError> {
    let list = format!(
        "features:{}",
        query.feature_type.map_or("All", |kind| kind.as_str())
    );
    let page = CursorRequest::parse(
        query.cursor.as_deref(),
        query.limit,
        &list,
        state.page_limits,
    )?;
    let after = page
        .after
        .as_ref()
        .map(|cursor| {
            cursor
                .key
                .as_str()
                .map(str::to_owned)
                .ok_or(ApiError::InvalidCursor)
        })
        .transpose()?;
    let rows = state
        .features
        .features(
            &principal,
            query.feature_type,
            after.as_deref(),
            page.fetch_count(),
        )
        .await?;
    Ok(Json(CursorPage::from_rows(
        rows,
        &page,
        |row| Cursor {
            sort: list.clone(),
            key: row.id.clone().into(),
            id: Uuid::nil(),
        },
        |row| FeatureDto::from(&row),
    )))
}

/// Adds a feature to the catalogue; an id in use is 409.
#[utoipa::path(post, path = "/api/admin/features", tag = "features", request_body = FeatureRequest,
    responses((status = 201, body = FeatureDto), (status = 400), (status = 401), (status = 403), (status = 409)))]
async fn create_feature(
    State(state): State<FeaturesState>,
    principal: Principal,
    body: JsonBody<FeatureRequest>,
) -> Result<Response, ApiError> {
    FeatureService::authorize_admin(&principal)?;
    let request = body.read().await?;
    let row = state.features.create_feature(&principal, request).await?;
    Ok((StatusCode::CREATED, Json(FeatureDto::from(&row))).into_response())
}

/// One feature of the catalogue.
#[utoipa::path(get, path = "/api/admin/features/{featureId}", tag = "features",
    params(("featureId" = String, Path)),
    responses((status = 200, body = FeatureDto), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn get_feature(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(feature): Path<String>,
) -> Result<Json<FeatureDto>, ApiError> {
    let row = state
        .features
        .feature(&principal, &feature_id(&feature)?)
        .await?;
    Ok(Json(FeatureDto::from(&row)))
}

/// Replaces a feature's name, URLs and type.
#[utoipa::path(put, path = "/api/admin/features/{featureId}", tag = "features",
    params(("featureId" = String, Path)), request_body = FeatureRequest,
    responses((status = 200, body = FeatureDto), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn replace_feature(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(feature): Path<String>,
    body: JsonBody<FeatureRequest>,
) -> Result<Json<FeatureDto>, ApiError> {
    FeatureService::authorize_admin(&principal)?;
    let request = body.read().await?;
    let row = state
        .features
        .replace_feature(&principal, &feature_id(&feature)?, request)
        .await?;
    Ok(Json(FeatureDto::from(&row)))
}

/// Removes a feature; 409 while a tenant holds a license of it.
#[utoipa::path(delete, path = "/api/admin/features/{featureId}", tag = "features",
    params(("featureId" = String, Path)),
    responses((status = 204), (status = 400), (status = 401), (status = 403), (status = 404), (status = 409)))]
async fn delete_feature(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(feature): Path<String>,
) -> Result<StatusCode, ApiError> {
    state
        .features
        .delete_feature(&principal, &feature_id(&feature)?)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The tenants holding a license of a feature.
#[utoipa::path(get, path = "/api/admin/features/{featureId}/licenses", tag = "features",
    params(("featureId" = String, Path)),
    responses((status = 200, body = DataList<LicenseDto>), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn feature_licenses(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(feature): Path<String>,
) -> Result<Json<DataList<LicenseDto>>, ApiError> {
    let rows = state
        .features
        .licenses_of(&principal, &feature_id(&feature)?)
        .await?;
    Ok(Json(DataList {
        data: rows.iter().map(LicenseDto::from).collect(),
    }))
}

/// Licenses a feature to a tenant (201), or sets the switch of its license (200).
#[utoipa::path(put, path = "/api/admin/features/{featureId}/licenses/{tenantId}", tag = "features",
    params(("featureId" = String, Path), ("tenantId" = Uuid, Path)),
    request_body(content = Option<LicenseRequest>),
    responses((status = 200, body = LicenseDto), (status = 201, body = LicenseDto), (status = 400),
        (status = 401), (status = 403), (status = 404)))]
async fn grant_license(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path((feature, tenant)): Path<(String, String)>,
    body: JsonBody<LicenseRequest>,
) -> Result<Response, ApiError> {
    FeatureService::authorize_admin(&principal)?;
    let request = body.read().await?;
    let feature = feature_id(&feature)?;
    let tenant = tenant_id(&tenant)?;
    let (license, created) = state
        .features
        .grant(&principal, &feature, tenant, request.enabled)
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(LicenseDto::from(&license))).into_response())
}

/// Revokes a tenant's license of a feature.
#[utoipa::path(delete, path = "/api/admin/features/{featureId}/licenses/{tenantId}", tag = "features",
    params(("featureId" = String, Path), ("tenantId" = Uuid, Path)),
    responses((status = 204), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn revoke_license(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path((feature, tenant)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let feature = feature_id(&feature)?;
    let tenant = tenant_id(&tenant)?;
    state.features.revoke(&principal, &feature, tenant).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The features licensed to a tenant, with the owner's switch (BackOffice).
#[utoipa::path(get, path = "/api/admin/tenants/{tenantId}/features", tag = "features",
    params(("tenantId" = Uuid, Path)),
    responses((status = 200, body = DataList<TenantFeatureDto>), (status = 400), (status = 401), (status = 403), (status = 404)))]
async fn tenant_licenses(
    State(state): State<FeaturesState>,
    principal: Principal,
    Path(tenant): Path<String>,
) -> Result<Json<DataList<TenantFeatureDto>>, ApiError> {
    let rows = state
        .features
        .tenant_licenses(&principal, tenant_id(&tenant)?)
        .await?;
    Ok(Json(DataList {
        data: rows.iter().map(TenantFeatureDto::from).collect(),
    }))
}
