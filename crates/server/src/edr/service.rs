//! The rules of EDR queries: which datasets are collections (those the caller may read whose
//! reader gives a grid, a mesh or a time series), their description read once per content version and kept
//! in a size-bounded cache, and the queries answered on the blocking pool over a staged copy
//! of the content.

use std::sync::Arc;

use basin_blob::BlobStore;
use basin_edr::coverage::Answer;
use basin_edr::{Dataset, EdrError, Limits};
use basin_formats::Catalogue;
use basin_formats::model::DataKind;

use crate::auth::Caller;
use crate::datasets::model::DatasetRow;
use crate::datasets::service::{DatasetError, DatasetService};
use crate::db::SortValue;
use crate::ids::{DatasetId, ProjectId};
use crate::lru::Lru;
use crate::staging::Staging;

/// The folder under the work folder where EDR queries stage the files they read.
const STAGING_FOLDER: &str = "edr";

/// A described dataset, or why it cannot be one (kept too, so a broken file is read once).
type Described = Result<Arc<Dataset>, Arc<EdrError>>;

/// Why a request to the EDR endpoints fails.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EdrServiceError {
    /// The dataset is unknown, invisible or unreadable to the caller.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The dataset is not a collection: its format holds no grid or mesh.
    #[error("the dataset is not a collection of EDR queries: {0}")]
    NotACollection(String),
    /// The query failed (bad parameters, too large, no data, unreadable content).
    #[error(transparent)]
    Query(#[from] EdrError),
    /// A fault of Basin's own (staging the file).
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// What the EDR service needs.
pub(crate) struct EdrDeps {
    /// Datasets and who may read them.
    pub(crate) datasets: DatasetService,
    /// Where content is.
    pub(crate) blobs: Arc<dyn BlobStore>,
    /// The readers.
    pub(crate) catalogue: Arc<Catalogue>,
    /// Where files are staged for reading.
    pub(crate) work_dir: std::path::PathBuf,
    /// How much one query may ask for.
    pub(crate) limits: Limits,
    /// Bytes of described datasets kept in memory.
    pub(crate) cache_bytes: usize,
}

/// The EDR rules.
#[derive(Clone)]
pub(crate) struct EdrService {
    datasets: DatasetService,
    blobs: Arc<dyn BlobStore>,
    catalogue: Arc<Catalogue>,
    staging: Staging,
    limits: Limits,
    /// Formats whose reader gives a grid, a mesh or a time series, lower case with their dot.
    formats: Arc<Vec<&'static str>>,
    described: Arc<Lru<Arc<str>, Described>>,
}

impl std::fmt::Debug for EdrService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EdrService")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// One page of collections.
#[derive(Debug)]
pub(crate) struct CollectionPage {
    /// The datasets and their descriptions (or why a dataset cannot be described).
    pub(crate) collections: Vec<(DatasetRow, Described)>,
    /// Where the next page starts, when there is one.
    pub(crate) next: Option<(SortValue, uuid::Uuid)>,
}

/// Rounds of candidates a page looks through before it stops short (a caller who may read
/// few of many datasets gets shorter pages, each with a link to the next).
const SCAN_ROUNDS_MAX: usize = 8;

impl EdrService {
    /// The rules over these parts.
    pub(crate) fn new(deps: EdrDeps) -> Self {
        let formats = deps
            .catalogue
            .readers()
            .map(|reader| reader.spec())
            .filter(|spec| {
                spec.produces.iter().any(|kind| {
                    matches!(kind, DataKind::Grid | DataKind::Mesh | DataKind::TimeSeries)
                })
            })
            .flat_map(|spec| {
                std::iter::once(spec.dataset_format).chain(spec.extensions.iter().copied())
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        Self {
            datasets: deps.datasets,
            blobs: deps.blobs,
            catalogue: deps.catalogue,
            staging: Staging::new(&deps.work_dir, STAGING_FOLDER),
            limits: deps.limits,
            formats: Arc::new(formats),
            described: Arc::new(Lru::new(deps.cache_bytes)),
        }
    }

    /// How much one query may ask for.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Up to `limit` collections the caller may read after `after`, optionally only the
    /// datasets placed directly in `project`.
    pub(crate) async fn collections(
        &self,
        caller: &Caller,
        project: Option<ProjectId>,
        mut after: Option<(SortValue, uuid::Uuid)>,
        limit: usize,
    ) -> Result<CollectionPage, EdrServiceError> {
        let scan = i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1);
        let mut rows: Vec<DatasetRow> = Vec::new();
        for _ in 0..SCAN_ROUNDS_MAX {
            let (readable, last) = self
                .datasets
                .readable_of_formats(caller, project, &self.formats, after.clone(), scan)
                .await?;
            rows.extend(readable);
            after = last;
            if rows.len() > limit || after.is_none() {
                break;
            }
        }
        let next = if rows.len() > limit {
            rows.truncate(limit);
            rows.last()
                .map(|row| (SortValue::Text(row.name.clone()), row.id.as_uuid()))
        } else {
            after
        };
        let mut collections = Vec::with_capacity(rows.len());
        for row in rows {
            let described = self.described(&row).await;
            collections.push((row, described));
        }
        Ok(CollectionPage { collections, next })
    }

    /// Dataset `id` as a collection: the caller may read it and its format holds a grid or a
    /// mesh. Its description fails when the content cannot be read.
    pub(crate) async fn collection(
        &self,
        caller: &Caller,
        id: DatasetId,
    ) -> Result<(DatasetRow, Arc<Dataset>), EdrServiceError> {
        let row = self.datasets.readable(caller, id).await?;
        if !self.formats.contains(&row.dataset_format.as_str()) {
            return Err(EdrServiceError::NotACollection(format!(
                "datasets of format {:?} hold no grid, mesh or time series",
                row.dataset_format
            )));
        }
        let dataset = self
            .described(&row)
            .await
            .map_err(|error| EdrServiceError::Query((*error).clone()))?;
        Ok((row, dataset))
    }

    /// Answers a query on dataset `id`: `answer` runs on the blocking pool with the described
    /// dataset and its content as a local file.
    pub(crate) async fn answer<F>(
        &self,
        caller: &Caller,
        id: DatasetId,
        answer: F,
    ) -> Result<Answer, EdrServiceError>
    where
        F: FnOnce(&Catalogue, &Dataset, &std::path::Path, &Limits) -> Result<Answer, EdrError>
            + Send
            + 'static,
    {
        let (row, dataset) = self.collection(caller, id).await?;
        let catalogue = self.catalogue.clone();
        let limits = self.limits;
        self.staging
            .with_file(
                self.blobs.as_ref(),
                &row.data_path,
                &row.dataset_format,
                move |file| answer(&catalogue, &dataset, file, &limits),
            )
            .await?
            .map_err(EdrServiceError::Query)
    }

    /// The description of `row`'s content, from the cache or read now.
    async fn described(&self, row: &DatasetRow) -> Described {
        let key: Arc<str> = Arc::from(row.content_key());
        let service = self.clone();
        let row = row.clone();
        self.described
            .get_or_load(&key, described_weight, || async move {
                let catalogue = service.catalogue.clone();
                let format = row.dataset_format.clone();
                let read = service
                    .staging
                    .with_file(
                        service.blobs.as_ref(),
                        &row.data_path,
                        &row.dataset_format,
                        move |file| Dataset::describe(&catalogue, &format, file),
                    )
                    .await;
                match read {
                    Ok(Ok(dataset)) => Ok(Arc::new(dataset)),
                    Ok(Err(error)) => Err(Arc::new(error)),
                    Err(error) => Err(Arc::new(EdrError::Unreadable(error.to_string()))),
                }
            })
            .await
    }
}

fn described_weight(described: &Described) -> usize {
    match described {
        Ok(dataset) => dataset.approximate_bytes(),
        Err(_) => 256,
    }
}
