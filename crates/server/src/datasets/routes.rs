//! Dataset endpoints (docs/datasets.md). HTTP only: rules live in `service.rs`.

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::auth::Principal;
use crate::datasets::model::{DatasetDto, MoveDatasetRequest, UpdateDatasetRequest};
use crate::datasets::service::{DatasetError, DatasetService};
use crate::db::SortValue;
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, METADATA};
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{Cursor, CursorPage, CursorRequest, SortKind};
use crate::ids::{DatasetId, ProjectId};
use crate::projects::access::Capability;
use crate::projects::service::ProjectService;
use crate::public_base::PublicBase;
use basin_blob::BlobPath;

/// What the dataset endpoints need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct DatasetsState {
    /// Dataset rules.
    pub(crate) datasets: crate::datasets::service::DatasetService,
    /// Page sizes.
    pub(crate) page_limits: crate::http::paging::PageLimits,
    /// Signed read URLs.
    pub(crate) blob_urls: crate::blob_urls::BlobUrls,
    /// Time, for URL expiry.
    pub(crate) clock: std::sync::Arc<dyn crate::clock::Clock>,
}

/// Dataset routes.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    DatasetsState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
    crate::blob_urls::BlobUrls: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(get_dataset, delete_dataset))
        .routes(routes!(update_dataset))
        .routes(routes!(list_datasets))
        .routes(routes!(move_dataset))
        .routes(routes!(delete_dataset_in_project))
        .routes(routes!(get_raw_dataset))
        .layer(from_fn_with_state(METADATA, api_version::enforce))
}

impl From<DatasetError> for ApiError {
    fn from(error: DatasetError) -> Self {
        match error {
            DatasetError::Invalid { field, message } => ApiError::field(field, message),
            DatasetError::NotFound => {
                ApiError::NotFound("The dataset does not exist or is not visible to you.".into())
            }
            DatasetError::Project(error) => error.into(),
            DatasetError::InRecycleBin => {
                ApiError::NotFound("The dataset does not exist or is not visible to you.".into())
            }
            DatasetError::Stale => ApiError::Conflict {
                kind: "row-version-conflict",
                detail: "The dataset was changed since it was read (rowVersion is stale); read it again.".into(),
            },
            DatasetError::Store(error) => error.into(),
        }
    }
}

/// A dataset record.
#[utoipa::path(get, path = "/api/metadata/dataset/{id}", tag = "datasets",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = DatasetDto), (status = 404)))]
async fn get_dataset(
    State(state): State<DatasetsState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
) -> ApiResult<Json<DatasetDto>> {
    let row = state.datasets.get(&Caller::from(&principal), id).await?;
    Ok(Json(DatasetDto::from(&row)))
}

/// Change a dataset's name, description, metadata, properties or tags.
#[utoipa::path(put, path = "/api/metadata/project/{projectId}/dataset", tag = "datasets",
    params(("projectId" = uuid::Uuid, Path)), request_body = UpdateDatasetRequest,
    responses((status = 200, body = DatasetDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn update_dataset(
    State(state): State<DatasetsState>,
    principal: Principal,
    Path(project): Path<ProjectId>,
    body: JsonBody<UpdateDatasetRequest>,
) -> ApiResult<Json<DatasetDto>> {
    let caller = Caller::from(&principal);
    state
        .datasets
        .projects()
        .authorize(&caller, project, Capability::UpdateContent)
        .await?;
    let request = body.read().await?;
    let name = request
        .name
        .as_deref()
        .map(DatasetService::parse_name)
        .transpose()?;
    let description = request
        .description
        .as_deref()
        .map(|text| ProjectService::parse_description(Some(text)))
        .transpose()?;
    let metadata = request
        .metadata
        .map(|value| ProjectService::parse_object("metadata", Some(value)))
        .transpose()?;
    let properties = request
        .properties
        .map(|value| ProjectService::parse_object("properties", Some(value)))
        .transpose()?;
    let tags = request
        .tags
        .as_deref()
        .map(|tags| state.datasets.parse_tags(tags))
        .transpose()?;
    let expected = ProjectService::parse_row_version(request.row_version.as_deref())?;
    let row = state
        .datasets
        .update(
            &caller,
            project,
            request.id,
            move |row| {
                if let Some(name) = name {
                    row.name = name;
                }
                if let Some(description) = description {
                    row.description = description.into_string();
                }
                if let Some(metadata) = metadata {
                    row.metadata = metadata;
                }
                if let Some(properties) = properties {
                    row.properties = properties;
                }
                if let Some(tags) = tags {
                    row.tags = tags;
                }
            },
            expected,
        )
        .await?;
    Ok(Json(DatasetDto::from(&row)))
}

/// Query of the dataset list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct DatasetListQuery {
    /// Cursor from the previous page.
    cursor: Option<String>,
    /// Page size (default: the largest page, so that clients that do not page get everything
    /// up to it).
    limit: Option<u32>,
    /// Case-insensitive prefix of the name, as `namePrefix` of the project lists.
    name_prefix: Option<String>,
}

/// Datasets placed directly in the project, by name (`{"data": [...], "cursor": ...}`),
/// optionally only those whose name starts with `namePrefix`.
#[utoipa::path(get, path = "/api/metadata/project/{id}/dataset/list", tag = "datasets",
    params(("id" = uuid::Uuid, Path), DatasetListQuery),
    responses((status = 200, body = CursorPage<DatasetDto>), (status = 403), (status = 404)))]
async fn list_datasets(
    State(state): State<DatasetsState>,
    principal: Principal,
    Path(project): Path<ProjectId>,
    Query(query): Query<DatasetListQuery>,
) -> ApiResult<Json<CursorPage<DatasetDto>>> {
    let tag = format!("datasets@{project}");
    let limit = Some(query.limit.unwrap_or(state.page_limits.max));
    let request = CursorRequest::parse(query.cursor.as_deref(), limit, &tag, state.page_limits)?;
    let after = request
        .after
        .as_ref()
        .map(|cursor| cursor.position(SortKind::Text))
        .transpose()?;
    let rows = state
        .datasets
        .list(
            &Caller::from(&principal),
            project,
            query
                .name_prefix
                .as_deref()
                .filter(|prefix| !prefix.is_empty()),
            after,
            request.fetch_count(),
        )
        .await?;
    Ok(Json(CursorPage::from_rows(
        rows,
        &request,
        |row| Cursor::at(&tag, SortValue::Text(row.name.clone()), row.id.as_uuid()),
        |row| DatasetDto::from(&row),
    )))
}

/// Move a dataset to another project.
#[utoipa::path(post, path = "/api/metadata/dataset/{id}/move", tag = "datasets",
    params(("id" = uuid::Uuid, Path)), request_body = MoveDatasetRequest,
    responses((status = 200, body = DatasetDto), (status = 400), (status = 403), (status = 404)))]
async fn move_dataset(
    State(state): State<DatasetsState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    body: JsonBody<MoveDatasetRequest>,
) -> ApiResult<Json<DatasetDto>> {
    let caller = Caller::from(&principal);
    state
        .datasets
        .authorize(&caller, id, Capability::DeleteContent)
        .await?;
    let request = body.read().await?;
    let row = state
        .datasets
        .move_to(&caller, id, request.target_project_id)
        .await?;
    Ok(Json(DatasetDto::from(&row)))
}

/// Move a dataset to the recycle bin.
#[utoipa::path(delete, path = "/api/metadata/dataset/{id}", tag = "datasets",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn delete_dataset(
    State(state): State<DatasetsState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
) -> ApiResult<StatusCode> {
    state
        .datasets
        .delete(&Caller::from(&principal), None, id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Move a dataset of the project to the recycle bin.
#[utoipa::path(delete, path = "/api/project/{projectId}/dataset/{id}", tag = "datasets",
    params(("projectId" = uuid::Uuid, Path), ("id" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn delete_dataset_in_project(
    State(state): State<DatasetsState>,
    principal: Principal,
    Path((project, id)): Path<(ProjectId, DatasetId)>,
) -> ApiResult<StatusCode> {
    state
        .datasets
        .delete(&Caller::from(&principal), Some(project), id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `{"data": url}`.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct ReadUrlDto {
    /// A signed, time-limited URL to read the dataset's content (Range / x-ms-range give 206).
    pub(crate) data: String,
}

/// A signed read URL for the dataset's content (needs `canReadContent`).
#[utoipa::path(get, path = "/api/raw/dataset/{id}", tag = "datasets",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = ReadUrlDto), (status = 403), (status = 404)))]
async fn get_raw_dataset(
    State(state): State<DatasetsState>,
    principal: Principal,
    base: PublicBase,
    Path(id): Path<DatasetId>,
) -> ApiResult<Json<ReadUrlDto>> {
    let row = state
        .datasets
        .readable(&Caller::from(&principal), id)
        .await?;
    let path = BlobPath::parse_key(&row.data_path).map_err(|error| {
        ApiError::Internal(anyhow::anyhow!("dataset {id} has a bad data path: {error}"))
    })?;
    Ok(Json(ReadUrlDto {
        data: state.blob_urls.read_url(&base, &path, state.clock.now()),
    }))
}
