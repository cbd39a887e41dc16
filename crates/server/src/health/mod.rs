//! Liveness and readiness probes for orchestrators and load balancers. Neither needs
//! credentials; readiness checks that the database answers.

use axum::extract::State;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::db::Backend;
use crate::error::{ApiError, ApiResult};
use crate::http::extract::Json;
use crate::startup::AppState;

/// Probe answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HealthDto {
    /// `Healthy`.
    pub status: &'static str,
    /// `sqlite` or `postgres`, on readiness.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<&'static str>,
}

/// Health routes.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(live))
        .routes(routes!(ready))
}

/// The process is up.
#[utoipa::path(get, path = "/health/live", tag = "health", security(()),
    responses((status = 200, body = HealthDto)))]
async fn live() -> Json<HealthDto> {
    Json(HealthDto {
        status: "Healthy",
        database: None,
    })
}

/// The process can serve requests: the database answers and can take a write.
#[utoipa::path(get, path = "/health/ready", tag = "health", security(()),
    responses((status = 200, body = HealthDto), (status = 503, description = "The database cannot take a write")))]
async fn ready(State(state): State<AppState>) -> ApiResult<Json<HealthDto>> {
    state
        .db
        .check_writable()
        .await
        .map_err(|error| ApiError::Unavailable(error.into()))?;
    Ok(Json(HealthDto {
        status: "Healthy",
        database: Some(match state.db.backend() {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }),
    }))
}
