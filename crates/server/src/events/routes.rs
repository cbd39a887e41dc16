//! The dead-letter endpoints under `/api/admin/events` (docs/events.md, "Dead letters").
//! HTTP only: rules live in `admin.rs`.

use axum::extract::{FromRef, State};
use axum::middleware::from_fn_with_state;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::events::admin::{EventsAdmin, EventsError};
use crate::events::store::DeadLetter;
use crate::http::api_version::{self, ADMIN};
use crate::http::extract::{Json, Path, Query};
use crate::http::paging::{OffsetPage, OffsetRequest, PageLimits};
use crate::http::time::WireTime;

/// What the dead-letter endpoints need.
#[derive(Debug, Clone)]
pub(crate) struct EventsState {
    /// Dead-letter rules.
    pub(crate) admin: EventsAdmin,
    /// Page sizes.
    pub(crate) page_limits: PageLimits,
}

/// The dead-letter routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    EventsState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_dead_letters))
        .routes(routes!(replay_dead_letter))
        .routes(routes!(replay_all_dead_letters))
        .layer(from_fn_with_state(ADMIN, api_version::enforce))
}

impl From<EventsError> for ApiError {
    fn from(error: EventsError) -> Self {
        match error {
            EventsError::Forbidden => ApiError::Forbidden(
                "Only BackOffice and CloudAdministrator may manage event deliveries.".into(),
            ),
            EventsError::NotFound(event) => {
                ApiError::NotFound(format!("No dead letter of event {event}."))
            }
            EventsError::Store(error) => error.into(),
        }
    }
}

/// Offset paging.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct PageQuery {
    /// Rows to skip.
    offset: Option<u32>,
    /// Page size.
    limit: Option<u32>,
}

/// An event a sink gave up on.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct DeadLetterDto {
    /// The event id (CloudEvents `id`).
    event_id: Uuid,
    /// The event's position in the outbox: events of one resource were recorded in this order.
    sequence: i64,
    /// The CloudEvents type.
    #[serde(rename = "type")]
    event_type: String,
    /// The sink that did not get it (`webhook:<name>`, `nats`).
    sink: String,
    /// Attempts made.
    attempts: i32,
    /// The last error.
    last_error: Option<String>,
    /// When it was given up.
    dead_at: Option<WireTime>,
    /// When the event was recorded.
    created_at: WireTime,
    /// The CloudEvents JSON, as the sink would have received it.
    #[schema(value_type = Object)]
    event: serde_json::Value,
}

impl From<DeadLetter> for DeadLetterDto {
    fn from(row: DeadLetter) -> Self {
        Self {
            event_id: row.id,
            sequence: row.seq,
            event_type: row.event_type,
            sink: row.sink,
            attempts: row.attempts,
            last_error: row.last_error,
            dead_at: row.dead_at.map(WireTime),
            created_at: WireTime(row.created_at),
            event: serde_json::from_str(&row.body).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// How many dead letters went back to delivery.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ReplayedDto {
    /// Deliveries pending again.
    replayed: u64,
}

/// Dead-lettered event deliveries, oldest event first, offset-paged (BackOffice or
/// CloudAdministrator).
#[utoipa::path(get, path = "/api/admin/events/dead-letters", tag = "admin", params(PageQuery),
    responses((status = 200, body = OffsetPage<DeadLetterDto>), (status = 400), (status = 401), (status = 403)))]
async fn list_dead_letters(
    State(state): State<EventsState>,
    principal: Principal,
    Query(query): Query<PageQuery>,
) -> ApiResult<Json<OffsetPage<DeadLetterDto>>> {
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let (total, rows) = state
        .admin
        .list_dead_letters(&principal, page.offset, page.limit)
        .await?;
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data: rows.into_iter().map(DeadLetterDto::from).collect(),
    }))
}

/// Sends the dead letters of one event back to delivery, with fresh attempts.
#[utoipa::path(post, path = "/api/admin/events/dead-letters/{eventId}/replay", tag = "admin",
    params(("eventId" = Uuid, Path)),
    responses((status = 200, body = ReplayedDto), (status = 401), (status = 403), (status = 404)))]
async fn replay_dead_letter(
    State(state): State<EventsState>,
    principal: Principal,
    Path(event): Path<Uuid>,
) -> ApiResult<Json<ReplayedDto>> {
    let replayed = state.admin.replay(&principal, event).await?;
    Ok(Json(ReplayedDto { replayed }))
}

/// Sends every dead letter back to delivery, with fresh attempts.
#[utoipa::path(post, path = "/api/admin/events/dead-letters/replay", tag = "admin",
    responses((status = 200, body = ReplayedDto), (status = 401), (status = 403)))]
async fn replay_all_dead_letters(
    State(state): State<EventsState>,
    principal: Principal,
) -> ApiResult<Json<ReplayedDto>> {
    let replayed = state.admin.replay_all(&principal).await?;
    Ok(Json(ReplayedDto { replayed }))
}
