//! Project rules (spec 4.7): visibility and capabilities through the ancestor chain, member
//! inheritance, listing filters, move, optimistic concurrency and limits.
//!
//! Every operation loads the target's chain of ancestors in one query and decides from it.
//! Projects the caller cannot access, and projects in the recycle bin (or below one), are
//! "not found"; projects it can see but may not change are "forbidden".

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::auth::{Principal, PrincipalType};
use crate::clock::Clock;
use crate::config::LimitsConfig;
use crate::db::{Arg, Db, Sql, StoreError};
use crate::identity::model::TenantRole;
use crate::ids::{ProjectId, TenantId};
use crate::limits::{PROJECT_DESCRIPTION_CHARS_MAX, PROJECT_JSON_BYTES_MAX};
use crate::projects::access::{
    Capabilities, CapabilityFilter, TenantStanding, effective_role, implicit_role,
};
use crate::projects::model::{AccessLevel, ProjectMember, ProjectRole, ProjectRow};
use crate::projects::store::{self, ChainRow, DescendantRow};

/// What went wrong in a project operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProjectError {
    /// A field is invalid.
    #[error("{field}: {message}")]
    Invalid {
        /// Field name as on the wire.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Not found, deleted, or not visible to the caller.
    #[error("project not found")]
    NotFound,
    /// Visible but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// A rule of the tree is broken (400).
    #[error("{detail}")]
    Rejected {
        /// Stable kind.
        kind: &'static str,
        /// What rule.
        detail: String,
    },
    /// The request conflicts with the current state (409).
    #[error("{detail}")]
    Conflict {
        /// Stable kind.
        kind: &'static str,
        /// What conflicts.
        detail: String,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Result of project operations.
pub type ProjectResult<T> = Result<T, ProjectError>;

fn stale() -> ProjectError {
    ProjectError::Conflict {
        kind: "row-version-conflict",
        detail: "The project was changed since it was read (rowVersion is stale); read it again."
            .into(),
    }
}

/// The limits projects obey.
#[derive(Debug, Clone, Copy)]
pub struct ProjectLimits {
    /// Longest name.
    pub name_chars_max: usize,
    /// Deepest subproject.
    pub depth_max: i64,
    /// Most own members.
    pub members_max: usize,
}

impl From<&LimitsConfig> for ProjectLimits {
    fn from(limits: &LimitsConfig) -> Self {
        Self {
            name_chars_max: limits.project_name_chars_max,
            depth_max: i64::from(limits.project_depth_max),
            members_max: limits.project_members_max,
        }
    }
}

/// The caller as the project rules see it.
#[derive(Debug, Clone)]
pub struct Caller {
    /// User id or API key id.
    pub id: Uuid,
    /// User or API key.
    pub principal_type: PrincipalType,
    tenant_id: Option<TenantId>,
    tenant_role: Option<TenantRole>,
    platform_admin: bool,
}

impl From<&Principal> for Caller {
    fn from(principal: &Principal) -> Self {
        Self {
            id: principal.id,
            principal_type: principal.principal_type,
            tenant_id: principal.tenant_id,
            tenant_role: principal.tenant_role,
            platform_admin: principal.is_platform_admin(),
        }
    }
}

impl Caller {
    /// How the caller stands in `tenant`.
    pub fn standing(&self, tenant: TenantId) -> TenantStanding {
        if self.tenant_id != Some(tenant) {
            return TenantStanding::Outsider;
        }
        match self.tenant_role {
            Some(TenantRole::Owner | TenantRole::Administrator) => TenantStanding::Admin,
            Some(TenantRole::User) => TenantStanding::Member,
            None if self.platform_admin => TenantStanding::Admin,
            None => TenantStanding::Outsider,
        }
    }
}

/// A project with its ancestors, root first, and what the caller may do at each level.
#[derive(Debug, Clone)]
pub struct Chain {
    ancestors: Vec<ChainNode>,
    target: ChainNode,
}

/// One level of a [`Chain`].
#[derive(Debug, Clone)]
pub struct ChainNode {
    /// The project.
    pub row: ProjectRow,
    /// The caller's membership role, inheritance applied.
    pub member_role: Option<ProjectRole>,
    /// The caller's effective role (membership or access level).
    pub role: Option<ProjectRole>,
    /// In the recycle bin, itself or through an ancestor.
    pub deleted: bool,
}

impl Chain {
    fn build(rows: Vec<ChainRow>, caller: &Caller) -> Option<Self> {
        let mut nodes: Vec<ChainNode> = Vec::with_capacity(rows.len());
        for ChainRow {
            project,
            caller_role,
        } in rows
        {
            let own = caller_role.and_then(|role| role.parse::<ProjectRole>().ok());
            let member_role = match nodes.last() {
                Some(parent) if project.inherits_members => parent.member_role,
                _ => own,
            };
            let role = effective_role(
                member_role,
                caller.standing(project.tenant_id),
                project.access_level(),
            );
            let deleted =
                project.deleted_at.is_some() || nodes.last().is_some_and(|parent| parent.deleted);
            nodes.push(ChainNode {
                row: project,
                member_role,
                role,
                deleted,
            });
        }
        let target = nodes.pop()?;
        Some(Self {
            ancestors: nodes,
            target,
        })
    }

    /// The project itself.
    pub fn target(&self) -> &ChainNode {
        &self.target
    }

    /// The parent level, for subprojects.
    pub fn parent(&self) -> Option<&ChainNode> {
        self.ancestors.last()
    }

    /// Every level, root first.
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = &ChainNode> {
        self.ancestors.iter().chain(std::iter::once(&self.target))
    }

    /// The caller's capabilities on the project.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities::of(self.target().role)
    }

    fn contains(&self, id: ProjectId) -> bool {
        self.nodes().any(|node| node.row.id == id)
    }
}

/// A sort of project lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    /// By name.
    Name,
    /// By creation time.
    CreatedAt,
    /// By last change.
    UpdatedAt,
    /// By access level.
    AccessLevel,
}

impl SortColumn {
    /// Column name.
    pub fn sql(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::CreatedAt => "created_at",
            Self::UpdatedAt => "updated_at",
            Self::AccessLevel => "access_level",
        }
    }
}

/// The value of the sort column at a cursor.
#[derive(Debug, Clone, PartialEq)]
pub enum SortValue {
    /// Text columns.
    Text(String),
    /// Time columns.
    Time(DateTime<Utc>),
}

/// Filters and order of a project list.
#[derive(Debug, Clone)]
pub struct ListFilter {
    /// Case-insensitive name prefix.
    pub name_prefix: Option<String>,
    /// The caller's membership role is one of these (empty: any).
    pub roles: BTreeSet<ProjectRole>,
    /// The caller holds this capability.
    pub capability: Option<CapabilityFilter>,
    /// Sort column.
    pub column: SortColumn,
    /// Descending.
    pub descending: bool,
}

/// Which rows of a list to return.
#[derive(Debug, Clone)]
pub enum Window {
    /// Keyset: after this position, this many rows (page + 1).
    Keyset {
        /// Last row of the previous page.
        after: Option<(SortValue, Uuid)>,
        /// Rows to fetch.
        fetch: i64,
    },
    /// Offset.
    Offset {
        /// Rows to skip.
        offset: u32,
        /// Rows to return.
        limit: u32,
    },
}

/// Project operations.
#[derive(Debug, Clone)]
pub struct ProjectService {
    db: Db,
    clock: Arc<dyn Clock>,
    limits: ProjectLimits,
}

/// Checked input for creating a project.
#[derive(Debug, Clone)]
pub struct NewProject {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Access level.
    pub access_level: AccessLevel,
    /// Metadata JSON text.
    pub metadata: String,
    /// Settings JSON text.
    pub settings: String,
    /// Billing JSON text.
    pub billing_information: Option<String>,
    /// Members besides the caller.
    pub members: Vec<ProjectMember>,
    /// Inherit members (subprojects).
    pub inherits_members: bool,
}

impl ProjectService {
    /// A service over `db`.
    pub fn new(db: Db, clock: Arc<dyn Clock>, limits: ProjectLimits) -> Self {
        Self { db, clock, limits }
    }

    /// The limits in force.
    pub fn limits(&self) -> ProjectLimits {
        self.limits
    }

    // ---- parsing helpers used by routes ----

    /// Checks a project name.
    pub fn parse_name(&self, raw: &str) -> ProjectResult<String> {
        let name = raw.trim();
        let invalid = |message: String| ProjectError::Invalid {
            field: "name",
            message,
        };
        if name.is_empty() {
            return Err(invalid("name must not be empty".into()));
        }
        if name.chars().count() > self.limits.name_chars_max {
            return Err(invalid(format!(
                "name must be at most {} characters (limits.project_name_chars_max)",
                self.limits.name_chars_max
            )));
        }
        if name.chars().any(char::is_control) || name.contains('/') || name.contains('\\') {
            return Err(invalid(
                "name must not contain control characters, / or \\".into(),
            ));
        }
        Ok(name.to_owned())
    }

    /// Checks a description.
    pub fn parse_description(raw: Option<&str>) -> ProjectResult<String> {
        let description = raw.unwrap_or("");
        if description.chars().count() > PROJECT_DESCRIPTION_CHARS_MAX {
            return Err(ProjectError::Invalid {
                field: "description",
                message: format!(
                    "description must be at most {PROJECT_DESCRIPTION_CHARS_MAX} characters"
                ),
            });
        }
        Ok(description.to_owned())
    }

    /// Checks a free JSON object (metadata, settings, billing) and returns its text.
    pub fn parse_object(
        field: &'static str,
        value: Option<serde_json::Value>,
    ) -> ProjectResult<String> {
        let value = value.unwrap_or_else(|| serde_json::json!({}));
        if !value.is_object() {
            return Err(ProjectError::Invalid {
                field,
                message: format!("{field} must be a JSON object"),
            });
        }
        let text = value.to_string();
        if text.len() > PROJECT_JSON_BYTES_MAX {
            return Err(ProjectError::Invalid {
                field,
                message: format!("{field} must be at most {PROJECT_JSON_BYTES_MAX} bytes of JSON"),
            });
        }
        Ok(text)
    }

    /// Checks a member list: no duplicates, within the limit.
    pub fn check_members(&self, members: &[ProjectMember]) -> ProjectResult<()> {
        if members.len() > self.limits.members_max {
            return Err(ProjectError::Invalid {
                field: "members",
                message: format!(
                    "a project has at most {} members (limits.project_members_max)",
                    self.limits.members_max
                ),
            });
        }
        let unique: BTreeSet<Uuid> = members.iter().map(|member| member.principal_id).collect();
        if unique.len() != members.len() {
            return Err(ProjectError::Invalid {
                field: "members",
                message: "a principal appears twice in members".into(),
            });
        }
        Ok(())
    }

    /// Parses a `rowVersion` sent by a client.
    pub fn parse_row_version(raw: Option<&str>) -> ProjectResult<Option<i64>> {
        match raw.map(str::trim).filter(|raw| !raw.is_empty()) {
            None => Ok(None),
            Some(raw) => raw
                .parse::<i64>()
                .map(Some)
                .map_err(|_| ProjectError::Invalid {
                    field: "rowVersion",
                    message: "rowVersion is not a version Basin issued".into(),
                }),
        }
    }

    // ---- loading ----

    /// The chain of `id` as seen by `caller`, whatever its state.
    pub async fn load_chain(&self, caller: &Caller, id: ProjectId) -> ProjectResult<Chain> {
        let rows = store::chain(
            &self.db,
            id,
            caller.id,
            self.limits.depth_max.saturating_add(1),
        )
        .await?;
        Chain::build(rows, caller).ok_or(ProjectError::NotFound)
    }

    /// The chain of a live project the caller can access.
    pub async fn visible(&self, caller: &Caller, id: ProjectId) -> ProjectResult<Chain> {
        let chain = self.load_chain(caller, id).await?;
        let target = chain.target();
        if target.deleted || target.role.is_none() {
            return Err(ProjectError::NotFound);
        }
        Ok(chain)
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    // ---- create ----

    /// Creates a top-level project; the caller becomes its Owner.
    pub async fn create_root(
        &self,
        caller: &Caller,
        input: NewProject,
    ) -> ProjectResult<(ProjectRow, Vec<ProjectMember>)> {
        let Some(tenant) = caller.tenant_id else {
            return Err(ProjectError::Forbidden(
                "creating a project needs a tenant: use an API key or a token naming the tenant"
                    .into(),
            ));
        };
        if caller.standing(tenant) == TenantStanding::Outsider {
            return Err(ProjectError::Forbidden(
                "you are not a member of this tenant".into(),
            ));
        }
        if input.inherits_members {
            return Err(ProjectError::Rejected {
                kind: "root-cannot-inherit",
                detail: "a top-level project has no parent to inherit members from".into(),
            });
        }
        let id = ProjectId::new_random();
        self.insert(caller, tenant, None, id, 0, input).await
    }

    /// Creates a subproject under `parent`.
    pub async fn create_subproject(
        &self,
        caller: &Caller,
        parent: ProjectId,
        input: NewProject,
    ) -> ProjectResult<(ProjectRow, Vec<ProjectMember>)> {
        let chain = self.visible(caller, parent).await?;
        require(chain.capabilities().can_create_content, "create content")?;
        let parent_row = &chain.target().row;
        let depth = parent_row.depth.saturating_add(1);
        if depth > self.limits.depth_max {
            return Err(ProjectError::Rejected {
                kind: "depth-limit",
                detail: format!(
                    "subprojects nest at most {} levels deep (limits.project_depth_max)",
                    self.limits.depth_max
                ),
            });
        }
        let tenant = parent_row.tenant_id;
        let root = parent_row.root_id;
        self.insert(
            caller,
            tenant,
            Some((parent, root)),
            ProjectId::new_random(),
            depth,
            input,
        )
        .await
    }

    async fn insert(
        &self,
        caller: &Caller,
        tenant: TenantId,
        parent: Option<(ProjectId, ProjectId)>,
        id: ProjectId,
        depth: i64,
        input: NewProject,
    ) -> ProjectResult<(ProjectRow, Vec<ProjectMember>)> {
        let members = if input.inherits_members {
            if !input.members.is_empty() {
                return Err(ProjectError::Invalid {
                    field: "members",
                    message: "a subproject that inherits members cannot list its own".into(),
                });
            }
            Vec::new()
        } else {
            let mut members: Vec<ProjectMember> = input
                .members
                .into_iter()
                .filter(|member| member.principal_id != caller.id)
                .collect();
            members.insert(
                0,
                ProjectMember {
                    principal_id: caller.id,
                    principal_type: caller.principal_type,
                    role: ProjectRole::Owner,
                },
            );
            self.check_members(&members)?;
            members
        };
        let now = self.now();
        let row = ProjectRow {
            id,
            tenant_id: tenant,
            parent_id: parent.map(|(parent, _)| parent),
            root_id: parent.map_or(id, |(_, root)| root),
            depth,
            name: input.name,
            description: input.description,
            metadata: input.metadata,
            settings: input.settings,
            access_level: input.access_level.as_str().to_owned(),
            inherits_members: input.inherits_members,
            has_thumbnail: false,
            billing_information: input.billing_information,
            row_version: 1,
            created_at: now,
            created_by: Some(caller.id),
            updated_at: now,
            updated_by: Some(caller.id),
            deleted_at: None,
            deleted_by: None,
        };
        let mut tx = self.db.begin().await?;
        store::insert_project(&mut tx, &row).await?;
        store::replace_members(&mut tx, id, &members, now).await?;
        tx.commit().await?;
        Ok((row, members))
    }

    // ---- read ----

    /// A project with its own members and the caller's capabilities.
    pub async fn get(
        &self,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<(Chain, Vec<ProjectMember>)> {
        let chain = self.visible(caller, id).await?;
        let members = store::members(&self.db, id).await?;
        Ok((chain, members))
    }

    /// The members that apply to a project: its own, or those of the ancestor it inherits
    /// from (rule 3).
    pub async fn effective_members(
        &self,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<Vec<ProjectMember>> {
        let chain = self.visible(caller, id).await?;
        Ok(store::members(&self.db, member_source(&chain)).await?)
    }

    // ---- update ----

    async fn write(
        &self,
        caller: &Caller,
        mut row: ProjectRow,
        expected: Option<i64>,
    ) -> ProjectResult<ProjectRow> {
        row.updated_at = self.now();
        row.updated_by = Some(caller.id);
        let mut tx = self.db.begin().await?;
        let version = store::update_project(&mut tx, &row, expected)
            .await?
            .ok_or_else(stale)?;
        tx.commit().await?;
        row.row_version = version;
        Ok(row)
    }

    /// Replaces name, description, metadata and settings.
    pub async fn update(
        &self,
        caller: &Caller,
        id: ProjectId,
        fields: (String, String, String, String),
        expected: Option<i64>,
    ) -> ProjectResult<(Chain, ProjectRow)> {
        let chain = self.visible(caller, id).await?;
        require(chain.capabilities().can_edit, "edit the project")?;
        let mut row = chain.target().row.clone();
        (row.name, row.description, row.metadata, row.settings) = fields;
        let row = self.write(caller, row, expected).await?;
        Ok((chain, row))
    }

    /// Sets the access level.
    pub async fn set_access_level(
        &self,
        caller: &Caller,
        id: ProjectId,
        level: AccessLevel,
        expected: Option<i64>,
    ) -> ProjectResult<(Chain, ProjectRow)> {
        let chain = self.visible(caller, id).await?;
        require(
            chain.capabilities().can_edit_access_level,
            "change the access level",
        )?;
        let mut row = chain.target().row.clone();
        row.access_level = level.as_str().to_owned();
        let row = self.write(caller, row, expected).await?;
        Ok((chain, row))
    }

    /// Sets the own members (cancelling inheritance). The list must hold an Owner.
    pub async fn set_members(
        &self,
        caller: &Caller,
        id: ProjectId,
        members: Vec<ProjectMember>,
        expected: Option<i64>,
    ) -> ProjectResult<ProjectRow> {
        let chain = self.visible(caller, id).await?;
        require(chain.capabilities().can_grant_access, "change members")?;
        self.check_members(&members)?;
        if !members
            .iter()
            .any(|member| member.role == ProjectRole::Owner)
        {
            return Err(ProjectError::Invalid {
                field: "members",
                message: "members must include at least one Owner".into(),
            });
        }
        let mut row = chain.target().row.clone();
        row.inherits_members = false;
        self.write_with_members(caller, row, expected, &members)
            .await
    }

    async fn write_with_members(
        &self,
        caller: &Caller,
        mut row: ProjectRow,
        expected: Option<i64>,
        members: &[ProjectMember],
    ) -> ProjectResult<ProjectRow> {
        let now = self.now();
        row.updated_at = now;
        row.updated_by = Some(caller.id);
        let mut tx = self.db.begin().await?;
        let version = store::update_project(&mut tx, &row, expected)
            .await?
            .ok_or_else(stale)?;
        store::replace_members(&mut tx, row.id, members, now).await?;
        tx.commit().await?;
        row.row_version = version;
        Ok(row)
    }

    /// Makes a subproject inherit its members; its own are cleared.
    pub async fn inherit_members(
        &self,
        caller: &Caller,
        id: ProjectId,
        expected: Option<i64>,
    ) -> ProjectResult<ProjectRow> {
        let chain = self.visible(caller, id).await?;
        require(chain.capabilities().can_grant_access, "change members")?;
        if chain.parent().is_none() {
            return Err(ProjectError::Rejected {
                kind: "root-cannot-inherit",
                detail: "a top-level project has no parent to inherit members from".into(),
            });
        }
        let mut row = chain.target().row.clone();
        row.inherits_members = true;
        self.write_with_members(caller, row, expected, &[]).await
    }

    /// Adds one member. On a subproject that inherits, the inherited members become its own
    /// first, so nobody loses access.
    pub async fn add_member(
        &self,
        caller: &Caller,
        id: ProjectId,
        member: ProjectMember,
    ) -> ProjectResult<ProjectRow> {
        self.edit_members(caller, id, |members| {
            if members
                .iter()
                .any(|existing| existing.principal_id == member.principal_id)
            {
                return Err(ProjectError::Conflict {
                    kind: "already-member",
                    detail: "the principal is already a member of this project".into(),
                });
            }
            members.push(member);
            Ok(())
        })
        .await
    }

    /// Removes one member; the last Owner stays.
    pub async fn remove_member(
        &self,
        caller: &Caller,
        id: ProjectId,
        principal: Uuid,
    ) -> ProjectResult<ProjectRow> {
        self.edit_members(caller, id, |members| {
            let before = members.len();
            members.retain(|member| member.principal_id != principal);
            if members.len() == before {
                return Err(ProjectError::Conflict {
                    kind: "not-a-member",
                    detail: "the principal is not a member of this project".into(),
                });
            }
            if !members
                .iter()
                .any(|member| member.role == ProjectRole::Owner)
            {
                return Err(ProjectError::Conflict {
                    kind: "last-owner",
                    detail: "a project must keep at least one Owner".into(),
                });
            }
            Ok(())
        })
        .await
    }

    /// Applies `change` to the members that apply to the project and stores the result as its
    /// own members (ending inheritance).
    async fn edit_members(
        &self,
        caller: &Caller,
        id: ProjectId,
        change: impl FnOnce(&mut Vec<ProjectMember>) -> ProjectResult<()>,
    ) -> ProjectResult<ProjectRow> {
        let chain = self.visible(caller, id).await?;
        require(chain.capabilities().can_grant_access, "change members")?;
        let mut members = store::members(&self.db, member_source(&chain)).await?;
        change(&mut members)?;
        self.check_members(&members)?;
        let mut row = chain.target().row.clone();
        row.inherits_members = false;
        // The member list was read before this write: if another change landed in between,
        // answer 409 rather than overwrite it.
        let read_version = Some(row.row_version);
        self.write_with_members(caller, row, read_version, &members)
            .await
    }

    /// Moves a subproject under another subproject or the root of the same tree (rule 5).
    pub async fn move_project(
        &self,
        caller: &Caller,
        id: ProjectId,
        target: ProjectId,
    ) -> ProjectResult<ProjectRow> {
        let chain = self.visible(caller, id).await?;
        let Some(parent) = chain.parent() else {
            return Err(ProjectError::Rejected {
                kind: "cannot-move-root",
                detail: "top-level projects cannot be moved".into(),
            });
        };
        let destination = self.visible(caller, target).await?;
        let row = chain.target().row.clone();
        if destination.target().row.root_id != row.root_id {
            return Err(ProjectError::Rejected {
                kind: "move-across-roots",
                detail: "a subproject can only move within its own top-level project".into(),
            });
        }
        if destination.contains(id) {
            return Err(ProjectError::Conflict {
                kind: "move-loop",
                detail: "a project cannot move into itself or below itself".into(),
            });
        }
        if !Capabilities::of(parent.role).can_delete_content {
            return Err(ProjectError::Forbidden(
                "moving needs delete-content permission on the current parent".into(),
            ));
        }
        require(
            destination.capabilities().can_create_content,
            "create content",
        )?;
        if parent.row.id == target {
            return Ok(row);
        }
        let new_depth = destination.target().row.depth.saturating_add(1);
        let delta = new_depth.saturating_sub(row.depth);
        let deepest = store::subtree_depth_max(&self.db, id).await?;
        if deepest.saturating_add(delta) > self.limits.depth_max {
            return Err(ProjectError::Rejected {
                kind: "depth-limit",
                detail: format!(
                    "after the move the tree would nest deeper than {} levels (limits.project_depth_max)",
                    self.limits.depth_max
                ),
            });
        }
        let mut moved = row;
        moved.parent_id = Some(target);
        moved.depth = new_depth;
        moved.updated_at = self.now();
        moved.updated_by = Some(caller.id);
        let mut tx = self.db.begin().await?;
        let version = store::update_project(&mut tx, &moved, None)
            .await?
            .ok_or_else(stale)?;
        store::shift_subtree_depth(&mut tx, id, delta).await?;
        tx.commit().await?;
        moved.row_version = version;
        Ok(moved)
    }

    /// Moves a project to the recycle bin (rule 4).
    pub async fn delete(&self, caller: &Caller, id: ProjectId) -> ProjectResult<()> {
        let chain = self.visible(caller, id).await?;
        let allowed = chain.capabilities().can_delete
            || chain
                .parent()
                .is_some_and(|parent| Capabilities::of(parent.role).can_delete_content);
        if !allowed {
            return Err(ProjectError::Forbidden(
                "deleting needs delete permission on the project or delete-content on its parent"
                    .into(),
            ));
        }
        let mut row = chain.target().row.clone();
        let now = self.now();
        row.deleted_at = Some(now);
        row.deleted_by = Some(caller.id);
        self.write(caller, row, None).await?;
        Ok(())
    }

    // ---- inside a caller's transaction (bulk hierarchy) ----

    /// The database, for operations that span areas in one transaction.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// [`Self::visible`] inside `tx`: a caller holding a write transaction must not wait for a
    /// second pooled connection (on SQLite, every other writer may be holding one, waiting for
    /// this transaction's lock).
    pub async fn visible_in(
        &self,
        tx: &mut crate::db::Tx,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<Chain> {
        let rows =
            store::chain_in(tx, id, caller.id, self.limits.depth_max.saturating_add(1)).await?;
        let chain = Chain::build(rows, caller).ok_or(ProjectError::NotFound)?;
        let target = chain.target();
        if target.deleted || target.role.is_none() {
            return Err(ProjectError::NotFound);
        }
        Ok(chain)
    }

    /// Makes `tx` the only writer of the tree under the top-level project `root` until it ends,
    /// so that two bulk requests cannot both create the same missing folder.
    pub async fn lock_tree_in(&self, tx: &mut crate::db::Tx, root: ProjectId) -> ProjectResult<()> {
        Ok(store::lock_tree_in(tx, root).await?)
    }

    /// A live subproject of `parent` named `name`, read inside `tx`.
    pub async fn find_child_in(
        &self,
        tx: &mut crate::db::Tx,
        parent: ProjectId,
        name: &str,
    ) -> ProjectResult<Option<ProjectRow>> {
        Ok(store::find_child_in(tx, parent, name).await?)
    }

    /// Creates a subproject of `parent` that inherits its members, inside `tx`. The caller has
    /// checked `canCreateContent` on the parent.
    pub async fn create_folder_in(
        &self,
        tx: &mut crate::db::Tx,
        caller: &Caller,
        parent: &ProjectRow,
        name: String,
        access_level: AccessLevel,
    ) -> ProjectResult<ProjectRow> {
        let depth = parent.depth.saturating_add(1);
        if depth > self.limits.depth_max {
            return Err(ProjectError::Rejected {
                kind: "depth-limit",
                detail: format!(
                    "subprojects nest at most {} levels deep (limits.project_depth_max)",
                    self.limits.depth_max
                ),
            });
        }
        let now = self.now();
        let row = ProjectRow {
            id: ProjectId::new_random(),
            tenant_id: parent.tenant_id,
            parent_id: Some(parent.id),
            root_id: parent.root_id,
            depth,
            name,
            description: String::new(),
            metadata: "{}".into(),
            settings: "{}".into(),
            access_level: access_level.as_str().to_owned(),
            inherits_members: true,
            has_thumbnail: false,
            billing_information: None,
            row_version: 1,
            created_at: now,
            created_by: Some(caller.id),
            updated_at: now,
            updated_by: Some(caller.id),
            deleted_at: None,
            deleted_by: None,
        };
        store::insert_project(tx, &row).await?;
        Ok(row)
    }

    /// Moves a project to the recycle bin inside `tx`; the caller has checked rule 4.
    pub async fn delete_in(
        &self,
        tx: &mut crate::db::Tx,
        caller: &Caller,
        row: &ProjectRow,
    ) -> ProjectResult<()> {
        let mut row = row.clone();
        let now = self.now();
        row.deleted_at = Some(now);
        row.deleted_by = Some(caller.id);
        row.updated_at = now;
        row.updated_by = Some(caller.id);
        store::update_project(tx, &row, None)
            .await?
            .ok_or_else(stale)?;
        Ok(())
    }

    // ---- lists ----

    /// Top-level projects (`parent = None`) or direct subprojects of `parent` that the caller
    /// can access, filtered and ordered. Returns the rows and, for offset windows, the total.
    pub async fn list(
        &self,
        caller: &Caller,
        parent: Option<ProjectId>,
        filter: &ListFilter,
        window: &Window,
    ) -> ProjectResult<(Vec<ProjectRow>, Option<u64>)> {
        let (tenant, parent_role, parent_visible) = match parent {
            Some(parent) => {
                let chain = self.load_chain(caller, parent).await?;
                if chain.target().deleted {
                    return Err(ProjectError::NotFound);
                }
                let target = chain.target();
                (
                    target.row.tenant_id,
                    target.member_role,
                    target.role.is_some(),
                )
            }
            None => match caller.tenant_id {
                Some(tenant) => (tenant, None, true),
                None => return Ok((Vec::new(), Some(0))),
            },
        };
        let standing = caller.standing(tenant);
        let build = |select: &str| {
            let mut sql = Sql::new(select);
            sql.push(" FROM projects p LEFT JOIN project_members m ON m.project_id = p.id AND m.principal_id = ");
            let caller_param = sql.arg(Arg::Uuid(caller.id));
            sql.push(&caller_param);
            sql.push(" WHERE p.deleted_at IS NULL AND ");
            match parent {
                Some(parent) => {
                    let param = sql.arg(Arg::Uuid(parent.as_uuid()));
                    sql.push(&format!("p.parent_id = {param}"));
                }
                None => {
                    let param = sql.arg(Arg::Uuid(tenant.as_uuid()));
                    sql.push(&format!("p.tenant_id = {param} AND p.parent_id IS NULL"));
                }
            }
            let member_role = match parent_role {
                Some(role) => format!(
                    "(CASE WHEN p.inherits_members THEN '{}' ELSE m.role END)",
                    role.as_str()
                ),
                None => "(CASE WHEN p.inherits_members THEN NULL ELSE m.role END)".to_owned(),
            };
            let minimum = filter
                .capability
                .map_or(ProjectRole::Reader, CapabilityFilter::minimum_role);
            sql.push(&format!(
                " AND {}",
                access_condition(&member_role, standing, minimum)
            ));
            if !filter.roles.is_empty() {
                let roles: Vec<String> = filter
                    .roles
                    .iter()
                    .map(|role| format!("'{}'", role.as_str()))
                    .collect();
                sql.push(&format!(" AND {member_role} IN ({})", roles.join(", ")));
            }
            if let Some(prefix) = &filter.name_prefix {
                let length = sql.arg(Arg::I64(
                    i64::try_from(prefix.chars().count()).unwrap_or(i64::MAX),
                ));
                let value = sql.arg(Arg::Text(prefix.to_lowercase()));
                sql.push(&format!(
                    " AND lower(substr(p.name, 1, CAST({length} AS INTEGER))) = {value}"
                ));
            }
            sql
        };
        let column = filter.column.sql();
        let direction = if filter.descending { "DESC" } else { "ASC" };
        match window {
            Window::Keyset { after, fetch } => {
                let mut sql = build(&format!("SELECT {}", store::columns()));
                if let Some((value, id)) = after {
                    let comparison = if filter.descending { "<" } else { ">" };
                    let value_param = sql.arg(match value {
                        SortValue::Text(text) => Arg::Text(text.clone()),
                        SortValue::Time(time) => Arg::Time(*time),
                    });
                    let id_param = sql.arg(Arg::Uuid(*id));
                    sql.push(&format!(
                        " AND (p.{column}, p.id) {comparison} ({value_param}, {id_param})"
                    ));
                }
                let limit = sql.arg(Arg::I64(*fetch));
                sql.push(&format!(
                    " ORDER BY p.{column} {direction}, p.id {direction} LIMIT {limit}"
                ));
                let rows = store::list(&self.db, sql).await?;
                hide_invisible_parent(parent_visible, after.is_none() && rows.is_empty())?;
                Ok((rows, None))
            }
            Window::Offset { offset, limit } => {
                let total = store::count(&self.db, build("SELECT COUNT(*)")).await?;
                hide_invisible_parent(parent_visible, total == 0)?;
                let mut sql = build(&format!("SELECT {}", store::columns()));
                let limit = sql.arg(Arg::I64(i64::from(*limit)));
                let offset = sql.arg(Arg::I64(i64::from(*offset)));
                sql.push(&format!(
                    " ORDER BY p.{column} {direction}, p.id {direction} LIMIT {limit} OFFSET {offset}"
                ));
                let rows = store::list(&self.db, sql).await?;
                Ok((rows, Some(total)))
            }
        }
    }

    /// Every subproject below `id` that the caller can access, with its path below `id`,
    /// ordered by path; one offset page and the total.
    pub async fn list_recursive(
        &self,
        caller: &Caller,
        id: ProjectId,
        offset: u32,
        limit: u32,
    ) -> ProjectResult<(Vec<DescendantRow>, u64)> {
        let chain = self.load_chain(caller, id).await?;
        if chain.target().deleted {
            return Err(ProjectError::NotFound);
        }
        let standing = caller.standing(chain.target().row.tenant_id);
        let parent_role = chain.target().member_role;
        let parent_visible = chain.target().role.is_some();
        let build = |select: &str| {
            let mut sql = Sql::new(
                "WITH RECURSIVE tree(id, parent_id, name, access_level, relative_path, member_role, level) AS (SELECT p.id, p.parent_id, p.name, p.access_level, '' || p.name, CASE WHEN p.inherits_members THEN ",
            );
            let parent_role_param = sql.arg(Arg::OptText(
                parent_role.map(|role| role.as_str().to_owned()),
            ));
            sql.push(&parent_role_param);
            sql.push(" ELSE (SELECT role FROM project_members WHERE project_id = p.id AND principal_id = ");
            let caller_param = sql.arg(Arg::Uuid(caller.id));
            sql.push(&caller_param);
            sql.push(") END, 1 FROM projects p WHERE p.deleted_at IS NULL AND p.parent_id = ");
            let id_param = sql.arg(Arg::Uuid(id.as_uuid()));
            sql.push(&id_param);
            sql.push(&format!(
                " UNION ALL SELECT p.id, p.parent_id, p.name, p.access_level, tree.relative_path || '/' || p.name, \
                 CASE WHEN p.inherits_members THEN tree.member_role ELSE (SELECT role FROM project_members \
                 WHERE project_id = p.id AND principal_id = {caller_param}) END, tree.level + 1 \
                 FROM projects p JOIN tree ON p.parent_id = tree.id WHERE p.deleted_at IS NULL AND tree.level < "
            ));
            let depth_param = sql.arg(Arg::I64(self.limits.depth_max.saturating_add(1)));
            sql.push(&depth_param);
            sql.push(&format!(") {select} FROM tree p WHERE "));
            sql.push(&access_condition(
                "p.member_role",
                standing,
                ProjectRole::Reader,
            ));
            sql
        };
        let total = store::count(&self.db, build("SELECT COUNT(*)")).await?;
        hide_invisible_parent(parent_visible, total == 0)?;
        let mut sql = build("SELECT p.id, p.parent_id, p.name, p.relative_path");
        let limit = sql.arg(Arg::I64(i64::from(limit)));
        let offset = sql.arg(Arg::I64(i64::from(offset)));
        sql.push(&format!(
            " ORDER BY p.relative_path, p.id LIMIT {limit} OFFSET {offset}"
        ));
        Ok((store::descendants(&self.db, sql).await?, total))
    }
}

/// Listing below a project the caller cannot see is allowed (rule 2: a member of a subproject
/// reaches it without access to its parents), but when nothing below is visible either, the
/// parent answers "not found" as it would for any other call, so its existence does not leak.
fn hide_invisible_parent(parent_visible: bool, nothing_visible: bool) -> ProjectResult<()> {
    if !parent_visible && nothing_visible {
        Err(ProjectError::NotFound)
    } else {
        Ok(())
    }
}

/// The project whose own members apply to the chain's target (rule 3): the nearest level,
/// from the target up, that does not inherit.
fn member_source(chain: &Chain) -> ProjectId {
    chain
        .nodes()
        .rev()
        .find(|node| !node.row.inherits_members)
        .map_or(chain.target().row.id, |node| node.row.id)
}

fn require(allowed: bool, what: &str) -> ProjectResult<()> {
    if allowed {
        Ok(())
    } else {
        Err(ProjectError::Forbidden(format!(
            "you may not {what} in this project"
        )))
    }
}

/// SQL condition: the caller's effective role on `p` is at least `minimum`, given its
/// membership role expression and its standing in the tenant. Only trusted literals go in.
fn access_condition(member_role: &str, standing: TenantStanding, minimum: ProjectRole) -> String {
    let roles: Vec<String> = ProjectRole::ALL
        .iter()
        .filter(|role| **role >= minimum)
        .map(|role| format!("'{}'", role.as_str()))
        .collect();
    let by_membership = format!("{member_role} IN ({})", roles.join(", "));
    let levels: Vec<String> = AccessLevel::ALL
        .iter()
        .filter(|level| implicit_role(standing, **level) >= Some(minimum))
        .map(|level| format!("'{}'", level.as_str()))
        .collect();
    if levels.is_empty() {
        format!("({by_membership})")
    } else {
        format!(
            "({by_membership} OR p.access_level IN ({}))",
            levels.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_conditions_follow_the_role_table() {
        assert_eq!(
            access_condition("m.role", TenantStanding::Outsider, ProjectRole::Reader),
            "(m.role IN ('Reader', 'Contributor', 'Owner'))"
        );
        assert_eq!(
            access_condition("m.role", TenantStanding::Member, ProjectRole::Reader),
            "(m.role IN ('Reader', 'Contributor', 'Owner') OR p.access_level IN ('Shared'))"
        );
        assert_eq!(
            access_condition("m.role", TenantStanding::Member, ProjectRole::Contributor),
            "(m.role IN ('Contributor', 'Owner'))"
        );
        assert_eq!(
            access_condition("m.role", TenantStanding::Admin, ProjectRole::Contributor),
            "(m.role IN ('Contributor', 'Owner') OR p.access_level IN ('Private', 'Shared'))"
        );
    }
}
