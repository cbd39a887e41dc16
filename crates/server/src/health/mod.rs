//! Liveness and readiness probes for orchestrators and load balancers. Neither needs
//! credentials; readiness checks that the database answers.

use axum::extract::{FromRef, State};
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::db::{Backend, Db};
use crate::error::{ApiError, ApiResult};
use crate::http::extract::Json;

/// Probe answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct HealthDto {
    /// `Healthy`.
    pub(crate) status: &'static str,
    /// `sqlite` or `postgres`, on readiness.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) database: Option<&'static str>,
}

/// Health routes.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Db: FromRef<S>,
{
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
async fn ready(State(db): State<Db>) -> ApiResult<Json<HealthDto>> {
    db.check_writable()
        .await
        .map_err(|error| ApiError::Unavailable(error.into()))?;
    Ok(Json(HealthDto {
        status: "Healthy",
        database: Some(match db.backend() {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }),
    }))
}
