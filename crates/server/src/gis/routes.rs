//! GIS endpoints under `/api/crs`: the coordinate-system list, one coordinate system, and the
//! reprojection of WKT geometries. HTTP only: rules live in `service.rs`.

use axum::extract::{FromRef, State};
use axum::middleware::from_fn_with_state;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::gis::model::{CoordinateSystemDto, ReprojectRequest, ReprojectResponse};
use crate::gis::service::{CrsFilter, GisError, GisService, ReprojectInput};
use crate::http::api_version::{self, GIS};
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{OffsetPage, OffsetRequest, PageLimits};

/// What the GIS endpoints need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct GisState {
    /// GIS rules.
    pub(crate) gis: GisService,
    /// Page sizes.
    pub(crate) page_limits: PageLimits,
}

/// GIS routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    GisState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_coordinate_systems))
        .routes(routes!(get_coordinate_system))
        .routes(routes!(project_geometries))
        .layer(from_fn_with_state(GIS, api_version::enforce))
}

impl From<GisError> for ApiError {
    fn from(error: GisError) -> Self {
        let message = error.to_string();
        match error {
            GisError::SearchTextTooLong { field, .. }
            | GisError::UnknownSrid { field, .. }
            | GisError::UnusableSrid { field, .. } => ApiError::field(field, message),
            GisError::TooManyGeometries { .. } | GisError::TooManyPositions { .. } => {
                ApiError::field("geometries", message)
            }
            GisError::Malformed { index, .. } | GisError::NotTransformable { index, .. } => {
                ApiError::field(format!("geometries[{index}]"), message)
            }
            GisError::Worker(error) => ApiError::Internal(error.into()),
        }
    }
}

/// Query of the coordinate-system list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct CoordinateSystemListQuery {
    /// Case-insensitive part of the name (`utm zone 32n`).
    nametext: Option<String>,
    /// Case-insensitive part of the name, the WKT, the proj4 definition or the code.
    fulltext: Option<String>,
    /// `EPSG` (any case) or empty: every entry; any other authority: none.
    authority: Option<String>,
    /// Rows to skip.
    offset: Option<u32>,
    /// Page size.
    limit: Option<u32>,
}

/// Coordinate systems of the registry (EPSG), by ascending id, offset-paged. The ids are the
/// SRIDs conversions and `POST /api/crs/project` accept.
#[utoipa::path(get, path = "/api/crs/coordinate-system/list", tag = "gis",
    params(CoordinateSystemListQuery),
    responses((status = 200, body = OffsetPage<CoordinateSystemDto>), (status = 400), (status = 401)))]
async fn list_coordinate_systems(
    State(state): State<GisState>,
    _principal: Principal,
    Query(query): Query<CoordinateSystemListQuery>,
) -> ApiResult<Json<OffsetPage<CoordinateSystemDto>>> {
    let filter = CrsFilter::parse(
        query.nametext.as_deref(),
        query.fulltext.as_deref(),
        query.authority.as_deref(),
    )?;
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let found = state.gis.list(&filter, page.offset, page.limit);
    Ok(Json(OffsetPage {
        total_count: found.total,
        offset: page.offset,
        limit: page.limit,
        data: found
            .rows
            .into_iter()
            .map(CoordinateSystemDto::from)
            .collect(),
    }))
}

/// One coordinate system by its id (EPSG code). An id that is not a whole number from 0 to
/// 4294967295 is 400; one the registry lacks is 404.
#[utoipa::path(get, path = "/api/crs/coordinate-system/{id}", tag = "gis",
    params(("id" = u32, Path, description = "SRID (EPSG code)")),
    responses((status = 200, body = CoordinateSystemDto), (status = 400), (status = 401), (status = 404)))]
async fn get_coordinate_system(
    State(state): State<GisState>,
    _principal: Principal,
    Path(id): Path<u32>,
) -> ApiResult<Json<CoordinateSystemDto>> {
    let definition = state.gis.get(id).ok_or_else(|| {
        ApiError::NotFound(format!(
            "EPSG:{id} is not in Basin's coordinate-system registry."
        ))
    })?;
    Ok(Json(CoordinateSystemDto::from(definition)))
}

/// Reprojects WKT geometries from `inputSrid` to `outputSrid`. Every geometry is checked
/// before any is transformed; the first problem is a 400 naming `inputSrid`, `outputSrid`,
/// `geometries` (a limit) or `geometries[i]` (malformed, or a position outside the systems'
/// domain).
#[utoipa::path(post, path = "/api/crs/project", tag = "gis",
    request_body = ReprojectRequest,
    responses((status = 200, body = ReprojectResponse), (status = 400), (status = 401), (status = 413)))]
async fn project_geometries(
    State(state): State<GisState>,
    _principal: Principal,
    body: JsonBody<ReprojectRequest>,
) -> ApiResult<Json<ReprojectResponse>> {
    // Any authenticated caller may reproject: no rights to check before the body.
    let request = body.read().await?;
    let reprojected = state
        .gis
        .reproject(ReprojectInput {
            input_srid: request.input_srid,
            output_srid: request.output_srid,
            geometries: request.geometries,
        })
        .await?;
    Ok(Json(ReprojectResponse::from(reprojected)))
}
