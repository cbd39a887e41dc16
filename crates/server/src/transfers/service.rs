//! Transfer rules for uploads: who may get an upload URL, where uploads go, and which upload
//! URLs a caller may hand back.
//!
//! Uploads go to `uploads/<tenant id>/<uuid>[/<file name>]`: the tenant prefix lets later
//! steps (upload-convert) check that a caller only uses its own tenant's uploads, and the uuid
//! makes the path unguessable and fresh, so an upload never replaces someone else's file.

use std::sync::Arc;

use uuid::Uuid;

use crate::auth::Principal;
use crate::blob_urls::{BlobUrlError, BlobUrls};
use crate::clock::Clock;
use crate::datasets::DATASETS_CONTAINER;
use crate::ids::TenantId;
use crate::public_base::PublicBase;
use basin_blob::path::check_segment;
use basin_blob::{BlobError, BlobMeta, BlobPath, BlobPathError, BlobStore, UPLOADS_CONTAINER};

/// Why a transfer request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum TransferError {
    /// The caller acts in no tenant, or is not a member of it.
    #[error("the caller acts in no tenant")]
    NoTenant,
    /// The file name cannot be a blob name segment.
    #[error("invalid file name: {0}")]
    InvalidFileName(BlobPathError),
    /// The URL is not one of this Basin's upload URLs.
    #[error("not an upload URL: {0}")]
    NotAnUploadUrl(BlobUrlError),
    /// The upload belongs to another tenant, or nothing was uploaded there.
    #[error("no upload at this URL")]
    UploadNotFound,
    /// Blob storage failed.
    #[error(transparent)]
    Blob(BlobError),
    /// The file is larger than a direct upload accepts.
    #[error("the file exceeds {limit_bytes} bytes")]
    TooLarge {
        /// The limit.
        limit_bytes: u64,
    },
    /// The upload stopped before the file was complete.
    #[error("the file could not be read completely")]
    Incomplete,
    /// The client sent nothing for `limits.upload_idle_timeout_ms`.
    #[error("the upload stalled")]
    Stalled,
    /// The dataset could not be created, or is not there.
    #[error(transparent)]
    Dataset(#[from] crate::datasets::service::DatasetError),
    /// A request field is wrong.
    #[error(transparent)]
    Invalid(crate::transfers::plan::Invalid),
    /// No such transfer, or not one the caller may see.
    #[error("transfer not found")]
    NotFound,
    /// The transfer has ended already.
    #[error("the transfer has ended")]
    Ended,
    /// The database failed.
    #[error(transparent)]
    Store(#[from] crate::db::StoreError),
    /// A fault of Basin's own.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

/// A file name for an upload: one blob name segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UploadFileName(String);

impl UploadFileName {
    /// Checks a file name (no `/`, `\`, control characters, `.` or `..`; at most 255 bytes).
    pub(crate) fn parse(raw: &str) -> Result<Self, TransferError> {
        check_segment(raw).map_err(TransferError::InvalidFileName)?;
        Ok(Self(raw.to_owned()))
    }

    /// The name.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// Transfer rules: uploads, and the operations that queue transfers.
#[derive(Debug, Clone)]
pub(crate) struct TransferService {
    pub(super) db: crate::db::Db,
    pub(super) blobs: Arc<dyn BlobStore>,
    pub(super) urls: BlobUrls,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) catalogue: Arc<basin_formats::Catalogue>,
    pub(super) datasets: crate::datasets::service::DatasetService,
    pub(super) config: Arc<crate::config::TransfersConfig>,
    /// Checks the outside addresses imports name.
    pub(super) fetcher: basin_fetch::Fetcher,
    /// Woken when a transfer is queued, so that idle in-process workers start at once.
    pub(super) queued: Arc<tokio::sync::Notify>,
    /// Records uploads and removes them when imported or unused.
    pub(super) upload_keeper: crate::transfers::uploads::UploadKeeper,
}

/// What a [`TransferService`] is built from.
#[derive(Debug, Clone)]
pub(crate) struct TransferDeps {
    /// The metadata store.
    pub(crate) db: crate::db::Db,
    /// Blob storage.
    pub(crate) blobs: Arc<dyn BlobStore>,
    /// Signed URLs.
    pub(crate) urls: BlobUrls,
    /// Time.
    pub(crate) clock: Arc<dyn Clock>,
    /// Readers and writers.
    pub(crate) catalogue: Arc<basin_formats::Catalogue>,
    /// Dataset rules.
    pub(crate) datasets: crate::datasets::service::DatasetService,
    /// Transfer settings.
    pub(crate) config: Arc<crate::config::TransfersConfig>,
    /// Outbound fetches of imports from URLs.
    pub(crate) fetcher: basin_fetch::Fetcher,
    /// Woken when a transfer is queued.
    pub(crate) queued: Arc<tokio::sync::Notify>,
    /// How long unused uploads are kept.
    pub(crate) upload_retention: std::time::Duration,
}

impl TransferService {
    /// The service.
    pub(crate) fn new(deps: TransferDeps) -> Self {
        let TransferDeps {
            db,
            blobs,
            urls,
            clock,
            catalogue,
            datasets,
            config,
            fetcher,
            queued,
            upload_retention,
        } = deps;
        let upload_keeper = crate::transfers::uploads::UploadKeeper::new(
            db.clone(),
            blobs.clone(),
            clock.clone(),
            upload_retention,
        );
        Self {
            upload_keeper,
            db,
            blobs,
            urls,
            clock,
            catalogue,
            datasets,
            config,
            fetcher,
            queued,
        }
    }

    /// Records uploads and removes them when imported or unused.
    pub(crate) fn upload_keeper(&self) -> &crate::transfers::uploads::UploadKeeper {
        &self.upload_keeper
    }

    fn uploads(&self) -> Uploads {
        Uploads::new(self.blobs.clone(), self.urls.clone(), self.clock.clone())
    }

    /// A signed URL to upload one file to a fresh path of the caller's tenant.
    pub(crate) fn upload_url(
        &self,
        principal: &Principal,
        file_name: Option<&UploadFileName>,
        base: &PublicBase,
    ) -> Result<String, TransferError> {
        self.uploads().upload_url(principal, file_name, base)
    }

    /// The uploaded blob an upload URL names, if it belongs to the caller's tenant.
    pub(crate) async fn uploaded_blob(
        &self,
        principal: &Principal,
        upload_url: &str,
    ) -> Result<(BlobPath, BlobMeta), TransferError> {
        self.uploads().uploaded_blob(principal, upload_url).await
    }
}

/// Upload URLs: handing them out, and taking them back.
#[derive(Debug, Clone)]
pub(crate) struct Uploads {
    blobs: Arc<dyn BlobStore>,
    urls: BlobUrls,
    clock: Arc<dyn Clock>,
}

impl Uploads {
    /// Upload URLs over a blob store.
    pub(crate) fn new(blobs: Arc<dyn BlobStore>, urls: BlobUrls, clock: Arc<dyn Clock>) -> Self {
        Self { blobs, urls, clock }
    }

    /// A signed URL to upload one file to a fresh path of the caller's tenant.
    pub(crate) fn upload_url(
        &self,
        principal: &Principal,
        file_name: Option<&UploadFileName>,
        base: &PublicBase,
    ) -> Result<String, TransferError> {
        let tenant = acting_tenant(principal)?;
        let mut name = format!("{tenant}/{}", Uuid::new_v4());
        if let Some(file_name) = file_name {
            name = format!("{name}/{}", file_name.0);
        }
        let path =
            BlobPath::parse(UPLOADS_CONTAINER, &name).map_err(TransferError::InvalidFileName)?;
        Ok(self.urls.upload_url(base, &path, self.clock.now()))
    }

    /// The uploaded blob an upload URL (with or without its query) names, if it belongs to the
    /// caller's tenant and holds bytes. For upload-convert and datasets from uploads.
    pub(crate) async fn uploaded_blob(
        &self,
        principal: &Principal,
        upload_url: &str,
    ) -> Result<(BlobPath, BlobMeta), TransferError> {
        let tenant = acting_tenant(principal)?;
        let path = self
            .urls
            .blob_path_from_url(upload_url)
            .map_err(TransferError::NotAnUploadUrl)?;
        if !is_upload_of(&path, tenant) {
            return Err(TransferError::UploadNotFound);
        }
        match self.blobs.head(&path).await {
            Ok(meta) => Ok((path, meta)),
            Err(BlobError::NotFound(_)) => Err(TransferError::UploadNotFound),
            Err(error) => Err(TransferError::Blob(error)),
        }
    }
}

/// Whether `path` is `uploads/<tenant>/...`.
pub(crate) fn is_upload_of(path: &BlobPath, tenant: TenantId) -> bool {
    let tenant = tenant.to_string();
    path.container() == UPLOADS_CONTAINER && path.segments().next() == Some(tenant.as_str())
}

fn acting_tenant(principal: &Principal) -> Result<TenantId, TransferError> {
    match (principal.tenant_id, principal.tenant_role) {
        (Some(tenant), Some(_)) => Ok(tenant),
        _ => Err(TransferError::NoTenant),
    }
}

/// A file sent directly to the API.
pub(crate) struct DirectFile<'a> {
    /// Its name, which becomes the dataset's.
    pub(crate) name: &'a UploadFileName,
    /// The media type its form part names, kept as the blob's content type.
    pub(crate) content_type: Option<String>,
    /// Its bytes.
    pub(crate) body: basin_blob::ByteStream,
}

impl TransferService {
    /// Stores a file sent directly to the API and creates its dataset in `project`. Permission
    /// is checked before a byte is stored; a failed or partial upload leaves no blob and no
    /// dataset.
    pub(crate) async fn upload_file(
        &self,
        datasets: &crate::datasets::service::DatasetService,
        caller: &crate::auth::Caller,
        project: crate::ids::ProjectId,
        file: DirectFile<'_>,
        size_max: u64,
    ) -> Result<crate::datasets::model::DatasetRow, TransferError> {
        let DirectFile {
            name,
            content_type,
            body,
        } = file;
        use crate::datasets::service::NewDataset;
        let dataset_name = crate::datasets::service::DatasetService::parse_name(&name.0)?;
        let tenant = datasets.creatable(caller, project).await?;
        let id = crate::ids::DatasetId::new_random();
        let path = BlobPath::parse(DATASETS_CONTAINER, &format!("{tenant}/{id}/{}", name.0))
            .map_err(TransferError::InvalidFileName)?;
        let options = basin_blob::WriteOptions {
            size_max,
            create_only: true,
            expected_md5: None,
            properties: basin_blob::BlobProperties {
                content_type,
                ..basin_blob::BlobProperties::default()
            },
        };
        let written = self
            .blobs
            .put(&path, body, options)
            .await
            .map_err(|error| match error {
                BlobError::TooLarge { limit_bytes } => TransferError::TooLarge { limit_bytes },
                BlobError::Body(cause) if cause.kind() == std::io::ErrorKind::TimedOut => {
                    TransferError::Stalled
                }
                BlobError::Body(_) => TransferError::Incomplete,
                other => TransferError::Blob(other),
            })?;
        let input = NewDataset::stored(id, dataset_name, &path, &written);
        match datasets.create(caller, project, input).await {
            Ok(row) => Ok(row),
            Err(error) => {
                // The record is the only way to reach the bytes: without it they must go.
                if let Err(cleanup) = self.blobs.delete(&path).await {
                    tracing::warn!(error = %cleanup, blob = %path.key(), "could not remove the blob of a failed upload");
                }
                Err(error.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use futures::StreamExt;
    use secrecy::SecretString;

    use super::*;
    use crate::auth::{PrincipalType, SigningSecret};
    use crate::clock::SystemClock;
    use crate::identity::model::TenantRole;
    use basin_blob::{LocalBlobStore, WriteOptions};

    fn member_of(tenant: TenantId) -> Principal {
        Principal {
            tenant_id: Some(tenant),
            tenant_role: Some(TenantRole::User),
            principal_type: PrincipalType::OpenAPIAccount,
            ..Principal::operator()
        }
    }

    #[tokio::test]
    async fn an_upload_url_maps_back_to_its_blob_only_for_its_tenant() {
        let dir = tempfile::tempdir().unwrap();
        let blobs: Arc<dyn BlobStore> = Arc::new(LocalBlobStore::open(dir.path()).await.unwrap());
        let secret = SigningSecret::new(SecretString::from(
            "a secret of at least thirty-two bytes!!",
        ));
        let urls = BlobUrls::new(&secret, None, TimeDelta::hours(1), TimeDelta::hours(1));
        let service = Uploads::new(blobs.clone(), urls.clone(), Arc::new(SystemClock));
        let tenant = TenantId::from_uuid(Uuid::new_v4());
        let caller = member_of(tenant);
        let base = PublicBase::from_host("127.0.0.1:8080").unwrap();
        let name = UploadFileName::parse("grid.tif").unwrap();
        let url = service.upload_url(&caller, Some(&name), &base).unwrap();
        let (unsigned, _) = url.split_once('?').unwrap();
        assert!(unsigned.ends_with("/grid.tif"), "{unsigned}");
        assert!(matches!(
            service.uploaded_blob(&caller, unsigned).await,
            Err(TransferError::UploadNotFound)
        ));
        let path = urls.blob_path_from_url(unsigned).unwrap();
        let body = futures::stream::once(async { Ok(bytes::Bytes::from_static(b"tiff")) }).boxed();
        let options = WriteOptions {
            size_max: 10,
            create_only: true,
            expected_md5: None,
            properties: basin_blob::BlobProperties::default(),
        };
        blobs.put(&path, body, options).await.unwrap();
        let (found, meta) = service.uploaded_blob(&caller, unsigned).await.unwrap();
        assert_eq!(found, path);
        assert_eq!(meta.size, 4);
        let stranger = member_of(TenantId::from_uuid(Uuid::new_v4()));
        assert!(matches!(
            service.uploaded_blob(&stranger, unsigned).await,
            Err(TransferError::UploadNotFound)
        ));
        assert!(matches!(
            service.uploaded_blob(&caller, "http://h/elsewhere").await,
            Err(TransferError::NotAnUploadUrl(_))
        ));
        let outsider = Principal {
            tenant_id: None,
            ..caller
        };
        assert!(matches!(
            service.upload_url(&outsider, None, &base),
            Err(TransferError::NoTenant)
        ));
    }

    #[test]
    fn file_names_are_single_safe_segments() {
        assert!(UploadFileName::parse("model.dfsu").is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b", "a\nb"] {
            assert!(UploadFileName::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn uploads_belong_to_the_tenant_in_their_first_segment() {
        let tenant = TenantId::from_uuid(Uuid::new_v4());
        let mine = BlobPath::parse(UPLOADS_CONTAINER, &format!("{tenant}/x")).unwrap();
        assert!(is_upload_of(&mine, tenant));
        let other = TenantId::from_uuid(Uuid::new_v4());
        assert!(!is_upload_of(&mine, other));
        let elsewhere = BlobPath::parse("datasets", &format!("{tenant}/x")).unwrap();
        assert!(!is_upload_of(&elsewhere, tenant));
    }
}
