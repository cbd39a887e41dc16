//! Project endpoints under `/api/metadata/project` and the legacy `/api/project`. HTTP only:
//! rules live in `service.rs`.

use std::collections::BTreeSet;

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::auth::{Principal, PrincipalType};
use crate::db::SortValue;
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, METADATA};
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{
    Cursor, CursorPage, CursorRequest, DataList, OffsetPage, OffsetRequest, SortKind,
};
use crate::http::wire_enum::sort::SortOrder;
use crate::ids::ProjectId;
use crate::projects::access::{
    AccessLevel, Capabilities, Capability, CapabilityFilter, ProjectRole,
};
use crate::projects::model::*;
use crate::projects::service::{
    Chain, ListFilter, NewProject, ProjectError, ProjectService, SortColumn, Window,
};

/// What the project endpoints need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct ProjectsState {
    /// Project rules.
    pub(crate) projects: crate::projects::service::ProjectService,
    /// Page sizes.
    pub(crate) page_limits: crate::http::paging::PageLimits,
}

/// Project routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    ProjectsState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_projects))
        .routes(routes!(list_projects_offset))
        .routes(routes!(list_projects_legacy))
        .routes(routes!(create_project, update_project, patch_project))
        .routes(routes!(patch_project_slash))
        .routes(routes!(get_project, delete_project))
        .routes(routes!(delete_project_legacy))
        .routes(routes!(list_members, add_member, set_members_alias))
        .routes(routes!(remove_member))
        .routes(routes!(set_members))
        .routes(routes!(inherit_members))
        .routes(routes!(get_capabilities))
        .routes(routes!(list_subprojects))
        .routes(routes!(list_subprojects_offset))
        .routes(routes!(list_subprojects_legacy))
        .routes(routes!(create_subproject))
        .routes(routes!(get_path))
        .routes(routes!(get_path_legacy))
        .routes(routes!(list_recursive))
        .routes(routes!(move_project))
        .layer(from_fn_with_state(METADATA, api_version::enforce))
}

impl From<ProjectError> for ApiError {
    fn from(error: ProjectError) -> Self {
        match error {
            ProjectError::Invalid { field, message } => ApiError::field(field, message),
            ProjectError::NotFound => {
                ApiError::NotFound("The project does not exist or is not visible to you.".into())
            }
            ProjectError::Forbidden(detail) => ApiError::Forbidden(detail),
            ProjectError::Rejected { kind, detail } => ApiError::Rejected { kind, detail },
            ProjectError::Conflict { kind, detail } => ApiError::Conflict { kind, detail },
            ProjectError::Store(error) => error.into(),
        }
    }
}

fn project_dto(chain: &Chain, row: &ProjectRow, members: &[ProjectMember]) -> ProjectDto {
    ProjectDto {
        record: ProjectListDto::from(row),
        members: if row.inherits_members {
            Vec::new()
        } else {
            members.iter().map(ProjectMemberDto::from).collect()
        },
        capabilities: chain.capabilities(),
    }
}

fn members_from(input: Vec<ProjectMemberDto>) -> Vec<ProjectMember> {
    input
        .into_iter()
        .map(|member| ProjectMember {
            principal_id: member.user_id,
            principal_type: member.principal_type,
            role: member.role,
        })
        .collect()
}

fn new_project(service: &ProjectService, request: CreateProjectRequest) -> ApiResult<NewProject> {
    Ok(NewProject {
        name: service.parse_name(&request.name)?,
        description: ProjectService::parse_description(request.description.as_deref())?,
        access_level: request.access_level.unwrap_or(AccessLevel::Private),
        metadata: ProjectService::parse_object("metadata", request.metadata)?,
        settings: ProjectService::parse_object("settings", request.settings)?,
        billing_information: request
            .billing_information
            .map(|value| ProjectService::parse_object("billingInformation", Some(value)))
            .transpose()?,
        members: members_from(request.members),
        inherits_members: request.inherits_members.unwrap_or(false),
    })
}

// ---- lists ----

crate::wire_enum! {
    /// Sort keys of project lists.
    pub(crate) enum ProjectSortBy {
        /// By name.
        Name,
        /// By creation time.
        CreatedAt,
        /// By last change.
        UpdatedAt,
        /// By access level.
        AccessLevel,
    }
}

/// Query of project lists (both paging forms).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ProjectListQuery {
    /// Cursor from the previous page (cursor lists).
    cursor: Option<String>,
    /// Rows to skip (offset lists).
    offset: Option<u32>,
    /// Page size.
    limit: Option<u32>,
    /// Case-insensitive prefix of the name.
    name_prefix: Option<String>,
    /// The caller's role (repeatable; inherited roles count).
    #[serde(default)]
    #[param(value_type = Vec<ProjectRole>)]
    role: Vec<String>,
    /// One of CanReadContent, CanListContent, CanCreateContent, CanUpdateContent,
    /// CanDeleteContent (case sensitive); not together with `role`.
    #[param(value_type = Option<CapabilityFilter>)]
    capability: Option<String>,
    /// `Name` (default), `CreatedAt`, `UpdatedAt` or `AccessLevel`.
    #[param(value_type = Option<ProjectSortBy>)]
    sort_by: Option<ProjectSortBy>,
    /// `Asc` (default) or `Desc`.
    #[param(value_type = Option<SortOrder>)]
    sort_order: Option<SortOrder>,
}

impl ProjectListQuery {
    fn filter(&self) -> ApiResult<ListFilter> {
        let capability = match self.capability.as_deref().filter(|raw| !raw.is_empty()) {
            None => None,
            Some(raw) => Some(CapabilityFilter::parse_exact(raw).ok_or_else(|| {
                ApiError::field(
                    "capability",
                    "capability must be one of CanReadContent, CanListContent, CanCreateContent, CanUpdateContent, CanDeleteContent (case sensitive)",
                )
            })?),
        };
        if capability.is_some() && self.role.iter().any(|raw| !raw.trim().is_empty()) {
            return Err(ApiError::Rejected {
                kind: "role-with-capability",
                detail: "filter by role or by capability, not both".into(),
            });
        }
        let column = match self.sort_by.unwrap_or(ProjectSortBy::Name) {
            ProjectSortBy::Name => SortColumn::Name,
            ProjectSortBy::CreatedAt => SortColumn::CreatedAt,
            ProjectSortBy::UpdatedAt => SortColumn::UpdatedAt,
            ProjectSortBy::AccessLevel => SortColumn::AccessLevel,
        };
        // An empty `role=` is no filter, as an empty value of any other parameter is.
        let roles = self
            .role
            .iter()
            .filter(|raw| !raw.trim().is_empty())
            .map(|raw| {
                raw.parse::<ProjectRole>()
                    .map_err(|error| ApiError::field("role", error.to_string()))
            })
            .collect::<ApiResult<BTreeSet<_>>>()?;
        Ok(ListFilter {
            name_prefix: self.name_prefix.clone().filter(|prefix| !prefix.is_empty()),
            roles,
            capability,
            column,
            descending: self.sort_order.unwrap_or_default() == SortOrder::Desc,
        })
    }

    fn tag(&self, list: &str, filter: &ListFilter) -> String {
        let column = match filter.column {
            SortColumn::Name => "name",
            SortColumn::CreatedAt => "created_at",
            SortColumn::UpdatedAt => "updated_at",
            SortColumn::AccessLevel => "access_level",
        };
        format!(
            "{list}:{column}:{}",
            if filter.descending { "desc" } else { "asc" }
        )
    }
}

fn position(tag: &str, column: SortColumn, row: &ProjectRow) -> Cursor {
    let value = match column {
        SortColumn::Name => SortValue::Text(row.name.clone()),
        SortColumn::AccessLevel => SortValue::Text(row.access_level.as_str().to_owned()),
        SortColumn::CreatedAt => SortValue::Time(row.created_at),
        SortColumn::UpdatedAt => SortValue::Time(row.updated_at),
    };
    Cursor::at(tag, value, row.id.as_uuid())
}

fn sort_kind(column: SortColumn) -> SortKind {
    match column {
        SortColumn::Name | SortColumn::AccessLevel => SortKind::Text,
        SortColumn::CreatedAt | SortColumn::UpdatedAt => SortKind::Time,
    }
}

async fn cursor_list(
    state: &ProjectsState,
    principal: &Principal,
    parent: Option<ProjectId>,
    query: &ProjectListQuery,
) -> ApiResult<CursorPage<ProjectListDto>> {
    let filter = query.filter()?;
    let list = parent.map_or_else(
        || "projects".to_owned(),
        |parent| format!("projects@{parent}"),
    );
    let tag = query.tag(&list, &filter);
    let request = CursorRequest::parse(
        query.cursor.as_deref(),
        query.limit,
        &tag,
        state.page_limits,
    )?;
    let after = request
        .after
        .as_ref()
        .map(|cursor| cursor.position(sort_kind(filter.column)))
        .transpose()?;
    let window = Window::Keyset {
        after,
        fetch: request.fetch_count(),
    };
    let (rows, _) = state
        .projects
        .list(&Caller::from(principal), parent, &filter, &window)
        .await?;
    Ok(CursorPage::from_rows(
        rows,
        &request,
        |row| position(&tag, filter.column, row),
        |row| ProjectListDto::from(&row),
    ))
}

async fn offset_list(
    state: &ProjectsState,
    principal: &Principal,
    parent: Option<ProjectId>,
    query: &ProjectListQuery,
) -> ApiResult<OffsetPage<ProjectListDto>> {
    let filter = query.filter()?;
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let window = Window::Offset {
        offset: page.offset,
        limit: page.limit,
    };
    let (rows, total) = state
        .projects
        .list(&Caller::from(principal), parent, &filter, &window)
        .await?;
    Ok(OffsetPage {
        total_count: total.unwrap_or(0),
        offset: page.offset,
        limit: page.limit,
        data: rows.iter().map(ProjectListDto::from).collect(),
    })
}

/// Top-level projects the caller can access, cursor-paged.
#[utoipa::path(get, path = "/api/metadata/project/list", tag = "projects", params(ProjectListQuery),
    responses((status = 200, body = CursorPage<ProjectListDto>), (status = 400), (status = 401)))]
async fn list_projects(
    State(state): State<ProjectsState>,
    principal: Principal,
    Query(query): Query<ProjectListQuery>,
) -> ApiResult<Json<CursorPage<ProjectListDto>>> {
    Ok(Json(cursor_list(&state, &principal, None, &query).await?))
}

/// Top-level projects the caller can access, offset-paged.
#[utoipa::path(get, path = "/api/metadata/project/offset-list", tag = "projects", params(ProjectListQuery),
    responses((status = 200, body = OffsetPage<ProjectListDto>), (status = 400), (status = 401)))]
async fn list_projects_offset(
    State(state): State<ProjectsState>,
    principal: Principal,
    Query(query): Query<ProjectListQuery>,
) -> ApiResult<Json<OffsetPage<ProjectListDto>>> {
    Ok(Json(offset_list(&state, &principal, None, &query).await?))
}

/// Top-level projects of the customer (the structure from before subprojects existed).
#[utoipa::path(get, path = "/api/project/list", tag = "projects", params(ProjectListQuery),
    responses((status = 200, body = CursorPage<ProjectListDto>), (status = 401)))]
async fn list_projects_legacy(
    State(state): State<ProjectsState>,
    principal: Principal,
    Query(query): Query<ProjectListQuery>,
) -> ApiResult<Json<CursorPage<ProjectListDto>>> {
    Ok(Json(cursor_list(&state, &principal, None, &query).await?))
}

/// Direct subprojects the caller can access, cursor-paged.
#[utoipa::path(get, path = "/api/metadata/project/{id}/subproject/list", tag = "projects",
    params(("id" = uuid::Uuid, Path), ProjectListQuery),
    responses((status = 200, body = CursorPage<ProjectListDto>), (status = 404)))]
async fn list_subprojects(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    Query(query): Query<ProjectListQuery>,
) -> ApiResult<Json<CursorPage<ProjectListDto>>> {
    Ok(Json(
        cursor_list(&state, &principal, Some(id), &query).await?,
    ))
}

/// Direct subprojects the caller can access, offset-paged.
#[utoipa::path(get, path = "/api/metadata/project/{id}/subproject/offset-list", tag = "projects",
    params(("id" = uuid::Uuid, Path), ProjectListQuery),
    responses((status = 200, body = OffsetPage<ProjectListDto>), (status = 404)))]
async fn list_subprojects_offset(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    Query(query): Query<ProjectListQuery>,
) -> ApiResult<Json<OffsetPage<ProjectListDto>>> {
    Ok(Json(
        offset_list(&state, &principal, Some(id), &query).await?,
    ))
}

/// Direct subprojects only, no recursion.
#[utoipa::path(get, path = "/api/project/{projectId}/subprojects", tag = "projects",
    params(("projectId" = uuid::Uuid, Path), ProjectListQuery),
    responses((status = 200, body = CursorPage<ProjectListDto>), (status = 404)))]
async fn list_subprojects_legacy(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    Query(query): Query<ProjectListQuery>,
) -> ApiResult<Json<CursorPage<ProjectListDto>>> {
    Ok(Json(
        cursor_list(&state, &principal, Some(id), &query).await?,
    ))
}

/// Offset query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct OffsetQuery {
    /// Rows to skip.
    offset: Option<u32>,
    /// Page size.
    limit: Option<u32>,
}

/// Every subproject below the project that the caller can access, with its path, ordered by
/// path, offset-paged.
#[utoipa::path(get, path = "/api/metadata/project/{id}/offset-list-recursive", tag = "projects",
    params(("id" = uuid::Uuid, Path), OffsetQuery),
    responses((status = 200, body = OffsetPage<RecursiveEntryDto>), (status = 404)))]
async fn list_recursive(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    Query(query): Query<OffsetQuery>,
) -> ApiResult<Json<OffsetPage<RecursiveEntryDto>>> {
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let (rows, total) = state
        .projects
        .list_recursive(&Caller::from(&principal), id, page.offset, page.limit)
        .await?;
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data: rows
            .into_iter()
            .map(|row| RecursiveEntryDto {
                id: row.id,
                parent_project_id: row.parent_id,
                name: row.name,
                relative_path: row.relative_path,
            })
            .collect(),
    }))
}

// ---- one project ----

/// Create a top-level project; the caller becomes its Owner.
#[utoipa::path(post, path = "/api/metadata/project", tag = "projects", request_body = CreateProjectRequest,
    responses((status = 201, body = ProjectDto), (status = 400), (status = 403)))]
async fn create_project(
    State(state): State<ProjectsState>,
    principal: Principal,
    body: JsonBody<CreateProjectRequest>,
) -> ApiResult<Response> {
    let caller = Caller::from(&principal);
    ProjectService::creating_tenant(&caller)?;
    let input = new_project(&state.projects, body.read().await?)?;
    let (row, _) = state.projects.create_root(&caller, input).await?;
    let (chain, members) = state.projects.get(&caller, row.id).await?;
    Ok((
        StatusCode::CREATED,
        Json(project_dto(&chain, &chain.target().row, &members)),
    )
        .into_response())
}

/// Create a subproject; the caller becomes its Owner unless it inherits members.
#[utoipa::path(post, path = "/api/metadata/project/{id}/subproject", tag = "projects",
    params(("id" = uuid::Uuid, Path)), request_body = CreateProjectRequest,
    responses((status = 201, body = ProjectDto), (status = 400), (status = 403), (status = 404)))]
async fn create_subproject(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(parent): Path<ProjectId>,
    body: JsonBody<CreateProjectRequest>,
) -> ApiResult<Response> {
    let caller = Caller::from(&principal);
    state
        .projects
        .authorize(&caller, parent, Capability::CreateContent)
        .await?;
    let input = new_project(&state.projects, body.read().await?)?;
    let (row, _) = state
        .projects
        .create_subproject(&caller, parent, input)
        .await?;
    let (chain, members) = state.projects.get(&caller, row.id).await?;
    Ok((
        StatusCode::CREATED,
        Json(project_dto(&chain, &chain.target().row, &members)),
    )
        .into_response())
}

/// A project with its own members and the caller's capabilities.
#[utoipa::path(get, path = "/api/metadata/project/{id}", tag = "projects",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = ProjectDto), (status = 404)))]
async fn get_project(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<Json<ProjectDto>> {
    let (chain, members) = state.projects.get(&Caller::from(&principal), id).await?;
    Ok(Json(project_dto(&chain, &chain.target().row, &members)))
}

/// Replace name, description, metadata and settings (a stale `rowVersion` is 409).
#[utoipa::path(put, path = "/api/metadata/project", tag = "projects", request_body = UpdateProjectRequest,
    responses((status = 200, body = ProjectDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn update_project(
    State(state): State<ProjectsState>,
    principal: Principal,
    body: JsonBody<UpdateProjectRequest>,
) -> ApiResult<Json<ProjectDto>> {
    let caller = Caller::from(&principal);
    state.projects.authorize_any_project(&caller).await?;
    let request = body.read().await?;
    let fields = (
        state.projects.parse_name(&request.name)?,
        ProjectService::parse_description(request.description.as_deref())?,
        ProjectService::parse_object("metadata", request.metadata)?,
        ProjectService::parse_object("settings", request.settings)?,
    );
    let expected = ProjectService::parse_row_version(request.row_version.as_deref())?;
    let (chain, row) = state
        .projects
        .update(&caller, request.id, fields, expected)
        .await?;
    let (_, members) = state.projects.get(&caller, row.id).await?;
    Ok(Json(project_dto(&chain, &row, &members)))
}

async fn patch(
    state: &ProjectsState,
    principal: &Principal,
    body: JsonBody<PatchProjectRequest>,
) -> ApiResult<Json<ProjectDto>> {
    let caller = Caller::from(principal);
    state.projects.authorize_any_project(&caller).await?;
    let request = body.read().await?;
    let expected = ProjectService::parse_row_version(request.row_version.as_deref())?;
    let (_, row) = state
        .projects
        .set_access_level(&caller, request.id, request.access_level, expected)
        .await?;
    // The new level may take away the caller's own access (an administrator making a
    // project Confidential): then it sees the saved record without capabilities.
    match state.projects.get(&caller, row.id).await {
        Ok((chain, members)) => Ok(Json(project_dto(&chain, &row, &members))),
        Err(ProjectError::NotFound) => Ok(Json(ProjectDto {
            record: ProjectListDto::from(&row),
            members: Vec::new(),
            capabilities: Capabilities::default(),
        })),
        Err(error) => Err(error.into()),
    }
}

/// Set the access level after creation.
#[utoipa::path(patch, path = "/api/metadata/project", tag = "projects", request_body = PatchProjectRequest,
    responses((status = 200, body = ProjectDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn patch_project(
    State(state): State<ProjectsState>,
    principal: Principal,
    body: JsonBody<PatchProjectRequest>,
) -> ApiResult<Json<ProjectDto>> {
    patch(&state, &principal, body).await
}

/// The same, with the trailing slash the interface writes.
#[utoipa::path(patch, path = "/api/metadata/project/", tag = "projects", request_body = PatchProjectRequest,
    responses((status = 200, body = ProjectDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn patch_project_slash(
    State(state): State<ProjectsState>,
    principal: Principal,
    body: JsonBody<PatchProjectRequest>,
) -> ApiResult<Json<ProjectDto>> {
    patch(&state, &principal, body).await
}

/// Move a project to the recycle bin.
#[utoipa::path(delete, path = "/api/metadata/project/{id}", tag = "projects",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn delete_project(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<StatusCode> {
    state.projects.delete(&Caller::from(&principal), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Move a project to the recycle bin (legacy path).
#[utoipa::path(delete, path = "/api/project/{projectId}", tag = "projects",
    params(("projectId" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn delete_project_legacy(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<StatusCode> {
    state.projects.delete(&Caller::from(&principal), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The caller's capabilities on a project.
#[utoipa::path(get, path = "/api/metadata/project/{id}/capabilities", tag = "projects",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = Capabilities), (status = 404)))]
async fn get_capabilities(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<Json<Capabilities>> {
    let chain = state
        .projects
        .visible(&Caller::from(&principal), id)
        .await?;
    Ok(Json(chain.capabilities()))
}

fn path_entries(chain: &Chain) -> DataList<PathEntryDto> {
    DataList {
        data: chain
            .nodes()
            .map(|node| PathEntryDto {
                id: node.row.id,
                name: node.row.name.clone(),
                parent_project_id: node.row.parent_id,
                is_deleted: node.deleted,
                capabilities: Capabilities::of(node.role),
                access_level: node.row.access_level,
                inherits_members: node.row.inherits_members,
                effective_user_role: node.role,
            })
            .collect(),
    }
}

async fn path(
    state: &ProjectsState,
    principal: &Principal,
    id: ProjectId,
) -> ApiResult<Json<DataList<PathEntryDto>>> {
    let chain = state
        .projects
        .load_chain(&Caller::from(principal), id)
        .await?;
    // Deleted projects keep their path (it decides whether they can be restored), but only
    // for callers who could access them.
    if chain.target().role.is_none() {
        return Err(ProjectError::NotFound.into());
    }
    Ok(Json(path_entries(&chain)))
}

/// The projects from the root to this one, with the caller's capabilities and a deleted flag.
#[utoipa::path(get, path = "/api/metadata/project/{id}/path", tag = "projects",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = DataList<PathEntryDto>), (status = 404)))]
async fn get_path(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<Json<DataList<PathEntryDto>>> {
    path(&state, &principal, id).await
}

/// The same (recycle bin path).
#[utoipa::path(get, path = "/api/project/{projectId}/path", tag = "projects",
    params(("projectId" = uuid::Uuid, Path)),
    responses((status = 200, body = DataList<PathEntryDto>), (status = 404)))]
async fn get_path_legacy(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<Json<DataList<PathEntryDto>>> {
    path(&state, &principal, id).await
}

/// Move a subproject under another project of the same tree.
#[utoipa::path(post, path = "/api/metadata/project/{id}/move", tag = "projects",
    params(("id" = uuid::Uuid, Path)), request_body = MoveProjectRequest,
    responses((status = 200, body = ProjectListDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn move_project(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    body: JsonBody<MoveProjectRequest>,
) -> ApiResult<Json<ProjectListDto>> {
    let caller = Caller::from(&principal);
    state.projects.authorize_move(&caller, id).await?;
    let request = body.read().await?;
    let row = state
        .projects
        .move_project(&caller, id, request.target_project_id)
        .await?;
    Ok(Json(ProjectListDto::from(&row)))
}

// ---- members ----

/// The members that apply to the project (inherited ones for a subproject that inherits).
#[utoipa::path(get, path = "/api/metadata/project/{id}/member", tag = "projects",
    params(("id" = uuid::Uuid, Path)),
    responses((status = 200, body = DataList<ProjectMemberDto>), (status = 404)))]
async fn list_members(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<Json<DataList<ProjectMemberDto>>> {
    let members = state
        .projects
        .effective_members(&Caller::from(&principal), id)
        .await?;
    Ok(Json(DataList {
        data: members.iter().map(ProjectMemberDto::from).collect(),
    }))
}

/// Add one member.
#[utoipa::path(post, path = "/api/metadata/project/{id}/member", tag = "projects",
    params(("id" = uuid::Uuid, Path)), request_body = AddProjectMemberRequest,
    responses((status = 200, body = IdRowVersionDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn add_member(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    body: JsonBody<AddProjectMemberRequest>,
) -> ApiResult<Json<IdRowVersionDto>> {
    let caller = Caller::from(&principal);
    state
        .projects
        .authorize(&caller, id, Capability::GrantAccess)
        .await?;
    let request = body.read().await?;
    let member = ProjectMember {
        principal_id: request.user_id,
        principal_type: request
            .principal_type
            .unwrap_or(PrincipalType::UserIdentity),
        role: request.role,
    };
    let row = state.projects.add_member(&caller, id, member).await?;
    Ok(Json(IdRowVersionDto {
        id: row.id,
        row_version: row_version_text(row.row_version),
    }))
}

/// Remove one member.
#[utoipa::path(delete, path = "/api/metadata/project/{id}/member/{memberId}", tag = "projects",
    params(("id" = uuid::Uuid, Path), ("memberId" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404), (status = 409)))]
async fn remove_member(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path((id, member)): Path<(ProjectId, uuid::Uuid)>,
) -> ApiResult<StatusCode> {
    state
        .projects
        .remove_member(&Caller::from(&principal), id, member)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn replace_members(
    state: &ProjectsState,
    principal: &Principal,
    id: ProjectId,
    body: JsonBody<SetMembersRequest>,
) -> ApiResult<Json<IdRowVersionDto>> {
    state
        .projects
        .authorize(&Caller::from(principal), id, Capability::GrantAccess)
        .await?;
    let request = body.read().await?;
    let expected = ProjectService::parse_row_version(request.row_version.as_deref())?;
    let row = state
        .projects
        .set_members(
            &Caller::from(principal),
            id,
            members_from(request.members),
            expected,
        )
        .await?;
    Ok(Json(IdRowVersionDto {
        id: row.id,
        row_version: row_version_text(row.row_version),
    }))
}

/// Set the project's own members; cancels inheritance.
#[utoipa::path(put, path = "/api/metadata/project/{projectId}/members", tag = "projects",
    params(("projectId" = uuid::Uuid, Path)), request_body = SetMembersRequest,
    responses((status = 200, body = IdRowVersionDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn set_members(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    body: JsonBody<SetMembersRequest>,
) -> ApiResult<Json<IdRowVersionDto>> {
    replace_members(&state, &principal, id, body).await
}

/// Set the members of a (sub)project (same as `PUT .../members`).
#[utoipa::path(put, path = "/api/metadata/project/{id}/member", tag = "projects",
    params(("id" = uuid::Uuid, Path)), request_body = SetMembersRequest,
    responses((status = 200, body = IdRowVersionDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn set_members_alias(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    body: JsonBody<SetMembersRequest>,
) -> ApiResult<Json<IdRowVersionDto>> {
    replace_members(&state, &principal, id, body).await
}

/// Make a subproject inherit its members; its own member list is cleared.
#[utoipa::path(put, path = "/api/metadata/project/{projectId}/members/inherit", tag = "projects",
    params(("projectId" = uuid::Uuid, Path)), request_body = InheritMembersRequest,
    responses((status = 200, body = IdRowVersionDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn inherit_members(
    State(state): State<ProjectsState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    body: JsonBody<InheritMembersRequest>,
) -> ApiResult<Json<IdRowVersionDto>> {
    let caller = Caller::from(&principal);
    state
        .projects
        .authorize(&caller, id, Capability::GrantAccess)
        .await?;
    let request = body.read().await?;
    let expected = ProjectService::parse_row_version(request.row_version.as_deref())?;
    let row = state
        .projects
        .inherit_members(&caller, id, expected)
        .await?;
    Ok(Json(IdRowVersionDto {
        id: row.id,
        row_version: row_version_text(row.row_version),
    }))
}
