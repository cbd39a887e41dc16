//! Project values, stored rows and wire shapes (spec 2.5, wire-contract 3).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::auth::PrincipalType;
use crate::http::time::WireTime;
use crate::ids::{ProjectId, TenantId};
use crate::projects::access::Capabilities;

crate::wire_enum! {
    /// Who may see a project without being a member.
    pub enum AccessLevel {
        /// Members only; tenant administrators get no implicit access.
        Confidential,
        /// Members, and tenant administrators as Owner.
        Private,
        /// Members, tenant administrators as Owner, every tenant member as Reader.
        Shared,
    }
}

crate::wire_enum! {
    /// A member's role in a project, lowest first.
    pub enum ProjectRole {
        /// Lists and reads content.
        Reader,
        /// Also creates, changes and deletes content.
        Contributor,
        /// Also edits, deletes and grants access to the project.
        Owner,
    }
}

/// A project row as stored.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ProjectRow {
    /// Id.
    pub id: ProjectId,
    /// Tenant.
    pub tenant_id: TenantId,
    /// Parent, for subprojects.
    pub parent_id: Option<ProjectId>,
    /// Top-level ancestor (itself for a root).
    pub root_id: ProjectId,
    /// 0 for a root.
    pub depth: i64,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Free JSON object, as text.
    pub metadata: String,
    /// Free JSON object, as text.
    pub settings: String,
    /// Access level.
    pub access_level: AccessLevel,
    /// Takes members from the parent chain.
    pub inherits_members: bool,
    /// Has a thumbnail.
    pub has_thumbnail: bool,
    /// Free JSON object, as text.
    pub billing_information: Option<String>,
    /// Bumped on every write.
    pub row_version: i64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Creator.
    pub created_by: Option<Uuid>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Last changer.
    pub updated_by: Option<Uuid>,
    /// In the recycle bin since.
    pub deleted_at: Option<DateTime<Utc>>,
    /// Deleted by.
    pub deleted_by: Option<Uuid>,
}

/// A project member as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectMember {
    /// User id, API key id or group id.
    pub principal_id: Uuid,
    /// What the principal is.
    pub principal_type: PrincipalType,
    /// Role.
    pub role: ProjectRole,
}

/// `rowVersion` on the wire: the counter as a string, opaque to clients.
pub fn row_version_text(version: i64) -> String {
    format!("{version}")
}

/// A member on the wire.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberDto {
    /// User (or API key or group) id.
    pub user_id: Uuid,
    /// Role.
    pub role: ProjectRole,
    /// `UserIdentity` (default), `OpenAPIAccount` or `MemberGroup`.
    #[serde(default = "default_principal_type")]
    pub principal_type: PrincipalType,
}

fn default_principal_type() -> PrincipalType {
    PrincipalType::UserIdentity
}

impl From<&ProjectMember> for MemberDto {
    fn from(member: &ProjectMember) -> Self {
        Self {
            user_id: member.principal_id,
            role: member.role,
            principal_type: member.principal_type,
        }
    }
}

/// A project record (GET, create, update).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectDto {
    /// Common fields.
    #[serde(flatten)]
    pub record: ProjectListDto,
    /// Own members; empty for a subproject that inherits.
    pub members: Vec<MemberDto>,
    /// The caller's capabilities.
    pub capabilities: Capabilities,
}

/// A project in lists: the record without members and capabilities.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectListDto {
    /// Id.
    pub id: ProjectId,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Free key/value object.
    #[schema(value_type = Object)]
    pub metadata: Box<RawValue>,
    /// Free key/value object.
    #[schema(value_type = Object)]
    pub settings: Box<RawValue>,
    /// Access level.
    pub access_level: AccessLevel,
    /// Whether a thumbnail exists.
    pub has_thumbnail: bool,
    /// Thumbnail address, when there is one.
    pub thumbnail_url: Option<String>,
    /// Parent, on subprojects only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_project_id: Option<ProjectId>,
    /// Takes members from the parent chain.
    pub inherits_members: bool,
    /// Billing data, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub billing_information: Option<Box<RawValue>>,
    /// Opaque; send back to update.
    pub row_version: String,
    /// Creation time.
    pub created_at: WireTime,
    /// Creator.
    pub created_by: Option<Uuid>,
    /// Last change.
    pub updated_at: WireTime,
    /// Last changer (may be null).
    pub updated_by: Option<Uuid>,
    /// Deletion time, for items in the recycle bin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<WireTime>,
    /// Deleted by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_by: Option<Uuid>,
}

/// Stored JSON objects go out as they are, without being parsed into a tree and written
/// again; text that is somehow not JSON goes out as `{}`.
fn json_object(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned())
        .or_else(|_| RawValue::from_string("{}".to_owned()))
        .unwrap_or_else(|_| empty_object())
}

fn empty_object() -> Box<RawValue> {
    serde_json::value::to_raw_value(&serde_json::Map::new()).unwrap_or_default()
}

impl From<&ProjectRow> for ProjectListDto {
    fn from(row: &ProjectRow) -> Self {
        Self {
            id: row.id,
            name: row.name.clone(),
            description: row.description.clone(),
            metadata: json_object(&row.metadata),
            settings: json_object(&row.settings),
            access_level: row.access_level,
            has_thumbnail: row.has_thumbnail,
            thumbnail_url: None,
            parent_project_id: row.parent_id,
            inherits_members: row.inherits_members,
            billing_information: row.billing_information.as_deref().map(json_object),
            row_version: row_version_text(row.row_version),
            created_at: row.created_at.into(),
            created_by: row.created_by,
            updated_at: row.updated_at.into(),
            updated_by: row.updated_by,
            deleted_at: row.deleted_at.map(WireTime::from),
            deleted_by: row.deleted_by,
        }
    }
}

/// `POST /api/metadata/project` and `POST .../subproject`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateProjectRequest {
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Access level (default `Private`).
    pub access_level: Option<AccessLevel>,
    /// Free key/value object.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<serde_json::Value>,
    /// Free key/value object.
    #[schema(value_type = Option<Object>)]
    pub settings: Option<serde_json::Value>,
    /// Members besides the caller, who is always added as Owner.
    #[serde(default)]
    pub members: Vec<MemberDto>,
    /// Subprojects only: take members from the parent instead (then `members` must be empty).
    pub inherits_members: Option<bool>,
    /// Billing data.
    #[schema(value_type = Option<Object>)]
    pub billing_information: Option<serde_json::Value>,
}

/// `PUT /api/metadata/project`: full replace of the editable fields.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProjectRequest {
    /// Which project.
    pub id: ProjectId,
    /// Name.
    pub name: String,
    /// Description (empty when absent).
    pub description: Option<String>,
    /// Metadata (empty when absent).
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<serde_json::Value>,
    /// Settings (empty when absent).
    #[schema(value_type = Option<Object>)]
    pub settings: Option<serde_json::Value>,
    /// The version last read; a stale one is 409.
    pub row_version: Option<String>,
}

/// `PATCH /api/metadata/project`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchProjectRequest {
    /// Which project.
    pub id: ProjectId,
    /// New access level.
    pub access_level: AccessLevel,
    /// The version last read.
    pub row_version: Option<String>,
}

/// `PUT .../members` and `PUT .../member`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetMembersRequest {
    /// The complete member list; it must hold an Owner.
    pub members: Vec<MemberDto>,
    /// The version last read.
    pub row_version: Option<String>,
}

/// `PUT .../members/inherit`.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InheritMembersRequest {
    /// The version last read.
    pub row_version: Option<String>,
}

/// `POST .../member`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddProjectMemberRequest {
    /// User (or API key) id.
    pub user_id: Uuid,
    /// Role.
    pub role: ProjectRole,
    /// Principal type (default `UserIdentity`).
    pub principal_type: Option<PrincipalType>,
}

/// `POST .../move`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoveProjectRequest {
    /// The new parent.
    pub target_project_id: ProjectId,
}

/// `{id, rowVersion}` answers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdRowVersionDto {
    /// Project.
    pub id: ProjectId,
    /// New version.
    pub row_version: String,
}

/// An entry of `GET .../path`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathEntryDto {
    /// Project.
    pub id: ProjectId,
    /// Name.
    pub name: String,
    /// Parent (null for the root).
    pub parent_project_id: Option<ProjectId>,
    /// In the recycle bin, itself or through an ancestor.
    pub is_deleted: bool,
    /// The caller's capabilities there.
    pub capabilities: Capabilities,
    /// Access level.
    pub access_level: AccessLevel,
    /// Inherits members.
    pub inherits_members: bool,
    /// The caller's effective role there, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_user_role: Option<ProjectRole>,
}

/// An entry of `GET .../offset-list-recursive`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecursiveEntryDto {
    /// Project.
    pub id: ProjectId,
    /// Parent.
    pub parent_project_id: Option<ProjectId>,
    /// Name.
    pub name: String,
    /// Names from below the listed project down to this one, joined with `/`.
    pub relative_path: String,
}
