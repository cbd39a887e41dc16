//! EDR endpoints (docs/edr.md): the landing page, conformance, collections and their
//! metadata, and the queries. HTTP only: the rules are in `service.rs`, the queries in
//! basin-edr.

use axum::extract::{FromRef, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use basin_edr::EdrError;
use basin_edr::area::{AreaQuery, RegionParameters};
use basin_edr::coverage::Answer;
use basin_edr::position::PositionQuery;
use basin_edr::sample::Method;
use basin_edr::series::{LOCATION_ID, SeriesQuery};
use basin_edr::trajectory::TrajectoryQuery;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{Caller, Principal};
use crate::db::SortValue;
use crate::edr::model::{
    self, CONFORMANCE, CollectionDto, CollectionsDto, ConformanceDto, LandingDto, Link,
};
use crate::edr::service::{EdrService, EdrServiceError};
use crate::error::ApiError;
use crate::http::api_version::{self, EDR};
use crate::http::extract::{Json, Path, Query};
use crate::http::paging::{Cursor, CursorRequest, PageLimits, SortKind};
use crate::ids::{DatasetId, ProjectId};
use crate::public_base::PublicBase;

/// What the EDR endpoints need.
#[derive(Debug, Clone)]
pub(crate) struct EdrState {
    /// The rules.
    pub(crate) edr: EdrService,
    /// Page sizes of the collection list.
    pub(crate) page_limits: PageLimits,
}

/// EDR routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    EdrState: FromRef<S>,
    crate::blob_urls::BlobUrls: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(landing))
        .routes(routes!(landing_with_slash))
        .routes(routes!(conformance))
        .routes(routes!(collections))
        .routes(routes!(collection))
        .routes(routes!(position))
        .routes(routes!(area))
        .routes(routes!(cube))
        .routes(routes!(radius))
        .routes(routes!(corridor))
        .routes(routes!(trajectory))
        .routes(routes!(locations))
        .routes(routes!(location))
        .layer(from_fn_with_state(EDR, api_version::enforce))
}

impl From<EdrServiceError> for ApiError {
    fn from(error: EdrServiceError) -> Self {
        match error {
            EdrServiceError::Dataset(error) => error.into(),
            EdrServiceError::NotACollection(message) => ApiError::NotFound(message),
            EdrServiceError::Query(error) => error.into(),
            EdrServiceError::Internal(error) => ApiError::Internal(error),
        }
    }
}

impl From<EdrError> for ApiError {
    fn from(error: EdrError) -> Self {
        let message = error.to_string();
        match error {
            EdrError::Invalid { parameter, message } => ApiError::field(parameter, message),
            EdrError::TooLarge(_) => ApiError::AnswerTooLarge(message),
            EdrError::NoData(_) => ApiError::NotFound(message),
            EdrError::NotSupported(_) => ApiError::Unprocessable {
                kind: "query-not-supported",
                detail: message,
            },
            EdrError::Unreadable(_) => ApiError::Unprocessable {
                kind: "dataset-unreadable",
                detail: message,
            },
        }
    }
}

/// `f` of the metadata documents: JSON only.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct FormatQuery {
    /// `json` (the default and only format).
    f: Option<String>,
}

fn check_json_format(f: Option<&str>) -> Result<(), ApiError> {
    match f {
        None => Ok(()),
        Some(format) if format.eq_ignore_ascii_case("json") => Ok(()),
        Some(format) => Err(ApiError::field(
            "f",
            format!("{format:?} is not a format of this document; it comes as json"),
        )),
    }
}

fn edr_base(base: &PublicBase) -> String {
    format!("{}/api/edr", base.as_str())
}

/// The landing page of the EDR API.
#[utoipa::path(get, path = "/api/edr", tag = "edr", params(FormatQuery),
    responses((status = 200, body = LandingDto), (status = 400), (status = 401)))]
async fn landing(
    _principal: Principal,
    base: PublicBase,
    Query(query): Query<FormatQuery>,
) -> Result<Json<LandingDto>, ApiError> {
    check_json_format(query.f.as_deref())?;
    let edr = edr_base(&base);
    Ok(Json(LandingDto {
        title: "Basin EDR".to_owned(),
        description: "OGC API - Environmental Data Retrieval over the grids and meshes of the \
                      datasets you may read"
            .to_owned(),
        links: vec![
            Link::new(edr.clone(), "self", "application/json", "This document"),
            Link::new(
                format!("{}/openapi.json", base.as_str()),
                "service-desc",
                "application/vnd.oai.openapi+json;version=3.0",
                "The API definition",
            ),
            Link::new(
                format!("{edr}/conformance"),
                "conformance",
                "application/json",
                "Conformance classes",
            ),
            Link::new(
                format!("{edr}/collections"),
                "data",
                "application/json",
                "Collections",
            ),
        ],
    }))
}

/// The landing page of the EDR API at its base URL with a trailing slash, where OGC API
/// clients (OWSLib) ask for it.
#[utoipa::path(get, path = "/api/edr/", tag = "edr", params(FormatQuery),
    responses((status = 200, body = LandingDto), (status = 400), (status = 401)))]
async fn landing_with_slash(
    principal: Principal,
    base: PublicBase,
    query: Query<FormatQuery>,
) -> Result<Json<LandingDto>, ApiError> {
    landing(principal, base, query).await
}

/// The conformance classes the EDR API implements.
#[utoipa::path(get, path = "/api/edr/conformance", tag = "edr", params(FormatQuery),
    responses((status = 200, body = ConformanceDto), (status = 400), (status = 401)))]
async fn conformance(
    _principal: Principal,
    Query(query): Query<FormatQuery>,
) -> Result<Json<ConformanceDto>, ApiError> {
    check_json_format(query.f.as_deref())?;
    Ok(Json(ConformanceDto {
        conforms_to: CONFORMANCE
            .iter()
            .map(|class| (*class).to_owned())
            .collect(),
    }))
}

/// Query of the collection list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CollectionsQuery {
    /// Only the datasets placed directly in this project.
    project: Option<String>,
    /// Collections per page.
    limit: Option<u32>,
    /// Where the page starts, from a `next` link.
    cursor: Option<String>,
    /// `json` (the default and only format).
    f: Option<String>,
}

/// The datasets the caller may read whose values can be queried (grids and meshes), by name,
/// a page at a time (`links` has `next` while more follow).
#[utoipa::path(get, path = "/api/edr/collections", tag = "edr", params(CollectionsQuery),
    responses((status = 200, body = CollectionsDto), (status = 400), (status = 401),
        (status = 403), (status = 404)))]
async fn collections(
    State(state): State<EdrState>,
    principal: Principal,
    base: PublicBase,
    Query(query): Query<CollectionsQuery>,
) -> Result<Json<CollectionsDto>, ApiError> {
    check_json_format(query.f.as_deref())?;
    let project = query
        .project
        .as_deref()
        .map(|raw| {
            raw.parse::<ProjectId>()
                .map_err(|_| ApiError::field("project", format!("{raw:?} is not a project id")))
        })
        .transpose()?;
    let tag = format!(
        "edr-collections@{}",
        project.map(|id| id.to_string()).unwrap_or_default()
    );
    let request = CursorRequest::parse(
        query.cursor.as_deref(),
        query.limit,
        &tag,
        state.page_limits,
    )?;
    let after = request
        .after
        .as_ref()
        .map(|cursor| cursor.position(SortKind::Text))
        .transpose()?;
    let limit = usize::try_from(request.limit).unwrap_or(usize::MAX);
    let page = state
        .edr
        .collections(&Caller::from(&principal), project, after, limit)
        .await?;
    let edr = edr_base(&base);
    let list = format!("{edr}/collections");
    let mut links = vec![Link::new(
        list.clone(),
        "self",
        "application/json",
        "This page",
    )];
    if let Some((SortValue::Text(name), id)) = page.next {
        let cursor = Cursor::at(&tag, SortValue::Text(name), id).encode();
        let mut next = format!("{list}?limit={}&cursor={cursor}", request.limit);
        if let Some(project) = project {
            next.push_str(&format!("&project={project}"));
        }
        links.push(Link::new(next, "next", "application/json", "The next page"));
    }
    let collections: Vec<CollectionDto> = page
        .collections
        .iter()
        .filter_map(|(row, described)| {
            described
                .as_ref()
                .ok()
                .map(|dataset| model::collection(row, dataset, &list))
        })
        .collect();
    Ok(Json(CollectionsDto { links, collections }))
}

/// One collection: its extent, parameters, systems and queries.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), FormatQuery),
    responses((status = 200, body = CollectionDto), (status = 400), (status = 401),
        (status = 403), (status = 404), (status = 422)))]
async fn collection(
    State(state): State<EdrState>,
    principal: Principal,
    base: PublicBase,
    Path(id): Path<DatasetId>,
    Query(query): Query<FormatQuery>,
) -> Result<Json<CollectionDto>, ApiError> {
    check_json_format(query.f.as_deref())?;
    let (row, dataset) = state.edr.collection(&Caller::from(&principal), id).await?;
    let list = format!("{}/collections", edr_base(&base));
    Ok(Json(model::collection(&row, &dataset, &list)))
}

/// Query of a position query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct PositionParams {
    /// WKT POINT or MULTIPOINT.
    coords: Option<String>,
    /// An instant, `start/end`, `../end` or `start/..` (RFC 3339).
    datetime: Option<String>,
    /// Comma-separated parameter (item) names; every parameter when absent.
    #[serde(rename = "parameter-name")]
    #[param(rename = "parameter-name")]
    parameter_name: Option<String>,
    /// The system of coords: CRS84 (the default) or the dataset's own EPSG code.
    crs: Option<String>,
    /// The vertical level of a grid with several layers (DFS3): one of its levels.
    z: Option<String>,
    /// Basin's addition: `nearest` (the default: the stored value of the cell or element
    /// holding the point) or `linear` (inverse distance weighting of the five nearest element
    /// centres of a mesh; bilinear between a grid's cell centres).
    method: Option<String>,
    /// `CoverageJSON` (the default), `GeoJSON` or `CSV`.
    f: Option<String>,
}

/// The values at one point or several, at the selected times: the stored value of the grid
/// cell or mesh element holding each point. 204 when no point is inside the data or no step
/// is in `datetime`.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/position", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), PositionParams),
    responses((status = 200, description = "CoverageJSON, GeoJSON or CSV",
            content((String = "application/prs.coverage+json"), (String = "application/geo+json"), (String = "text/csv"))),
        (status = 204, description = "no data at the positions and times asked for"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 413),
        (status = 422)))]
async fn position(
    State(state): State<EdrState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    Query(params): Query<PositionParams>,
) -> Result<Response, ApiError> {
    let format = OutputFormat::parse(params.f.as_deref())?;
    let caller = Caller::from(&principal);
    let mut query = PositionQuery::parse(
        params.coords.as_deref(),
        params.datetime.as_deref(),
        params.parameter_name.as_deref(),
        params.crs.as_deref(),
        &state.edr.limits(),
    )?;
    query.method = Method::parse(params.method.as_deref())?;
    query.z = params.z.clone();
    let answer = state
        .edr
        .answer(&caller, id, move |catalogue, dataset, file, limits| {
            query
                .answer(catalogue, dataset, file, limits)
                .map(Answer::Points)
        })
        .await;
    respond(answer, format)
}

/// Query of an area or cube query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct RegionParams {
    /// WKT POLYGON or MULTIPOLYGON (area).
    coords: Option<String>,
    /// `min_x,min_y,max_x,max_y` (cube).
    bbox: Option<String>,
    /// An instant, `start/end`, `../end` or `start/..` (RFC 3339).
    datetime: Option<String>,
    /// Comma-separated parameter (item) names; every parameter when absent.
    #[serde(rename = "parameter-name")]
    #[param(rename = "parameter-name")]
    parameter_name: Option<String>,
    /// The system of coords or bbox: CRS84 (the default) or the dataset's own EPSG code.
    crs: Option<String>,
    /// The vertical level of a grid with several layers (DFS3): one of its levels.
    z: Option<String>,
    /// Basin's addition (area only): `min`, `max`, `mean`, `weighted-mean`, `count`, `p0` to
    /// `p100`, comma-separated; the answer is then these statistics per step and polygon.
    statistics: Option<String>,
    /// `CoverageJSON` (the default), `GeoJSON` or `CSV`.
    f: Option<String>,
}

impl RegionParams {
    fn common(&self) -> RegionParameters<'_> {
        RegionParameters {
            datetime: self.datetime.as_deref(),
            parameter_names: self.parameter_name.as_deref(),
            crs: self.crs.as_deref(),
            statistics: self.statistics.as_deref(),
        }
    }
}

/// The values of the grid cells or mesh elements whose centres a POLYGON or MULTIPOLYGON
/// holds, or (with `statistics`) their statistics per step and polygon. 204 when the region
/// holds none or no step is in `datetime`.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/area", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), RegionParams),
    responses((status = 200, description = "CoverageJSON, GeoJSON or CSV",
            content((String = "application/prs.coverage+json"), (String = "application/geo+json"), (String = "text/csv"))),
        (status = 204, description = "no data in the region and times asked for"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 413),
        (status = 422)))]
async fn area(
    State(state): State<EdrState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    Query(params): Query<RegionParams>,
) -> Result<Response, ApiError> {
    region(&state, &principal, id, &params, Region::Area).await
}

/// The values of the grid cells or mesh elements whose centres a box (`bbox`) holds: a grid
/// window of a north-up grid, the centres and values of the rest. 204 when the box holds none
/// or no step is in `datetime`.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/cube", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), RegionParams),
    responses((status = 200, description = "CoverageJSON, GeoJSON or CSV",
            content((String = "application/prs.coverage+json"), (String = "application/geo+json"), (String = "text/csv"))),
        (status = 204, description = "no data in the box and times asked for"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 413),
        (status = 422)))]
async fn cube(
    State(state): State<EdrState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    Query(params): Query<RegionParams>,
) -> Result<Response, ApiError> {
    region(&state, &principal, id, &params, Region::Cube).await
}

/// Which region query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    Area,
    Cube,
}

/// An area or cube query: the format, `z`, the geometry parameter of the other query
/// refused, then the answer.
async fn region(
    state: &EdrState,
    principal: &Principal,
    id: DatasetId,
    params: &RegionParams,
    kind: Region,
) -> Result<Response, ApiError> {
    let format = OutputFormat::parse(params.f.as_deref())?;
    let caller = Caller::from(principal);
    let query = match kind {
        Region::Area if params.bbox.is_some() => {
            return Err(ApiError::field(
                "bbox",
                "an area takes coords; a box is a cube query",
            ));
        }
        Region::Cube if params.coords.is_some() => {
            return Err(ApiError::field(
                "coords",
                "a cube takes bbox; a polygon is an area query",
            ));
        }
        Region::Area => AreaQuery::parse_area(
            params.coords.as_deref(),
            params.common(),
            &state.edr.limits(),
        )?,
        Region::Cube => AreaQuery::parse_cube(params.bbox.as_deref(), params.common())?,
    };
    let query = AreaQuery {
        z: params.z.clone(),
        ..query
    };
    region_answer(state, &caller, id, query, format).await
}

/// Query of a radius query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct RadiusParams {
    /// WKT POINT or MULTIPOINT.
    coords: Option<String>,
    /// The distance around each point.
    within: Option<String>,
    /// Its unit: `m`, `km`, `mi`, `nmi` or `ft`.
    #[serde(rename = "within-units")]
    #[param(rename = "within-units")]
    within_units: Option<String>,
    /// An instant, `start/end`, `../end` or `start/..` (RFC 3339).
    datetime: Option<String>,
    /// Comma-separated parameter (item) names; every parameter when absent.
    #[serde(rename = "parameter-name")]
    #[param(rename = "parameter-name")]
    parameter_name: Option<String>,
    /// The system of coords: CRS84 (the default) or the dataset's own EPSG code.
    crs: Option<String>,
    /// The vertical level of a grid with several layers (DFS3): one of its levels.
    z: Option<String>,
    /// `CoverageJSON` (the default), `GeoJSON` or `CSV`.
    f: Option<String>,
}

/// The values of the grid cells or mesh elements whose centres are within a distance of a
/// point (on the sphere for longitude and latitude data). 204 when there are none.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/radius", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), RadiusParams),
    responses((status = 200, description = "CoverageJSON, GeoJSON or CSV",
            content((String = "application/prs.coverage+json"), (String = "application/geo+json"), (String = "text/csv"))),
        (status = 204, description = "no data within the distance and times asked for"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 413),
        (status = 422)))]
async fn radius(
    State(state): State<EdrState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    Query(params): Query<RadiusParams>,
) -> Result<Response, ApiError> {
    let format = OutputFormat::parse(params.f.as_deref())?;
    let caller = Caller::from(&principal);
    let common = RegionParameters {
        datetime: params.datetime.as_deref(),
        parameter_names: params.parameter_name.as_deref(),
        crs: params.crs.as_deref(),
        statistics: None,
    };
    let mut query = AreaQuery::parse_radius(
        params.coords.as_deref(),
        params.within.as_deref(),
        params.within_units.as_deref(),
        common,
        &state.edr.limits(),
    )?;
    query.z = params.z.clone();
    region_answer(&state, &caller, id, query, format).await
}

/// Query of a corridor query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CorridorParams {
    /// WKT LINESTRING or MULTILINESTRING.
    coords: Option<String>,
    /// The corridor's full width (half of it either side of the line).
    #[serde(rename = "corridor-width")]
    #[param(rename = "corridor-width")]
    corridor_width: Option<String>,
    /// Its unit: `m`, `km`, `mi`, `nmi` or `ft`.
    #[serde(rename = "width-units")]
    #[param(rename = "width-units")]
    width_units: Option<String>,
    /// The corridor's height: checked (a positive number) and not used, since the data answer
    /// for one level.
    #[serde(rename = "corridor-height")]
    #[param(rename = "corridor-height")]
    corridor_height: Option<String>,
    /// The height's unit: checked (`m`, `km` or `ft`) and not used.
    #[serde(rename = "height-units")]
    #[param(rename = "height-units")]
    height_units: Option<String>,
    /// An instant, `start/end`, `../end` or `start/..` (RFC 3339).
    datetime: Option<String>,
    /// Comma-separated parameter (item) names; every parameter when absent.
    #[serde(rename = "parameter-name")]
    #[param(rename = "parameter-name")]
    parameter_name: Option<String>,
    /// The system of coords: CRS84 (the default) or the dataset's own EPSG code.
    crs: Option<String>,
    /// The vertical level of a grid with several layers (DFS3): one of its levels.
    z: Option<String>,
    /// `CoverageJSON` (the default), `GeoJSON` or `CSV`.
    f: Option<String>,
}

/// The values of the grid cells or mesh elements whose centres are within half the width of
/// a line. 204 when there are none.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/corridor", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), CorridorParams),
    responses((status = 200, description = "CoverageJSON, GeoJSON or CSV",
            content((String = "application/prs.coverage+json"), (String = "application/geo+json"), (String = "text/csv"))),
        (status = 204, description = "no data in the corridor and times asked for"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 413),
        (status = 422)))]
async fn corridor(
    State(state): State<EdrState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    Query(params): Query<CorridorParams>,
) -> Result<Response, ApiError> {
    let format = OutputFormat::parse(params.f.as_deref())?;
    let caller = Caller::from(&principal);
    check_height(
        params.corridor_height.as_deref(),
        params.height_units.as_deref(),
    )?;
    let common = RegionParameters {
        datetime: params.datetime.as_deref(),
        parameter_names: params.parameter_name.as_deref(),
        crs: params.crs.as_deref(),
        statistics: None,
    };
    let mut query = AreaQuery::parse_corridor(
        params.coords.as_deref(),
        params.corridor_width.as_deref(),
        params.width_units.as_deref(),
        common,
        &state.edr.limits(),
    )?;
    query.z = params.z.clone();
    region_answer(&state, &caller, id, query, format).await
}

/// A corridor's height and its unit, when given, must make sense though they select nothing.
fn check_height(height: Option<&str>, units: Option<&str>) -> Result<(), ApiError> {
    if let Some(height) = height
        && !height
            .trim()
            .parse::<f64>()
            .is_ok_and(|height| height.is_finite() && height > 0.0)
    {
        return Err(ApiError::field(
            "corridor-height",
            format!("{height:?} is not a positive number"),
        ));
    }
    if let Some(units) = units
        && !["m", "km", "ft"].contains(&units.trim().to_ascii_lowercase().as_str())
    {
        return Err(ApiError::field(
            "height-units",
            format!("{units:?} is not a unit of height: m, km or ft"),
        ));
    }
    Ok(())
}

/// Query of a trajectory query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct TrajectoryParams {
    /// WKT LINESTRING; with M (LINESTRINGM, LINESTRINGZM) each position's time in seconds
    /// since 1970-01-01 UTC.
    coords: Option<String>,
    /// Steps of a path without times: an instant, `start/end`, `../end` or `start/..`.
    datetime: Option<String>,
    /// Comma-separated parameter (item) names; every parameter when absent.
    #[serde(rename = "parameter-name")]
    #[param(rename = "parameter-name")]
    parameter_name: Option<String>,
    /// The system of coords: CRS84 (the default) or the dataset's own EPSG code.
    crs: Option<String>,
    /// The vertical level of a grid with several layers (DFS3): one of its levels.
    z: Option<String>,
    /// Basin's addition: `nearest` (the default: the element with the nearest centre, as MIKE
    /// IO's extract_track) or `linear`.
    method: Option<String>,
    /// `CoverageJSON` (the default), `GeoJSON` or `CSV`.
    f: Option<String>,
}

/// Values along a path: at each position and its time (a path with M), or at each position
/// at every selected step. 204 when no position is inside the data or in its time.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/trajectory", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), TrajectoryParams),
    responses((status = 200, description = "CoverageJSON, GeoJSON or CSV",
            content((String = "application/prs.coverage+json"), (String = "application/geo+json"), (String = "text/csv"))),
        (status = 204, description = "no data along the path"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 413),
        (status = 422)))]
async fn trajectory(
    State(state): State<EdrState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    Query(params): Query<TrajectoryParams>,
) -> Result<Response, ApiError> {
    let format = OutputFormat::parse(params.f.as_deref())?;
    let caller = Caller::from(&principal);
    let mut query = TrajectoryQuery::parse(
        params.coords.as_deref(),
        params.datetime.as_deref(),
        params.parameter_name.as_deref(),
        params.crs.as_deref(),
        params.method.as_deref(),
        &state.edr.limits(),
    )?;
    query.z = params.z.clone();
    let answer = state
        .edr
        .answer(&caller, id, move |catalogue, dataset, file, limits| {
            query.answer(catalogue, dataset, file, limits)
        })
        .await;
    respond(answer, format)
}

/// The locations of a time series collection: its one location, `series`, as a GeoJSON
/// feature without a geometry (a time series has no place), with its time span and
/// parameters.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/locations", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"), FormatQuery),
    responses((status = 200, description = "GeoJSON", content_type = "application/geo+json"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 422)))]
async fn locations(
    State(state): State<EdrState>,
    principal: Principal,
    base: PublicBase,
    Path(id): Path<DatasetId>,
    Query(query): Query<FormatQuery>,
) -> Result<Response, ApiError> {
    match query.f.as_deref() {
        None => {}
        Some(format)
            if format.eq_ignore_ascii_case("geojson") || format.eq_ignore_ascii_case("json") => {}
        Some(format) => {
            return Err(ApiError::field(
                "f",
                format!("{format:?} is not a format of the locations; they come as GeoJSON"),
            ));
        }
    }
    let (row, dataset) = state.edr.collection(&Caller::from(&principal), id).await?;
    if !matches!(dataset.space, basin_edr::Space::Series) {
        return Err(EdrError::NotSupported(
            "only time series collections have locations; ask a grid or mesh by position"
                .to_owned(),
        )
        .into());
    }
    let temporal = basin_edr::extent::temporal(&dataset.time).map(|temporal| {
        format!(
            "{}/{}",
            basin_edr::covjson::iso_time(temporal.start),
            basin_edr::covjson::iso_time(temporal.end)
        )
    });
    let href = format!(
        "{}/collections/{}/locations/{LOCATION_ID}",
        edr_base(&base),
        row.id
    );
    let names: Vec<&str> = dataset
        .items
        .iter()
        .map(|item| item.name.as_str())
        .collect();
    let body = serde_json::json!({
        "type": "FeatureCollection",
        "features": [{
            "type": "Feature",
            "id": LOCATION_ID,
            "geometry": null,
            "properties": {
                "name": row.name,
                "datetime": temporal,
                "parameter-name": names,
                "edrqueryendpoint": href,
            }
        }]
    });
    let mut response = body.to_string().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(basin_edr::tabular::GEOJSON_MEDIA_TYPE),
    );
    Ok(response)
}

/// Query of a location query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct LocationParams {
    /// An instant, `start/end`, `../end` or `start/..` (RFC 3339).
    datetime: Option<String>,
    /// Comma-separated parameter (item) names; every parameter when absent.
    #[serde(rename = "parameter-name")]
    #[param(rename = "parameter-name")]
    parameter_name: Option<String>,
    /// `CoverageJSON` (the default), `GeoJSON` or `CSV`.
    f: Option<String>,
}

/// The values of a time series collection's location (`series`) at the selected steps. 204
/// when no step is in `datetime`.
#[utoipa::path(get, path = "/api/edr/collections/{collectionId}/locations/{locationId}", tag = "edr",
    params(("collectionId" = uuid::Uuid, Path, description = "the dataset id"),
        ("locationId" = String, Path, description = "`series`"), LocationParams),
    responses((status = 200, description = "CoverageJSON, GeoJSON or CSV",
            content((String = "application/prs.coverage+json"), (String = "application/geo+json"), (String = "text/csv"))),
        (status = 204, description = "no step in datetime"),
        (status = 400), (status = 401), (status = 403), (status = 404), (status = 413),
        (status = 422)))]
async fn location(
    State(state): State<EdrState>,
    principal: Principal,
    Path((id, location)): Path<(DatasetId, String)>,
    Query(params): Query<LocationParams>,
) -> Result<Response, ApiError> {
    let format = OutputFormat::parse(params.f.as_deref())?;
    let caller = Caller::from(&principal);
    if location != LOCATION_ID {
        // Known to the caller only once it may read the collection.
        state.edr.collection(&caller, id).await?;
        return Err(ApiError::NotFound(format!(
            "the collection has no location {location:?}; its one location is {LOCATION_ID}"
        )));
    }
    let query = SeriesQuery::parse(params.datetime.as_deref(), params.parameter_name.as_deref())?;
    let answer = state
        .edr
        .answer(&caller, id, move |catalogue, dataset, file, limits| {
            query.answer(catalogue, dataset, file, limits)
        })
        .await;
    respond(answer, format)
}

async fn region_answer(
    state: &EdrState,
    caller: &Caller,
    id: DatasetId,
    mut query: AreaQuery,
    format: OutputFormat,
) -> Result<Response, ApiError> {
    // GeoJSON and CSV positions follow the query's system, so a grid answers as cells there.
    query.cells_only = format != OutputFormat::CoverageJson;
    let answer = state
        .edr
        .answer(caller, id, move |catalogue, dataset, file, limits| {
            query.answer(catalogue, dataset, file, limits)
        })
        .await;
    respond(answer, format)
}

/// The formats a query answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputFormat {
    CoverageJson,
    GeoJson,
    Csv,
}

impl OutputFormat {
    fn parse(f: Option<&str>) -> Result<Self, ApiError> {
        let Some(format) = f else {
            return Ok(Self::CoverageJson);
        };
        match format.to_ascii_lowercase().as_str() {
            "coveragejson" | "covjson" => Ok(Self::CoverageJson),
            "geojson" => Ok(Self::GeoJson),
            "csv" => Ok(Self::Csv),
            _ => Err(ApiError::field(
                "f",
                format!(
                    "{format:?} is not an output format of this query; it answers in {}",
                    model::OUTPUT_FORMATS.join(", ")
                ),
            )),
        }
    }
}

/// The answer in `format`, 204 for no data.
fn respond(
    answer: Result<Answer, EdrServiceError>,
    format: OutputFormat,
) -> Result<Response, ApiError> {
    let answer = match answer {
        Ok(answer) => answer,
        Err(EdrServiceError::Query(EdrError::NoData(_))) => {
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
        Err(error) => return Err(error.into()),
    };
    let (body, media_type) = match format {
        OutputFormat::CoverageJson => (
            basin_edr::covjson::write_answer(&answer),
            basin_edr::covjson::MEDIA_TYPE,
        ),
        OutputFormat::GeoJson => (
            basin_edr::tabular::geojson(&answer),
            basin_edr::tabular::GEOJSON_MEDIA_TYPE,
        ),
        OutputFormat::Csv => (
            basin_edr::tabular::csv(&answer),
            basin_edr::tabular::CSV_MEDIA_TYPE,
        ),
    };
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    Ok(response)
}
