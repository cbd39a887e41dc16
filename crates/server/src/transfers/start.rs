//! The operations that queue transfers (docs/conversion.md): convert, upload-convert,
//! download-convert, update (from an upload or from another dataset) and append. Each checks
//! the request and the caller's permissions, then queues one transfer row; nothing else changes
//! until a worker runs it.

use crate::auth::{Caller, Principal};
use crate::datasets::model::DatasetRow;
use crate::ids::{DatasetId, ProjectId, TenantId, TransferId};
use crate::transfers::model::{
    OutputDatasetData, Source, Target, TransferKind, TransferPlan, TransferRequest, TransferRow,
    TransferStatus,
};
use crate::transfers::plan::{self, Converters, Invalid, invalid};
use crate::transfers::service::{TransferError, TransferService, UploadFileName};
use crate::transfers::store::{self, NewTransfer};
use crate::transfers::uploads::{self, UploadHold};
use basin_blob::BlobPath;

/// Longest dataset name and description a transfer accepts, as datasets do.
const DESCRIPTION_CHARS_MAX: usize = 4_000;

/// Who starts a transfer, and with which `api-version`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Starter<'a> {
    /// The caller.
    pub(crate) principal: &'a Principal,
    /// The request's `api-version`.
    pub(crate) api_version: u16,
}

impl Starter<'_> {
    fn caller(&self) -> Caller {
        Caller::from(self.principal)
    }
}

impl TransferService {
    /// `POST /api/metadata/dataset/{id}/convert`: a new dataset from an existing one.
    pub(crate) async fn start_convert(
        &self,
        starter: Starter<'_>,
        dataset: DatasetId,
        request: &TransferRequest,
    ) -> Result<TransferRow, TransferError> {
        let caller = starter.caller();
        let output = output_dataset_data(request)?;
        let source = self.datasets.readable(&caller, dataset).await?;
        let project = request.output_project_id.unwrap_or(source.project_id);
        let tenant = self.datasets.creatable(&caller, project).await?;
        let converters =
            plan::converters(&self.catalogue, request, Some(&source.dataset_format), None)?;
        let plan = self.plan(
            request,
            &converters,
            Source::Dataset {
                dataset_id: source.id,
            },
            Target::NewDataset {
                project_id: project,
                data: output,
            },
        )?;
        let format = result_format(&converters, &source.dataset_format);
        self.queue(
            starter,
            tenant,
            Queued {
                kind: TransferKind::Conversion,
                format,
                project: Some(project),
                dataset: Some(source.id),
                plan,
                secret: None,
            },
        )
        .await
    }

    /// `POST /api/conversion/upload-convert` (and the legacy `/api/transfer/upload-convert`):
    /// a new dataset from an uploaded file.
    pub(crate) async fn start_upload_convert(
        &self,
        starter: Starter<'_>,
        request: &TransferRequest,
    ) -> Result<TransferRow, TransferError> {
        let caller = starter.caller();
        let project = request.project_id.ok_or_else(|| {
            invalid(
                "projectId",
                "required: the project (or subproject) the new dataset goes to",
            )
        })?;
        let output = output_dataset_data(request)?;
        let tenant = self.datasets.creatable(&caller, project).await?;
        let (source, secret) = self.source_from_request(starter, request, true).await?;
        let converters = plan::converters(&self.catalogue, request, None, None)?;
        let input_format = source_format(&source);
        let plan = self.plan(
            request,
            &converters,
            source,
            Target::NewDataset {
                project_id: project,
                data: output,
            },
        )?;
        let format = result_format(&converters, &input_format);
        self.queue(
            starter,
            tenant,
            Queued {
                kind: TransferKind::Import,
                format,
                project: Some(project),
                dataset: None,
                plan,
                secret,
            },
        )
        .await
    }

    /// `POST /api/metadata/dataset/{id}/download-convert`: a file to download.
    pub(crate) async fn start_download_convert(
        &self,
        starter: Starter<'_>,
        dataset: DatasetId,
        request: &TransferRequest,
    ) -> Result<TransferRow, TransferError> {
        let caller = starter.caller();
        let source = self.datasets.readable(&caller, dataset).await?;
        let tenant = source.tenant_id;
        let converters =
            plan::converters(&self.catalogue, request, Some(&source.dataset_format), None)?;
        let format = result_format(&converters, &source.dataset_format);
        let file_name = export_file_name(&source, &format);
        let plan = self.plan(
            request,
            &converters,
            Source::Dataset {
                dataset_id: source.id,
            },
            Target::Download { file_name },
        )?;
        self.queue(
            starter,
            tenant,
            Queued {
                kind: TransferKind::Export,
                format,
                project: Some(source.project_id),
                dataset: Some(source.id),
                plan,
                secret: None,
            },
        )
        .await
    }

    /// `POST /api/metadata/dataset/{id}/update`: replaces a dataset's content with an upload.
    pub(crate) async fn start_update_from_upload(
        &self,
        starter: Starter<'_>,
        dataset: DatasetId,
        request: &TransferRequest,
    ) -> Result<TransferRow, TransferError> {
        let caller = starter.caller();
        let target = self.datasets.content_updatable(&caller, dataset).await?;
        let (source, secret) = self.source_from_request(starter, request, false).await?;
        let converters =
            plan::converters(&self.catalogue, request, None, Some(&target.dataset_format))?;
        let plan = self.plan(
            request,
            &converters,
            source,
            Target::ReplaceContent {
                dataset_id: target.id,
            },
        )?;
        self.queue(
            starter,
            target.tenant_id,
            Queued {
                kind: TransferKind::Update,
                format: result_format(&converters, &target.dataset_format),
                project: Some(target.project_id),
                dataset: Some(target.id),
                plan,
                secret,
            },
        )
        .await
    }

    /// `POST /api/metadata/dataset/{sourceId}/update/{targetId}`: replaces a dataset's
    /// content with another dataset's, converted.
    pub(crate) async fn start_update_from_dataset(
        &self,
        starter: Starter<'_>,
        source: DatasetId,
        target: DatasetId,
        request: &TransferRequest,
    ) -> Result<TransferRow, TransferError> {
        let caller = starter.caller();
        if source == target {
            return Err(invalid("targetId", "a dataset cannot be updated from itself").into());
        }
        let source = self.datasets.readable(&caller, source).await?;
        let target = self.datasets.content_updatable(&caller, target).await?;
        if source.tenant_id != target.tenant_id {
            return Err(TransferError::Dataset(
                crate::datasets::service::DatasetError::NotFound,
            ));
        }
        let converters = plan::converters(
            &self.catalogue,
            request,
            Some(&source.dataset_format),
            Some(&target.dataset_format),
        )?;
        let plan = self.plan(
            request,
            &converters,
            Source::Dataset {
                dataset_id: source.id,
            },
            Target::ReplaceContent {
                dataset_id: target.id,
            },
        )?;
        self.queue(
            starter,
            target.tenant_id,
            Queued {
                kind: TransferKind::Update,
                format: result_format(&converters, &target.dataset_format),
                project: Some(target.project_id),
                dataset: Some(target.id),
                plan,
                secret: None,
            },
        )
        .await
    }

    /// `POST /api/metadata/dataset/{id}/append`: adds an upload's time steps or features to
    /// a dataset.
    pub(crate) async fn start_append(
        &self,
        starter: Starter<'_>,
        dataset: DatasetId,
        request: &TransferRequest,
    ) -> Result<TransferRow, TransferError> {
        let caller = starter.caller();
        let target = self.datasets.content_updatable(&caller, dataset).await?;
        let (source, secret) = self.source_from_request(starter, request, true).await?;
        let converters =
            plan::converters(&self.catalogue, request, None, Some(&target.dataset_format))?;
        if converters.reader == basin_formats::file_copy::READER.name {
            return Err(invalid(
                "readerName",
                "an append adds time steps or features: name the reader of the file's format",
            )
            .into());
        }
        let plan = self.plan(
            request,
            &converters,
            source,
            Target::AppendContent {
                dataset_id: target.id,
            },
        )?;
        self.queue(
            starter,
            target.tenant_id,
            Queued {
                kind: TransferKind::Append,
                format: target.dataset_format.clone(),
                project: Some(target.project_id),
                dataset: Some(target.id),
                plan,
                secret,
            },
        )
        .await
    }

    fn plan(
        &self,
        request: &TransferRequest,
        converters: &Converters,
        source: Source,
        target: Target,
    ) -> Result<TransferPlan, TransferError> {
        Ok(TransferPlan {
            reader: converters.reader.to_owned(),
            writer: converters.writer.to_owned(),
            reader_parameters: converters.reader_parameters.clone(),
            writer_parameters: converters.writer_parameters.clone(),
            transformations: converters.transformations.clone(),
            source,
            target,
            resources: plan::resources(request, &self.config)?,
        })
    }

    /// The file a request names by `uploadUrl` and `originalFileName`: one of this Basin's
    /// uploads of the caller's tenant, or an outside address.
    async fn source_from_request(
        &self,
        starter: Starter<'_>,
        request: &TransferRequest,
        name_required_from_v2: bool,
    ) -> Result<(Source, Option<String>), TransferError> {
        let url = request
            .upload_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .ok_or_else(|| invalid("uploadUrl", "required"))?;
        let given_name = request
            .original_file_name
            .as_deref()
            .map(str::trim)
            .filter(|name| !name.is_empty());
        if given_name.is_none() && name_required_from_v2 && starter.api_version >= 2 {
            return Err(invalid("originalFileName", "required from api-version 2 on").into());
        }
        let file_name = match given_name {
            Some(name) => UploadFileName::parse(name)
                .map_err(|error| invalid("originalFileName", error.to_string()))?,
            None => UploadFileName::parse(&last_segment(url)).map_err(|_| {
                invalid(
                    "originalFileName",
                    "required: the address does not end in a file name",
                )
            })?,
        };
        if self.urls.blob_path_from_url(url).is_ok() {
            let (path, _) = self.uploaded_blob(starter.principal, url).await?;
            let unsigned = url.split_once('?').map_or(url, |(base, _)| base);
            return Ok((
                Source::Upload {
                    blob_key: path.key(),
                    url: unsigned.to_owned(),
                    file_name: file_name.as_str().to_owned(),
                },
                None,
            ));
        }
        self.outside_source(url, file_name)
    }

    /// Queues a transfer and wakes idle workers.
    async fn queue(
        &self,
        starter: Starter<'_>,
        tenant: TenantId,
        queued: Queued,
    ) -> Result<TransferRow, TransferError> {
        let now = self.clock.now();
        let request = serde_json::to_value(&queued.plan)
            .map(|value| crate::db::JsonText::from_value(&value))
            .map_err(|error| TransferError::Internal(error.into()))?;
        let row = TransferRow {
            id: TransferId::new_random(),
            tenant_id: tenant,
            kind: queued.kind.as_str().to_owned(),
            status: TransferStatus::Pending.as_str().to_owned(),
            format: queued.format,
            project_id: queued.project,
            dataset_id: queued.dataset,
            request,
            progress: 0,
            error_message: None,
            import_results: crate::db::JsonText::empty_array(),
            download_blob: None,
            attempts: 0,
            created_at: now,
            created_by: starter.principal.id,
            created_by_type: starter.principal.principal_type.to_string(),
            started_at: None,
            finished_at: None,
            updated_at: now,
        };
        let upload = match &queued.plan.source {
            Source::Upload { blob_key, .. } => {
                let path =
                    BlobPath::parse_key(blob_key).map_err(|_| TransferError::UploadNotFound)?;
                let size = match self.blobs.head(&path).await {
                    Ok(meta) => meta.size,
                    Err(basin_blob::BlobError::NotFound(_)) => {
                        return Err(TransferError::UploadNotFound);
                    }
                    Err(error) => return Err(TransferError::Blob(error)),
                };
                Some((blob_key.clone(), size))
            }
            Source::Url { .. } | Source::Dataset { .. } => None,
        };
        let mut tx = self.db.begin().await?;
        // The upload must still be there when the transfer is queued, and stays while it is.
        if let Some((key, size)) = &upload {
            self.hold_upload(&mut tx, key, tenant, *size).await?;
        }
        store::insert_in(
            &mut tx,
            &NewTransfer {
                row: row.clone(),
                source_secret: queued.secret,
                upload_key: upload.map(|(key, _)| key),
            },
        )
        .await?;
        tx.commit().await?;
        self.queued.notify_waiters();
        tracing::info!(transfer = %row.id, kind = %row.kind, "transfer queued");
        Ok(row)
    }
}

impl TransferService {
    /// Holds the upload `key` for a transfer queued inside `tx`; refused when it was removed.
    async fn hold_upload(
        &self,
        tx: &mut crate::db::Tx,
        key: &str,
        tenant: TenantId,
        size: u64,
    ) -> Result<(), TransferError> {
        let now = self.clock.now();
        match uploads::hold_upload_in(tx, key, tenant, size, now).await? {
            UploadHold::Held => Ok(()),
            UploadHold::Removed => Err(TransferError::UploadNotFound),
            // A removal may have deleted the blob since it was looked at (and left no
            // record): with the row held, a blob that is gone stays gone.
            UploadHold::Added => {
                let path = BlobPath::parse_key(key).map_err(|_| TransferError::UploadNotFound)?;
                match self.blobs.head(&path).await {
                    Ok(_) => Ok(()),
                    Err(basin_blob::BlobError::NotFound(_)) => Err(TransferError::UploadNotFound),
                    Err(error) => Err(TransferError::Blob(error)),
                }
            }
        }
    }

    /// A file at an outside address (http, https, ftp), checked now so that a bad or refused
    /// one is a 400 before any transfer exists; host names are judged when the transfer runs.
    /// The full address, credentials included, goes to the row's `source_secret`, which is
    /// cleared when the transfer ends; the plan, and so the record, keeps it redacted.
    fn outside_source(
        &self,
        url: &str,
        file_name: UploadFileName,
    ) -> Result<(Source, Option<String>), TransferError> {
        let checked = self
            .fetcher
            .check_url(url)
            .map_err(|error| invalid("uploadUrl", error.to_string()))?;
        Ok((
            Source::Url {
                redacted: checked.redacted(),
                file_name: file_name.as_str().to_owned(),
            },
            Some(checked.expose_url().to_owned()),
        ))
    }
}

/// A transfer about to be queued.
struct Queued {
    kind: TransferKind,
    format: String,
    project: Option<ProjectId>,
    dataset: Option<DatasetId>,
    plan: TransferPlan,
    secret: Option<String>,
}

impl From<Invalid> for TransferError {
    fn from(error: Invalid) -> Self {
        Self::Invalid(error)
    }
}

/// `outputDatasetData`, checked: a name is required.
fn output_dataset_data(request: &TransferRequest) -> Result<OutputDatasetData, Invalid> {
    let data = request
        .output_dataset_data
        .clone()
        .ok_or_else(|| invalid("outputDatasetData.name", "required"))?;
    let name = crate::datasets::service::DatasetService::parse_name(&data.name)
        .map_err(|error| invalid("outputDatasetData.name", error.to_string()))?;
    if data
        .description
        .as_ref()
        .is_some_and(|text| text.chars().count() > DESCRIPTION_CHARS_MAX)
    {
        return Err(invalid(
            "outputDatasetData.description",
            format!("at most {DESCRIPTION_CHARS_MAX} characters"),
        ));
    }
    for (field, value) in [
        ("metadata", &data.metadata),
        ("properties", &data.properties),
    ] {
        if value
            .as_ref()
            .is_some_and(|value| !value.is_object() && !value.is_null())
        {
            return Err(invalid(
                format!("outputDatasetData.{field}"),
                "an object of key/value pairs",
            ));
        }
    }
    Ok(OutputDatasetData { name, ..data })
}

/// The format of what a transfer makes: the writer's, or for a plain copy the source's.
fn result_format(converters: &Converters, source_format: &str) -> String {
    if converters.writer == basin_formats::file_copy::WRITER.name {
        source_format.to_owned()
    } else {
        converters.writer_format.to_owned()
    }
}

fn source_format(source: &Source) -> String {
    match source {
        Source::Upload { file_name, .. } | Source::Url { file_name, .. } => {
            crate::datasets::model::format_of(file_name)
        }
        Source::Dataset { .. } => String::new(),
    }
}

/// The file name of an export: the dataset's name with the result's extension.
fn export_file_name(dataset: &DatasetRow, format: &str) -> String {
    let stem = crate::transfers::naming::file_stem(&dataset.name);
    format!("{stem}{format}")
}

/// The last path segment of an address, percent-decoded, without its query.
fn last_segment(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or_default();
    let segment = without_query.rsplit('/').next().unwrap_or_default();
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}
