//! Transfer endpoints: upload URLs and direct uploads; the operations that start transfers
//! (`.../convert`, `upload-convert`, `download-convert`, `update`, `append`); and reading,
//! listing and cancelling transfers. HTTP only: rules live in `service.rs`, `start.rs` and
//! `records.rs`.

use axum::extract::{FromRef, State};
use axum::middleware::from_fn_with_state;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{Caller, Principal};
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, ApiVersion, CONVERSION, METADATA};
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{DataList, OffsetPage, OffsetRequest};
use crate::ids::{DatasetId, ProjectId, TransferId};
use crate::public_base::PublicBase;
use crate::transfers::model::{
    TransferDto, TransferRequest, TransferRow, TransferStatus, TransferSummaryDto,
};
use crate::transfers::multipart::{is_file_part, multipart_error, part_body};
use crate::transfers::records::ListFilter;
use crate::transfers::service::{DirectFile, TransferError, UploadFileName};
use crate::transfers::start::Starter;

/// What the transfer endpoints need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct TransfersState {
    /// Upload rules.
    pub(crate) transfers: crate::transfers::service::TransferService,
    /// Datasets made by direct uploads.
    pub(crate) datasets: crate::datasets::service::DatasetService,
    /// Upload limits.
    pub(crate) blob_limits: crate::config::BlobLimits,
    /// Page sizes of the transfer list.
    pub(crate) page_limits: crate::http::paging::PageLimits,
    /// Destination folders of staged imports.
    pub(crate) hierarchy: crate::hierarchy::service::HierarchyService,
}

/// Transfer routes with their OpenAPI description, but for the direct upload
/// ([`upload_router`]).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    TransfersState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
    crate::blob_urls::BlobUrls: FromRef<S>,
{
    let conversion = OpenApiRouter::new()
        .routes(routes!(get_upload_url))
        .routes(routes!(upload_convert))
        .routes(routes!(legacy_upload_convert))
        .routes(routes!(get_transfer))
        .routes(routes!(list_transfers))
        .routes(routes!(list_summaries))
        .routes(routes!(legacy_list_summaries))
        .routes(routes!(cancel_transfer))
        .routes(routes!(import_staged))
        .layer(from_fn_with_state(CONVERSION, api_version::enforce));
    let metadata = OpenApiRouter::new()
        .routes(routes!(convert))
        .routes(routes!(download_convert))
        .routes(routes!(update_from_upload))
        .routes(routes!(update_from_dataset))
        .routes(routes!(append))
        .layer(from_fn_with_state(METADATA, api_version::enforce));
    conversion.merge(metadata)
}

/// The direct upload, kept apart so that the request timeout does not apply to it: a 64 MiB
/// file over a slow line takes minutes, so a body that stalls for
/// `limits.upload_idle_timeout_ms` is cut off instead. It streams to storage and stops at its
/// own limit (`limits.direct_upload_bytes_max`), so the JSON body limit must not cut it first.
pub(crate) fn upload_router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    TransfersState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
    crate::blob_urls::BlobUrls: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(upload_file))
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(from_fn_with_state(CONVERSION, api_version::enforce))
}

impl From<TransferError> for ApiError {
    fn from(error: TransferError) -> Self {
        match error {
            TransferError::NoTenant => ApiError::Forbidden(
                "Uploads belong to a tenant; the caller acts in none it is a member of.".into(),
            ),
            TransferError::InvalidFileName(error) => {
                ApiError::field("fileName", format!("fileName: {error}"))
            }
            TransferError::NotAnUploadUrl(error) => {
                ApiError::field("uploadUrl", format!("uploadUrl: {error}"))
            }
            TransferError::UploadNotFound => {
                ApiError::NotFound("Nothing was uploaded to this URL by your tenant.".into())
            }
            TransferError::Blob(error) => ApiError::Internal(error.into()),
            TransferError::TooLarge { limit_bytes } => ApiError::PayloadTooLarge { limit_bytes },
            TransferError::Incomplete => {
                ApiError::InvalidBody("The file could not be read completely.".into())
            }
            TransferError::Stalled => ApiError::BodyStalled,
            TransferError::Dataset(error) => error.into(),
            TransferError::Invalid(invalid) => ApiError::field(
                invalid.field.clone(),
                format!("{}: {}", invalid.field, invalid.message),
            ),
            TransferError::NotFound => ApiError::NotFound("There is no such transfer.".into()),
            TransferError::Ended => ApiError::Conflict {
                kind: "transfer-ended",
                detail: "The transfer has ended already; there is nothing to cancel.".into(),
            },
            TransferError::Store(error) => error.into(),
            TransferError::Internal(error) => ApiError::Internal(error),
        }
    }
}

/// Query of `upload-url`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct UploadUrlQuery {
    /// File name kept as the last segment of the blob path (one segment, no `/`).
    file_name: Option<String>,
}

/// A single value wrapped as `{"data": ...}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct UploadUrlDto {
    /// The blob URL with its signature (`sv`, `se`, `sr`, `sp`, `sig`).
    pub(crate) data: String,
}

/// A signed URL to upload one file with any Azure Blob client: `PUT` with
/// `x-ms-blob-type: BlockBlob`, or staged blocks and a block list. Valid for
/// `blob.upload_url_ttl_seconds`; the path is fresh and belongs to the caller's tenant.
#[utoipa::path(get, path = "/api/conversion/transfer/upload-url", tag = "transfers",
    params(UploadUrlQuery),
    responses((status = 200, body = UploadUrlDto), (status = 400), (status = 401), (status = 403)))]
async fn get_upload_url(
    State(state): State<TransfersState>,
    principal: Principal,
    base: PublicBase,
    Query(query): Query<UploadUrlQuery>,
) -> ApiResult<Json<UploadUrlDto>> {
    let file_name = query
        .file_name
        .as_deref()
        .filter(|name| !name.is_empty())
        .map(UploadFileName::parse)
        .transpose()?;
    let url = state
        .transfers
        .upload_url(&principal, file_name.as_ref(), &base)?;
    Ok(Json(UploadUrlDto { data: url }))
}

/// Query of the direct upload.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct FileUploadQuery {
    /// Dataset name; defaults to the file name of the uploaded part.
    file_name: Option<String>,
}

/// The form of a direct upload: one file part (named `file`, or any part with a file name);
/// other parts are ignored.
#[derive(utoipa::ToSchema)]
#[allow(
    dead_code,
    reason = "describes the multipart body in the OpenAPI document only"
)]
struct FileUploadForm {
    /// The file's bytes; the part's file name names the dataset unless `fileName` does.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// Upload a small file directly (multipart/form-data, one file part) and create its dataset in
/// the project. Files over `limits.direct_upload_bytes_max` are 413; use an upload URL.
#[utoipa::path(post, path = "/api/conversion/project/{id}/file/upload", tag = "transfers",
    params(("id" = uuid::Uuid, Path), FileUploadQuery),
    request_body(content = inline(FileUploadForm), content_type = "multipart/form-data"),
    responses((status = 201, body = crate::datasets::model::DatasetDto), (status = 400), (status = 403), (status = 404), (status = 413)))]
async fn upload_file(
    State(state): State<TransfersState>,
    principal: Principal,
    Path(project): Path<crate::ids::ProjectId>,
    Query(query): Query<FileUploadQuery>,
    request: axum::extract::Request,
) -> ApiResult<axum::response::Response> {
    use axum::extract::FromRequest;
    use axum::response::IntoResponse;
    let caller = Caller::from(&principal);
    // Who may upload is decided before the form is read (its content type included).
    state.datasets.creatable(&caller, project).await?;
    let multipart = axum::extract::Multipart::from_request(request, &()).await;
    let mut multipart = multipart.map_err(|rejection| {
        ApiError::InvalidBody(format!(
            "Send the file as multipart/form-data: {}",
            rejection.body_text()
        ))
    })?;
    let limit = state.blob_limits.direct_upload_bytes_max;
    let field = loop {
        match multipart.next_field().await {
            Ok(Some(field)) if is_file_part(&field) => break field,
            Ok(Some(_)) => {}
            Ok(None) => return Err(ApiError::field("file", "the form holds no file part")),
            Err(error) => return Err(multipart_error(&error, limit)),
        }
    };
    let raw_name = query
        .file_name
        .clone()
        .filter(|name| !name.is_empty())
        .or_else(|| field.file_name().map(str::to_owned))
        .ok_or_else(|| {
            ApiError::field(
                "fileName",
                "name the file (fileName or the part's file name)",
            )
        })?;
    let name = UploadFileName::parse(&raw_name)?;
    // Reads answer with the part's media type; one that is not a valid header value is dropped.
    let content_type = field
        .content_type()
        .filter(|value| axum::http::HeaderValue::from_str(value).is_ok())
        .map(str::to_owned);
    let (feed, body) = part_body(field, state.blob_limits.upload_idle_timeout);
    let store = state.transfers.upload_file(
        &state.datasets,
        &caller,
        project,
        DirectFile {
            name: &name,
            content_type,
            body,
        },
        limit,
    );
    let ((), stored) = tokio::join!(feed, store);
    let row = stored?;
    Ok((
        axum::http::StatusCode::CREATED,
        Json(crate::datasets::model::DatasetDto::from(&row)),
    )
        .into_response())
}

// ---- starting transfers ----

/// Who starts a transfer, with the request's `api-version` (or the group's default).
fn starter(
    principal: &Principal,
    version: Option<axum::Extension<ApiVersion>>,
    default: u16,
) -> Starter<'_> {
    Starter {
        principal,
        api_version: version.map_or(default, |axum::Extension(ApiVersion(version))| version),
    }
}

fn summary(row: &TransferRow) -> Json<TransferSummaryDto> {
    Json(TransferSummaryDto::from(row))
}

/// Converts a dataset into a new dataset (in the same project unless `outputProjectId`
/// names another). Requires `outputDatasetData.name` and `writerName`; the reader is
/// inferred from the stored format when omitted.
#[utoipa::path(post, path = "/api/metadata/dataset/{id}/convert", tag = "transfers",
    params(("id" = uuid::Uuid, Path)),
    request_body = TransferRequest,
    responses((status = 200, body = TransferSummaryDto), (status = 400), (status = 403), (status = 404)))]
async fn convert(
    State(state): State<TransfersState>,
    principal: Principal,
    version: Option<axum::Extension<ApiVersion>>,
    Path(dataset): Path<DatasetId>,
    body: JsonBody<TransferRequest>,
) -> ApiResult<Json<TransferSummaryDto>> {
    let caller = Caller::from(&principal);
    state.datasets.readable(&caller, dataset).await?;
    let request = body.read().await?;
    let starter = starter(&principal, version, METADATA.default);
    let row = state
        .transfers
        .start_convert(starter, dataset, &request)
        .await?;
    Ok(summary(&row))
}

/// Imports an uploaded file as a new dataset in `projectId` (a project or subproject).
/// Requires `uploadUrl` (an upload URL, query optional), `outputDatasetData.name`,
/// `readerName`, `writerName`, and from api-version 2 on `originalFileName`.
#[utoipa::path(post, path = "/api/conversion/upload-convert", tag = "transfers",
    request_body = TransferRequest,
    responses((status = 200, body = TransferSummaryDto), (status = 400), (status = 403), (status = 404)))]
async fn upload_convert(
    State(state): State<TransfersState>,
    principal: Principal,
    version: Option<axum::Extension<ApiVersion>>,
    body: JsonBody<TransferRequest>,
) -> ApiResult<Json<TransferSummaryDto>> {
    let caller = Caller::from(&principal);
    state
        .datasets
        .projects()
        .authorize_any_project(&caller)
        .await?;
    let request = body.read().await?;
    let starter = starter(&principal, version, CONVERSION.default);
    let row = state
        .transfers
        .start_upload_convert(starter, &request)
        .await?;
    Ok(summary(&row))
}

/// The legacy path of upload-convert; `projectId` may name a subproject.
#[utoipa::path(post, path = "/api/transfer/upload-convert", tag = "transfers",
    request_body = TransferRequest,
    responses((status = 200, body = TransferSummaryDto), (status = 400), (status = 403), (status = 404)))]
async fn legacy_upload_convert(
    state: State<TransfersState>,
    principal: Principal,
    version: Option<axum::Extension<ApiVersion>>,
    body: JsonBody<TransferRequest>,
) -> ApiResult<Json<TransferSummaryDto>> {
    upload_convert(state, principal, version, body).await
}

/// Exports a dataset as a file in the writer's format; the completed transfer's
/// `downloadPath` is a signed URL of the file. Requires `writerName`.
#[utoipa::path(post, path = "/api/metadata/dataset/{id}/download-convert", tag = "transfers",
    params(("id" = uuid::Uuid, Path)),
    request_body = TransferRequest,
    responses((status = 200, body = TransferSummaryDto), (status = 400), (status = 403), (status = 404)))]
async fn download_convert(
    State(state): State<TransfersState>,
    principal: Principal,
    version: Option<axum::Extension<ApiVersion>>,
    Path(dataset): Path<DatasetId>,
    body: JsonBody<TransferRequest>,
) -> ApiResult<Json<TransferSummaryDto>> {
    let caller = Caller::from(&principal);
    state.datasets.readable(&caller, dataset).await?;
    let request = body.read().await?;
    let starter = starter(&principal, version, METADATA.default);
    let row = state
        .transfers
        .start_download_convert(starter, dataset, &request)
        .await?;
    Ok(summary(&row))
}

/// Replaces a dataset's content with an uploaded file. Requires `uploadUrl`, `readerName`
/// and `originalFileName`; the writer is inferred from the stored format.
#[utoipa::path(post, path = "/api/metadata/dataset/{id}/update", tag = "transfers",
    params(("id" = uuid::Uuid, Path)),
    request_body = TransferRequest,
    responses((status = 200, body = TransferSummaryDto), (status = 400), (status = 403), (status = 404)))]
async fn update_from_upload(
    State(state): State<TransfersState>,
    principal: Principal,
    version: Option<axum::Extension<ApiVersion>>,
    Path(dataset): Path<DatasetId>,
    body: JsonBody<TransferRequest>,
) -> ApiResult<Json<TransferSummaryDto>> {
    let caller = Caller::from(&principal);
    state.datasets.content_updatable(&caller, dataset).await?;
    let request = body.read().await?;
    let starter = starter(&principal, version, METADATA.default);
    let row = state
        .transfers
        .start_update_from_upload(starter, dataset, &request)
        .await?;
    Ok(summary(&row))
}

/// Replaces the content of `targetId` with the content of `sourceId`, converted; reader and
/// writer are inferred from the stored formats when omitted.
#[utoipa::path(post, path = "/api/metadata/dataset/{sourceId}/update/{targetId}", tag = "transfers",
    params(("sourceId" = uuid::Uuid, Path), ("targetId" = uuid::Uuid, Path)),
    request_body = TransferRequest,
    responses((status = 200, body = TransferSummaryDto), (status = 400), (status = 403), (status = 404)))]
async fn update_from_dataset(
    State(state): State<TransfersState>,
    principal: Principal,
    version: Option<axum::Extension<ApiVersion>>,
    Path((source, target)): Path<(DatasetId, DatasetId)>,
    body: JsonBody<TransferRequest>,
) -> ApiResult<Json<TransferSummaryDto>> {
    let caller = Caller::from(&principal);
    state.datasets.readable(&caller, source).await?;
    state.datasets.content_updatable(&caller, target).await?;
    let request = body.read().await?;
    let starter = starter(&principal, version, METADATA.default);
    let row = state
        .transfers
        .start_update_from_dataset(starter, source, target, &request)
        .await?;
    Ok(summary(&row))
}

/// Adds the time steps or features of an uploaded file to a dataset. Requires `uploadUrl`,
/// `readerName`, and from api-version 2 on `originalFileName`; the writer is inferred.
#[utoipa::path(post, path = "/api/metadata/dataset/{id}/append", tag = "transfers",
    params(("id" = uuid::Uuid, Path)),
    request_body = TransferRequest,
    responses((status = 200, body = TransferSummaryDto), (status = 400), (status = 403), (status = 404)))]
async fn append(
    State(state): State<TransfersState>,
    principal: Principal,
    version: Option<axum::Extension<ApiVersion>>,
    Path(dataset): Path<DatasetId>,
    body: JsonBody<TransferRequest>,
) -> ApiResult<Json<TransferSummaryDto>> {
    let caller = Caller::from(&principal);
    state.datasets.content_updatable(&caller, dataset).await?;
    let request = body.read().await?;
    let starter = starter(&principal, version, METADATA.default);
    let row = state
        .transfers
        .start_append(starter, dataset, &request)
        .await?;
    Ok(summary(&row))
}

// ---- monitoring ----

/// A transfer: status, progress, parameters, results, and for a completed export a signed
/// `downloadPath`.
#[utoipa::path(get, path = "/api/conversion/transfer/{id}", tag = "transfers",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = TransferDto), (status = 401), (status = 404)))]
async fn get_transfer(
    State(state): State<TransfersState>,
    principal: Principal,
    base: PublicBase,
    Path(id): Path<TransferId>,
) -> ApiResult<Json<TransferDto>> {
    let row = state.transfers.transfer(&principal, id).await?;
    Ok(Json(state.transfers.record(&row, &base)?))
}

/// Query of the transfer list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct TransferListQuery {
    /// Only this project's transfers (needs `canListContent` there).
    project_id: Option<ProjectId>,
    /// Only transfers reading or changing this dataset.
    dataset_id: Option<DatasetId>,
    /// Created at or after (ISO 8601).
    from: Option<String>,
    /// Created at or before (ISO 8601).
    to: Option<String>,
    /// Statuses (repeatable).
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    status: Vec<String>,
    /// Rows to skip.
    offset: Option<u32>,
    /// Rows per page.
    limit: Option<u32>,
}

fn parse_time(field: &str, raw: Option<&str>) -> ApiResult<Option<chrono::DateTime<chrono::Utc>>> {
    match raw.map(str::trim).filter(|raw| !raw.is_empty()) {
        None => Ok(None),
        Some(raw) => crate::http::time::WireTime::parse(raw)
            .map(|time| time.0)
            .or_else(|| {
                chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d")
                    .ok()
                    .and_then(|date| date.and_hms_opt(0, 0, 0))
                    .map(|time| time.and_utc())
            })
            .map(Some)
            .ok_or_else(|| {
                ApiError::field(field, format!("{field}: not an ISO 8601 time: {raw:?}"))
            }),
    }
}

/// Transfers, newest first, as an offset page of summaries: the caller's own, or with
/// `projectId` that project's; tenant administrators see all of the tenant's.
#[utoipa::path(get, path = "/api/conversion/transfer/list", tag = "transfers",
    params(TransferListQuery),
    responses((status = 200, body = inline(OffsetPage<TransferSummaryDto>)), (status = 400), (status = 401), (status = 404)))]
async fn list_transfers(
    State(state): State<TransfersState>,
    principal: Principal,
    Query(query): Query<TransferListQuery>,
) -> ApiResult<Json<OffsetPage<TransferSummaryDto>>> {
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let mut statuses = Vec::new();
    for raw in query.status.iter().flat_map(|raw| raw.split(',')) {
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let status: TransferStatus = raw
            .parse()
            .map_err(|error| ApiError::field("status", format!("status: {error}")))?;
        statuses.push(status);
    }
    let filter = ListFilter {
        project: query.project_id,
        dataset: query.dataset_id,
        from: parse_time("from", query.from.as_deref())?,
        to: parse_time("to", query.to.as_deref())?,
        statuses,
    };
    let (rows, total) = state
        .transfers
        .list(&principal, filter, page.offset, page.limit)
        .await?;
    Ok(Json(OffsetPage {
        total_count: u64::try_from(total).unwrap_or(0),
        offset: page.offset,
        limit: page.limit,
        data: rows.iter().map(TransferSummaryDto::from).collect(),
    }))
}

/// The caller's own transfers, newest first (the most recent `limits.page_size_max`).
#[utoipa::path(get, path = "/api/conversion/transfer/list-summaries", tag = "transfers",
    responses((status = 200, body = inline(DataList<TransferSummaryDto>)), (status = 401)))]
async fn list_summaries(
    State(state): State<TransfersState>,
    principal: Principal,
) -> ApiResult<Json<DataList<TransferSummaryDto>>> {
    let rows = state
        .transfers
        .own(&principal, state.page_limits.max)
        .await?;
    Ok(Json(DataList {
        data: rows.iter().map(TransferSummaryDto::from).collect(),
    }))
}

/// The legacy path of list-summaries.
#[utoipa::path(get, path = "/api/transfer/list-summaries", tag = "transfers",
    responses((status = 200, body = inline(DataList<TransferSummaryDto>)), (status = 401)))]
async fn legacy_list_summaries(
    state: State<TransfersState>,
    principal: Principal,
) -> ApiResult<Json<DataList<TransferSummaryDto>>> {
    list_summaries(state, principal).await
}

/// Cancels a transfer: a queued one ends at once, a running one within a heartbeat; both end
/// in `Error` with an `errorMessage` saying it was cancelled. 409 once it has ended. Only its
/// starter and the tenant's administrators may cancel it.
#[utoipa::path(post, path = "/api/conversion/transfer/{id}/cancel", tag = "transfers",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = TransferDto), (status = 401), (status = 403), (status = 404), (status = 409)))]
async fn cancel_transfer(
    State(state): State<TransfersState>,
    principal: Principal,
    base: PublicBase,
    Path(id): Path<TransferId>,
) -> ApiResult<Json<TransferDto>> {
    let row = state.transfers.cancel(&principal, id).await?;
    Ok(Json(state.transfers.record(&row, &base)?))
}

/// One staged file of an import.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StagedFileDto {
    /// The upload URL the file was written to (query optional).
    url: String,
    /// The dataset's name, and its file name.
    file_name: String,
}

/// An import of staged files into a folder of the project.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StagedFilesRequest {
    /// The files, at least one and at most `limits::STAGED_FILES_MAX`.
    files: Vec<StagedFileDto>,
    /// Folder below the project (`a/b`) to import into; the project itself when absent.
    destination_path: Option<String>,
    /// The same, as the original platform's SDKs spell it.
    #[serde(rename = "destingationPath")]
    destingation_path: Option<String>,
    /// Create the missing folders of the destination (as `Private` folders); default false.
    #[serde(default)]
    create_destination_path_if_not_exists: bool,
}

impl StagedFilesRequest {
    /// The files, checked.
    fn files(&self) -> ApiResult<Vec<crate::transfers::staged::StagedFile>> {
        let max = crate::limits::STAGED_FILES_MAX;
        if self.files.is_empty() || self.files.len() > max {
            return Err(ApiError::field(
                "files",
                format!("files: give from 1 to {max} files"),
            ));
        }
        let mut files = Vec::with_capacity(self.files.len());
        for (index, file) in self.files.iter().enumerate() {
            let file_name = UploadFileName::parse(file.file_name.trim()).map_err(|error| {
                ApiError::field(
                    format!("files[{index}].fileName"),
                    format!("files[{index}].fileName: {error}"),
                )
            })?;
            let url = file.url.trim();
            if url.is_empty() {
                return Err(ApiError::field(
                    format!("files[{index}].url"),
                    format!("files[{index}].url: required"),
                ));
            }
            files.push(crate::transfers::staged::StagedFile {
                url: url.to_owned(),
                file_name,
            });
        }
        Ok(files)
    }

    /// The destination folder, checked; `None` for the project itself.
    fn destination(
        &self,
        limits: crate::projects::service::ProjectLimits,
    ) -> ApiResult<Option<crate::projects::hierarchy_path::HierarchyPath>> {
        let given = match (&self.destination_path, &self.destingation_path) {
            (Some(one), Some(other)) if one.trim() != other.trim() => {
                return Err(ApiError::field(
                    "destinationPath",
                    "destinationPath and destingationPath differ; give one",
                ));
            }
            (Some(path), _) | (None, Some(path)) => path,
            (None, None) => return Ok(None),
        };
        if given.trim().trim_matches('/').is_empty() {
            return Ok(None);
        }
        crate::projects::hierarchy_path::HierarchyPath::parse(
            given,
            limits.name_chars_max,
            usize::try_from(limits.depth_max).unwrap_or(usize::MAX),
        )
        .map(Some)
        .map_err(|message| {
            ApiError::field("destinationPath", format!("destinationPath: {message}"))
        })
    }
}

/// A dataset an import created.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StagedDatasetDto {
    /// The file name given.
    file_name: String,
    /// The new dataset.
    dataset_id: DatasetId,
}

/// A file an import did not import.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StagedFailureDto {
    /// The file name given.
    file_name: String,
    /// Why.
    message: String,
}

/// What an import of staged files did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct StagedFilesResponse {
    /// The datasets created, in request order.
    datasets: Vec<StagedDatasetDto>,
    /// The files not imported, in request order.
    failures: Vec<StagedFailureDto>,
}

/// Imports files already written to upload URLs as datasets, unchanged, into a folder of the
/// project (created when asked). Each file succeeds or fails on its own: the answer lists the
/// datasets created and the failures. No transfer is queued.
#[utoipa::path(post, path = "/api/conversion/project/{id}/file/import-staged", tag = "transfers",
    params(("id" = uuid::Uuid, Path)),
    request_body = StagedFilesRequest,
    responses((status = 200, body = StagedFilesResponse), (status = 400), (status = 403), (status = 404)))]
async fn import_staged(
    State(state): State<TransfersState>,
    principal: Principal,
    base: PublicBase,
    Path(project): Path<ProjectId>,
    body: JsonBody<StagedFilesRequest>,
) -> ApiResult<Json<StagedFilesResponse>> {
    let caller = Caller::from(&principal);
    state.datasets.projects().visible(&caller, project).await?;
    let request = body.read().await?;
    let files = request.files()?;
    let destination = request.destination(state.datasets.projects().limits())?;
    let folder = state
        .hierarchy
        .folder_at(
            &caller,
            project,
            destination.as_ref(),
            request.create_destination_path_if_not_exists,
            crate::projects::access::AccessLevel::Private,
            &base,
        )
        .await
        .map_err(|error| match error.error {
            crate::hierarchy::service::ActionError::NotFound(path) => ApiError::NotFound(format!(
                "The folder {path} does not exist or is not visible to you; set createDestinationPathIfNotExists to create it."
            )),
            _ => ApiError::from(error),
        })?;
    let outcome = state
        .transfers
        .import_staged(
            &principal,
            &caller,
            folder,
            files,
            state.blob_limits.upload_bytes_max,
        )
        .await?;
    Ok(Json(StagedFilesResponse {
        datasets: outcome
            .datasets
            .into_iter()
            .map(|(file_name, dataset_id)| StagedDatasetDto {
                file_name,
                dataset_id,
            })
            .collect(),
        failures: outcome
            .failures
            .into_iter()
            .map(|(file_name, message)| StagedFailureDto { file_name, message })
            .collect(),
    }))
}
