//! Transfer endpoints: `GET /api/conversion/transfer/upload-url`. HTTP only: rules live in
//! `service.rs`.

use axum::extract::{FromRef, State};
use axum::middleware::from_fn_with_state;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, CONVERSION};
use crate::http::extract::{Json, Path, Query};
use crate::http::public_base::PublicBase;
use crate::transfers::multipart::{is_file_part, multipart_error, part_body};
use crate::transfers::service::{DirectFile, TransferError, UploadFileName};

/// What the transfer endpoints need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct TransfersState {
    /// Upload rules.
    pub(crate) transfers: crate::transfers::service::TransferService,
    /// Datasets made by direct uploads.
    pub(crate) datasets: crate::datasets::service::DatasetService,
    /// Upload limits.
    pub(crate) blob_limits: crate::blob::BlobLimits,
}

/// Transfer routes with their OpenAPI description, but for the direct upload
/// ([`upload_router`]).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    TransfersState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
    crate::blob::BlobUrls: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(get_upload_url))
        .layer(from_fn_with_state(CONVERSION, api_version::enforce))
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
    crate::blob::BlobUrls: FromRef<S>,
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
    multipart: Result<axum::extract::Multipart, axum::extract::multipart::MultipartRejection>,
) -> ApiResult<axum::response::Response> {
    use axum::response::IntoResponse;
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
    let caller = crate::auth::Caller::from(&principal);
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
