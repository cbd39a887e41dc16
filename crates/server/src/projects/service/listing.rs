//! Lists of projects: the direct listing of one level and the recursive one, filtered to
//! what the caller may see (docs/projects.md#listings).

use super::*;

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

/// Listing below a project the caller cannot see is allowed (a member of a subproject reaches
/// it without access to its parents: docs/permissions.md#members-of-a-subproject-only), but
/// when nothing below is visible either, the parent answers "not found" as it would for any
/// other call, so its existence does not leak.
pub(super) fn hide_invisible_parent(
    parent_visible: bool,
    nothing_visible: bool,
) -> ProjectResult<()> {
    if !parent_visible && nothing_visible {
        Err(ProjectError::NotFound)
    } else {
        Ok(())
    }
}

impl ProjectService {
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
