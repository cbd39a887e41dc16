//! Transfer rows, the plan a worker follows, and the wire shapes of docs/conversion.md.
//!
//! A transfer row keeps two things apart: the [`TransferPlan`] (what to read, how to convert,
//! where the result goes), which only workers read, and the public record built from it,
//! which never holds a credential: addresses are stored redacted, and an address with
//! credentials is kept in its own column until the transfer ends.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::db::JsonText;
use crate::http::time::WireTime;
use crate::ids::{DatasetId, ProjectId, TenantId, TransferId};

crate::wire_enum! {
    /// What a transfer does.
    pub(crate) enum TransferKind {
        /// A file becomes a new dataset.
        Import,
        /// A dataset becomes a downloadable file.
        Export,
        /// A dataset becomes a new dataset in another format.
        Conversion,
        /// Time steps or features are added to a dataset.
        Append,
        /// A dataset's content is replaced.
        Update,
    }
}

crate::wire_enum! {
    /// Where a transfer stands. `None` is never stored: a transfer is `Pending` from the moment
    /// it exists.
    pub(crate) enum TransferStatus {
        /// Not started (the interface's initial state).
        None,
        /// Queued for a worker.
        Pending,
        /// A worker runs it.
        InProgress,
        /// Done; the result is published.
        Completed,
        /// Failed or cancelled; `errorMessage` says why.
        Error,
    }
}

/// A transfer row as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct TransferRow {
    /// Id.
    pub(crate) id: TransferId,
    /// Tenant of the caller who started it.
    pub(crate) tenant_id: TenantId,
    /// What it does (a [`TransferKind`] name).
    pub(crate) kind: String,
    /// Where it stands (a [`TransferStatus`] name).
    pub(crate) status: String,
    /// Format of the result (`.tif`), or of the source for plain copies.
    pub(crate) format: String,
    /// The project the result goes to (imports, conversions) or the source's project.
    pub(crate) project_id: Option<ProjectId>,
    /// The dataset read (exports, conversions) or changed (updates, appends).
    pub(crate) dataset_id: Option<DatasetId>,
    /// The [`TransferPlan`], as JSON.
    pub(crate) request: JsonText,
    /// 0 to 100.
    pub(crate) progress: i64,
    /// Why it failed.
    pub(crate) error_message: Option<String>,
    /// `[{projectId, datasetId}]` of the datasets it made.
    pub(crate) import_results: JsonText,
    /// Blob key of an export's result.
    pub(crate) download_blob: Option<String>,
    /// How many times a worker claimed it.
    pub(crate) attempts: i64,
    /// When it was queued.
    pub(crate) created_at: DateTime<Utc>,
    /// Who queued it.
    pub(crate) created_by: Uuid,
    /// `UserIdentity` or `OpenAPIAccount`.
    pub(crate) created_by_type: String,
    /// When a worker first took it.
    pub(crate) started_at: Option<DateTime<Utc>>,
    /// When it ended.
    pub(crate) finished_at: Option<DateTime<Utc>>,
    /// Last change.
    pub(crate) updated_at: DateTime<Utc>,
}

impl TransferRow {
    /// The status, or `Error` for a value no version of Basin writes.
    pub(crate) fn status(&self) -> TransferStatus {
        self.status.parse().unwrap_or(TransferStatus::Error)
    }

    /// The kind, or `Import` for a value no version of Basin writes.
    pub(crate) fn kind(&self) -> TransferKind {
        self.kind.parse().unwrap_or(TransferKind::Import)
    }

    /// The plan, when the stored JSON is one.
    pub(crate) fn plan(&self) -> Result<TransferPlan, serde_json::Error> {
        serde_json::from_str(self.request.as_str())
    }
}

/// Everything a worker needs to run a transfer, fixed when the transfer is queued.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransferPlan {
    /// Reader name, as the catalogue spells it.
    pub(crate) reader: String,
    /// Writer name, as the catalogue spells it.
    pub(crate) writer: String,
    /// Reader parameters, as text.
    pub(crate) reader_parameters: Vec<(String, String)>,
    /// Writer parameters, as text.
    pub(crate) writer_parameters: Vec<(String, String)>,
    /// Transformations, as the client sent them (already checked).
    pub(crate) transformations: Vec<serde_json::Value>,
    /// What is read.
    pub(crate) source: Source,
    /// Where the result goes.
    pub(crate) target: Target,
    /// What the job asked for.
    pub(crate) resources: Resources,
}

/// What a transfer reads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum Source {
    /// A file uploaded to one of Basin's upload URLs.
    #[serde(rename_all = "camelCase")]
    Upload {
        /// Its blob key.
        blob_key: String,
        /// The upload URL without its query, as the client gave it.
        url: String,
        /// The file's name (readers and the new dataset use its extension).
        file_name: String,
    },
    /// A file at an outside address (http, https, ftp). With credentials, the full address is
    /// in the row's `source_secret`.
    #[serde(rename_all = "camelCase")]
    Url {
        /// The address with credentials and signatures removed.
        redacted: String,
        /// The file's name.
        file_name: String,
    },
    /// The content of a dataset.
    #[serde(rename_all = "camelCase")]
    Dataset {
        /// The dataset.
        dataset_id: DatasetId,
    },
}

/// Where a transfer's result goes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum Target {
    /// A new dataset.
    #[serde(rename_all = "camelCase")]
    NewDataset {
        /// Project it is created in.
        project_id: ProjectId,
        /// Its name, description, metadata and properties.
        data: OutputDatasetData,
    },
    /// The content of an existing dataset is replaced.
    #[serde(rename_all = "camelCase")]
    ReplaceContent {
        /// The dataset.
        dataset_id: DatasetId,
    },
    /// Time steps or features are added to an existing dataset.
    #[serde(rename_all = "camelCase")]
    AppendContent {
        /// The dataset.
        dataset_id: DatasetId,
    },
    /// A file to download.
    #[serde(rename_all = "camelCase")]
    Download {
        /// Its file name.
        file_name: String,
    },
}

/// What a transfer job asked for: resources of the job, and labels of the node it runs on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Resources {
    /// Memory request and limit, in MB.
    pub(crate) memory_mb: u64,
    /// CPU cores, request and limit.
    pub(crate) cpu_cores: f64,
    /// Scratch volume, in GB, when asked for.
    pub(crate) storage_gb: Option<f64>,
    /// Machine type, when asked for.
    pub(crate) node_size: Option<String>,
    /// Node labels the job must run on (`key=value`), with the machine type's family label.
    pub(crate) labels: Vec<String>,
}

/// Name, description, metadata and properties of a dataset a transfer makes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OutputDatasetData {
    /// Name (required).
    pub(crate) name: String,
    /// Description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// Free key/value pairs.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub(crate) metadata: Option<serde_json::Value>,
    /// Free key/value pairs.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub(crate) properties: Option<serde_json::Value>,
}

/// One `{name, value}` of `readerParameters` or `writerParameters`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct ParameterValueDto {
    /// Parameter name (case-insensitive).
    pub(crate) name: String,
    /// A number, string, boolean, or any JSON value (sent on as JSON text).
    #[schema(value_type = Object)]
    pub(crate) value: serde_json::Value,
}

/// The body every start operation takes (docs/conversion.md#the-request); each operation says
/// which fields it requires.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct TransferRequest {
    /// Reader name; inferred from the stored format where the operation allows.
    pub(crate) reader_name: Option<String>,
    /// Writer name; inferred from the stored format where the operation allows.
    pub(crate) writer_name: Option<String>,
    /// Reader parameters.
    pub(crate) reader_parameters: Option<Vec<ParameterValueDto>>,
    /// Writer parameters.
    pub(crate) writer_parameters: Option<Vec<ParameterValueDto>>,
    /// `CrsTransformation`, `ItemFilterTransformation`, `TemporalFilterTransformation`.
    #[schema(value_type = Option<Vec<Object>>)]
    pub(crate) transformations: Option<Vec<serde_json::Value>>,
    /// Node labels (`key=value`) the job must run on.
    pub(crate) required_labels: Option<Vec<String>>,
    /// Scratch volume, in GB.
    pub(crate) storage_size_gb: Option<f64>,
    /// Job memory in MB: a positive multiple of 1024 (default 4096).
    pub(crate) memory_request_mb: Option<f64>,
    /// Job CPU cores (positive).
    pub(crate) cpu_cores_request: Option<f64>,
    /// A configured machine type.
    pub(crate) node_size: Option<String>,
    /// Name, description, metadata and properties of the dataset made.
    pub(crate) output_dataset_data: Option<OutputDatasetData>,
    /// Project of the new dataset (convert; default: the source's project).
    pub(crate) output_project_id: Option<ProjectId>,
    /// Project of the new dataset (upload-convert).
    pub(crate) project_id: Option<ProjectId>,
    /// The file to read: an upload URL without its query, or an http(s) or ftp address.
    pub(crate) upload_url: Option<String>,
    /// The file's name; required from api-version 2 on upload-convert and append.
    pub(crate) original_file_name: Option<String>,
}

/// A transfer as start operations and summary lists answer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransferSummaryDto {
    /// Id.
    pub(crate) id: TransferId,
    /// When it was queued.
    pub(crate) created_at: WireTime,
    /// Who queued it.
    pub(crate) created_by: Uuid,
    /// `Import`, `Export`, `Conversion`, `Append` or `Update`.
    #[serde(rename = "type")]
    pub(crate) kind: TransferKind,
    /// Format of the result.
    pub(crate) format: String,
    /// `Pending`, `InProgress`, `Completed` or `Error`.
    pub(crate) status: TransferStatus,
}

impl From<&TransferRow> for TransferSummaryDto {
    fn from(row: &TransferRow) -> Self {
        Self {
            id: row.id,
            created_at: row.created_at.into(),
            created_by: row.created_by,
            kind: row.kind(),
            format: row.format.clone(),
            status: row.status(),
        }
    }
}

/// `importParameters` of a transfer record.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ImportParametersDto {
    /// The dataset appended to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) append_dataset_id: Option<DatasetId>,
    /// The address read, without credentials or signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) upload_url: Option<String>,
    /// The file's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file_name: Option<String>,
    /// Reader name.
    pub(crate) reader_name: String,
    /// Reader parameters by name.
    #[schema(value_type = Object)]
    pub(crate) arguments: serde_json::Map<String, serde_json::Value>,
}

/// `exportParameters` of a transfer record.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExportParametersDto {
    /// The dataset read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset_id: Option<DatasetId>,
    /// Name of the file made, for exports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output_file_name: Option<String>,
    /// Writer name.
    pub(crate) writer_name: String,
    /// Writer parameters by name.
    #[schema(value_type = Object)]
    pub(crate) arguments: serde_json::Map<String, serde_json::Value>,
}

/// One dataset a transfer made or changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ImportResultDto {
    /// Its project.
    pub(crate) project_id: ProjectId,
    /// The dataset.
    pub(crate) dataset_id: DatasetId,
}

/// `GET /api/conversion/transfer/{id}` (docs/conversion.md#the-record).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransferDto {
    /// Id.
    pub(crate) id: TransferId,
    /// `Import`, `Export`, `Conversion`, `Append` or `Update`.
    #[serde(rename = "type")]
    pub(crate) kind: TransferKind,
    /// `Pending`, `InProgress`, `Completed` or `Error`.
    pub(crate) status: TransferStatus,
    /// Format of the result.
    pub(crate) format: String,
    /// Project of the result, or of the dataset read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) project_id: Option<ProjectId>,
    /// What was read, and how.
    pub(crate) import_parameters: ImportParametersDto,
    /// How the result was written.
    pub(crate) export_parameters: ExportParametersDto,
    /// Name, description, metadata and properties of the dataset made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset_import_data: Option<OutputDatasetData>,
    /// Signed URL of an export's result, once completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) download_path: Option<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error_message: Option<String>,
    /// The datasets it made or changed.
    pub(crate) import_results: Vec<ImportResultDto>,
    /// 0 to 100.
    pub(crate) progress: u8,
    /// Claims by workers so far.
    pub(crate) attempts: u32,
    /// When a worker first took it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) started_at: Option<WireTime>,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) finished_at: Option<WireTime>,
    /// Node labels the job asked for.
    pub(crate) required_labels: Vec<String>,
    /// Job memory, MB.
    pub(crate) memory_request_mb: u64,
    /// Job CPU cores.
    pub(crate) cpu_cores_request: f64,
    /// Scratch volume, GB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) storage_size_gb: Option<f64>,
    /// Machine type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node_size: Option<String>,
    /// When it was queued.
    pub(crate) created_at: WireTime,
    /// Who queued it.
    pub(crate) created_by: Uuid,
    /// Last change.
    pub(crate) updated_at: WireTime,
    /// Always null: transfers change by themselves.
    pub(crate) updated_by: Option<Uuid>,
}

/// Parameters as the record shows them: by name, numbers and booleans as JSON values.
pub(crate) fn arguments_of(
    parameters: &[(String, String)],
) -> serde_json::Map<String, serde_json::Value> {
    parameters
        .iter()
        .map(|(name, value)| {
            let shown = serde_json::from_str::<serde_json::Value>(value)
                .ok()
                .filter(|parsed| !parsed.is_string())
                .unwrap_or_else(|| serde_json::Value::String(value.clone()));
            (name.clone(), shown)
        })
        .collect()
}

impl TransferDto {
    /// The record of `row`; `download_path` is a signed URL made by the caller.
    pub(crate) fn new(
        row: &TransferRow,
        plan: &TransferPlan,
        download_path: Option<String>,
    ) -> Self {
        let (upload_url, file_name) = match &plan.source {
            Source::Upload { url, file_name, .. } => (Some(url.clone()), Some(file_name.clone())),
            Source::Url {
                redacted,
                file_name,
            } => (Some(redacted.clone()), Some(file_name.clone())),
            Source::Dataset { .. } => (None, None),
        };
        let (dataset_import_data, append_dataset_id, output_file_name) = match &plan.target {
            Target::NewDataset { data, .. } => (Some(data.clone()), None, None),
            Target::AppendContent { dataset_id } => (None, Some(*dataset_id), None),
            Target::ReplaceContent { .. } => (None, None, None),
            // Once stored, the file the export made: a writer that writes several files gives
            // one `.zip` (`points.zip`, not the planned `points.shp`), the file at downloadPath.
            Target::Download { file_name } => {
                let stored = row
                    .download_blob
                    .as_deref()
                    .and_then(|key| key.rsplit('/').next())
                    .filter(|name| !name.is_empty());
                (None, None, Some(stored.unwrap_or(file_name).to_owned()))
            }
        };
        let import_results = serde_json::from_str(row.import_results.as_str()).unwrap_or_default();
        Self {
            id: row.id,
            kind: row.kind(),
            status: row.status(),
            format: row.format.clone(),
            project_id: row.project_id,
            import_parameters: ImportParametersDto {
                append_dataset_id,
                upload_url,
                file_name,
                reader_name: plan.reader.clone(),
                arguments: arguments_of(&plan.reader_parameters),
            },
            export_parameters: ExportParametersDto {
                dataset_id: match plan.source {
                    Source::Dataset { dataset_id } => Some(dataset_id),
                    _ => None,
                },
                output_file_name,
                writer_name: plan.writer.clone(),
                arguments: arguments_of(&plan.writer_parameters),
            },
            dataset_import_data,
            download_path,
            error_message: row.error_message.clone(),
            import_results,
            progress: u8::try_from(row.progress.clamp(0, 100)).unwrap_or(0),
            attempts: u32::try_from(row.attempts).unwrap_or(0),
            started_at: row.started_at.map(Into::into),
            finished_at: row.finished_at.map(Into::into),
            required_labels: plan.resources.labels.clone(),
            memory_request_mb: plan.resources.memory_mb,
            cpu_cores_request: plan.resources.cpu_cores,
            storage_size_gb: plan.resources.storage_gb,
            node_size: plan.resources.node_size.clone(),
            created_at: row.created_at.into(),
            created_by: row.created_by,
            updated_at: row.updated_at.into(),
            updated_by: None,
        }
    }
}
