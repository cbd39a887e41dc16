//! Project rules (docs/projects.md, docs/permissions.md): visibility and capabilities through
//! the ancestor chain, member inheritance, listing filters, move, optimistic concurrency and
//! limits.
//!
//! Every operation loads the target's chain of ancestors in one query and decides from it.
//! Projects the caller cannot access, and projects in the recycle bin (or below one), are
//! "not found"; projects it can see but may not change are "forbidden".
//!
//! This file holds the service, its errors and limits, creation, reads, updates and deletes;
//! the tree (chains, locks, depth, moves), members and lists are in `service/`.

mod listing;
mod members;
mod tree;

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
use crate::limits::PROJECT_JSON_BYTES_MAX;
use crate::projects::ProjectChange;
use crate::projects::access::{AccessLevel, ProjectRole};
use crate::projects::access::{Capabilities, Capability, CapabilityFilter, effective_role};
use crate::projects::fields::{Description, FieldError, ProjectName};
use crate::projects::model::{ProjectMember, ProjectRow};
use crate::projects::store::{
    self, ChainRow, DescendantRow, DescendantsQuery, ListScope, ProjectListQuery,
};
pub(crate) use crate::projects::store::{SortColumn, Window};
use crate::reactions::Reactions;

pub(crate) use listing::ListFilter;
use members::member_source;
pub(crate) use tree::Chain;

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
impl From<FieldError> for ProjectError {
    fn from(error: FieldError) -> Self {
        Self::Invalid {
            field: error.field(),
            message: error.message(),
        }
    }
}

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

/// How many same-named siblings a path lookup considers. Names need not be unique; among more
/// than this many namesakes a caller might not find the one it can see, and would get a new one.
const SAME_NAME_CANDIDATES_MAX: i64 = 100;

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
    pub(crate) name: ProjectName,
    /// Description.
    pub(crate) description: Description,
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

    /// Checks a project name against the rule for names and the configured limit.
    pub(crate) fn parse_name(&self, raw: &str) -> ProjectResult<ProjectName> {
        Ok(ProjectName::parse(raw, self.limits.name_chars_max)?)
    }

    /// Checks a description.
    pub(crate) fn parse_description(raw: Option<&str>) -> ProjectResult<Description> {
        Ok(Description::parse(raw)?)
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
            name: input.name.into_string(),
            description: input.description.into_string(),
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
        fields: (ProjectName, Description, JsonText, JsonText),
        expected: Option<i64>,
    ) -> ProjectResult<(Chain, ProjectRow)> {
        let (mut tx, chain) = self.begin_change(caller, id).await?;
        require(chain.capabilities().can_edit, "edit the project")?;
        let mut row = chain.target().row.clone();
        let (name, description, metadata, settings) = fields;
        (row.name, row.description) = (name.into_string(), description.into_string());
        (row.metadata, row.settings) = (metadata, settings);
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
        name: ProjectName,
        access_level: AccessLevel,
    ) -> ProjectResult<ProjectRow> {
        let depth = parent.depth.saturating_add(1);
        self.check_depth(depth)?;
        let input = NewProject {
            name,
            description: Description::default(),
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

    // ---- lists ----
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
