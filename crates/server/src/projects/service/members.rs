//! Members: who is a member of a project with which role, inheritance from the parent
//! (docs/projects.md#inherited-members), and the checks on the principals named.

use super::*;

/// The caller's membership role on `id` from the role inputs of it and its ancestors,
/// memoised in `known`; inheritance followed at most `levels_max` levels.
pub(super) fn member_role_of(
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
pub(super) fn member_source(chain: &Chain) -> ProjectId {
    chain
        .nodes()
        .rev()
        .find(|node| !node.row.inherits_members)
        .map_or(chain.target().row.id, |node| node.row.id)
}

impl ProjectService {
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

    /// The own members of a new project: the caller as Owner and the listed members, each a
    /// principal of the tenant; none for a subproject that inherits.
    pub(super) async fn initial_members(
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
    pub(super) async fn check_principals(
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
    pub(super) async fn edit_members(
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
}
