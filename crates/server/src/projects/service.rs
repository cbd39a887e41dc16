//! Project rules (docs/projects.md, docs/permissions.md): visibility and capabilities through
//! the ancestor chain, member inheritance, listing filters, move, optimistic concurrency and
//! limits.
//!
//! Every operation loads the target's chain of ancestors in one query and decides from it.
//! Projects the caller cannot access, and projects in the recycle bin (or below one), are
//! "not found"; projects it can see but may not change are "forbidden".

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::auth::{Caller, PrincipalType, TenantStanding};
use crate::clock::Clock;
use crate::config::LimitsConfig;
use crate::db::{Db, JsonText, StoreError, Tx};
use crate::identity::service::IdentityService;
use crate::ids::{ProjectId, TenantId};
use crate::limits::{PROJECT_DESCRIPTION_CHARS_MAX, PROJECT_JSON_BYTES_MAX};
use crate::projects::ProjectChange;
use crate::projects::access::{Capabilities, Capability, CapabilityFilter, effective_role};
use crate::projects::model::{AccessLevel, ProjectMember, ProjectRole, ProjectRow};
use crate::projects::store::{
    self, ChainRow, DescendantRow, DescendantsQuery, ListScope, ProjectListQuery,
};
pub(crate) use crate::projects::store::{SortColumn, Window};
use crate::reactions::Reactions;

/// What went wrong in a project operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ProjectError {
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
pub(crate) type ProjectResult<T> = Result<T, ProjectError>;

fn stale() -> ProjectError {
    ProjectError::Conflict {
        kind: "row-version-conflict",
        detail: "The project was changed since it was read (rowVersion is stale); read it again."
            .into(),
    }
}

/// The limits projects obey.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProjectLimits {
    /// Longest name.
    pub(crate) name_chars_max: usize,
    /// Deepest subproject.
    pub(crate) depth_max: i64,
    /// Most own members.
    pub(crate) members_max: usize,
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

/// A project with its ancestors, root first, and what the caller may do at each level.
#[derive(Debug, Clone)]
pub(crate) struct Chain {
    ancestors: Vec<ChainNode>,
    target: ChainNode,
}

/// One level of a [`Chain`].
#[derive(Debug, Clone)]
pub(crate) struct ChainNode {
    /// The project.
    pub(crate) row: ProjectRow,
    /// The caller's membership role, inheritance applied.
    pub(crate) member_role: Option<ProjectRole>,
    /// The caller's effective role (membership or access level).
    pub(crate) role: Option<ProjectRole>,
    /// In the recycle bin, itself or through an ancestor.
    pub(crate) deleted: bool,
}

impl Chain {
    /// The chain from its rows, root first. Rows that do not end at a top-level project, or
    /// name a project twice, can only come from a corrupt tree (a cycle): that is an error,
    /// never a loop.
    fn build(rows: Vec<ChainRow>, caller: &Caller) -> ProjectResult<Self> {
        if rows
            .first()
            .is_some_and(|top| top.project.parent_id.is_some())
            || rows
                .iter()
                .map(|row| row.project.id)
                .collect::<BTreeSet<_>>()
                .len()
                != rows.len()
        {
            return Err(ProjectError::Store(StoreError::Corrupt(
                "a project's chain of ancestors does not end at a top-level project",
            )));
        }
        let mut nodes: Vec<ChainNode> = Vec::with_capacity(rows.len());
        for ChainRow {
            project,
            caller_role,
        } in rows
        {
            let member_role = match nodes.last() {
                Some(parent) if project.inherits_members => parent.member_role,
                _ => caller_role,
            };
            let role = effective_role(
                member_role,
                caller.standing(project.tenant_id),
                project.access_level,
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
        let target = nodes.pop().ok_or(ProjectError::NotFound)?;
        Ok(Self {
            ancestors: nodes,
            target,
        })
    }

    /// The project itself.
    pub(crate) fn target(&self) -> &ChainNode {
        &self.target
    }

    /// The parent level, for subprojects.
    pub(crate) fn parent(&self) -> Option<&ChainNode> {
        self.ancestors.last()
    }

    /// Every level, root first.
    pub(crate) fn nodes(&self) -> impl DoubleEndedIterator<Item = &ChainNode> {
        self.ancestors.iter().chain(std::iter::once(&self.target))
    }

    /// The caller's capabilities on the project.
    pub(crate) fn capabilities(&self) -> Capabilities {
        Capabilities::of(self.target().role)
    }

    fn contains(&self, id: ProjectId) -> bool {
        self.nodes().any(|node| node.row.id == id)
    }
}

/// How many same-named siblings a path lookup considers. Names need not be unique; among more
/// than this many namesakes a caller might not find the one it can see, and would get a new one.
const SAME_NAME_CANDIDATES_MAX: i64 = 100;

/// Filters and order of a project list.
#[derive(Debug, Clone)]
pub(crate) struct ListFilter {
    /// Case-insensitive name prefix.
    pub(crate) name_prefix: Option<String>,
    /// The caller's membership role is one of these (empty: any).
    pub(crate) roles: BTreeSet<ProjectRole>,
    /// The caller holds this capability.
    pub(crate) capability: Option<CapabilityFilter>,
    /// Sort column.
    pub(crate) column: SortColumn,
    /// Descending.
    pub(crate) descending: bool,
}

/// Project operations.
#[derive(Debug, Clone)]
pub(crate) struct ProjectService {
    db: Db,
    clock: Arc<dyn Clock>,
    limits: ProjectLimits,
    directory: IdentityService,
    reactions: Reactions<ProjectChange>,
}

/// Checked input for creating a project.
#[derive(Debug, Clone)]
pub(crate) struct NewProject {
    /// Name.
    pub(crate) name: String,
    /// Description.
    pub(crate) description: String,
    /// Access level.
    pub(crate) access_level: AccessLevel,
    /// Metadata.
    pub(crate) metadata: JsonText,
    /// Settings.
    pub(crate) settings: JsonText,
    /// Billing data.
    pub(crate) billing_information: Option<JsonText>,
    /// Members besides the caller.
    pub(crate) members: Vec<ProjectMember>,
    /// Inherit members (subprojects).
    pub(crate) inherits_members: bool,
}

impl ProjectService {
    /// A service over `db`; `directory` tells which principals belong to a tenant.
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        limits: ProjectLimits,
        directory: IdentityService,
        reactions: Reactions<ProjectChange>,
    ) -> Self {
        Self {
            db,
            clock,
            limits,
            directory,
            reactions,
        }
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> ProjectLimits {
        self.limits
    }

    // ---- parsing helpers used by routes ----

    /// Checks a project name (see [`crate::names`]).
    pub(crate) fn parse_name(&self, raw: &str) -> ProjectResult<String> {
        crate::names::check_name(raw, self.limits.name_chars_max).map_err(|message| {
            ProjectError::Invalid {
                field: "name",
                message: if message.contains("at most") {
                    format!("{message} (limits.project_name_chars_max)")
                } else {
                    message
                },
            }
        })
    }

    /// Checks a description.
    pub(crate) fn parse_description(raw: Option<&str>) -> ProjectResult<String> {
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
    pub(crate) fn parse_object(
        field: &'static str,
        value: Option<serde_json::Value>,
    ) -> ProjectResult<JsonText> {
        let value = value.unwrap_or_else(|| serde_json::json!({}));
        if !value.is_object() {
            return Err(ProjectError::Invalid {
                field,
                message: format!("{field} must be a JSON object"),
            });
        }
        let text = JsonText::from_value(&value);
        if text.as_str().len() > PROJECT_JSON_BYTES_MAX {
            return Err(ProjectError::Invalid {
                field,
                message: format!("{field} must be at most {PROJECT_JSON_BYTES_MAX} bytes of JSON"),
            });
        }
        Ok(text)
    }

    /// Checks a member list: no duplicates, within the limit.
    pub(crate) fn check_members(&self, members: &[ProjectMember]) -> ProjectResult<()> {
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
    pub(crate) fn parse_row_version(raw: Option<&str>) -> ProjectResult<Option<i64>> {
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
    pub(crate) async fn load_chain(&self, caller: &Caller, id: ProjectId) -> ProjectResult<Chain> {
        let rows = store::chain(&self.db, id, caller.key(), self.chain_levels_max()).await?;
        Chain::build(rows, caller)
    }

    /// Whether the project is in the recycle bin, itself or below a deleted project (or gone),
    /// whoever asks.
    pub(crate) async fn in_recycle_bin(&self, id: ProjectId) -> ProjectResult<bool> {
        let nobody = Caller::nobody();
        match self.load_chain(&nobody, id).await {
            Ok(chain) => Ok(chain.target().deleted),
            Err(ProjectError::NotFound) => Ok(true),
            Err(error) => Err(error),
        }
    }

    /// The chain of a live project the caller can access.
    pub(crate) async fn visible(&self, caller: &Caller, id: ProjectId) -> ProjectResult<Chain> {
        visible_only(self.load_chain(caller, id).await?)
    }

    /// [`Self::visible`] inside `tx`: a caller holding a write transaction must not wait for a
    /// second pooled connection (on SQLite, every other writer may be holding one, waiting for
    /// this transaction's lock).
    pub(crate) async fn visible_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<Chain> {
        visible_only(self.chain_in(tx, caller, id).await?)
    }

    /// Chains are read one level further than a valid tree reaches, so that a chain cut off at
    /// the bound is known to be corrupt rather than taken for a whole one.
    fn chain_levels_max(&self) -> i64 {
        self.limits.depth_max.saturating_add(1)
    }

    /// Begins the write transaction of a change to project `id`, takes the lock of its tree
    /// and loads the caller's chain inside it. Every rule of the change is then checked on what
    /// this transaction sees: a concurrent change of the same tree either committed before and
    /// is seen, or waits until this one commits. (SQLite serialises every write transaction;
    /// PostgreSQL locks the row of the tree's top-level project.)
    async fn begin_change(&self, caller: &Caller, id: ProjectId) -> ProjectResult<(Tx, Chain)> {
        let mut tx = self.db.begin().await?;
        store::lock_tree_of_in(&mut tx, id).await?;
        let chain = self.visible_in(&mut tx, caller, id).await?;
        Ok((tx, chain))
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    // ---- who may call: checked before a request's body is read ----

    /// 404 when the caller cannot see project `id`, 403 when it can but lacks `capability`.
    pub(crate) async fn authorize(
        &self,
        caller: &Caller,
        id: ProjectId,
        capability: Capability,
    ) -> ProjectResult<()> {
        let chain = self.visible(caller, id).await?;
        require(
            capability.held_in(chain.capabilities()),
            capability.action(),
        )
    }

    /// 404 when the caller cannot see subproject `id`, 403 when it may not take it out of its
    /// parent (a move needs delete-content there). A top-level project passes: that it
    /// cannot move is a rule of the tree, answered with the move.
    pub(crate) async fn authorize_move(&self, caller: &Caller, id: ProjectId) -> ProjectResult<()> {
        let chain = self.visible(caller, id).await?;
        match chain.parent() {
            Some(parent) if !Capabilities::of(parent.role).can_delete_content => {
                Err(ProjectError::Forbidden(
                    "moving needs delete-content permission on the current parent".into(),
                ))
            }
            _ => Ok(()),
        }
    }

    /// The tenant the caller creates top-level projects in: its own, when it is a member.
    pub(crate) fn creating_tenant(caller: &Caller) -> ProjectResult<TenantId> {
        let Some(tenant) = caller.tenant_id() else {
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
        Ok(tenant)
    }

    /// For requests whose body names the project: 404, as for any project the body could
    /// name, when the caller can see none, being in no tenant it acts in and a member of no
    /// project.
    pub(crate) async fn authorize_any_project(&self, caller: &Caller) -> ProjectResult<()> {
        if Self::creating_tenant(caller).is_ok()
            || store::is_member_anywhere(&self.db, caller.key()).await?
        {
            Ok(())
        } else {
            Err(ProjectError::NotFound)
        }
    }

    // ---- create ----

    /// Creates a top-level project; the caller becomes its Owner.
    pub(crate) async fn create_root(
        &self,
        caller: &Caller,
        input: NewProject,
    ) -> ProjectResult<(ProjectRow, Vec<ProjectMember>)> {
        let tenant = Self::creating_tenant(caller)?;
        if input.inherits_members {
            return Err(ProjectError::Rejected {
                kind: "root-cannot-inherit",
                detail: "a top-level project has no parent to inherit members from".into(),
            });
        }
        let members = self.initial_members(caller, tenant, &input).await?;
        let id = ProjectId::new_random();
        let row = self.new_row(caller, tenant, None, id, 0, input);
        let mut tx = self.db.begin().await?;
        store::insert_project(&mut tx, &row).await?;
        store::replace_members(&mut tx, id, &members, row.created_at).await?;
        tx.commit().await?;
        Ok((row, members))
    }

    /// Creates a subproject under `parent`.
    pub(crate) async fn create_subproject(
        &self,
        caller: &Caller,
        parent: ProjectId,
        input: NewProject,
    ) -> ProjectResult<(ProjectRow, Vec<ProjectMember>)> {
        let tenant = self.visible(caller, parent).await?.target().row.tenant_id;
        let members = self.initial_members(caller, tenant, &input).await?;
        let (mut tx, chain) = self.begin_change(caller, parent).await?;
        require(chain.capabilities().can_create_content, "create content")?;
        let parent_row = &chain.target().row;
        let depth = parent_row.depth.saturating_add(1);
        self.check_depth(depth)?;
        let id = ProjectId::new_random();
        let row = self.new_row(
            caller,
            tenant,
            Some((parent, parent_row.root_id)),
            id,
            depth,
            input,
        );
        store::insert_project(&mut tx, &row).await?;
        store::replace_members(&mut tx, id, &members, row.created_at).await?;
        tx.commit().await?;
        Ok((row, members))
    }

    fn check_depth(&self, depth: i64) -> ProjectResult<()> {
        if depth > self.limits.depth_max {
            return Err(ProjectError::Rejected {
                kind: "depth-limit",
                detail: format!(
                    "subprojects nest at most {} levels deep (limits.project_depth_max)",
                    self.limits.depth_max
                ),
            });
        }
        Ok(())
    }

    /// The own members of a new project: the caller as Owner and the listed members, each a
    /// principal of the tenant; none for a subproject that inherits.
    async fn initial_members(
        &self,
        caller: &Caller,
        tenant: TenantId,
        input: &NewProject,
    ) -> ProjectResult<Vec<ProjectMember>> {
        if input.inherits_members {
            if !input.members.is_empty() {
                return Err(ProjectError::Invalid {
                    field: "members",
                    message: "a subproject that inherits members cannot list its own".into(),
                });
            }
            return Ok(Vec::new());
        }
        let mut members: Vec<ProjectMember> = input
            .members
            .iter()
            .filter(|member| member.principal_id != caller.id)
            .cloned()
            .collect();
        self.check_members(&members)?;
        self.check_principals(tenant, &members, &[]).await?;
        members.insert(
            0,
            ProjectMember {
                principal_id: caller.id,
                principal_type: caller.principal_type,
                role: ProjectRole::Owner,
            },
        );
        self.check_members(&members)?;
        Ok(members)
    }

    /// Checks that every member is a principal of `tenant` of the type it names (a user in the
    /// tenant, an API key issued in it). Members already among `current` may stay even if they
    /// no longer are (a user who left the tenant, a revoked key), so that a member list read
    /// and sent back is accepted.
    async fn check_principals(
        &self,
        tenant: TenantId,
        members: &[ProjectMember],
        current: &[ProjectMember],
    ) -> ProjectResult<()> {
        let is_current = |member: &ProjectMember| {
            current.iter().any(|known| {
                known.principal_id == member.principal_id
                    && known.principal_type == member.principal_type
            })
        };
        let new: Vec<(Uuid, PrincipalType)> = members
            .iter()
            .filter(|member| !is_current(member))
            .map(|member| (member.principal_id, member.principal_type))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        let known = self.directory.principals_in_tenant(tenant, &new).await?;
        for (index, member) in members.iter().enumerate() {
            let key = (member.principal_id, member.principal_type);
            if !is_current(member) && !known.contains(&key) {
                return Err(ProjectError::Invalid {
                    field: "members",
                    message: format!(
                        "members[{index}]: {} is not {} of this project's tenant",
                        member.principal_id,
                        match member.principal_type {
                            PrincipalType::UserIdentity => "a user",
                            PrincipalType::OpenAPIAccount => "an API key",
                            PrincipalType::MemberGroup => "a member group",
                        }
                    ),
                });
            }
        }
        Ok(())
    }

    fn new_row(
        &self,
        caller: &Caller,
        tenant: TenantId,
        parent: Option<(ProjectId, ProjectId)>,
        id: ProjectId,
        depth: i64,
        input: NewProject,
    ) -> ProjectRow {
        let now = self.now();
        ProjectRow {
            id,
            tenant_id: tenant,
            parent_id: parent.map(|(parent, _)| parent),
            root_id: parent.map_or(id, |(_, root)| root),
            depth,
            name: input.name,
            description: input.description,
            metadata: input.metadata,
            settings: input.settings,
            access_level: input.access_level,
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
        }
    }

    // ---- read ----

    /// A project with its own members and the caller's capabilities.
    pub(crate) async fn get(
        &self,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<(Chain, Vec<ProjectMember>)> {
        let chain = self.visible(caller, id).await?;
        let members = store::members(&self.db, id).await?;
        Ok((chain, members))
    }

    /// The members that apply to a project: its own, or those of the ancestor it inherits
    /// from (docs/projects.md#inherited-members).
    pub(crate) async fn effective_members(
        &self,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<Vec<ProjectMember>> {
        let chain = self.visible(caller, id).await?;
        Ok(store::members(&self.db, member_source(&chain)).await?)
    }

    // ---- update ----

    /// Writes `row` in `tx` if it is still at `expected` (its own version when `None`).
    async fn save(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        mut row: ProjectRow,
        expected: Option<i64>,
    ) -> ProjectResult<ProjectRow> {
        row.updated_at = self.now();
        row.updated_by = Some(caller.id);
        let version = store::update_project(tx, &row, expected)
            .await?
            .ok_or_else(stale)?;
        row.row_version = version;
        Ok(row)
    }

    /// Replaces name, description, metadata and settings.
    pub(crate) async fn update(
        &self,
        caller: &Caller,
        id: ProjectId,
        fields: (String, String, JsonText, JsonText),
        expected: Option<i64>,
    ) -> ProjectResult<(Chain, ProjectRow)> {
        let (mut tx, chain) = self.begin_change(caller, id).await?;
        require(chain.capabilities().can_edit, "edit the project")?;
        let mut row = chain.target().row.clone();
        (row.name, row.description, row.metadata, row.settings) = fields;
        let row = self.save(&mut tx, caller, row, expected).await?;
        tx.commit().await?;
        Ok((chain, row))
    }

    /// Sets the access level.
    pub(crate) async fn set_access_level(
        &self,
        caller: &Caller,
        id: ProjectId,
        level: AccessLevel,
        expected: Option<i64>,
    ) -> ProjectResult<(Chain, ProjectRow)> {
        let (mut tx, chain) = self.begin_change(caller, id).await?;
        require(
            chain.capabilities().can_edit_access_level,
            "change the access level",
        )?;
        let mut row = chain.target().row.clone();
        row.access_level = level;
        let row = self.save(&mut tx, caller, row, expected).await?;
        tx.commit().await?;
        Ok((chain, row))
    }

    /// Sets the own members (cancelling inheritance). The list must hold an Owner.
    pub(crate) async fn set_members(
        &self,
        caller: &Caller,
        id: ProjectId,
        members: Vec<ProjectMember>,
        expected: Option<i64>,
    ) -> ProjectResult<ProjectRow> {
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
        let before = self.visible(caller, id).await?;
        require(before.capabilities().can_grant_access, "change members")?;
        let current = store::members(&self.db, member_source(&before)).await?;
        self.check_principals(before.target().row.tenant_id, &members, &current)
            .await?;
        let (mut tx, chain) = self.begin_change(caller, id).await?;
        require(chain.capabilities().can_grant_access, "change members")?;
        let mut row = chain.target().row.clone();
        row.inherits_members = false;
        let row = self.save(&mut tx, caller, row, expected).await?;
        store::replace_members(&mut tx, id, &members, row.updated_at).await?;
        tx.commit().await?;
        Ok(row)
    }

    /// Makes a subproject inherit its members; its own are cleared.
    pub(crate) async fn inherit_members(
        &self,
        caller: &Caller,
        id: ProjectId,
        expected: Option<i64>,
    ) -> ProjectResult<ProjectRow> {
        let (mut tx, chain) = self.begin_change(caller, id).await?;
        require(chain.capabilities().can_grant_access, "change members")?;
        if chain.parent().is_none() {
            return Err(ProjectError::Rejected {
                kind: "root-cannot-inherit",
                detail: "a top-level project has no parent to inherit members from".into(),
            });
        }
        let mut row = chain.target().row.clone();
        row.inherits_members = true;
        let row = self.save(&mut tx, caller, row, expected).await?;
        store::replace_members(&mut tx, id, &[], row.updated_at).await?;
        tx.commit().await?;
        Ok(row)
    }

    /// Adds one member. On a subproject that inherits, the inherited members become its own
    /// first, so nobody loses access.
    pub(crate) async fn add_member(
        &self,
        caller: &Caller,
        id: ProjectId,
        member: ProjectMember,
    ) -> ProjectResult<ProjectRow> {
        let before = self.visible(caller, id).await?;
        require(before.capabilities().can_grant_access, "change members")?;
        let current = store::members(&self.db, member_source(&before)).await?;
        self.check_principals(
            before.target().row.tenant_id,
            std::slice::from_ref(&member),
            &current,
        )
        .await?;
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
    pub(crate) async fn remove_member(
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

    /// Applies `change` to the members that apply to the project, read inside the write
    /// transaction, and stores the result as its own members (ending inheritance).
    async fn edit_members(
        &self,
        caller: &Caller,
        id: ProjectId,
        change: impl FnOnce(&mut Vec<ProjectMember>) -> ProjectResult<()>,
    ) -> ProjectResult<ProjectRow> {
        let (mut tx, chain) = self.begin_change(caller, id).await?;
        require(chain.capabilities().can_grant_access, "change members")?;
        let mut members = store::members_in(&mut tx, member_source(&chain)).await?;
        change(&mut members)?;
        self.check_members(&members)?;
        let mut row = chain.target().row.clone();
        row.inherits_members = false;
        let row = self.save(&mut tx, caller, row, None).await?;
        store::replace_members(&mut tx, id, &members, row.updated_at).await?;
        tx.commit().await?;
        Ok(row)
    }

    /// Moves a subproject under another subproject or the root of the same tree
    /// (docs/projects.md#moves). Every rule is checked inside the write transaction, which
    /// holds the tree's lock: two moves sent at the same moment (A under B, B under A) are
    /// decided one after the other, and the second sees the first.
    pub(crate) async fn move_project(
        &self,
        caller: &Caller,
        id: ProjectId,
        target: ProjectId,
    ) -> ProjectResult<ProjectRow> {
        let (mut tx, chain) = self.begin_change(caller, id).await?;
        let destination = self.visible_in(&mut tx, caller, target).await?;
        let row = chain.target().row.clone();
        check_move(&chain, &destination)?;
        if chain.parent().is_some_and(|parent| parent.row.id == target) {
            return Ok(row);
        }
        let new_depth = destination.target().row.depth.saturating_add(1);
        let delta = new_depth.saturating_sub(row.depth);
        let levels = self.chain_levels_max();
        let deepest = store::subtree_depth_max_in(&mut tx, id, levels).await?;
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
        let moved = self.save(&mut tx, caller, moved, None).await?;
        store::shift_subtree_depth_in(&mut tx, id, delta, levels).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// Moves a project to the recycle bin (docs/projects.md#deletion).
    pub(crate) async fn delete(&self, caller: &Caller, id: ProjectId) -> ProjectResult<()> {
        let (mut tx, chain) = self.begin_change(caller, id).await?;
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
        self.delete_in(&mut tx, caller, &chain.target().row).await?;
        tx.commit().await?;
        Ok(())
    }

    // ---- inside a caller's transaction (bulk hierarchy) ----

    /// The database, for operations that span areas in one transaction.
    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// Makes `tx` the only writer of the tree holding `id` until it ends, so that two bulk
    /// requests cannot both create the same missing folder.
    pub(crate) async fn lock_tree_in(&self, tx: &mut Tx, id: ProjectId) -> ProjectResult<()> {
        Ok(store::lock_tree_of_in(tx, id).await?)
    }

    /// Makes `tx` the only writer of every tree holding one of `ids` (a restore into another
    /// tree writes two). The trees are locked in one order for every caller, so that two
    /// transactions locking the same two trees cannot deadlock.
    pub(crate) async fn lock_trees_in(&self, tx: &mut Tx, ids: &[ProjectId]) -> ProjectResult<()> {
        Ok(store::lock_trees_of_in(tx, ids).await?)
    }

    /// The first live subproject of `parent` named `name` that the caller can see, read inside
    /// `tx`, with its chain. Siblings it cannot see are passed over as if they were not there,
    /// so that a name clash never reveals them.
    pub(crate) async fn visible_child_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        parent: ProjectId,
        name: &str,
    ) -> ProjectResult<Option<Chain>> {
        let candidates =
            store::children_named_in(tx, parent, name, SAME_NAME_CANDIDATES_MAX).await?;
        for row in candidates {
            match self.visible_in(tx, caller, row.id).await {
                Ok(chain) => return Ok(Some(chain)),
                Err(ProjectError::NotFound) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(None)
    }

    /// Creates a subproject of `parent` that inherits its members, inside `tx`. The caller has
    /// checked `canCreateContent` on the parent.
    pub(crate) async fn create_folder_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        parent: &ProjectRow,
        name: String,
        access_level: AccessLevel,
    ) -> ProjectResult<ProjectRow> {
        let depth = parent.depth.saturating_add(1);
        self.check_depth(depth)?;
        let input = NewProject {
            name,
            description: String::new(),
            access_level,
            metadata: JsonText::empty_object(),
            settings: JsonText::empty_object(),
            billing_information: None,
            members: Vec::new(),
            inherits_members: true,
        };
        let row = self.new_row(
            caller,
            parent.tenant_id,
            Some((parent.id, parent.root_id)),
            ProjectId::new_random(),
            depth,
            input,
        );
        store::insert_project(tx, &row).await?;
        Ok(row)
    }

    /// Moves a project to the recycle bin inside `tx`; the caller has checked who may delete
    /// it (docs/projects.md#deletion).
    pub(crate) async fn delete_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        row: &ProjectRow,
    ) -> ProjectResult<()> {
        let mut row = row.clone();
        row.deleted_at = Some(self.now());
        row.deleted_by = Some(caller.id);
        let row = self.save(tx, caller, row, None).await?;
        let at = row.deleted_at.unwrap_or_else(|| self.now());
        let change = ProjectChange::Deleted {
            row,
            levels_max: self.chain_levels_max(),
        };
        self.reactions.run_in(tx, &change, at).await?;
        Ok(())
    }

    // ---- for the recycle bin ----

    /// The chain of `id` as `caller` sees it inside `tx`, whatever its state (roles are
    /// computed for deleted levels too: they decide who may restore them).
    pub(crate) async fn chain_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<Chain> {
        let rows = store::chain_in(tx, id, caller.key(), self.chain_levels_max()).await?;
        Chain::build(rows, caller)
    }

    /// The deepest depth in the subtree of `id`, read inside `tx`.
    pub(crate) async fn subtree_depth_max_in(
        &self,
        tx: &mut Tx,
        id: ProjectId,
    ) -> ProjectResult<i64> {
        Ok(store::subtree_depth_max_in(tx, id, self.chain_levels_max()).await?)
    }

    /// How many levels a walk of the tree may take before the tree is known to be corrupt.
    pub(crate) fn levels_max(&self) -> i64 {
        self.chain_levels_max()
    }

    /// The caller's effective role on each of `ids` (projects of `tenant`), whatever their
    /// state: one query for all of them and their ancestors.
    pub(crate) async fn roles_on(
        &self,
        caller: &Caller,
        tenant: TenantId,
        ids: &[ProjectId],
    ) -> ProjectResult<BTreeMap<ProjectId, Option<ProjectRole>>> {
        let inputs: BTreeMap<ProjectId, store::RoleInputs> =
            store::roles_of(&self.db, ids, caller.key())
                .await?
                .into_iter()
                .map(|row| (row.id, row))
                .collect();
        let standing = caller.standing(tenant);
        let mut member_roles: BTreeMap<ProjectId, Option<ProjectRole>> = BTreeMap::new();
        let mut roles = BTreeMap::new();
        for id in ids {
            let Some(project) = inputs.get(id) else {
                continue;
            };
            let member_role =
                member_role_of(*id, &inputs, &mut member_roles, self.chain_levels_max());
            roles.insert(
                *id,
                effective_role(member_role, standing, project.access_level),
            );
        }
        Ok(roles)
    }

    /// The projects the caller is an Owner member of.
    pub(crate) async fn owned_by(&self, caller: &Caller) -> ProjectResult<Vec<ProjectId>> {
        Ok(store::owned_by(&self.db, caller.key()).await?)
    }

    /// Before a subproject that inherits its members is restored under `destination`, where
    /// other members would apply: the members that applied where it was become its own, so
    /// that restoring it elsewhere changes nobody's access to it.
    pub(crate) async fn keep_members_in(
        &self,
        tx: &mut Tx,
        chain: &Chain,
        destination: &Chain,
    ) -> ProjectResult<()> {
        let row = &chain.target().row;
        if !row.inherits_members || member_source(chain) == member_source(destination) {
            return Ok(());
        }
        let members = store::members_in(tx, member_source(chain)).await?;
        store::replace_members(tx, row.id, &members, self.now()).await?;
        store::set_inherits_members_in(tx, row.id, false).await?;
        Ok(())
    }

    // ---- lists ----

    /// Top-level projects (`parent = None`) or direct subprojects of `parent` that the caller
    /// can access, filtered and ordered. Returns the rows and, for offset windows, the total.
    pub(crate) async fn list(
        &self,
        caller: &Caller,
        parent: Option<ProjectId>,
        filter: &ListFilter,
        window: &Window,
    ) -> ProjectResult<(Vec<ProjectRow>, Option<u64>)> {
        let (scope, tenant, parent_member_role, parent_visible) = match parent {
            Some(parent) => {
                let chain = self.load_chain(caller, parent).await?;
                let target = chain.target();
                if target.deleted {
                    return Err(ProjectError::NotFound);
                }
                (
                    ListScope::Children(parent),
                    target.row.tenant_id,
                    target.member_role,
                    target.role.is_some(),
                )
            }
            None => match caller.tenant_id() {
                Some(tenant) => (ListScope::Roots(tenant), tenant, None, true),
                None => return Ok((Vec::new(), Some(0))),
            },
        };
        let query = ProjectListQuery {
            scope,
            caller: caller.key(),
            parent_member_role,
            standing: caller.standing(tenant),
            minimum: filter
                .capability
                .map_or(ProjectRole::Reader, CapabilityFilter::minimum_role),
            roles: &filter.roles,
            name_prefix: filter.name_prefix.as_deref(),
        };
        match window {
            Window::Keyset { after, fetch } => {
                let page = filter
                    .column
                    .keyset(filter.descending, after.clone(), *fetch);
                let rows = store::list_projects(&self.db, &query, &page).await?;
                hide_invisible_parent(parent_visible, after.is_none() && rows.is_empty())?;
                Ok((rows, None))
            }
            Window::Offset { offset, limit } => {
                let total = store::count_projects(&self.db, &query).await?;
                hide_invisible_parent(parent_visible, total == 0)?;
                let rows = store::list_projects_offset(
                    &self.db,
                    &query,
                    filter.column,
                    filter.descending,
                    (*offset, *limit),
                )
                .await?;
                Ok((rows, Some(total)))
            }
        }
    }

    /// Every subproject below `id` that the caller can access, with its path below `id`,
    /// ordered by path; one offset page and the total.
    pub(crate) async fn list_recursive(
        &self,
        caller: &Caller,
        id: ProjectId,
        offset: u32,
        limit: u32,
    ) -> ProjectResult<(Vec<DescendantRow>, u64)> {
        let chain = self.load_chain(caller, id).await?;
        let target = chain.target();
        if target.deleted {
            return Err(ProjectError::NotFound);
        }
        let query = DescendantsQuery {
            root: id,
            caller: caller.key(),
            parent_member_role: target.member_role,
            standing: caller.standing(target.row.tenant_id),
            levels_max: self.chain_levels_max(),
        };
        let total = store::count_descendants(&self.db, &query).await?;
        hide_invisible_parent(target.role.is_some(), total == 0)?;
        let rows = store::list_descendants(&self.db, &query, offset, limit).await?;
        Ok((rows, total))
    }
}

/// Listing below a project the caller cannot see is allowed (a member of a subproject reaches
/// it without access to its parents: docs/permissions.md#members-of-a-subproject-only), but
/// when nothing below is visible either, the parent answers "not found" as it would for any
/// other call, so its existence does not leak.
fn hide_invisible_parent(parent_visible: bool, nothing_visible: bool) -> ProjectResult<()> {
    if !parent_visible && nothing_visible {
        Err(ProjectError::NotFound)
    } else {
        Ok(())
    }
}

/// A chain whose target the caller may see: live and with a role.
fn visible_only(chain: Chain) -> ProjectResult<Chain> {
    let target = chain.target();
    if target.deleted || target.role.is_none() {
        return Err(ProjectError::NotFound);
    }
    Ok(chain)
}

/// The rules of a move (docs/projects.md#moves) on the chains of the moved project and of the
/// destination, both read inside the move's write transaction.
fn check_move(chain: &Chain, destination: &Chain) -> ProjectResult<()> {
    let Some(parent) = chain.parent() else {
        return Err(ProjectError::Rejected {
            kind: "cannot-move-root",
            detail: "top-level projects cannot be moved".into(),
        });
    };
    let moved = &chain.target().row;
    if destination.target().row.root_id != moved.root_id {
        return Err(ProjectError::Rejected {
            kind: "move-across-roots",
            detail: "a subproject can only move within its own top-level project".into(),
        });
    }
    if destination.contains(moved.id) {
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
    // A subproject that inherits its members takes them from its new parent's chain after
    // the move: when that source differs, the move decides who may access the moved subtree,
    // as a member change does, so it needs the right to grant access there. Without this, a
    // Contributor could move an inheriting sibling under a subproject of its own (where it is
    // Owner) and become its Owner.
    if moved.inherits_members
        && member_source(chain) != member_source(destination)
        && !chain.capabilities().can_grant_access
    {
        return Err(ProjectError::Forbidden(
            "moving a subproject that inherits its members to where other members apply changes who may access it; that needs canGrantAccess on it (its Owner)".into(),
        ));
    }
    Ok(())
}

/// The caller's membership role on `id` from the role inputs of it and its ancestors,
/// memoised in `known`; inheritance followed at most `levels_max` levels.
fn member_role_of(
    id: ProjectId,
    inputs: &BTreeMap<ProjectId, store::RoleInputs>,
    known: &mut BTreeMap<ProjectId, Option<ProjectRole>>,
    levels_max: i64,
) -> Option<ProjectRole> {
    let mut path = Vec::new();
    let mut current = id;
    let mut role = None;
    for _ in 0..=levels_max {
        if let Some(found) = known.get(&current) {
            role = *found;
            break;
        }
        let Some(project) = inputs.get(&current) else {
            break;
        };
        path.push(current);
        match project.parent_id {
            Some(parent) if project.inherits_members => current = parent,
            _ => {
                role = project.caller_role;
                break;
            }
        }
    }
    for project in path {
        known.insert(project, role);
    }
    role
}

/// The project whose own members apply to the chain's target
/// (docs/projects.md#inherited-members): the nearest level, from the target up, that does not
/// inherit.
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
