//! Catalogue endpoints: `GET /api/conversion/reader/list`, `writer/list`, `reader/{name}` and
//! `writer/{name}`. HTTP only: the catalogue itself is `basin_formats::Catalogue`.

use std::sync::Arc;

use axum::extract::{FromRef, State};
use axum::middleware::from_fn_with_state;
use basin_formats::catalogue::{ReaderSpec, WriterSpec};
use basin_formats::{Catalogue, ParameterSpec};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, CONVERSION};
use crate::http::extract::{Json, Path, Query};
use crate::http::paging::DataList;

crate::wire_enum! {
    /// Which converters a list shows.
    pub(crate) enum ConverterFilter {
        /// Every converter.
        All,
        /// Converters of files stored as datasets: every converter Basin has.
        File,
        /// Converters of dedicated storages (time series, GIS and multidimensional databases),
        /// which Basin does not have: always empty.
        Dedicated,
    }
}

/// Catalogue routes.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Catalogue>: FromRef<S>,
    Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_readers))
        .routes(routes!(list_writers))
        .routes(routes!(get_reader))
        .routes(routes!(get_writer))
        .layer(from_fn_with_state(CONVERSION, api_version::enforce))
}

/// One parameter of a reader or writer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ParameterDto {
    /// Name (matched case-insensitively).
    name: &'static str,
    /// What it does.
    description: &'static str,
    /// `String`, `Integer`, `Double`, `Boolean` or `StringList`.
    data_type: &'static str,
    /// Whether a request must give it.
    required: bool,
    /// Value used when none is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    default_value: Option<&'static str>,
    /// The values accepted (any case); absent when any value of the type is.
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_values: Option<Vec<&'static str>>,
}

impl From<&ParameterSpec> for ParameterDto {
    fn from(spec: &ParameterSpec) -> Self {
        Self {
            name: spec.name,
            description: spec.description,
            data_type: spec.data_type.wire_name(),
            required: spec.required,
            default_value: spec.default_value,
            allowed_values: (!spec.allowed_values.is_empty()).then(|| spec.allowed_values.to_vec()),
        }
    }
}

/// A reader.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReaderDto {
    /// Name, e.g. `GeoTiffReader`.
    name: &'static str,
    /// What it reads.
    description: &'static str,
    /// The dataset format it reads, e.g. `.tif`.
    dataset_format: &'static str,
    /// Its parameters.
    parameters: Vec<ParameterDto>,
    /// The writers it can feed.
    writers: Vec<&'static str>,
}

/// A writer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WriterDto {
    /// Name, e.g. `GeoTiffWriter`.
    name: &'static str,
    /// What it writes.
    description: &'static str,
    /// The dataset format it writes, e.g. `.tif`.
    dataset_format: &'static str,
    /// Its parameters.
    parameters: Vec<ParameterDto>,
}

fn reader_dto(catalogue: &Catalogue, spec: &ReaderSpec) -> ReaderDto {
    ReaderDto {
        name: spec.name,
        description: spec.description,
        dataset_format: spec.dataset_format,
        parameters: spec.parameters.iter().map(ParameterDto::from).collect(),
        writers: catalogue.writers_for(spec),
    }
}

fn writer_dto(spec: &WriterSpec) -> WriterDto {
    WriterDto {
        name: spec.name,
        description: spec.description,
        dataset_format: spec.dataset_format,
        parameters: spec.parameters.iter().map(ParameterDto::from).collect(),
    }
}

/// Query of the lists.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// `All` (default), `File` or `Dedicated`.
    #[param(value_type = Option<String>)]
    filter: Option<String>,
}

fn parse_filter(raw: Option<&str>) -> ApiResult<ConverterFilter> {
    match raw.map(str::trim).filter(|raw| !raw.is_empty()) {
        None => Ok(ConverterFilter::All),
        Some(raw) => raw
            .parse()
            .map_err(|error| ApiError::field("filter", format!("filter: {error}"))),
    }
}

/// Every reader with its parameters and the writers it can feed.
#[utoipa::path(get, path = "/api/conversion/reader/list", tag = "conversion",
    params(ListQuery),
    responses((status = 200, body = inline(DataList<ReaderDto>)), (status = 400), (status = 401)))]
async fn list_readers(
    State(catalogue): State<Arc<Catalogue>>,
    _principal: Principal,
    Query(query): Query<ListQuery>,
) -> ApiResult<Json<DataList<ReaderDto>>> {
    let data = match parse_filter(query.filter.as_deref())? {
        ConverterFilter::Dedicated => Vec::new(),
        ConverterFilter::All | ConverterFilter::File => catalogue
            .readers()
            .map(|reader| reader_dto(&catalogue, reader.spec()))
            .collect(),
    };
    Ok(Json(DataList { data }))
}

/// Every writer with its parameters.
#[utoipa::path(get, path = "/api/conversion/writer/list", tag = "conversion",
    params(ListQuery),
    responses((status = 200, body = inline(DataList<WriterDto>)), (status = 400), (status = 401)))]
async fn list_writers(
    State(catalogue): State<Arc<Catalogue>>,
    _principal: Principal,
    Query(query): Query<ListQuery>,
) -> ApiResult<Json<DataList<WriterDto>>> {
    let data = match parse_filter(query.filter.as_deref())? {
        ConverterFilter::Dedicated => Vec::new(),
        ConverterFilter::All | ConverterFilter::File => catalogue
            .writers()
            .map(|writer| writer_dto(writer.spec()))
            .collect(),
    };
    Ok(Json(DataList { data }))
}

/// One reader (name matched case-insensitively).
#[utoipa::path(get, path = "/api/conversion/reader/{name}", tag = "conversion",
    params(("name" = String, Path, description = "Reader name, e.g. GeoTiffReader")),
    responses((status = 200, body = ReaderDto), (status = 401), (status = 404)))]
async fn get_reader(
    State(catalogue): State<Arc<Catalogue>>,
    _principal: Principal,
    Path(name): Path<String>,
) -> ApiResult<Json<ReaderDto>> {
    let reader = catalogue
        .reader(&name)
        .ok_or_else(|| ApiError::NotFound(format!("There is no reader named {name:?}.")))?;
    Ok(Json(reader_dto(&catalogue, reader.spec())))
}

/// One writer (name matched case-insensitively).
#[utoipa::path(get, path = "/api/conversion/writer/{name}", tag = "conversion",
    params(("name" = String, Path, description = "Writer name, e.g. VtuWriter")),
    responses((status = 200, body = WriterDto), (status = 401), (status = 404)))]
async fn get_writer(
    State(catalogue): State<Arc<Catalogue>>,
    _principal: Principal,
    Path(name): Path<String>,
) -> ApiResult<Json<WriterDto>> {
    let writer = catalogue
        .writer(&name)
        .ok_or_else(|| ApiError::NotFound(format!("There is no writer named {name:?}.")))?;
    Ok(Json(writer_dto(writer.spec())))
}
