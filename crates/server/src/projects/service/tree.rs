//! The tree: a project's chain of ancestors with the caller's role at each level, the locks
//! that serialise changes to one tree, depth limits, and moves (docs/projects.md#moves).

use super::*;

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
    pub(super) fn build(rows: Vec<ChainRow>, caller: &Caller) -> ProjectResult<Self> {
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

    pub(super) fn contains(&self, id: ProjectId) -> bool {
        self.nodes().any(|node| node.row.id == id)
    }
}

/// The rules of a move (docs/projects.md#moves) on the chains of the moved project and of the
/// destination, both read inside the move's write transaction.
pub(super) fn check_move(chain: &Chain, destination: &Chain) -> ProjectResult<()> {
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

/// A chain whose target the caller may see: live and with a role.
pub(super) fn visible_only(chain: Chain) -> ProjectResult<Chain> {
    let target = chain.target();
    if target.deleted || target.role.is_none() {
        return Err(ProjectError::NotFound);
    }
    Ok(chain)
}

impl ProjectService {
    /// The chain of `id` as seen by `caller`, whatever its state.
    pub(crate) async fn load_chain(&self, caller: &Caller, id: ProjectId) -> ProjectResult<Chain> {
        let rows = store::chain(&self.db, id, caller.key(), self.chain_levels_max()).await?;
        Chain::build(rows, caller)
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

    /// Begins the write transaction of a change to project `id`, takes the lock of its tree
    /// and loads the caller's chain inside it. Every rule of the change is then checked on what
    /// this transaction sees: a concurrent change of the same tree either committed before and
    /// is seen, or waits until this one commits. (SQLite serialises every write transaction;
    /// PostgreSQL locks the row of the tree's top-level project.)
    pub(super) async fn begin_change(
        &self,
        caller: &Caller,
        id: ProjectId,
    ) -> ProjectResult<(Tx, Chain)> {
        let mut tx = self.db.begin().await?;
        store::lock_tree_of_in(&mut tx, id).await?;
        let chain = self.visible_in(&mut tx, caller, id).await?;
        Ok((tx, chain))
    }

    /// Chains are read one level further than a valid tree reaches, so that a chain cut off at
    /// the bound is known to be corrupt rather than taken for a whole one.
    pub(super) fn chain_levels_max(&self) -> i64 {
        self.limits.depth_max.saturating_add(1)
    }

    pub(super) fn check_depth(&self, depth: i64) -> ProjectResult<()> {
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
}
