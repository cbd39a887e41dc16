//! Imports of staged files (`POST /api/conversion/project/{id}/file/import-staged`): files
//! already uploaded to upload URLs become datasets as they are, at once, in one folder. The
//! original platform's SDKs copy whole containers this way, one request per folder, so each file
//! succeeds or fails on its own and the answer lists both; a file that fails leaves nothing
//! behind, and one that succeeded stays.

use crate::auth::{Caller, Principal};
use crate::datasets::DATASETS_CONTAINER;
use crate::datasets::service::{DatasetService, NewDataset};
use crate::ids::{DatasetId, ProjectId};
use crate::transfers::service::{TransferError, TransferService, UploadFileName};
use basin_blob::{BlobError, BlobPath, WriteOptions};

/// One staged file to import.
#[derive(Debug, Clone)]
pub(crate) struct StagedFile {
    /// The upload URL it was written to (with or without its query).
    pub(crate) url: String,
    /// The name of the dataset, and of its content.
    pub(crate) file_name: UploadFileName,
}

/// What an import of staged files did.
#[derive(Debug, Default)]
pub(crate) struct StagedOutcome {
    /// The datasets created, by file name.
    pub(crate) datasets: Vec<(String, DatasetId)>,
    /// The files not imported, by file name, each with why.
    pub(crate) failures: Vec<(String, String)>,
}

impl TransferService {
    /// Imports `files` into `folder`, each on its own. The caller must be able to create
    /// content there, or nothing is tried (403/404); a file whose upload is missing or not the
    /// caller's tenant's, or whose name is taken in the folder, is a failure.
    pub(crate) async fn import_staged(
        &self,
        principal: &Principal,
        caller: &Caller,
        folder: ProjectId,
        files: Vec<StagedFile>,
        size_max: u64,
    ) -> Result<StagedOutcome, TransferError> {
        let tenant = self.datasets.creatable(caller, folder).await?;
        let mut outcome = StagedOutcome::default();
        let mut taken_over = std::collections::BTreeSet::new();
        for file in files {
            let name = file.file_name.as_str().to_owned();
            match self
                .import_one(principal, caller, (tenant, folder), &file, size_max)
                .await
            {
                Ok((id, upload)) => {
                    outcome.datasets.push((name, id));
                    taken_over.insert(upload);
                }
                Err(StagedFailure::File(message)) => outcome.failures.push((name, message)),
                Err(StagedFailure::Fault(error)) => return Err(error),
            }
        }
        // The datasets have the bytes now; their uploads are no longer needed (only now, so
        // that one upload may become several datasets of one request).
        for upload in taken_over {
            self.upload_keeper.taken_over(&upload).await;
        }
        Ok(outcome)
    }

    /// Makes a dataset of one staged file; returns it and the key of the upload it read.
    async fn import_one(
        &self,
        principal: &Principal,
        caller: &Caller,
        (tenant, folder): (crate::ids::TenantId, ProjectId),
        file: &StagedFile,
        size_max: u64,
    ) -> Result<(DatasetId, String), StagedFailure> {
        let (source, meta) = self
            .uploaded_blob(principal, &file.url)
            .await
            .map_err(StagedFailure::from)?;
        let name = DatasetService::parse_name(file.file_name.as_str())
            .map_err(|error| StagedFailure::File(error.to_string()))?;
        if self.datasets.name_taken(folder, &name).await? {
            return Err(StagedFailure::File(format!(
                "a dataset named {name:?} exists in the folder already"
            )));
        }
        let id = DatasetId::new_random();
        let target = BlobPath::parse(
            DATASETS_CONTAINER,
            &format!("{tenant}/{id}/{}", file.file_name.as_str()),
        )
        .map_err(|error| StagedFailure::File(error.to_string()))?;
        let options = WriteOptions {
            size_max,
            create_only: true,
            expected_md5: None,
            properties: meta.properties.clone(),
        };
        // A backend that keeps blobs as files links the upload's file into place: its bytes
        // are stored once, and the upload's name goes below. Others copy through a stream.
        let written = match self.blobs.local_file_now(&source).await {
            Some(file) => self.blobs.put_file(&target, &file, options).await,
            None => match self.blobs.get(&source, None).await {
                Ok(read) => self.blobs.put(&target, read.body, options).await,
                Err(error) => Err(error),
            },
        };
        let written = match written {
            Ok(written) => written,
            Err(BlobError::NotFound(_)) => {
                return Err(StagedFailure::from(TransferError::UploadNotFound));
            }
            Err(error) => return Err(StagedFailure::Fault(TransferError::Blob(error))),
        };
        let input = NewDataset::stored(id, name, &target, &written);
        if let Err(error) = self.datasets.create(caller, folder, input).await {
            // The record is the only way to reach the copy: without it the copy must go.
            if let Err(cleanup) = self.blobs.delete(&target).await {
                tracing::warn!(error = %cleanup, blob = %target.key(), "could not remove the copy of a staged file");
            }
            return Err(StagedFailure::from(TransferError::from(error)));
        }
        Ok((id, source.key()))
    }
}

/// Why one file was not imported: its own problem (reported, the others go on) or a fault of
/// Basin's that ends the request.
enum StagedFailure {
    File(String),
    Fault(TransferError),
}

impl From<TransferError> for StagedFailure {
    fn from(error: TransferError) -> Self {
        match error {
            TransferError::NotAnUploadUrl(error) => {
                Self::File(format!("not an upload URL of this Basin: {error}"))
            }
            TransferError::UploadNotFound => {
                Self::File("nothing was uploaded to this URL by your tenant".to_owned())
            }
            TransferError::Dataset(crate::datasets::service::DatasetError::Invalid {
                message,
                ..
            }) => Self::File(message),
            other => Self::Fault(other),
        }
    }
}

impl From<crate::datasets::service::DatasetError> for StagedFailure {
    fn from(error: crate::datasets::service::DatasetError) -> Self {
        Self::from(TransferError::from(error))
    }
}
