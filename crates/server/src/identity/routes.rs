//! Identity endpoints: `principal/me`, `tenant/my` (docs/authentication.md#the-caller) and the
//! administration API under `/api/admin` (tenants, users, members, API keys). HTTP only: rules
//! live in `service.rs`.

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Principal;
use crate::db::SortValue;
use crate::error::{ApiError, ApiResult};
use crate::http::api_version::{self, ADMIN, IAM};
use crate::http::extract::{Json, JsonBody, Path, Query};
use crate::http::paging::{
    Cursor, CursorPage, CursorRequest, DataList, OffsetPage, OffsetRequest, SortKind,
};
use crate::http::wire_enum::sort::SortOrder;
use crate::identity::model::*;
use crate::identity::service::{
    Added, IdentityError, IdentityService, ListPage, SortColumn, UserRef,
};
use crate::ids::{ApiKeyId, InvitationId, TenantId, UserId};

/// What the identity and administration endpoints need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct IdentityState {
    /// Identity and administration rules.
    pub(crate) identity: crate::identity::service::IdentityService,
    /// Page sizes.
    pub(crate) page_limits: crate::http::paging::PageLimits,
}

/// Identity routes with their OpenAPI description.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    IdentityState: FromRef<S>,
    std::sync::Arc<crate::auth::Authenticator>: FromRef<S>,
{
    let iam = OpenApiRouter::new()
        .routes(routes!(get_principal_me))
        .routes(routes!(list_my_tenants))
        .routes(routes!(list_my_invitations))
        .routes(routes!(accept_invitation))
        .routes(routes!(decline_invitation))
        .layer(from_fn_with_state(IAM, api_version::enforce));
    let admin = OpenApiRouter::new()
        .routes(routes!(create_tenant, list_tenants))
        .routes(routes!(get_tenant))
        .routes(routes!(list_members, add_member))
        .routes(routes!(set_member_role, remove_member))
        .routes(routes!(list_invitations))
        .routes(routes!(withdraw_invitation))
        .routes(routes!(list_api_keys, create_api_key))
        .routes(routes!(revoke_api_key))
        .routes(routes!(create_user, list_users))
        .routes(routes!(get_user, update_user))
        .layer(from_fn_with_state(ADMIN, api_version::enforce));
    iam.merge(admin)
}

impl From<IdentityError> for ApiError {
    fn from(error: IdentityError) -> Self {
        match error {
            IdentityError::Invalid { field, message } => ApiError::field(field, message),
            IdentityError::NotFound(what) => ApiError::NotFound(format!(
                "The {what} does not exist or is not visible to you."
            )),
            IdentityError::Forbidden(detail) => ApiError::Forbidden(detail),
            IdentityError::EmailTaken => ApiError::Conflict {
                kind: "email-taken",
                detail: "A user with this e-mail already exists.".into(),
            },
            IdentityError::AlreadyMember => ApiError::Conflict {
                kind: "already-member",
                detail: "The user is already a member of this tenant.".into(),
            },
            IdentityError::LastOwner => ApiError::Conflict {
                kind: "last-owner",
                detail: "A tenant must keep at least one Owner.".into(),
            },
            IdentityError::InvitationNotFound => {
                ApiError::NotFound("The invitation does not exist, lapsed, or is not yours.".into())
            }
            IdentityError::Store(error) => error.into(),
        }
    }
}

fn parse_name(raw: &str) -> ApiResult<DisplayName> {
    DisplayName::parse(raw).map_err(|message| ApiError::field("name", format!("name {message}")))
}

fn parse_email(raw: &str) -> ApiResult<Email> {
    Email::parse(raw).map_err(|message| ApiError::field("email", format!("email {message}")))
}

// ---- the caller ----

/// The authenticated caller.
#[utoipa::path(get, path = "/api/iam/principal/me", tag = "identity",
    responses((status = 200, body = PrincipalDto), (status = 401, description = "Not authenticated")))]
async fn get_principal_me(principal: Principal) -> Json<PrincipalDto> {
    Json(PrincipalDto {
        id: principal.id,
        role: principal.display_role(),
        name: principal.name,
        email: principal.email,
        tenant_id: principal.tenant_id,
        principal_type: principal.principal_type,
        platform_roles: principal
            .platform_roles
            .iter()
            .map(|role| role.as_str().to_owned())
            .collect(),
        scopes: principal.scopes.into_iter().collect(),
    })
}

/// Tenants the caller belongs to, with its role in each.
#[utoipa::path(get, path = "/api/iam/tenant/my", tag = "identity",
    responses((status = 200, body = DataList<MyTenantDto>), (status = 401, description = "Not authenticated")))]
async fn list_my_tenants(
    State(state): State<IdentityState>,
    principal: Principal,
) -> ApiResult<Json<DataList<MyTenantDto>>> {
    let tenants = state.identity.my_tenants(&principal).await?;
    Ok(Json(DataList {
        data: tenants
            .into_iter()
            .map(|(tenant, role)| MyTenantDto {
                id: tenant.id,
                name: tenant.name,
                role,
                created_at: tenant.created_at.into(),
                updated_at: tenant.updated_at.into(),
            })
            .collect(),
    }))
}

// ---- keyset lists ----

crate::wire_enum! {
    /// Sort keys of tenant and user lists.
    pub(crate) enum ListSortBy {
        /// By name.
        Name,
        /// By creation time.
        CreatedAt,
    }
}

/// Query of cursor-paged admin lists.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct KeysetListQuery {
    /// Cursor from the previous page.
    cursor: Option<String>,
    /// Page size.
    limit: Option<u32>,
    /// `Name` (default) or `CreatedAt`.
    #[param(value_type = Option<ListSortBy>)]
    sort_by: Option<ListSortBy>,
    /// `Asc` (default) or `Desc`.
    #[param(value_type = Option<SortOrder>)]
    sort_order: Option<SortOrder>,
    /// Only users of this tenant (user list only).
    #[param(value_type = Option<uuid::Uuid>)]
    tenant_id: Option<TenantId>,
}

struct PageSpec {
    page: ListPage,
    request: CursorRequest,
    tag: String,
    column: SortColumn,
}

impl KeysetListQuery {
    fn page(&self, list: &str, state: &IdentityState) -> ApiResult<PageSpec> {
        let sort_by = self.sort_by.unwrap_or(ListSortBy::Name);
        let order = self.sort_order.unwrap_or_default();
        let tag = format!("{list}:{sort_by}:{order}");
        let request =
            CursorRequest::parse(self.cursor.as_deref(), self.limit, &tag, state.page_limits)?;
        let column = match sort_by {
            ListSortBy::Name => SortColumn::Name,
            ListSortBy::CreatedAt => SortColumn::CreatedAt,
        };
        let kind = match column {
            SortColumn::Name => SortKind::Text,
            SortColumn::CreatedAt => SortKind::Time,
        };
        let after = request
            .after
            .as_ref()
            .map(|cursor| cursor.position(kind))
            .transpose()?;
        Ok(PageSpec {
            page: ListPage {
                column,
                descending: order == SortOrder::Desc,
                after,
                fetch: request.fetch_count(),
            },
            request,
            tag,
            column,
        })
    }
}

fn position(spec: &PageSpec, name: &str, created_at: DateTime<Utc>, id: uuid::Uuid) -> Cursor {
    let value = match spec.column {
        SortColumn::Name => SortValue::Text(name.to_owned()),
        SortColumn::CreatedAt => SortValue::Time(created_at),
    };
    Cursor::at(&spec.tag, value, id)
}

/// Query of offset-paged admin lists.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct OffsetListQuery {
    /// Rows to skip.
    offset: Option<u32>,
    /// Page size.
    limit: Option<u32>,
}

// ---- tenants ----

/// Create a tenant (BackOffice or CloudAdministrator).
#[utoipa::path(post, path = "/api/admin/tenants", tag = "admin", request_body = CreateTenantRequest,
    responses((status = 201, body = TenantDto), (status = 400), (status = 401), (status = 403)))]
async fn create_tenant(
    State(state): State<IdentityState>,
    principal: Principal,
    body: JsonBody<CreateTenantRequest>,
) -> ApiResult<Response> {
    IdentityService::require_platform_admin(&principal, "creating tenants")?;
    let request = body.read().await?;
    let name = parse_name(&request.name)?;
    let tenant = state.identity.create_tenant(&principal, name).await?;
    Ok((StatusCode::CREATED, Json(TenantDto::from(tenant))).into_response())
}

/// Tenants the caller manages (all for BackOffice), cursor-paged.
#[utoipa::path(get, path = "/api/admin/tenants", tag = "admin", params(KeysetListQuery),
    responses((status = 200, body = CursorPage<TenantDto>), (status = 400), (status = 401)))]
async fn list_tenants(
    State(state): State<IdentityState>,
    principal: Principal,
    Query(query): Query<KeysetListQuery>,
) -> ApiResult<Json<CursorPage<TenantDto>>> {
    let spec = query.page("tenants", &state)?;
    let rows = state.identity.list_tenants(&principal, &spec.page).await?;
    Ok(Json(CursorPage::from_rows(
        rows,
        &spec.request,
        |tenant| position(&spec, &tenant.name, tenant.created_at, tenant.id.as_uuid()),
        TenantDto::from,
    )))
}

/// One tenant, with the bytes it stores in datasets, uploads and the recycle bin.
#[utoipa::path(get, path = "/api/admin/tenants/{tenantId}", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path)),
    responses((status = 200, body = TenantDetailsDto), (status = 403), (status = 404)))]
async fn get_tenant(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
) -> ApiResult<Json<TenantDetailsDto>> {
    let (tenant, storage) = state.identity.tenant_details(&principal, tenant).await?;
    Ok(Json(TenantDetailsDto {
        tenant: tenant.into(),
        storage: storage.into(),
    }))
}

// ---- members ----

/// Members of a tenant, offset-paged.
#[utoipa::path(get, path = "/api/admin/tenants/{tenantId}/members", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path), OffsetListQuery),
    responses((status = 200, body = OffsetPage<MemberDto>), (status = 403), (status = 404)))]
async fn list_members(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
    Query(query): Query<OffsetListQuery>,
) -> ApiResult<Json<OffsetPage<MemberDto>>> {
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let (total, members) = state
        .identity
        .list_members(&principal, tenant, page.offset, page.limit)
        .await?;
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data: members.into_iter().map(MemberDto::from).collect(),
    }))
}

/// Add a user to a tenant by `userId` (a user of a tenant the caller manages, or of none), or
/// by `email`: a user of a tenant the caller manages joins at once (201); any other address is
/// invited (202), whether or not it is known elsewhere.
#[utoipa::path(post, path = "/api/admin/tenants/{tenantId}/members", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path)), request_body = AddMemberRequest,
    responses((status = 201, body = MemberDto), (status = 202, body = InvitationDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn add_member(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
    body: JsonBody<AddMemberRequest>,
) -> ApiResult<Response> {
    state.identity.require_manager(&principal, tenant).await?;
    let request = body.read().await?;
    let user = match (request.user_id, request.email.as_deref()) {
        (Some(id), None) => UserRef::Id(id),
        (None, Some(email)) => UserRef::Email(parse_email(email)?),
        _ => {
            return Err(ApiError::field(
                "userId",
                "give exactly one of userId and email",
            ));
        }
    };
    let role = request.role.unwrap_or(TenantRole::User);
    match state
        .identity
        .add_member(&principal, tenant, user, role)
        .await?
    {
        Added::Member(member) => {
            Ok((StatusCode::CREATED, Json(MemberDto::from(member))).into_response())
        }
        Added::Invited(invitation) => Ok((
            StatusCode::ACCEPTED,
            Json(InvitationDto::new(invitation, None)),
        )
            .into_response()),
    }
}

/// Change a member's role.
#[utoipa::path(put, path = "/api/admin/tenants/{tenantId}/members/{userId}", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path), ("userId" = uuid::Uuid, Path)), request_body = SetMemberRoleRequest,
    responses((status = 200, body = MemberDto), (status = 403), (status = 404), (status = 409)))]
async fn set_member_role(
    State(state): State<IdentityState>,
    principal: Principal,
    Path((tenant, user)): Path<(TenantId, UserId)>,
    body: JsonBody<SetMemberRoleRequest>,
) -> ApiResult<Json<MemberDto>> {
    state.identity.require_manager(&principal, tenant).await?;
    let request = body.read().await?;
    let member = state
        .identity
        .set_member_role(&principal, tenant, user, request.role)
        .await?;
    Ok(Json(member.into()))
}

/// Remove a member from a tenant.
#[utoipa::path(delete, path = "/api/admin/tenants/{tenantId}/members/{userId}", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path), ("userId" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404), (status = 409)))]
async fn remove_member(
    State(state): State<IdentityState>,
    principal: Principal,
    Path((tenant, user)): Path<(TenantId, UserId)>,
) -> ApiResult<StatusCode> {
    state
        .identity
        .remove_member(&principal, tenant, user)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

// ---- invitations ----

/// Open invitations of a tenant, newest first, offset-paged.
#[utoipa::path(get, path = "/api/admin/tenants/{tenantId}/invitations", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path), OffsetListQuery),
    responses((status = 200, body = OffsetPage<InvitationDto>), (status = 403), (status = 404)))]
async fn list_invitations(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
    Query(query): Query<OffsetListQuery>,
) -> ApiResult<Json<OffsetPage<InvitationDto>>> {
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let (total, invitations) = state
        .identity
        .list_invitations(&principal, tenant, page.offset, page.limit)
        .await?;
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data: invitations
            .into_iter()
            .map(|invitation| InvitationDto::new(invitation, None))
            .collect(),
    }))
}

/// Withdraw an invitation.
#[utoipa::path(delete, path = "/api/admin/tenants/{tenantId}/invitations/{invitationId}", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path), ("invitationId" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn withdraw_invitation(
    State(state): State<IdentityState>,
    principal: Principal,
    Path((tenant, id)): Path<(TenantId, InvitationId)>,
) -> ApiResult<StatusCode> {
    state
        .identity
        .withdraw_invitation(&principal, tenant, id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The caller's open invitations: those to the e-mail address of its user record.
#[utoipa::path(get, path = "/api/iam/invitation/my", tag = "identity",
    responses((status = 200, body = DataList<InvitationDto>), (status = 401)))]
async fn list_my_invitations(
    State(state): State<IdentityState>,
    principal: Principal,
) -> ApiResult<Json<DataList<InvitationDto>>> {
    let invitations = state.identity.my_invitations(&principal).await?;
    Ok(Json(DataList {
        data: invitations
            .into_iter()
            .map(|(invitation, tenant)| InvitationDto::new(invitation, Some(tenant)))
            .collect(),
    }))
}

/// Accept an invitation: the caller joins the tenant with the invited role.
#[utoipa::path(post, path = "/api/iam/invitation/{invitationId}/accept", tag = "identity",
    params(("invitationId" = uuid::Uuid, Path)),
    responses((status = 201, body = MyTenantDto), (status = 401), (status = 404), (status = 409)))]
async fn accept_invitation(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(id): Path<InvitationId>,
) -> ApiResult<Response> {
    let (tenant, role) = state.identity.accept_invitation(&principal, id).await?;
    let body = MyTenantDto {
        id: tenant.id,
        name: tenant.name,
        role,
        created_at: tenant.created_at.into(),
        updated_at: tenant.updated_at.into(),
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// Decline an invitation.
#[utoipa::path(post, path = "/api/iam/invitation/{invitationId}/decline", tag = "identity",
    params(("invitationId" = uuid::Uuid, Path)),
    responses((status = 204), (status = 401), (status = 404)))]
async fn decline_invitation(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(id): Path<InvitationId>,
) -> ApiResult<StatusCode> {
    state.identity.decline_invitation(&principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

// ---- API keys ----

/// API keys of a tenant, newest first, offset-paged. Keys themselves are never shown again.
#[utoipa::path(get, path = "/api/admin/tenants/{tenantId}/api-keys", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path), OffsetListQuery),
    responses((status = 200, body = OffsetPage<ApiKeyDto>), (status = 403), (status = 404)))]
async fn list_api_keys(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
    Query(query): Query<OffsetListQuery>,
) -> ApiResult<Json<OffsetPage<ApiKeyDto>>> {
    let page = OffsetRequest::parse(query.offset, query.limit, state.page_limits)?;
    let (total, keys) = state
        .identity
        .list_api_keys(&principal, tenant, page.offset, page.limit)
        .await?;
    Ok(Json(OffsetPage {
        total_count: total,
        offset: page.offset,
        limit: page.limit,
        data: keys.into_iter().map(ApiKeyDto::from).collect(),
    }))
}

/// Create an API key; the response holds the key, shown this once.
#[utoipa::path(post, path = "/api/admin/tenants/{tenantId}/api-keys", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path)), request_body = CreateApiKeyRequest,
    responses((status = 201, body = CreatedApiKeyDto), (status = 400), (status = 403), (status = 404)))]
async fn create_api_key(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(tenant): Path<TenantId>,
    body: JsonBody<CreateApiKeyRequest>,
) -> ApiResult<Response> {
    state.identity.require_manager(&principal, tenant).await?;
    let request = body.read().await?;
    let name = parse_name(&request.name)?;
    let role = request.role.unwrap_or(TenantRole::User);
    let (key, secret) = state
        .identity
        .create_api_key(&principal, tenant, name, role)
        .await?;
    let body = CreatedApiKeyDto {
        record: key.into(),
        api_key: secret.reveal(),
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// Revoke an API key: calls made with it are refused with 401 from now on.
#[utoipa::path(delete, path = "/api/admin/tenants/{tenantId}/api-keys/{keyId}", tag = "admin",
    params(("tenantId" = uuid::Uuid, Path), ("keyId" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403), (status = 404)))]
async fn revoke_api_key(
    State(state): State<IdentityState>,
    principal: Principal,
    Path((tenant, key)): Path<(TenantId, ApiKeyId)>,
) -> ApiResult<StatusCode> {
    state
        .identity
        .revoke_api_key(&principal, tenant, key)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

// ---- users ----

/// Create a user. Tenant owners and administrators must give their `tenantId`; the user
/// joins it with `role` (default `User`).
#[utoipa::path(post, path = "/api/admin/users", tag = "admin", request_body = CreateUserRequest,
    responses((status = 201, body = UserDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn create_user(
    State(state): State<IdentityState>,
    principal: Principal,
    body: JsonBody<CreateUserRequest>,
) -> ApiResult<Response> {
    state.identity.require_manager_anywhere(&principal).await?;
    let request = body.read().await?;
    let name = parse_name(&request.name)?;
    let email = request.email.as_deref().map(parse_email).transpose()?;
    let tenant = match (request.tenant_id, request.role) {
        (Some(tenant), role) => Some((tenant, role.unwrap_or(TenantRole::User))),
        (None, Some(_)) => return Err(ApiError::field("role", "a role needs a tenantId")),
        (None, None) => None,
    };
    let user = state
        .identity
        .create_user(&principal, name, email, tenant)
        .await?;
    Ok((StatusCode::CREATED, Json(UserDto::from(user))).into_response())
}

/// Users: all (BackOffice), or the members of the caller's tenant; cursor-paged.
#[utoipa::path(get, path = "/api/admin/users", tag = "admin", params(KeysetListQuery),
    responses((status = 200, body = CursorPage<UserDto>), (status = 400), (status = 403), (status = 404)))]
async fn list_users(
    State(state): State<IdentityState>,
    principal: Principal,
    Query(query): Query<KeysetListQuery>,
) -> ApiResult<Json<CursorPage<UserDto>>> {
    let list = match query.tenant_id {
        Some(tenant) => format!("users@{tenant}"),
        None => "users".to_owned(),
    };
    let spec = query.page(&list, &state)?;
    let rows = state
        .identity
        .list_users(&principal, query.tenant_id, &spec.page)
        .await?;
    Ok(Json(CursorPage::from_rows(
        rows,
        &spec.request,
        |user| position(&spec, &user.name, user.created_at, user.id.as_uuid()),
        UserDto::from,
    )))
}

/// One user.
#[utoipa::path(get, path = "/api/admin/users/{userId}", tag = "admin",
    params(("userId" = uuid::Uuid, Path)),
    responses((status = 200, body = UserDto), (status = 404)))]
async fn get_user(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(user): Path<UserId>,
) -> ApiResult<Json<UserDto>> {
    Ok(Json(
        state.identity.get_user(&principal, user).await?.into(),
    ))
}

/// Change a user's name or e-mail, or disable it (its tokens are then refused with 401).
#[utoipa::path(patch, path = "/api/admin/users/{userId}", tag = "admin",
    params(("userId" = uuid::Uuid, Path)), request_body = UpdateUserRequest,
    responses((status = 200, body = UserDto), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn update_user(
    State(state): State<IdentityState>,
    principal: Principal,
    Path(user): Path<UserId>,
    body: JsonBody<UpdateUserRequest>,
) -> ApiResult<Json<UserDto>> {
    IdentityService::require_platform_admin(&principal, "changing users")?;
    let request = body.read().await?;
    let name = request.name.as_deref().map(parse_name).transpose()?;
    let email = request.email.as_deref().map(parse_email).transpose()?;
    let user = state
        .identity
        .update_user(&principal, user, name, email, request.disabled)
        .await?;
    Ok(Json(user.into()))
}
