//! Project values, stored rows and wire shapes (docs/projects.md#records).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::PrincipalType;
use crate::db::JsonText;
use crate::http::time::WireTime;
use crate::ids::{ProjectId, TenantId};
use crate::projects::access::{AccessLevel, Capabilities, ProjectRole};

/// A project row as stored.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct ProjectRow {
    /// Id.
    pub(crate) id: ProjectId,
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// Parent, for subprojects.
    pub(crate) parent_id: Option<ProjectId>,
    /// Top-level ancestor (itself for a root).
    pub(crate) root_id: ProjectId,
    /// 0 for a root.
    pub(crate) depth: i64,
    /// Name.
    pub(crate) name: String,
    /// Description.
    pub(crate) description: String,
    /// Free JSON object.
    pub(crate) metadata: JsonText,
    /// Free JSON object.
    pub(crate) settings: JsonText,
    /// Access level.
    pub(crate) access_level: AccessLevel,
    /// Takes members from the parent chain.
    pub(crate) inherits_members: bool,
    /// Has a thumbnail.
    pub(crate) has_thumbnail: bool,
    /// Free JSON object.
    pub(crate) billing_information: Option<JsonText>,
    /// Bumped on every write.
    pub(crate) row_version: i64,
    /// Creation time.
    pub(crate) created_at: DateTime<Utc>,
    /// Creator.
    pub(crate) created_by: Option<Uuid>,
    /// Last change.
    pub(crate) updated_at: DateTime<Utc>,
    /// Last changer.
    pub(crate) updated_by: Option<Uuid>,
    /// In the recycle bin since.
    pub(crate) deleted_at: Option<DateTime<Utc>>,
    /// Deleted by.
    pub(crate) deleted_by: Option<Uuid>,
}

/// A project member as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct ProjectMember {
    /// User id, API key id or group id.
    pub(crate) principal_id: Uuid,
    /// What the principal is.
    pub(crate) principal_type: PrincipalType,
    /// Role.
    pub(crate) role: ProjectRole,
}

/// `rowVersion` on the wire: the counter as a string, opaque to clients.
pub(crate) fn row_version_text(version: i64) -> String {
    format!("{version}")
}

/// A member on the wire.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProjectMemberDto {
    /// User (or API key or group) id.
    pub(crate) user_id: Uuid,
    /// Role.
    pub(crate) role: ProjectRole,
    /// `UserIdentity` (default), `OpenAPIAccount` or `MemberGroup`.
    #[serde(default = "default_principal_type")]
    pub(crate) principal_type: PrincipalType,
}

fn default_principal_type() -> PrincipalType {
    PrincipalType::UserIdentity
}

impl From<&ProjectMember> for ProjectMemberDto {
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
pub(crate) struct ProjectDto {
    /// Common fields.
    #[serde(flatten)]
    pub(crate) record: ProjectListDto,
    /// Own members; empty for a subproject that inherits.
    pub(crate) members: Vec<ProjectMemberDto>,
    /// The caller's capabilities.
    pub(crate) capabilities: Capabilities,
}

/// A project in lists: the record without members and capabilities.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProjectListDto {
    /// Id.
    pub(crate) id: ProjectId,
    /// Name.
    pub(crate) name: String,
    /// Description.
    pub(crate) description: String,
    /// Free key/value object.
    #[schema(value_type = Object)]
    pub(crate) metadata: JsonText,
    /// Free key/value object.
    #[schema(value_type = Object)]
    pub(crate) settings: JsonText,
    /// Access level.
    pub(crate) access_level: AccessLevel,
    /// Whether a thumbnail exists.
    pub(crate) has_thumbnail: bool,
    /// Thumbnail address, when there is one.
    pub(crate) thumbnail_url: Option<String>,
    /// Parent, on subprojects only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parent_project_id: Option<ProjectId>,
    /// Takes members from the parent chain.
    pub(crate) inherits_members: bool,
    /// Billing data, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub(crate) billing_information: Option<JsonText>,
    /// Opaque; send back to update.
    pub(crate) row_version: String,
    /// Creation time.
    pub(crate) created_at: WireTime,
    /// Creator.
    pub(crate) created_by: Option<Uuid>,
    /// Last change.
    pub(crate) updated_at: WireTime,
    /// Last changer (may be null).
    pub(crate) updated_by: Option<Uuid>,
    /// Deletion time, for items in the recycle bin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deleted_at: Option<WireTime>,
    /// Deleted by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deleted_by: Option<Uuid>,
}

impl From<&ProjectRow> for ProjectListDto {
    fn from(row: &ProjectRow) -> Self {
        Self {
            id: row.id,
            name: row.name.clone(),
            description: row.description.clone(),
            metadata: row.metadata.clone(),
            settings: row.settings.clone(),
            access_level: row.access_level,
            has_thumbnail: row.has_thumbnail,
            thumbnail_url: None,
            parent_project_id: row.parent_id,
            inherits_members: row.inherits_members,
            billing_information: row.billing_information.clone(),
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
pub(crate) struct CreateProjectRequest {
    /// Name.
    #[schema(min_length = 1, max_length = 255)]
    pub(crate) name: String,
    /// Description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// Access level (default `Private`).
    pub(crate) access_level: Option<AccessLevel>,
    /// Free key/value object.
    #[schema(value_type = Option<Object>)]
    pub(crate) metadata: Option<serde_json::Value>,
    /// Free key/value object.
    #[schema(value_type = Option<Object>)]
    pub(crate) settings: Option<serde_json::Value>,
    /// Members besides the caller, who is always added as Owner.
    #[serde(default)]
    pub(crate) members: Vec<ProjectMemberDto>,
    /// Subprojects only: take members from the parent instead (then `members` must be empty).
    pub(crate) inherits_members: Option<bool>,
    /// Billing data.
    #[schema(value_type = Option<Object>)]
    pub(crate) billing_information: Option<serde_json::Value>,
}

/// `PUT /api/metadata/project`: full replace of the editable fields.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateProjectRequest {
    /// Which project.
    pub(crate) id: ProjectId,
    /// Name.
    #[schema(min_length = 1, max_length = 255)]
    pub(crate) name: String,
    /// Description (empty when absent).
    pub(crate) description: Option<String>,
    /// Metadata (empty when absent).
    #[schema(value_type = Option<Object>)]
    pub(crate) metadata: Option<serde_json::Value>,
    /// Settings (empty when absent).
    #[schema(value_type = Option<Object>)]
    pub(crate) settings: Option<serde_json::Value>,
    /// The version last read; a stale one is 409.
    pub(crate) row_version: Option<String>,
}

/// `PATCH /api/metadata/project`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PatchProjectRequest {
    /// Which project.
    pub(crate) id: ProjectId,
    /// New access level.
    pub(crate) access_level: AccessLevel,
    /// The version last read.
    pub(crate) row_version: Option<String>,
}

/// `PUT .../members` and `PUT .../member`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetMembersRequest {
    /// The complete member list; it must hold an Owner.
    #[schema(min_items = 1)]
    pub(crate) members: Vec<ProjectMemberDto>,
    /// The version last read.
    pub(crate) row_version: Option<String>,
}

/// `PUT .../members/inherit`.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InheritMembersRequest {
    /// The version last read.
    pub(crate) row_version: Option<String>,
}

/// `POST .../member`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AddProjectMemberRequest {
    /// User (or API key) id.
    pub(crate) user_id: Uuid,
    /// Role.
    pub(crate) role: ProjectRole,
    /// Principal type (default `UserIdentity`).
    pub(crate) principal_type: Option<PrincipalType>,
}

/// `POST .../move`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MoveProjectRequest {
    /// The new parent.
    pub(crate) target_project_id: ProjectId,
}

/// `{id, rowVersion}` answers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IdRowVersionDto {
    /// Project.
    pub(crate) id: ProjectId,
    /// New version.
    pub(crate) row_version: String,
}

/// An entry of `GET .../path`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PathEntryDto {
    /// Project.
    pub(crate) id: ProjectId,
    /// Name.
    pub(crate) name: String,
    /// Parent (null for the root).
    pub(crate) parent_project_id: Option<ProjectId>,
    /// In the recycle bin, itself or through an ancestor.
    pub(crate) is_deleted: bool,
    /// The caller's capabilities there.
    pub(crate) capabilities: Capabilities,
    /// Access level.
    pub(crate) access_level: AccessLevel,
    /// Inherits members.
    pub(crate) inherits_members: bool,
    /// The caller's effective role there, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) effective_user_role: Option<ProjectRole>,
}

/// An entry of `GET .../offset-list-recursive`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecursiveEntryDto {
    /// Project.
    pub(crate) id: ProjectId,
    /// Parent.
    pub(crate) parent_project_id: Option<ProjectId>,
    /// Name.
    pub(crate) name: String,
    /// Names from below the listed project down to this one, joined with `/`.
    pub(crate) relative_path: String,
}
