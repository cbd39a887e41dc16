//! Recycle bin endpoints under `/api/recycle-bin` (docs/recycle-bin.md#endpoints), and the
//! operator's retention trigger. HTTP only: rules live in `service.rs`.

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::{Caller, Principal};
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, RECYCLE_BIN};
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{OffsetPage, OffsetRequest, PageLimits};
use crate::http::wire_enum::sort::SortOrder;
use crate::ids::{DatasetId, ProjectId};
use crate::recycle_bin::model::{
    BinItemDto, DeletedDatasetDto, ItemType, PurgeCounts, RestoreRequest,
};
use crate::recycle_bin::service::{BinError, BinScope, BinSort, RecycleBinService};

/// What the bin endpoints need.
#[derive(Debug, Clone)]
pub(crate) struct RecycleBinState {
    /// Bin rules.
    pub(crate) bin: RecycleBinService,
    /// Page sizes.
    pub(crate) page_limits: PageLimits,
}

/// Bin routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    RecycleBinState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_all_datasets))
        .routes(routes!(list_projects))
        .routes(routes!(list_project_datasets))
        .routes(routes!(list_subprojects))
        .routes(routes!(my_deleted_items))
        .routes(routes!(all_deleted_items))
        .routes(routes!(get_project, purge_project))
        .routes(routes!(get_dataset_in_project, purge_dataset_in_project))
        .routes(routes!(get_dataset, purge_dataset))
        .routes(routes!(restore_project, restore_project_elsewhere))
        .routes(routes!(
            restore_dataset_in_project,
            restore_dataset_in_project_elsewhere
        ))
        .routes(routes!(restore_dataset, restore_dataset_elsewhere))
        .routes(routes!(purge_expired))
        .layer(from_fn_with_state(RECYCLE_BIN, api_version::enforce))
}

impl From<BinError> for ApiError {
    fn from(error: BinError) -> Self {
        match error {
            BinError::NotFound => ApiError::NotFound(
                "The item is not in the recycle bin, or not visible to you.".into(),
            ),
            BinError::Project(error) => error.into(),
            BinError::Conflict { kind, detail } => ApiError::Conflict { kind, detail },
            BinError::Store(error) => error.into(),
        }
    }
}

crate::wire_enum! {
    /// Sort keys of bin listings.
    pub(crate) enum BinSortBy {
        /// By name.
        Name,
        /// By deletion time (the default).
        DeletedAt,
        /// By size.
        StorageSize,
    }
}

/// Query of bin listings.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct BinListQuery {
    /// Rows to skip.
    offset: Option<u32>,
    /// Page size.
    limit: Option<u32>,
    /// `DeletedAt` (default), `Name` or `StorageSize`.
    #[param(value_type = Option<BinSortBy>)]
    sort_by: Option<BinSortBy>,
    /// `Desc` (default for `DeletedAt`) or `Asc` (default otherwise).
    #[param(value_type = Option<SortOrder>)]
    sort_order: Option<SortOrder>,
}

impl BinListQuery {
    fn sort(&self) -> (BinSort, bool) {
        let sort = match self.sort_by.unwrap_or(BinSortBy::DeletedAt) {
            BinSortBy::Name => BinSort::Name,
            BinSortBy::DeletedAt => BinSort::DeletedAt,
            BinSortBy::StorageSize => BinSort::StorageSize,
        };
        let descending = match self.sort_order {
            Some(order) => order == SortOrder::Desc,
            None => sort == BinSort::DeletedAt,
        };
        (sort, descending)
    }
}

async fn page(
    state: &RecycleBinState,
    principal: &Principal,
    query: &BinListQuery,
    listing: Listing,
) -> ApiResult<Json<OffsetPage<BinItemDto>>> {
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let caller = Caller::from(principal);
    let window = (page.offset, page.limit);
    let (rows, total) = match listing {
        Listing::Tenant(scope) => {
            state
                .bin
                .list(&caller, &scope, query.sort(), window)
                .await?
        }
        Listing::In(project, item_type) => {
            state
                .bin
                .list_in(&caller, project, item_type, query.sort(), window)
                .await?
        }
    };
    let retention = state.bin.retention();
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data: rows
            .iter()
            .map(|row| BinItemDto::of(row, retention))
            .collect(),
    }))
}

/// Which items a listing holds.
enum Listing {
    /// Across the caller's tenant.
    Tenant(BinScope),
    /// Directly in one project.
    In(ProjectId, ItemType),
}

fn of_type(item_type: ItemType) -> BinScope {
    BinScope {
        item_type: Some(item_type),
        ..BinScope::default()
    }
}

/// Deleted datasets across all projects of the caller's tenant.
#[utoipa::path(get, path = "/api/recycle-bin/dataset/list", tag = "recycle-bin", params(BinListQuery),
    responses((status = 200, body = OffsetPage<BinItemDto>), (status = 400), (status = 401)))]
async fn list_all_datasets(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Query(query): Query<BinListQuery>,
) -> ApiResult<Json<OffsetPage<BinItemDto>>> {
    page(
        &state,
        &principal,
        &query,
        Listing::Tenant(of_type(ItemType::Dataset)),
    )
    .await
}

/// Deleted projects and subprojects.
#[utoipa::path(get, path = "/api/recycle-bin/project/list", tag = "recycle-bin", params(BinListQuery),
    responses((status = 200, body = OffsetPage<BinItemDto>), (status = 400), (status = 401)))]
async fn list_projects(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Query(query): Query<BinListQuery>,
) -> ApiResult<Json<OffsetPage<BinItemDto>>> {
    page(
        &state,
        &principal,
        &query,
        Listing::Tenant(of_type(ItemType::Project)),
    )
    .await
}

/// Deleted datasets of one project.
#[utoipa::path(get, path = "/api/recycle-bin/project/{projectId}/dataset/list", tag = "recycle-bin",
    params(("projectId" = Uuid, Path), BinListQuery),
    responses((status = 200, body = OffsetPage<BinItemDto>), (status = 404)))]
async fn list_project_datasets(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(project): Path<ProjectId>,
    Query(query): Query<BinListQuery>,
) -> ApiResult<Json<OffsetPage<BinItemDto>>> {
    page(
        &state,
        &principal,
        &query,
        Listing::In(project, ItemType::Dataset),
    )
    .await
}

/// Deleted subprojects directly below one project.
#[utoipa::path(get, path = "/api/recycle-bin/project/{id}/subprojects", tag = "recycle-bin",
    params(("id" = Uuid, Path), BinListQuery),
    responses((status = 200, body = OffsetPage<BinItemDto>), (status = 404)))]
async fn list_subprojects(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(project): Path<ProjectId>,
    Query(query): Query<BinListQuery>,
) -> ApiResult<Json<OffsetPage<BinItemDto>>> {
    page(
        &state,
        &principal,
        &query,
        Listing::In(project, ItemType::Project),
    )
    .await
}

/// Items the caller deleted directly: projects, subprojects and datasets in one list.
#[utoipa::path(get, path = "/api/recycle-bin/my-deleted-items", tag = "recycle-bin", params(BinListQuery),
    responses((status = 200, body = OffsetPage<BinItemDto>), (status = 400), (status = 401)))]
async fn my_deleted_items(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Query(query): Query<BinListQuery>,
) -> ApiResult<Json<OffsetPage<BinItemDto>>> {
    let scope = BinScope {
        deleted_by: Some(principal.id),
        ..BinScope::default()
    };
    page(&state, &principal, &query, Listing::Tenant(scope)).await
}

/// Every item of the bin the caller may manage, projects and datasets in one list.
#[utoipa::path(get, path = "/api/recycle-bin/all-deleted-items", tag = "recycle-bin", params(BinListQuery),
    responses((status = 200, body = OffsetPage<BinItemDto>), (status = 400), (status = 401)))]
async fn all_deleted_items(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Query(query): Query<BinListQuery>,
) -> ApiResult<Json<OffsetPage<BinItemDto>>> {
    page(
        &state,
        &principal,
        &query,
        Listing::Tenant(BinScope::default()),
    )
    .await
}

/// A deleted project: its bin entry.
#[utoipa::path(get, path = "/api/recycle-bin/project/{projectId}", tag = "recycle-bin",
    params(("projectId" = Uuid, Path)),
    responses((status = 200, body = BinItemDto), (status = 403), (status = 404)))]
async fn get_project(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<Json<BinItemDto>> {
    let (row, _) = state.bin.project(&Caller::from(&principal), id).await?;
    Ok(Json(BinItemDto::of(&row, state.bin.retention())))
}

/// A deleted dataset of a project: its record.
#[utoipa::path(get, path = "/api/recycle-bin/project/{projectId}/dataset/{id}", tag = "recycle-bin",
    params(("projectId" = Uuid, Path), ("id" = Uuid, Path)),
    responses((status = 200, body = DeletedDatasetDto), (status = 403), (status = 404)))]
async fn get_dataset_in_project(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path((project, id)): Path<(ProjectId, DatasetId)>,
) -> ApiResult<Json<DeletedDatasetDto>> {
    let (item, record) = state
        .bin
        .dataset(&Caller::from(&principal), Some(project), id)
        .await?;
    Ok(Json(DeletedDatasetDto::of(&item, &record)))
}

/// A deleted dataset: its record.
#[utoipa::path(get, path = "/api/recycle-bin/dataset/{id}", tag = "recycle-bin",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = DeletedDatasetDto), (status = 403), (status = 404)))]
async fn get_dataset(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
) -> ApiResult<Json<DeletedDatasetDto>> {
    let (item, record) = state
        .bin
        .dataset(&Caller::from(&principal), None, id)
        .await?;
    Ok(Json(DeletedDatasetDto::of(&item, &record)))
}

async fn restore(
    state: &RecycleBinState,
    principal: &Principal,
    item: (ItemType, Uuid, Option<ProjectId>),
    target: Option<ProjectId>,
) -> ApiResult<StatusCode> {
    let (item_type, id, container) = item;
    state
        .bin
        .restore(&Caller::from(principal), item_type, id, container, target)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// [`restore`] to the project the body names, once the caller is known to manage the item.
async fn restore_elsewhere(
    state: &RecycleBinState,
    principal: &Principal,
    item: (ItemType, Uuid, Option<ProjectId>),
    body: JsonBody<RestoreRequest>,
) -> ApiResult<StatusCode> {
    state
        .bin
        .authorize_restore(&Caller::from(principal), item)
        .await?;
    let request = body.read().await?;
    restore(state, principal, item, request.target_project_id).await
}

/// Restore a project in place, with every project in the bin on its path.
#[utoipa::path(put, path = "/api/recycle-bin/project/{id}/restore", tag = "recycle-bin",
    params(("id" = Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404), (status = 409)))]
async fn restore_project(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<StatusCode> {
    restore(
        &state,
        &principal,
        (ItemType::Project, id.as_uuid(), None),
        None,
    )
    .await
}

/// Restore a project into another project (`targetProjectId`); without a body, in place.
#[utoipa::path(post, path = "/api/recycle-bin/project/{id}/restore", tag = "recycle-bin",
    params(("id" = Uuid, Path)), request_body = RestoreRequest,
    responses((status = 204), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn restore_project_elsewhere(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
    body: JsonBody<RestoreRequest>,
) -> ApiResult<StatusCode> {
    let item = (ItemType::Project, id.as_uuid(), None);
    restore_elsewhere(&state, &principal, item, body).await
}

/// Restore a dataset of a project in place.
#[utoipa::path(put, path = "/api/recycle-bin/project/{projectId}/dataset/{id}/restore", tag = "recycle-bin",
    params(("projectId" = Uuid, Path), ("id" = Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404), (status = 409)))]
async fn restore_dataset_in_project(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path((project, id)): Path<(ProjectId, DatasetId)>,
) -> ApiResult<StatusCode> {
    let item = (ItemType::Dataset, id.as_uuid(), Some(project));
    restore(&state, &principal, item, None).await
}

/// Restore a dataset of a project into another project; without a body, in place.
#[utoipa::path(post, path = "/api/recycle-bin/project/{projectId}/dataset/{id}/restore", tag = "recycle-bin",
    params(("projectId" = Uuid, Path), ("id" = Uuid, Path)), request_body = RestoreRequest,
    responses((status = 204), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn restore_dataset_in_project_elsewhere(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path((project, id)): Path<(ProjectId, DatasetId)>,
    body: JsonBody<RestoreRequest>,
) -> ApiResult<StatusCode> {
    let item = (ItemType::Dataset, id.as_uuid(), Some(project));
    restore_elsewhere(&state, &principal, item, body).await
}

/// Restore a dataset in place.
#[utoipa::path(put, path = "/api/recycle-bin/dataset/{id}/restore", tag = "recycle-bin",
    params(("id" = Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404), (status = 409)))]
async fn restore_dataset(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
) -> ApiResult<StatusCode> {
    restore(
        &state,
        &principal,
        (ItemType::Dataset, id.as_uuid(), None),
        None,
    )
    .await
}

/// Restore a dataset into another project; without a body, in place.
#[utoipa::path(post, path = "/api/recycle-bin/dataset/{id}/restore", tag = "recycle-bin",
    params(("id" = Uuid, Path)), request_body = RestoreRequest,
    responses((status = 204), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn restore_dataset_elsewhere(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
    body: JsonBody<RestoreRequest>,
) -> ApiResult<StatusCode> {
    let item = (ItemType::Dataset, id.as_uuid(), None);
    restore_elsewhere(&state, &principal, item, body).await
}

async fn purge(
    state: &RecycleBinState,
    principal: &Principal,
    item: (ItemType, Uuid, Option<ProjectId>),
) -> ApiResult<StatusCode> {
    let (item_type, id, container) = item;
    state
        .bin
        .purge(&Caller::from(principal), item_type, id, container)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Delete a project in the bin for good, with everything below it and their content.
#[utoipa::path(delete, path = "/api/recycle-bin/project/{projectId}", tag = "recycle-bin",
    params(("projectId" = Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn purge_project(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<ProjectId>,
) -> ApiResult<StatusCode> {
    purge(&state, &principal, (ItemType::Project, id.as_uuid(), None)).await
}

/// Delete a dataset of a project in the bin for good, with its content.
#[utoipa::path(delete, path = "/api/recycle-bin/project/{projectId}/dataset/{id}", tag = "recycle-bin",
    params(("projectId" = Uuid, Path), ("id" = Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn purge_dataset_in_project(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path((project, id)): Path<(ProjectId, DatasetId)>,
) -> ApiResult<StatusCode> {
    purge(
        &state,
        &principal,
        (ItemType::Dataset, id.as_uuid(), Some(project)),
    )
    .await
}

/// Delete a dataset in the bin for good, with its content.
#[utoipa::path(delete, path = "/api/recycle-bin/dataset/{id}", tag = "recycle-bin",
    params(("id" = Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn purge_dataset(
    State(state): State<RecycleBinState>,
    principal: Principal,
    Path(id): Path<DatasetId>,
) -> ApiResult<StatusCode> {
    purge(&state, &principal, (ItemType::Dataset, id.as_uuid(), None)).await
}

/// Run the retention job now (BackOffice or CloudAdministrator): removes for good every item
/// in the bin longer than `recycle_bin.retention_days`, and finishes interrupted purges. Works
/// for at most 10 seconds; `finished` false means the background job goes on.
#[utoipa::path(post, path = "/api/admin/recycle-bin/purge-expired", tag = "recycle-bin",
    responses((status = 200, body = PurgeCounts), (status = 401), (status = 403)))]
async fn purge_expired(
    State(state): State<RecycleBinState>,
    principal: Principal,
) -> ApiResult<Json<PurgeCounts>> {
    if !principal.is_platform_admin() {
        return Err(ApiError::Forbidden(
            "running the retention job needs the BackOffice or CloudAdministrator role".into(),
        ));
    }
    let counts = state.bin.run_retention(Some(RETENTION_RUN_BUDGET)).await?;
    if !counts.finished {
        state.bin.wake_purge();
    }
    Ok(Json(counts))
}

/// How long the operator's retention run works before it answers; the background job
/// finishes what is left.
const RETENTION_RUN_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);
