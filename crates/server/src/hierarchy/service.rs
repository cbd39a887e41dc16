//! Bulk hierarchy rules. Every action runs in one transaction: the first failure rolls all of
//! them back and names the action. Folders created here inherit their parent's members, so
//! the caller's capabilities in them are those of the parent (and of their access level).

use std::collections::HashMap;

use chrono::TimeDelta;

use crate::auth::Caller;
use crate::blob_urls::BlobUrls;
use crate::clock::Clock;
use crate::datasets::DATASETS_CONTAINER;
use crate::datasets::service::{DatasetError, DatasetService, NewDataset};
use crate::ids::{DatasetId, ProjectId};
use crate::projects::access::{AccessLevel, ProjectRole};
use crate::projects::access::{Capabilities, effective_role};
use crate::projects::hierarchy_path::HierarchyPath;
use crate::projects::model::ProjectRow;
use crate::projects::service::{ProjectError, ProjectService};
use crate::public_base::PublicBase;
use basin_blob::BlobPath;

crate::wire_enum! {
    /// What an action does.
    pub(crate) enum PathActionType {
        /// Create the path; an existing one is an error.
        PathActionCreate,
        /// Create the path unless it exists.
        PathActionCreateIfNotExists,
        /// Delete the path (to the recycle bin).
        PathActionDelete,
    }
}

/// One checked action.
#[derive(Debug, Clone)]
pub(crate) struct PathAction {
    /// What to do.
    pub(crate) kind: PathActionType,
    /// Where, relative to the project.
    pub(crate) path: HierarchyPath,
    /// A folder (subproject) rather than a file (dataset).
    pub(crate) is_folder: bool,
}

/// A path the request created.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CreatedPath {
    /// The folder, or the folder holding the file.
    pub(crate) project_id: ProjectId,
    /// The dataset, for files.
    pub(crate) dataset_id: Option<DatasetId>,
    /// The path as given.
    pub(crate) path: String,
    /// Signed URL to upload the file's content.
    pub(crate) sas_token: Option<String>,
}

/// Why a bulk request failed; `index` names the action.
#[derive(Debug, thiserror::Error)]
#[error("action {index:?}: {error}")]
pub(crate) struct HierarchyError {
    /// The failing action, or `None` for the request as a whole.
    pub(crate) index: Option<usize>,
    /// What failed.
    pub(crate) error: ActionError,
}

/// What failed in one action.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ActionError {
    /// The path (or a folder on it) does not exist or is not visible.
    #[error("{0} does not exist")]
    NotFound(String),
    /// The path exists already (`PathActionCreate`).
    #[error("{0} exists already")]
    Exists(String),
    /// A project rule refused.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// A dataset rule refused.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// A name cannot be a blob name.
    #[error("{0}")]
    InvalidName(String),
    /// The request would create more than `limits.hierarchy_created_max` folders and files.
    #[error("a request may create at most {0} folders and files")]
    TooManyCreated(usize),
}

/// What the caller may do in one folder, and what its subfolders inherit.
#[derive(Debug, Clone)]
struct Folder {
    row: ProjectRow,
    member_role: Option<ProjectRole>,
    capabilities: Capabilities,
}

/// The limits of bulk requests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HierarchyLimits {
    /// Most actions in one request.
    pub(crate) actions_max: usize,
    /// Most folders and files one request may create.
    pub(crate) created_max: usize,
}

impl From<&crate::config::LimitsConfig> for HierarchyLimits {
    fn from(limits: &crate::config::LimitsConfig) -> Self {
        Self {
            actions_max: limits.hierarchy_actions_max.get(),
            created_max: limits.hierarchy_created_max.get(),
        }
    }
}

/// Bulk hierarchy operations.
#[derive(Debug, Clone)]
pub(crate) struct HierarchyService {
    projects: ProjectService,
    datasets: DatasetService,
    urls: BlobUrls,
    clock: std::sync::Arc<dyn Clock>,
    limits: HierarchyLimits,
}

impl HierarchyService {
    /// The service.
    pub(crate) fn new(
        projects: ProjectService,
        datasets: DatasetService,
        urls: BlobUrls,
        clock: std::sync::Arc<dyn Clock>,
        limits: HierarchyLimits,
    ) -> Self {
        Self {
            projects,
            datasets,
            urls,
            clock,
            limits,
        }
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> HierarchyLimits {
        self.limits
    }

    /// The folder `name` below `parent` that the caller can see, if any (cached per request).
    async fn visible_child(
        &self,
        tx: &mut crate::db::Tx,
        run: &mut Run<'_>,
        parent: &Folder,
        name: &str,
    ) -> Result<Option<Folder>, ActionError> {
        let Some(chain) = self
            .projects
            .visible_child_in(tx, run.caller, parent.row.id, name)
            .await?
        else {
            return Ok(None);
        };
        if let Some(known) = run.folders.get(&chain.target().row.id) {
            return Ok(Some(known.clone()));
        }
        let folder = Folder {
            capabilities: chain.capabilities(),
            member_role: chain.target().member_role,
            row: chain.target().row.clone(),
        };
        run.folders.insert(folder.row.id, folder.clone());
        Ok(Some(folder))
    }

    fn created(caller: &Caller, parent: &Folder, row: ProjectRow) -> Folder {
        let role = effective_role(
            parent.member_role,
            caller.standing(row.tenant_id),
            row.access_level,
        );
        Folder {
            capabilities: Capabilities::of(role),
            member_role: parent.member_role,
            row,
        }
    }

    /// Applies `actions` below `root`, all or nothing.
    pub(crate) async fn apply(
        &self,
        caller: &Caller,
        root: ProjectId,
        actions: &[PathAction],
        access_level: AccessLevel,
        sas_ttl: TimeDelta,
        base: &PublicBase,
    ) -> Result<Vec<CreatedPath>, HierarchyError> {
        let whole = |error: ActionError| HierarchyError { index: None, error };
        let (mut tx, root) = self.open_root(caller, root).await.map_err(whole)?;
        let mut state = Run {
            caller,
            access_level,
            expiry: self.clock.now() + sas_ttl,
            base,
            folders: HashMap::new(),
            results: Vec::new(),
            created: 0,
        };
        for (index, action) in actions.iter().enumerate() {
            self.run(&mut tx, &mut state, &root, action)
                .await
                .map_err(|error| HierarchyError {
                    index: Some(index),
                    error,
                })?;
        }
        tx.commit()
            .await
            .map_err(|error| whole(ProjectError::Store(error).into()))?;
        Ok(state.results)
    }

    /// Begins the transaction of a request on the tree of `root` and finds `root` as the caller
    /// sees it. The tree is locked before anything of it is read, so that every folder the
    /// request walks or creates is decided on what is committed when it writes.
    async fn open_root(
        &self,
        caller: &Caller,
        root: ProjectId,
    ) -> Result<(crate::db::Tx, Folder), ActionError> {
        let mut tx = self
            .projects
            .db()
            .begin()
            .await
            .map_err(ProjectError::Store)?;
        self.projects.lock_tree_in(&mut tx, root).await?;
        let chain = self.projects.visible_in(&mut tx, caller, root).await?;
        let folder = Folder {
            capabilities: chain.capabilities(),
            member_role: chain.target().member_role,
            row: chain.target().row.clone(),
        };
        Ok((tx, folder))
    }

    /// The folder at `path` below `root` (the root itself for `None`), its missing folders
    /// created with `access_level` when `create` is set, in one transaction. For imports into
    /// a destination path.
    pub(crate) async fn folder_at(
        &self,
        caller: &Caller,
        root: ProjectId,
        path: Option<&HierarchyPath>,
        create: bool,
        access_level: AccessLevel,
        base: &PublicBase,
    ) -> Result<ProjectId, HierarchyError> {
        let whole = |error: ActionError| HierarchyError { index: None, error };
        let (mut tx, mut folder) = self.open_root(caller, root).await.map_err(whole)?;
        let mut run = Run {
            caller,
            access_level,
            expiry: self.clock.now(),
            base,
            folders: HashMap::new(),
            results: Vec::new(),
            created: 0,
        };
        let mut walked = Vec::new();
        for segment in path.map_or(&[][..], HierarchyPath::segments) {
            walked.push(segment.clone());
            folder = self
                .step(
                    &mut tx,
                    &mut run,
                    folder,
                    segment,
                    create,
                    &walked.join("/"),
                )
                .await
                .map_err(whole)?;
        }
        tx.commit()
            .await
            .map_err(|error| whole(ProjectError::Store(error).into()))?;
        Ok(folder.row.id)
    }

    async fn run(
        &self,
        tx: &mut crate::db::Tx,
        run: &mut Run<'_>,
        root: &Folder,
        action: &PathAction,
    ) -> Result<(), ActionError> {
        let create = action.kind != PathActionType::PathActionDelete;
        let mut folder = root.clone();
        let mut walked = Vec::new();
        for segment in action.path.parent_segments() {
            walked.push(segment.clone());
            folder = self
                .step(tx, run, folder, segment, create, &walked.join("/"))
                .await?;
        }
        let name = action.path.name().to_owned();
        let display = action.path.display();
        match (action.kind, action.is_folder) {
            (PathActionType::PathActionDelete, true) => {
                let target = self
                    .visible_child(tx, run, &folder, &name)
                    .await?
                    .ok_or_else(|| ActionError::NotFound(display.clone()))?;
                if !(target.capabilities.can_delete || folder.capabilities.can_delete_content) {
                    return Err(
                        ProjectError::Forbidden(format!("you may not delete {display}")).into(),
                    );
                }
                self.projects.delete_in(tx, run.caller, &target.row).await?;
            }
            (PathActionType::PathActionDelete, false) => {
                let dataset = self
                    .datasets
                    .find_by_name_in(tx, folder.row.id, &name)
                    .await?
                    .ok_or_else(|| ActionError::NotFound(display.clone()))?;
                if !folder.capabilities.can_delete_content {
                    return Err(
                        ProjectError::Forbidden(format!("you may not delete {display}")).into(),
                    );
                }
                self.datasets
                    .delete_in(tx, run.caller, dataset.project_id, dataset.id)
                    .await?;
            }
            (kind, true) => {
                if self.visible_child(tx, run, &folder, &name).await?.is_some() {
                    return match kind {
                        PathActionType::PathActionCreateIfNotExists => Ok(()),
                        _ => Err(ActionError::Exists(display)),
                    };
                }
                self.create_folder(tx, run, &folder, name, display).await?;
            }
            (kind, false) => {
                if self
                    .datasets
                    .find_by_name_in(tx, folder.row.id, &name)
                    .await?
                    .is_some()
                {
                    return match kind {
                        PathActionType::PathActionCreateIfNotExists => Ok(()),
                        _ => Err(ActionError::Exists(display)),
                    };
                }
                self.create_file(tx, run, &folder, name, display).await?;
            }
        }
        Ok(())
    }

    /// The folder `segment` below `folder`, created when missing and `create` is set.
    async fn step(
        &self,
        tx: &mut crate::db::Tx,
        run: &mut Run<'_>,
        folder: Folder,
        segment: &str,
        create: bool,
        display: &str,
    ) -> Result<Folder, ActionError> {
        match self.visible_child(tx, run, &folder, segment).await? {
            Some(known) => Ok(known),
            None if create => {
                self.create_folder(tx, run, &folder, segment.to_owned(), display.to_owned())
                    .await
            }
            None => Err(ActionError::NotFound(display.to_owned())),
        }
    }

    async fn create_folder(
        &self,
        tx: &mut crate::db::Tx,
        run: &mut Run<'_>,
        parent: &Folder,
        name: String,
        display: String,
    ) -> Result<Folder, ActionError> {
        if !parent.capabilities.can_create_content {
            return Err(ProjectError::Forbidden(format!("you may not create {display}")).into());
        }
        let name = self.projects.parse_name(&name)?;
        let row = self
            .projects
            .create_folder_in(tx, run.caller, &parent.row, name, run.access_level)
            .await?;
        let folder = Self::created(run.caller, parent, row);
        run.count_created(self.limits.created_max)?;
        run.folders.insert(folder.row.id, folder.clone());
        run.results.push(CreatedPath {
            project_id: folder.row.id,
            dataset_id: None,
            path: display,
            sas_token: None,
        });
        Ok(folder)
    }

    async fn create_file(
        &self,
        tx: &mut crate::db::Tx,
        run: &mut Run<'_>,
        folder: &Folder,
        name: String,
        display: String,
    ) -> Result<(), ActionError> {
        if !folder.capabilities.can_create_content {
            return Err(ProjectError::Forbidden(format!("you may not create {display}")).into());
        }
        let name = DatasetService::parse_name(&name)?;
        let id = DatasetId::new_random();
        let blob = BlobPath::parse(
            DATASETS_CONTAINER,
            &format!("{}/{id}/{name}", folder.row.tenant_id),
        )
        .map_err(|error| ActionError::InvalidName(format!("{display}: {error}")))?;
        let input = NewDataset {
            id,
            name,
            description: String::new(),
            data_path: blob.key(),
            storage_size: 0,
            checksum: None,
            metadata: crate::db::JsonText::empty_object(),
            properties: crate::db::JsonText::empty_object(),
            details: None,
        };
        self.datasets
            .create_in(tx, run.caller, folder.row.tenant_id, folder.row.id, input)
            .await?;
        run.count_created(self.limits.created_max)?;
        let sas_token = self.urls.signed_url(
            run.base,
            &blob,
            crate::blob_urls::UPLOAD_PERMISSIONS,
            run.expiry,
        );
        run.results.push(CreatedPath {
            project_id: folder.row.id,
            dataset_id: Some(id),
            path: display,
            sas_token: Some(sas_token),
        });
        Ok(())
    }
}

impl Run<'_> {
    fn count_created(&mut self, created_max: usize) -> Result<(), ActionError> {
        self.created = self.created.saturating_add(1);
        if self.created > created_max {
            return Err(ActionError::TooManyCreated(created_max));
        }
        Ok(())
    }
}

/// The state of one request.
struct Run<'a> {
    /// Folders and files created so far.
    created: usize,
    caller: &'a Caller,
    access_level: AccessLevel,
    expiry: chrono::DateTime<chrono::Utc>,
    base: &'a PublicBase,
    folders: HashMap<ProjectId, Folder>,
    results: Vec<CreatedPath>,
}

/// Parses a .NET `TimeSpan` as clients send `sasTokenExpiration`: `[d.]hh:mm:ss[.fffffff]`.
pub(crate) fn parse_time_span(raw: &str) -> Option<TimeDelta> {
    let raw = raw.trim();
    let (days, rest) = match raw.split_once('.') {
        Some((days, rest)) if !days.contains(':') => (days.parse::<i64>().ok()?, rest),
        _ => (0, raw),
    };
    let rest = rest.split('.').next()?;
    let mut parts = rest.split(':');
    let hours: i64 = parts.next()?.parse().ok()?;
    let minutes: i64 = parts.next()?.parse().ok()?;
    let seconds: i64 = parts.next()?.parse().ok()?;
    if parts.next().is_some()
        || !(0..24).contains(&hours)
        || !(0..60).contains(&minutes)
        || !(0..60).contains(&seconds)
        || days < 0
    {
        return None;
    }
    let total = days
        .checked_mul(86_400)?
        .checked_add(hours * 3600 + minutes * 60 + seconds)?;
    TimeDelta::try_seconds(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotnet_time_spans_parse() {
        assert_eq!(parse_time_span("1:00:00"), Some(TimeDelta::hours(1)));
        assert_eq!(parse_time_span("01:30:15"), Some(TimeDelta::seconds(5415)));
        assert_eq!(parse_time_span("2.00:00:00"), Some(TimeDelta::days(2)));
        assert_eq!(
            parse_time_span("00:10:00.5000000"),
            Some(TimeDelta::minutes(10))
        );
        for bad in [
            "",
            "1h",
            "25:00:00",
            "1:60:00",
            "-1.00:00:00",
            "1:2",
            "a:b:c",
        ] {
            assert_eq!(parse_time_span(bad), None, "{bad}");
        }
    }
}
