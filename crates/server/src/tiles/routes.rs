//! Tile endpoints (docs/tiles.md): tiling metadata, WMTS
//! capabilities and GetTile, scheme tiles, the empty tile, and vector tiles. HTTP only: the
//! rules live in `service.rs`.

use axum::extract::{FromRef, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use basin_tiles::encode::OutputType;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{Caller, Principal};
use crate::datasets::model::{DatasetDto, DatasetRow};
use crate::error::ApiError;
use crate::http::api_version::{self, TILES};
use crate::http::etag::matches_etag;
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::ids::DatasetId;
use crate::public_base::PublicBase;
use crate::tiles::capabilities;
use crate::tiles::definition::DefineTilesRequest;
use crate::tiles::model::{SchemeDto, TilingMetadataDto};
use crate::tiles::service::{RenderedTile, TileAddress, TileError, TileService};

/// The header naming the dataset's project (docs/tiles.md#request-headers).
const PROJECT_HEADER: &str = "svc-project-id";
/// The header naming the dataset (docs/tiles.md#request-headers).
const DATASET_HEADER: &str = "svc-dataset-id";

/// What the tile endpoints need.
#[derive(Debug, Clone)]
pub(crate) struct TilesState {
    /// The rules.
    pub(crate) tiles: TileService,
}

/// Tile routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    TilesState: FromRef<S>,
    crate::blob_urls::BlobUrls: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(metadata))
        .routes(routes!(wmts))
        .routes(routes!(wmts100))
        .routes(routes!(wmts100_tile))
        .routes(routes!(wmts_capabilities_xml))
        .routes(routes!(scheme_tile))
        .routes(routes!(empty_tile))
        .routes(routes!(define_tiles))
        .routes(routes!(vector_tile))
        .layer(from_fn_with_state(TILES, api_version::enforce))
}

impl From<TileError> for ApiError {
    fn from(error: TileError) -> Self {
        let message = error.to_string();
        match error {
            TileError::Dataset(error) => error.into(),
            TileError::NotTileable(_) => ApiError::Unprocessable {
                kind: "not-tileable",
                detail: message,
            },
            TileError::Unreadable(_) => ApiError::Unprocessable {
                kind: "dataset-unreadable",
                detail: message,
            },
            TileError::UnknownScheme(_) | TileError::OutsideMatrix(_) => {
                ApiError::NotFound(message)
            }
            TileError::Invalid { field, .. } => ApiError::field(field, message),
            TileError::Schemes(errors) => ApiError::Validation {
                detail: message,
                errors,
            },
            TileError::SourceGone => ApiError::NotFound(message),
            TileError::TooManyStoredTiles { .. } => ApiError::Unprocessable {
                kind: "too-many-stored-tiles",
                detail: message,
            },
            TileError::Internal(error) => ApiError::Internal(error),
        }
    }
}

/// Checks the request headers (docs/tiles.md#request-headers) against the dataset:
/// `svc-dataset-id`, when sent, must be the dataset of the path and `svc-project-id`, when
/// sent, its project.
fn check_headers(headers: &HeaderMap, row: &DatasetRow) -> Result<(), ApiError> {
    let named = |name: &str| -> Result<Option<uuid::Uuid>, ApiError> {
        let Some(value) = headers.get(name) else {
            return Ok(None);
        };
        let text = value
            .to_str()
            .map_err(|_| ApiError::field(name.to_owned(), format!("{name} must be a uuid")))?;
        text.trim()
            .parse::<uuid::Uuid>()
            .map(Some)
            .map_err(|_| ApiError::field(name.to_owned(), format!("{name} must be a uuid")))
    };
    if let Some(dataset) = named(DATASET_HEADER)?
        && dataset != row.id.as_uuid()
    {
        return Err(ApiError::field(
            DATASET_HEADER,
            format!(
                "{DATASET_HEADER} names {dataset}, but the path names dataset {}",
                row.id.as_uuid()
            ),
        ));
    }
    if let Some(project) = named(PROJECT_HEADER)?
        && project != row.project_id.as_uuid()
    {
        return Err(ApiError::field(
            PROJECT_HEADER,
            format!(
                "{PROJECT_HEADER} names {project}, but the dataset is in project {}",
                row.project_id.as_uuid()
            ),
        ));
    }
    Ok(())
}

/// `<base>/api/tiles/dataset/<id>`.
fn tiles_base(base: &PublicBase, id: DatasetId) -> String {
    format!(
        "{}/api/tiles/dataset/{}",
        base.as_str().trim_end_matches('/'),
        id
    )
}

/// The tiling metadata of a dataset: its extents, schemes, times and layers.
#[utoipa::path(get, path = "/api/tiles/dataset/{id}/metadata", tag = "tiles",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = TilingMetadataDto), (status = 400), (status = 401),
        (status = 403), (status = 404), (status = 422)))]
async fn metadata(
    State(state): State<TilesState>,
    principal: Principal,
    base: PublicBase,
    headers: HeaderMap,
    Path(id): Path<DatasetId>,
) -> Result<Json<TilingMetadataDto>, ApiError> {
    let (row, tileable) = state.tiles.tileable(&Caller::from(&principal), id).await?;
    check_headers(&headers, &row)?;
    let description = &tileable.description;
    let base = tiles_base(&base, id);
    let has_layers = description.layers > 1;
    Ok(Json(TilingMetadataDto {
        native_extent: description.native_extent.into(),
        wgs84_extent: description.wgs84_extent.map(Into::into),
        tiling_schemes: tileable
            .schemes
            .iter()
            .map(|scheme| SchemeDto::new(scheme, has_layers, &base))
            .collect(),
        time_stamps: description
            .times
            .iter()
            .map(|time| crate::http::time::WireTime(time.and_utc()))
            .collect(),
        layer_ids: (0..description.layers).collect(),
        tile_storage_size_kb: state.tiles.stored_kilobytes(&tileable).await,
    }))
}

/// Dataset, scheme, matrix, row and column of a tile path (row and column as text, so a
/// malformed one gets a message naming it).
type TilePath = Path<(DatasetId, String, String, String, String)>;

/// Defines tiling schemes over a dataset: creates a dataset of type `tiles` (format `.tiles`)
/// in the same project whose tiles are drawn from this dataset with the given schemes. Needs
/// `canReadContent` on the dataset and `canCreateContent` on its project.
#[utoipa::path(post, path = "/api/tiles/dataset/{id}/tiles", tag = "tiles",
    params(("id" = uuid::Uuid, Path)),
    request_body = DefineTilesRequest,
    responses((status = 201, body = DatasetDto), (status = 400), (status = 401), (status = 403),
        (status = 404), (status = 422)))]
async fn define_tiles(
    State(state): State<TilesState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    body: JsonBody<DefineTilesRequest>,
) -> Result<(StatusCode, Json<DatasetDto>), ApiError> {
    let caller = Caller::from(&principal);
    state.tiles.authorize_define(&caller, id).await?;
    let request = body.read().await?;
    let row = state.tiles.define(&caller, id, request).await?;
    Ok((StatusCode::CREATED, Json(DatasetDto::from(&row))))
}

/// A Mapbox Vector Tile 2.1 of a feature collection (GeoJSON, Shapefile) or a mesh (one
/// polygon per element with its values of the first step), in WebMercatorQuad: one layer named
/// after the dataset, extent 4096, buffer 64, simplified per level. A tile without features is
/// empty (0 bytes). Documented as `.../{tileRow}.vector.pbf` (`openapi::PATHS_WITH_SUFFIX`).
#[utoipa::path(get, path = "/api/vectortiles/dataset/{id}/{zoom}/{tileCol}/{tileRow}",
    tag = "tiles",
    params(("id" = uuid::Uuid, Path), ("zoom" = u8, Path), ("tileCol" = u32, Path),
        ("tileRow" = u32, Path, description = "the row; the segment is `<tileRow>.vector.pbf`, e.g. `83.vector.pbf`"),
        ("If-None-Match" = Option<String>, Header, description = "an ETag of an earlier answer")),
    responses((status = 200, content_type = "application/vnd.mapbox-vector-tile"),
        (status = 304), (status = 400), (status = 401), (status = 403), (status = 404),
        (status = 422)))]
async fn vector_tile(
    State(state): State<TilesState>,
    principal: Principal,
    headers: HeaderMap,
    Path((id, zoom, tile_col, file)): Path<(DatasetId, String, String, String)>,
) -> Result<Response, ApiError> {
    let row = file
        .strip_suffix(".vector.pbf")
        .ok_or_else(|| ApiError::NotFound(format!("{file:?} is not <tileRow>.vector.pbf")))?;
    let zoom = zoom.trim().parse::<u8>().map_err(|_| {
        ApiError::InvalidPath(format!("zoom must be a level 0 to 24, not {zoom:?}"))
    })?;
    let (dataset, tile) = state
        .tiles
        .vector_tile(
            &Caller::from(&principal),
            id,
            zoom,
            tile_index("tileCol", &tile_col)?,
            tile_index("tileRow", row)?,
        )
        .await?;
    check_headers(&headers, &dataset)?;
    Ok(tile_response(
        &headers,
        &tile,
        state.tiles.max_age_seconds(),
    ))
}

/// Query of a scheme tile.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct TileQuery {
    /// Layer index (one of `layerIds`); 0 when absent.
    layer: Option<String>,
    /// One of `timeStamps` (or a step index); the first step when absent.
    time_step: Option<String>,
    /// Basin's addition: the encoding of this answer (`PNG`, `WEBP`, `RawData`,
    /// `BinnedData256`, in any case) instead of the scheme's `outputType`; `RawData` gives
    /// the exact values (32-bit little-endian floats, NaN for no data).
    output_type: Option<String>,
}

impl TileQuery {
    /// The tile at `matrix`, `row`, `col` (path text) with this query's layer and time.
    fn address(self, matrix: String, row: &str, col: &str) -> Result<TileAddress, ApiError> {
        Ok(TileAddress {
            matrix,
            row: tile_index("tileRow", row)?,
            col: tile_index("tileCol", col)?,
            layer: self.layer,
            time_step: self.time_step,
            output: output_type(self.output_type.as_deref())?,
        })
    }
}

/// A tile of a scheme: PNG (or the scheme's output type) of the dataset at `timeStep` and
/// `layer`. A tile without data is the scheme's empty tile; one outside the matrix is 404.
#[utoipa::path(get, path = "/api/tiles/dataset/{id}/scheme/{schemeId}/{tileMatrix}/{tileRow}/{tileCol}",
    tag = "tiles",
    params(("id" = uuid::Uuid, Path), ("schemeId" = String, Path), ("tileMatrix" = String, Path),
        ("tileRow" = u32, Path), ("tileCol" = u32, Path), TileQuery,
        ("If-None-Match" = Option<String>, Header, description = "an ETag of an earlier answer")),
    responses((status = 200, content_type = "image/png"), (status = 304), (status = 400),
        (status = 401), (status = 403), (status = 404), (status = 422)))]
async fn scheme_tile(
    State(state): State<TilesState>,
    principal: Principal,
    headers: HeaderMap,
    Path((id, scheme, matrix, tile_row, tile_col)): TilePath,
    Query(query): Query<TileQuery>,
) -> Result<Response, ApiError> {
    let address = query.address(matrix, &tile_row, &tile_col)?;
    serve_tile(&state, &principal, &headers, id, &scheme, &address).await
}

/// The same tiles under the `wmts100` path (docs/tiles.md#endpoints).
#[utoipa::path(get, path = "/api/tiles/dataset/{id}/wmts100/{schemeId}/{tileMatrix}/{tileRow}/{tileCol}",
    tag = "tiles",
    params(("id" = uuid::Uuid, Path), ("schemeId" = String, Path), ("tileMatrix" = String, Path),
        ("tileRow" = u32, Path), ("tileCol" = u32, Path), TileQuery),
    responses((status = 200, content_type = "image/png"), (status = 304), (status = 400),
        (status = 401), (status = 403), (status = 404), (status = 422)))]
async fn wmts100_tile(
    state: State<TilesState>,
    principal: Principal,
    headers: HeaderMap,
    path: TilePath,
    query: Query<TileQuery>,
) -> Result<Response, ApiError> {
    scheme_tile(state, principal, headers, path, query).await
}

/// The empty tile of a scheme: what every tile without data looks like, so clients can skip
/// tiles they know to be empty.
#[utoipa::path(get, path = "/api/tiles/dataset/{id}/scheme/{schemeId}/emptyTile", tag = "tiles",
    params(("id" = uuid::Uuid, Path), ("schemeId" = String, Path)),
    responses((status = 200, content_type = "image/png"), (status = 304), (status = 401),
        (status = 403), (status = 404), (status = 422)))]
async fn empty_tile(
    State(state): State<TilesState>,
    principal: Principal,
    headers: HeaderMap,
    Path((id, scheme)): Path<(DatasetId, String)>,
) -> Result<Response, ApiError> {
    let (row, tileable) = state.tiles.tileable(&Caller::from(&principal), id).await?;
    check_headers(&headers, &row)?;
    let scheme = tileable.scheme(&scheme).map_err(ApiError::from)?;
    let tile = state.tiles.empty_tile(scheme).await?;
    Ok(tile_response(
        &headers,
        &tile,
        state.tiles.max_age_seconds(),
    ))
}

/// WMTS 1.0.0 key-value requests: `REQUEST=GetCapabilities` (the default; XML when `Accept`
/// asks for `application/xml` or `text/xml`, JSON otherwise) and `REQUEST=GetTile` with
/// `LAYER`, `TILEMATRIXSET`, `TILEMATRIX`, `TILEROW`, `TILECOL`, `FORMAT`, `STYLE` and `TIME`.
/// Parameter names are matched in any case.
#[utoipa::path(get, path = "/api/tiles/dataset/{id}/wmts", tag = "tiles",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, content_type = "application/xml"), (status = 400), (status = 401),
        (status = 403), (status = 404), (status = 422)))]
async fn wmts(
    State(state): State<TilesState>,
    principal: Principal,
    base: PublicBase,
    headers: HeaderMap,
    Path(id): Path<DatasetId>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    wmts_kvp(&state, &principal, &base, &headers, id, query.as_deref()).await
}

/// The key-value WMTS endpoint under the `wmts100` name (docs/tiles.md#endpoints).
#[utoipa::path(get, path = "/api/tiles/dataset/{id}/wmts100", tag = "tiles",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, content_type = "application/xml"), (status = 400), (status = 401),
        (status = 403), (status = 404), (status = 422)))]
async fn wmts100(
    state: State<TilesState>,
    principal: Principal,
    base: PublicBase,
    headers: HeaderMap,
    id: Path<DatasetId>,
    query: RawQuery,
) -> Result<Response, ApiError> {
    wmts(state, principal, base, headers, id, query).await
}

async fn wmts_kvp(
    state: &TilesState,
    principal: &Principal,
    base: &PublicBase,
    headers: &HeaderMap,
    id: DatasetId,
    query: Option<&str>,
) -> Result<Response, ApiError> {
    let parameters = capabilities::KvpRequest::parse(query.unwrap_or_default())?;
    match parameters.request.as_str() {
        "getcapabilities" => {
            let (row, tileable) = state.tiles.tileable(&Caller::from(principal), id).await?;
            check_headers(headers, &row)?;
            let base = tiles_base(base, id);
            if wants_xml(headers) {
                Ok(xml_response(capabilities::xml(&row, &tileable, &base)?))
            } else {
                Ok(Json(capabilities::json(&row, &tileable, &base)).into_response())
            }
        }
        "gettile" => {
            let tile = parameters.tile()?;
            let (row, tileable) = state.tiles.tileable(&Caller::from(principal), id).await?;
            check_headers(headers, &row)?;
            tile.check(&tileable)?;
            let rendered = state
                .tiles
                .tile(&tileable, &tile.scheme, &tile.address)
                .await?;
            Ok(tile_response(
                headers,
                &rendered,
                state.tiles.max_age_seconds(),
            ))
        }
        other => Err(ApiError::field(
            "REQUEST",
            format!("REQUEST must be GetCapabilities or GetTile, not {other:?}"),
        )),
    }
}

/// The XML capabilities at their RESTful address (OGC 07-057r7, 10.1.1), for clients that
/// are given a URL and send no `Accept` (GDAL, QGIS): always XML.
#[utoipa::path(get, path = "/api/tiles/dataset/{id}/wmts100/1.0.0/WMTSCapabilities.xml",
    tag = "tiles", params(("id" = uuid::Uuid, Path)),
    responses((status = 200, content_type = "application/xml"), (status = 400), (status = 401),
        (status = 403), (status = 404), (status = 422)))]
async fn wmts_capabilities_xml(
    State(state): State<TilesState>,
    principal: Principal,
    base: PublicBase,
    headers: HeaderMap,
    Path(id): Path<DatasetId>,
) -> Result<Response, ApiError> {
    let (row, tileable) = state.tiles.tileable(&Caller::from(&principal), id).await?;
    check_headers(&headers, &row)?;
    let base = tiles_base(&base, id);
    Ok(xml_response(capabilities::xml(&row, &tileable, &base)?))
}

fn xml_response(document: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/xml"),
        )],
        document,
    )
        .into_response()
}

/// True when `Accept` prefers XML (`application/xml` or `text/xml`) to JSON: an XML type with
/// a quality above 0 and no JSON type (`application/json`, `*/*` does not count) with a higher
/// one. Without `Accept`, or with only `*/*`, the capabilities are JSON (docs/tiles.md#wmts).
fn wants_xml(headers: &HeaderMap) -> bool {
    let mut xml = 0.0_f32;
    let mut json = 0.0_f32;
    let ranges = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','));
    for range in ranges {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let quality = parts
            .filter_map(|parameter| parameter.trim().strip_prefix("q="))
            .find_map(|value| value.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        match media.as_str() {
            "application/xml" | "text/xml" => xml = xml.max(quality),
            "application/json" => json = json.max(quality),
            _ => {}
        }
    }
    xml > 0.0 && xml >= json
}

async fn serve_tile(
    state: &TilesState,
    principal: &Principal,
    headers: &HeaderMap,
    id: DatasetId,
    scheme: &str,
    address: &TileAddress,
) -> Result<Response, ApiError> {
    let (row, tileable) = state.tiles.tileable(&Caller::from(principal), id).await?;
    check_headers(headers, &row)?;
    let tile = state.tiles.tile(&tileable, scheme, address).await?;
    Ok(tile_response(headers, &tile, state.tiles.max_age_seconds()))
}

/// The `outputType` query of a tile: an encoding named in any case; absent or empty is the
/// scheme's own.
pub(crate) fn output_type(text: Option<&str>) -> Result<Option<OutputType>, ApiError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(name) => OutputType::parse(name).map(Some).ok_or_else(|| {
            ApiError::field(
                "outputType",
                format!("outputType must be PNG, WEBP, RawData or BinnedData256, not {name:?}"),
            )
        }),
    }
}

/// A tile row or column: a non-negative integer.
pub(crate) fn tile_index(name: &'static str, text: &str) -> Result<u32, ApiError> {
    text.trim().parse::<u32>().map_err(|_| {
        ApiError::InvalidPath(format!(
            "{name} must be a non-negative integer, not {text:?}"
        ))
    })
}

/// The tile with `ETag` and `Cache-Control`, or 304 when `If-None-Match` names it.
fn tile_response(headers: &HeaderMap, tile: &RenderedTile, max_age: u32) -> Response {
    let unchanged = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| matches_etag(value, &tile.etag));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(tile.media_type),
            )],
            tile.bytes.clone(),
        )
            .into_response()
    };
    if let Ok(etag) = HeaderValue::from_str(&tile.etag) {
        response.headers_mut().insert(header::ETAG, etag);
    }
    if let Ok(cache) = HeaderValue::from_str(&format!("private, max-age={max_age}")) {
        response.headers_mut().insert(header::CACHE_CONTROL, cache);
    }
    response.extensions_mut().insert(crate::telemetry::Routine);
    response
}
