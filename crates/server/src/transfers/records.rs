//! Reading and cancelling transfers.
//!
//! Who sees a transfer: the principal that started it; anyone who may list the content of the
//! project it belongs to; and the tenant's administrators. Lists without a project show the
//! caller's own transfers (administrators: all of the tenant's); with `projectId` they show
//! that project's transfers to whoever may list its content.

use chrono::{DateTime, Utc};

use crate::auth::{Caller, Principal, TenantStanding};
use crate::ids::{DatasetId, ProjectId, TransferId};
use crate::transfers::model::{TransferDto, TransferRow, TransferStatus};
use crate::transfers::service::{TransferError, TransferService};
use crate::transfers::store::{self, TransferFilter};

/// Filters of `GET /api/conversion/transfer/list`, checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListFilter {
    /// Only this project's transfers.
    pub(crate) project: Option<ProjectId>,
    /// Only transfers reading or changing this dataset.
    pub(crate) dataset: Option<DatasetId>,
    /// Created at or after.
    pub(crate) from: Option<DateTime<Utc>>,
    /// Created at or before.
    pub(crate) to: Option<DateTime<Utc>>,
    /// Any of these statuses.
    pub(crate) statuses: Vec<TransferStatus>,
}

impl TransferService {
    /// A transfer the caller may see.
    pub(crate) async fn transfer(
        &self,
        principal: &Principal,
        id: TransferId,
    ) -> Result<TransferRow, TransferError> {
        let caller = Caller::from(principal);
        let tenant = caller.tenant_id().ok_or(TransferError::NotFound)?;
        let row = store::find(&self.db, tenant, id)
            .await?
            .ok_or(TransferError::NotFound)?;
        if self.may_see(&caller, &row).await? {
            Ok(row)
        } else {
            Err(TransferError::NotFound)
        }
    }

    async fn may_see(&self, caller: &Caller, row: &TransferRow) -> Result<bool, TransferError> {
        if row.created_by == caller.id || caller.standing(row.tenant_id) == TenantStanding::Admin {
            return Ok(true);
        }
        let Some(project) = row.project_id else {
            return Ok(false);
        };
        self.may_list_content(caller, project).await
    }

    async fn may_list_content(
        &self,
        caller: &Caller,
        project: ProjectId,
    ) -> Result<bool, TransferError> {
        match self.datasets.projects().visible(caller, project).await {
            Ok(chain) => Ok(chain.capabilities().can_list_content),
            Err(crate::projects::service::ProjectError::NotFound) => Ok(false),
            Err(error) => Err(TransferError::Dataset(error.into())),
        }
    }

    /// The record of a transfer, with a fresh signed URL for an export's result.
    pub(crate) fn record(
        &self,
        row: &TransferRow,
        base: &crate::public_base::PublicBase,
    ) -> Result<TransferDto, TransferError> {
        let plan = row
            .plan()
            .map_err(|error| TransferError::Internal(error.into()))?;
        let download_path = match (&row.download_blob, row.status()) {
            (Some(key), TransferStatus::Completed) => {
                let path = basin_blob::BlobPath::parse_key(key)
                    .map_err(|error| TransferError::Internal(error.into()))?;
                Some(self.urls.read_url(base, &path, self.clock.now()))
            }
            _ => None,
        };
        Ok(TransferDto::new(row, &plan, download_path))
    }

    /// One offset page of the transfers the caller may see, newest first.
    pub(crate) async fn list(
        &self,
        principal: &Principal,
        filter: ListFilter,
        offset: u32,
        limit: u32,
    ) -> Result<(Vec<TransferRow>, i64), TransferError> {
        let caller = Caller::from(principal);
        let Some(tenant) = caller.tenant_id() else {
            return Ok((Vec::new(), 0));
        };
        let mut query = TransferFilter {
            dataset: filter.dataset,
            from: filter.from,
            to: filter.to,
            statuses: filter.statuses,
            ..TransferFilter::default()
        };
        match filter.project {
            Some(project) => {
                if !self.may_list_content(&caller, project).await? {
                    return Err(TransferError::Dataset(
                        crate::datasets::service::DatasetError::Project(
                            crate::projects::service::ProjectError::NotFound,
                        ),
                    ));
                }
                query.projects = Some(vec![project]);
            }
            None if caller.standing(tenant) == TenantStanding::Admin => {}
            None => query.created_by = Some(caller.id),
        }
        Ok(store::list(&self.db, tenant, &query, offset, limit).await?)
    }

    /// The caller's own transfers, newest first (at most `limit`).
    pub(crate) async fn own(
        &self,
        principal: &Principal,
        limit: u32,
    ) -> Result<Vec<TransferRow>, TransferError> {
        let caller = Caller::from(principal);
        let Some(tenant) = caller.tenant_id() else {
            return Ok(Vec::new());
        };
        let query = TransferFilter {
            created_by: Some(caller.id),
            ..TransferFilter::default()
        };
        Ok(store::list(&self.db, tenant, &query, 0, limit).await?.0)
    }

    /// Cancels a transfer: a queued one ends at once, a running one at its worker's next
    /// heartbeat. Only its starter and the tenant's administrators may cancel it.
    pub(crate) async fn cancel(
        &self,
        principal: &Principal,
        id: TransferId,
    ) -> Result<TransferRow, TransferError> {
        let caller = Caller::from(principal);
        let row = self.transfer(principal, id).await?;
        if row.created_by != caller.id && caller.standing(row.tenant_id) != TenantStanding::Admin {
            return Err(TransferError::Dataset(
                crate::datasets::service::DatasetError::Project(
                    crate::projects::service::ProjectError::Forbidden(
                        "only who started a transfer, or a tenant administrator, may cancel it"
                            .into(),
                    ),
                ),
            ));
        }
        let message = format!("Cancelled by {} before it completed.", caller.id);
        if !store::cancel(&self.db, id, self.clock.now(), &message).await? {
            return Err(TransferError::Ended);
        }
        self.transfer(principal, id).await
    }
}
