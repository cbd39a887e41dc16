//! `POST /api/hierarchy/project/{id}` (also with a trailing slash). HTTP only.

use axum::extract::{FromRef, State};
use axum::middleware::from_fn_with_state;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult, FieldErrors};
use crate::hierarchy::service::{
    ActionError, HierarchyError, PathAction, PathActionType, parse_time_span,
};
use crate::http::api_version::{self, METADATA};
use crate::http::extract::{Json, JsonBody, Path};
use crate::ids::{DatasetId, ProjectId};
use crate::limits::{BLOB_URL_TTL_SECONDS_MAX, BLOB_URL_TTL_SECONDS_MIN};
use crate::projects::access::AccessLevel;
use crate::projects::hierarchy_path::HierarchyPath;
use crate::public_base::PublicBase;

/// What the bulk hierarchy endpoint need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct HierarchyState {
    /// Bulk rules.
    pub(crate) hierarchy: crate::hierarchy::service::HierarchyService,
    /// Project limits.
    pub(crate) projects: crate::projects::service::ProjectService,
    /// Upload URL lifetimes.
    pub(crate) blob_urls: crate::blob_urls::BlobUrls,
}

/// Hierarchy routes.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    HierarchyState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
    crate::blob_urls::BlobUrls: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(apply_hierarchy))
        .routes(routes!(apply_hierarchy_slash))
        .layer(from_fn_with_state(METADATA, api_version::enforce))
}

/// One action as sent.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PathActionDto {
    /// `PathActionCreate`, `PathActionCreateIfNotExists` or `PathActionDelete`.
    #[serde(rename = "type")]
    pub(crate) kind: PathActionType,
    /// Path below the project, `/` separated.
    pub(crate) path: String,
    /// A folder (subproject) rather than a file (dataset).
    #[serde(default)]
    pub(crate) is_folder: bool,
}

/// The request.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HierarchyRequest {
    /// The actions, applied in order, all or nothing.
    pub(crate) actions: Vec<PathActionDto>,
    /// Access level of created folders (default `Private`).
    pub(crate) default_access_level: Option<AccessLevel>,
    /// Lifetime of the returned upload URLs, as a .NET TimeSpan (`1:00:00`).
    pub(crate) sas_token_expiration: Option<String>,
}

/// A created path.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreatedPathDto {
    /// The folder, or the folder holding the file.
    pub(crate) project_id: ProjectId,
    /// The dataset, for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset_id: Option<DatasetId>,
    /// The path as given.
    pub(crate) path: String,
    /// For files: a signed URL to upload the content to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sas_token: Option<String>,
}

/// The answer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct HierarchyResponse {
    /// Only the paths this request created.
    pub(crate) results: Vec<CreatedPathDto>,
}

impl From<HierarchyError> for ApiError {
    fn from(HierarchyError { index, error }: HierarchyError) -> Self {
        let at = |detail: String| match index {
            Some(index) => format!("actions[{index}]: {detail}"),
            None => detail,
        };
        match error {
            ActionError::NotFound(path) if index.is_some() => ApiError::NotFound(at(format!(
                "{path} does not exist or is not visible to you"
            ))),
            ActionError::NotFound(_) => {
                ApiError::NotFound("The project does not exist or is not visible to you.".into())
            }
            ActionError::Exists(path) => ApiError::Conflict {
                kind: "path-exists",
                detail: at(format!("{path} exists already")),
            },
            ActionError::InvalidName(detail) => field_error(index, at(detail)),
            ActionError::TooManyCreated(limit) => ApiError::Rejected {
                kind: "hierarchy-too-large",
                detail: at(format!(
                    "a request may create at most {limit} folders and files (limits.hierarchy_created_max); nothing was created"
                )),
            },
            ActionError::Project(crate::projects::service::ProjectError::Invalid {
                message,
                ..
            })
            | ActionError::Dataset(crate::datasets::service::DatasetError::Invalid {
                message,
                ..
            }) => field_error(index, at(message)),
            ActionError::Project(crate::projects::service::ProjectError::Forbidden(detail)) => {
                ApiError::Forbidden(at(detail))
            }
            ActionError::Project(crate::projects::service::ProjectError::Rejected {
                kind,
                detail,
            }) => ApiError::Rejected {
                kind,
                detail: at(detail),
            },
            ActionError::Project(error) => error.into(),
            ActionError::Dataset(error) => error.into(),
        }
    }
}

fn field_error(index: Option<usize>, message: String) -> ApiError {
    let field = index.map_or_else(
        || "actions".to_owned(),
        |index| format!("actions[{index}].path"),
    );
    let mut errors = FieldErrors::new();
    errors.insert(field, vec![message.clone()]);
    ApiError::Validation {
        detail: message,
        errors,
    }
}

async fn apply(
    state: &HierarchyState,
    principal: &Principal,
    base: &PublicBase,
    project: ProjectId,
    body: JsonBody<HierarchyRequest>,
) -> ApiResult<Json<HierarchyResponse>> {
    state
        .projects
        .visible(&Caller::from(principal), project)
        .await?;
    let request = body.read().await?;
    let actions_max = state.hierarchy.limits().actions_max;
    if request.actions.len() > actions_max {
        return Err(ApiError::field(
            "actions",
            format!("a request holds at most {actions_max} actions (limits.hierarchy_actions_max)"),
        ));
    }
    let limits = state.projects.limits();
    let segments_max = usize::try_from(limits.depth_max).unwrap_or(usize::MAX);
    let mut errors = FieldErrors::new();
    let mut actions = Vec::with_capacity(request.actions.len());
    for (index, action) in request.actions.into_iter().enumerate() {
        match HierarchyPath::parse(&action.path, limits.name_chars_max, segments_max) {
            Ok(path) => actions.push(PathAction {
                kind: action.kind,
                path,
                is_folder: action.is_folder,
            }),
            Err(message) => {
                errors.insert(format!("actions[{index}].path"), vec![message]);
            }
        }
    }
    if let Some((field, messages)) = errors.iter().next() {
        return Err(ApiError::Validation {
            detail: format!("{field}: {}", messages.join("; ")),
            errors,
        });
    }
    let ttl = match request.sas_token_expiration.as_deref().filter(|raw| !raw.trim().is_empty()) {
        None => state.blob_urls.upload_ttl(),
        Some(raw) => parse_time_span(raw)
            .filter(|ttl| (BLOB_URL_TTL_SECONDS_MIN..=BLOB_URL_TTL_SECONDS_MAX).contains(&ttl.num_seconds()))
            .ok_or_else(|| {
                ApiError::field(
                    "sasTokenExpiration",
                    format!("sasTokenExpiration must be a TimeSpan such as 1:00:00, between {BLOB_URL_TTL_SECONDS_MIN} s and {BLOB_URL_TTL_SECONDS_MAX} s"),
                )
            })?,
    };
    let created = state
        .hierarchy
        .apply(
            &Caller::from(principal),
            project,
            &actions,
            request.default_access_level.unwrap_or(AccessLevel::Private),
            ttl,
            base,
        )
        .await?;
    Ok(Json(HierarchyResponse {
        results: created
            .into_iter()
            .map(|created| CreatedPathDto {
                project_id: created.project_id,
                dataset_id: created.dataset_id,
                path: created.path,
                sas_token: created.sas_token,
            })
            .collect(),
    }))
}

/// Create, create-if-missing or delete paths below a project in one atomic request; folders
/// become subprojects, files datasets with an upload URL (`sasToken`) for their content.
#[utoipa::path(post, path = "/api/hierarchy/project/{id}", tag = "projects",
    params(("id" = uuid::Uuid, Path)), request_body = HierarchyRequest,
    responses((status = 200, body = HierarchyResponse), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn apply_hierarchy(
    State(state): State<HierarchyState>,
    principal: Principal,
    base: PublicBase,
    Path(project): Path<ProjectId>,
    body: JsonBody<HierarchyRequest>,
) -> ApiResult<Json<HierarchyResponse>> {
    apply(&state, &principal, &base, project, body).await
}

/// The same, with the trailing slash the interface writes.
#[utoipa::path(post, path = "/api/hierarchy/project/{id}/", tag = "projects",
    params(("id" = uuid::Uuid, Path)), request_body = HierarchyRequest,
    responses((status = 200, body = HierarchyResponse), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn apply_hierarchy_slash(
    State(state): State<HierarchyState>,
    principal: Principal,
    base: PublicBase,
    Path(project): Path<ProjectId>,
    body: JsonBody<HierarchyRequest>,
) -> ApiResult<Json<HierarchyResponse>> {
    apply(&state, &principal, &base, project, body).await
}
