//! Transfer endpoints: `GET /api/conversion/transfer/upload-url`. HTTP only: rules live in
//! `service.rs`.

use axum::extract::State;
use axum::middleware::from_fn_with_state;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Principal;
use crate::blob::PublicBase;
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, CONVERSION};
use crate::http::extract::{Json, Query};
use crate::startup::AppState;
use crate::transfers::service::{TransferError, UploadFileName};

/// Transfer routes with their OpenAPI description.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_upload_url))
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
pub struct UploadUrlDto {
    /// The blob URL with its signature (`sv`, `se`, `sr`, `sp`, `sig`).
    pub data: String,
}

/// A signed URL to upload one file with any Azure Blob client: `PUT` with
/// `x-ms-blob-type: BlockBlob`, or staged blocks and a block list. Valid for
/// `blob.upload_url_ttl_seconds`; the path is fresh and belongs to the caller's tenant.
#[utoipa::path(get, path = "/api/conversion/transfer/upload-url", tag = "transfers",
    params(UploadUrlQuery),
    responses((status = 200, body = UploadUrlDto), (status = 400), (status = 401), (status = 403)))]
async fn get_upload_url(
    State(state): State<AppState>,
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
