//! Running one claimed transfer.
//!
//! 1. Stage the input in the transfer's own folder under the work dir: a blob of the local
//!    backend is linked there and read in place; other backends stream it to a file.
//! 2. Convert it with the format library on a blocking thread, reporting progress.
//! 3. Store the result as a new blob (never over an existing one), then end the transfer and
//!    publish the result (new dataset row, replaced content, download) in ONE transaction
//!    that names this worker's lease. A worker that lost its lease publishes nothing and
//!    removes what it stored, so a transfer's effect happens exactly once.
//!
//! While this runs, a heartbeat renews the lease and records progress; it also learns of a
//! cancel, or that the lease was lost, and stops the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use basin_formats::{Catalogue, Conversion, ReadContext};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::datasets::DATASETS_CONTAINER;
use crate::datasets::service::{ContentDetails, DatasetService, NewContent, NewDataset};
use crate::db::{Db, JsonText};
use crate::ids::{DatasetId, TransferId};
use crate::leases::{Holder, Lease};
use crate::transfers::model::{
    ImportResultDto, OutputDatasetData, Source, Target, TransferPlan, TransferRow, TransferStatus,
};
use crate::transfers::store::{self, Heartbeat, Outcome};
use basin_blob::{BlobPath, BlobStore, WriteOptions};

/// Container of export results.
pub(crate) const EXPORTS_CONTAINER: &str = "exports";

/// What a worker needs to run transfers.
#[derive(Debug, Clone)]
pub(crate) struct Runner {
    pub(crate) db: Db,
    pub(crate) blobs: Arc<dyn BlobStore>,
    pub(crate) datasets: DatasetService,
    pub(crate) catalogue: Arc<Catalogue>,
    pub(crate) clock: Arc<dyn Clock>,
    /// Temporary files of running transfers, one folder each.
    pub(crate) work_dir: PathBuf,
    /// How long a claim lasts without renewal.
    pub(crate) lease: Lease,
    /// How often the lease is renewed.
    pub(crate) heartbeat: Duration,
    /// Largest result a transfer may store.
    pub(crate) result_bytes_max: u64,
    /// This worker's name in leases.
    pub(crate) holder: Holder,
    /// Fetches imports from outside addresses.
    pub(crate) fetcher: basin_fetch::Fetcher,
    /// Removes an upload once an import took its bytes over.
    pub(crate) uploads: crate::transfers::uploads::UploadKeeper,
}

/// Why a run did not produce a result. The message is shown to the user as `errorMessage`.
#[derive(Debug)]
struct Failed(String);

impl<E: std::fmt::Display> From<E> for Failed {
    fn from(error: E) -> Self {
        Self(error.to_string())
    }
}

/// Progress of a run: conversion progress (input bytes) maps to 5-95 %. Also how the run
/// tells a conversion on its blocking thread to stop.
#[derive(Debug, Default)]
struct Meter {
    total: AtomicU64,
    done: AtomicU64,
    percent: AtomicU8,
    stopped: std::sync::atomic::AtomicBool,
}

impl Meter {
    /// Asks the conversion to stop at its next block of data.
    fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    fn set_percent(&self, percent: u8) {
        self.percent.fetch_max(percent.min(100), Ordering::Relaxed);
    }

    fn percent(&self) -> u8 {
        self.percent.load(Ordering::Relaxed)
    }
}

impl basin_formats::Progress for Meter {
    fn set_total(&self, units: u64) {
        self.total.store(units, Ordering::Relaxed);
    }

    fn advance(&self, units: u64) {
        let done = self
            .done
            .fetch_add(units, Ordering::Relaxed)
            .saturating_add(units);
        let total = self.total.load(Ordering::Relaxed);
        if let Some(share) = done.min(total).saturating_mul(90).checked_div(total) {
            self.set_percent(5 + u8::try_from(share).unwrap_or(90));
        }
    }

    fn cancelled(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

/// Results larger than this are checksummed after their transfer completed
/// ([`Runner::store_result`]).
const CHECKSUM_LATER_BYTES: u64 = 64 * 1024 * 1024;

/// A result in the blob store: its size, and its checksum unless that comes later.
#[derive(Debug)]
struct Stored {
    size: u64,
    checksum: Option<String>,
}

/// The dataset checksum of content with this MD5 (`md5:<hex>`).
fn checksum_of(md5: &[u8; 16]) -> String {
    format!("md5:{}", crate::datasets::service::hex(md5))
}

/// What a run produced.
#[derive(Debug)]
struct Produced {
    /// The result file.
    file: PathBuf,
    /// Its name in the blob store.
    file_name: String,
    /// Its dataset format (`.tif`).
    format: String,
    /// What the data written is (`None` for a plain copy).
    summary: Option<basin_formats::DataSummary>,
    /// For an append, the blob key of the content it extended.
    appended_to: Option<String>,
}

/// How the heartbeat ended a run early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    Lost,
}

impl Runner {
    /// Runs a claimed transfer to its end. Never fails: every failure ends the transfer in
    /// `Error` (or, when the lease was lost, leaves it to the worker that holds it). When
    /// `shutdown` is cancelled first, the transfer goes back to the queue for another worker.
    pub(crate) async fn run(&self, row: TransferRow, shutdown: &CancellationToken) {
        let id = row.id;
        let dir = self.work_dir.join(id.to_string());
        let meter = Arc::new(Meter::default());
        let stop = CancellationToken::new();
        let stopped = Arc::new(AtomicU8::new(0));
        let heartbeat =
            tokio::spawn(
                self.clone()
                    .beat(id, meter.clone(), stop.clone(), stopped.clone()),
            );
        let began = std::time::Instant::now();
        let outcome = tokio::select! {
            result = self.execute(&row, &dir, meter.clone()) => Some(result),
            () = stop.cancelled() => None,
            () = shutdown.cancelled() => {
                meter.stop();
                stop.cancel();
                let _ = heartbeat.await;
                self.release(id).await;
                remove_dir(&dir).await;
                return;
            }
        };
        // A conversion still running on its blocking thread (the run was cancelled or its
        // lease lost) stops at its next block instead of working on for nobody.
        meter.stop();
        stop.cancel();
        let _ = heartbeat.await;
        let stop_reason = match stopped.load(Ordering::Relaxed) {
            1 => Some(Stop::Cancelled),
            2 => Some(Stop::Lost),
            _ => None,
        };
        match (stop_reason, outcome) {
            (Some(Stop::Lost), _) => {
                tracing::warn!(transfer = %id, "lost the lease; another worker runs the transfer");
            }
            (Some(Stop::Cancelled), _) | (None, None) => {
                self.end_with_error(id, "The transfer was cancelled before it completed.")
                    .await;
            }
            (None, Some(Err(Failed(message)))) => {
                tracing::info!(transfer = %id, error = %message, "transfer failed");
                self.end_with_error(id, &message).await;
            }
            (None, Some(Ok(produced))) => {
                let produced_in = began.elapsed();
                match self.publish(&row, produced).await {
                    Ok(()) => {
                        tracing::info!(
                            transfer = %id,
                            produced_ms = produced_in.as_millis(),
                            published_ms = (began.elapsed() - produced_in).as_millis(),
                            "transfer run ended"
                        );
                        self.upload_taken_over(&row).await;
                    }
                    Err(Failed(message)) => {
                        tracing::warn!(transfer = %id, error = %message, "transfer could not publish its result");
                        self.end_with_error(id, &message).await;
                    }
                }
            }
        }
        remove_dir(&dir).await;
    }

    /// Renews the lease every `heartbeat` until `stop`; sets `stopped` to 1 on a cancel, 2 on
    /// a lost lease, and then stops the run.
    async fn beat(
        self,
        id: TransferId,
        meter: Arc<Meter>,
        stop: CancellationToken,
        stopped: Arc<AtomicU8>,
    ) {
        // The 10 % step last reported in a progress event: at most one event per step.
        let mut reported_step = 0;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.heartbeat) => {}
            }
            let now = self.clock.now();
            let lease_until = self.lease.expiry(now);
            let percent = meter.percent();
            let report = percent / 10 > reported_step;
            match store::heartbeat(
                &self.db,
                id,
                &self.holder,
                now,
                lease_until,
                percent,
                report,
            )
            .await
            {
                Ok(Heartbeat::Renewed) => {
                    if report {
                        reported_step = percent / 10;
                    }
                }
                Ok(Heartbeat::CancelRequested) => {
                    stopped.store(1, Ordering::Relaxed);
                    stop.cancel();
                    return;
                }
                Ok(Heartbeat::Lost) => {
                    stopped.store(2, Ordering::Relaxed);
                    stop.cancel();
                    return;
                }
                // The database is unreachable for now: keep working; the lease may run out,
                // in which case the next heartbeat learns it was lost.
                Err(error) => tracing::warn!(transfer = %id, %error, "heartbeat failed"),
            }
        }
    }

    /// Puts the transfer back in the queue (this worker is stopping).
    async fn release(&self, id: TransferId) {
        match store::release(&self.db, id, &self.holder, self.clock.now()).await {
            Ok(true) => {
                tracing::info!(transfer = %id, "worker stopping; the transfer is queued again")
            }
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(transfer = %id, %error, "could not queue the transfer again; another worker takes it over when its lease runs out");
            }
        }
    }

    /// A transfer that completed from an upload stored what it made of it: the upload's bytes
    /// are no longer needed (unless another transfer still reads them).
    async fn upload_taken_over(&self, row: &TransferRow) {
        if let Ok(plan) = row.plan()
            && let Source::Upload { blob_key, .. } = &plan.source
        {
            self.uploads.taken_over(blob_key).await;
        }
    }

    async fn end_with_error(&self, id: TransferId, message: &str) {
        let outcome = Outcome {
            status: TransferStatus::Error,
            error_message: Some(without_server_paths(message, &self.work_dir)),
            import_results: JsonText::empty_array(),
            download_blob: None,
            format: None,
        };
        let result = async {
            let mut tx = self.db.begin().await?;
            let ended =
                store::finish_in(&mut tx, id, &self.holder, self.clock.now(), &outcome).await?;
            tx.commit().await?;
            Ok::<bool, crate::db::StoreError>(ended)
        }
        .await;
        if let Err(error) = result {
            tracing::error!(transfer = %id, %error, "could not record the end of a transfer; its lease will run out and another worker retries it");
        }
    }

    async fn execute(
        &self,
        row: &TransferRow,
        dir: &Path,
        meter: Arc<Meter>,
    ) -> Result<Produced, Failed> {
        let plan = row
            .plan()
            .map_err(|error| Failed(format!("the stored transfer is unreadable: {error}")))?;
        remove_dir(dir).await;
        let input_dir = dir.join("in");
        let output_dir = dir.join("out");
        tokio::fs::create_dir_all(&input_dir).await?;
        tokio::fs::create_dir_all(&output_dir).await?;
        let input = self.stage(row, &plan, &input_dir, &meter).await?;
        meter.set_percent(5);
        let output_name = self.output_name(&plan, &input).await?;
        let output = output_dir.join(&output_name);
        let mut appended_to = None;
        let written = match plan.target {
            Target::AppendContent { dataset_id } => {
                let (existing, key) = self
                    .stage_dataset(dataset_id, &dir.join("existing"))
                    .await?;
                appended_to = Some(key);
                self.append(&plan, &existing, &input, &output, meter.clone())
                    .await?
            }
            _ => self.convert(&plan, &input, &output, meter.clone()).await?,
        };
        meter.set_percent(95);
        let writer = self
            .catalogue
            .writer(&plan.writer)
            .map(|writer| writer.spec());
        let format = match writer {
            Some(spec) if spec.name != basin_formats::file_copy::WRITER.name => {
                spec.dataset_format.to_owned()
            }
            _ => crate::datasets::model::format_of(&output_name),
        };
        let summary = written.summary.clone();
        if written.files.len() > 1 {
            let zipped = output_dir.join(format!(
                "{}.zip",
                crate::transfers::naming::file_stem(&output_name)
            ));
            pack(written.files, zipped.clone()).await?;
            return Ok(Produced {
                file_name: file_name_of(&zipped),
                file: zipped,
                format: ".zip".to_owned(),
                summary,
                appended_to,
            });
        }
        let file = written.files.into_iter().next().unwrap_or(output);
        let file_name = file_name_of(&file);
        // A writer may pack its files itself (VTU steps and their .pvd in one .zip): the
        // dataset is then that zip, whatever the writer's own format.
        let format = if crate::datasets::model::format_of(&file_name) == ".zip" {
            ".zip".to_owned()
        } else {
            format
        };
        Ok(Produced {
            file_name,
            file,
            format,
            summary,
            appended_to,
        })
    }

    /// Runs the format library's conversion on a blocking thread.
    async fn convert(
        &self,
        plan: &TransferPlan,
        input: &Path,
        output: &Path,
        meter: Arc<Meter>,
    ) -> Result<basin_formats::Written, Failed> {
        let catalogue = self.catalogue.clone();
        let transformations = crate::transfers::plan::parse_transformations(&plan.transformations)
            .map_err(|error| Failed(error.to_string()))?;
        let plan = plan.clone();
        let input = input.to_owned();
        let output = output.to_owned();
        let converting = tokio::task::spawn_blocking(move || {
            let conversion = Conversion {
                reader: Some(&plan.reader),
                writer: Some(&plan.writer),
                reader_parameters: &plan.reader_parameters,
                writer_parameters: &plan.writer_parameters,
                transformations: &transformations,
            };
            let context = ReadContext {
                progress: meter.as_ref(),
                ..ReadContext::default()
            };
            catalogue.convert(&input, &output, &conversion, &context)
        });
        Ok(converting
            .await
            .map_err(|error| Failed(format!("the conversion stopped unexpectedly: {error}")))??)
    }

    /// Appends the time steps or features of `addition` to `existing` into `output`, on a
    /// blocking thread. The existing file is read with the reader of its format.
    async fn append(
        &self,
        plan: &TransferPlan,
        existing: &Path,
        addition: &Path,
        output: &Path,
        meter: Arc<Meter>,
    ) -> Result<basin_formats::Written, Failed> {
        let catalogue = self.catalogue.clone();
        let existing_format = crate::datasets::model::format_of(&file_name_of(existing));
        let existing_reader = catalogue
            .reader_for_format(&existing_format)
            .map(|spec| spec.name)
            .ok_or_else(|| {
                Failed(format!(
                    "no reader reads the dataset's {existing_format} content"
                ))
            })?;
        let plan = plan.clone();
        let existing = existing.to_owned();
        let addition = addition.to_owned();
        let output = output.to_owned();
        let appending = tokio::task::spawn_blocking(move || {
            let append = basin_formats::Append {
                existing_reader: Some(existing_reader),
                existing_reader_parameters: &[],
                addition_reader: Some(&plan.reader),
                addition_reader_parameters: &plan.reader_parameters,
                writer: Some(&plan.writer),
                writer_parameters: &plan.writer_parameters,
            };
            let context = ReadContext {
                progress: meter.as_ref(),
                ..ReadContext::default()
            };
            catalogue.append(&existing, &addition, &output, &append, &context)
        });
        Ok(appending
            .await
            .map_err(|error| Failed(format!("the append stopped unexpectedly: {error}")))??)
    }

    /// The file name of the result: the output dataset's name (or the dataset's, or the
    /// export's) with the writer's extension; a plain copy keeps the input's name.
    async fn output_name(&self, plan: &TransferPlan, input: &Path) -> Result<String, Failed> {
        if plan.writer == basin_formats::file_copy::WRITER.name {
            return Ok(file_name_of(input));
        }
        let extension = self
            .catalogue
            .writer(&plan.writer)
            .map(|writer| writer.spec().dataset_format)
            .unwrap_or_default();
        let stem = match &plan.target {
            Target::NewDataset { data, .. } => crate::transfers::naming::file_stem(&data.name),
            Target::Download { file_name } => crate::transfers::naming::file_stem(file_name),
            Target::ReplaceContent { dataset_id } | Target::AppendContent { dataset_id } => {
                let row = self.live_dataset(*dataset_id).await?;
                crate::transfers::naming::file_stem(&row.name)
            }
        };
        Ok(format!("{stem}{extension}"))
    }

    async fn live_dataset(
        &self,
        id: DatasetId,
    ) -> Result<crate::datasets::model::DatasetRow, Failed> {
        self.datasets
            .live(id)
            .await?
            .ok_or_else(|| Failed("the dataset was deleted or moved to the recycle bin".to_owned()))
    }

    /// Makes the input available as a file named as the user named it.
    async fn stage(
        &self,
        row: &TransferRow,
        plan: &TransferPlan,
        input_dir: &Path,
        meter: &Meter,
    ) -> Result<PathBuf, Failed> {
        match &plan.source {
            Source::Upload {
                blob_key,
                file_name,
                ..
            } => {
                let path = BlobPath::parse_key(blob_key)?;
                let target = input_dir.join(file_name);
                self.stage_blob(&path, &target).await?;
                Ok(target)
            }
            Source::Dataset { dataset_id } => {
                Ok(self.stage_dataset(*dataset_id, input_dir).await?.0)
            }
            Source::Url { file_name, .. } => {
                let target = input_dir.join(file_name);
                self.stage_url(row.id, &target, meter).await?;
                Ok(target)
            }
        }
    }

    /// Fetches the outside file of `transfer` to `target`; the download is the first 5 %.
    async fn stage_url(
        &self,
        transfer: TransferId,
        target: &Path,
        meter: &Meter,
    ) -> Result<(), Failed> {
        let secret = crate::transfers::store::source_secret(&self.db, transfer)
            .await?
            .ok_or_else(|| Failed("the address to import from is no longer known".to_owned()))?;
        // Checked when the transfer was queued; checked again in case the policy changed.
        let url = self.fetcher.check_url(&secret)?;
        let progress = |done: u64, total: Option<u64>| {
            if let Some(share) =
                total.and_then(|total| done.min(total).saturating_mul(5).checked_div(total))
            {
                meter.set_percent(u8::try_from(share).unwrap_or(5));
            }
        };
        self.fetcher.fetch_to_file(&url, target, &progress).await?;
        Ok(())
    }

    /// Makes a dataset's content available as a file in `dir`, named as stored.
    /// Also returns the blob key staged, the content as it was when read. Content replaced
    /// (and its blob removed) between reading the row and the blob is read again, as it is now.
    async fn stage_dataset(&self, id: DatasetId, dir: &Path) -> Result<(PathBuf, String), Failed> {
        tokio::fs::create_dir_all(dir).await?;
        let mut dataset = self.live_dataset(id).await?;
        let mut tries = 0;
        loop {
            let path = BlobPath::parse_key(&dataset.data_path)?;
            let file_name = path
                .segments()
                .last()
                .map_or_else(|| "data".to_owned(), str::to_owned);
            let target = dir.join(file_name);
            let staged = self.stage_blob(&path, &target).await;
            if staged.is_ok() {
                return Ok((target, dataset.data_path));
            }
            let now = self.live_dataset(id).await?;
            tries += 1;
            if now.data_path == dataset.data_path || tries >= 10 {
                return staged.map(|()| (target, dataset.data_path));
            }
            let _ = tokio::fs::remove_file(&target).await;
            dataset = now;
        }
    }

    /// Links a local blob into place, or streams a remote one to `target`.
    async fn stage_blob(&self, path: &BlobPath, target: &Path) -> Result<(), Failed> {
        if let Some(file) = self.blobs.local_file_now(path).await {
            // A hard link keeps the version of the blob as it is now even if it is replaced
            // during the run; a symbolic link serves when the work dir is on another disk. A
            // blob removed meanwhile fails both and is found missing below; one that became a
            // block commit's extents meanwhile is a symbolic link, which a hard link copies as
            // such: it is read below too.
            if tokio::fs::hard_link(&file, target).await.is_ok()
                && basin_blob::linked_a_file(target).await
            {
                return Ok(());
            }
            #[cfg(unix)]
            if tokio::fs::symlink(&file, target).await.is_ok() {
                if tokio::fs::metadata(target)
                    .await
                    .is_ok_and(|metadata| metadata.is_file())
                {
                    return Ok(());
                }
                let _ = tokio::fs::remove_file(target).await;
            }
        }
        let read = match self.blobs.get(path, None).await {
            Ok(read) => read,
            Err(basin_blob::BlobError::NotFound(_)) => {
                return Err(Failed("the file to read is no longer there".to_owned()));
            }
            Err(error) => return Err(error.into()),
        };
        let mut file = tokio::fs::File::create(target).await?;
        let mut body = read.body;
        while let Some(chunk) = body.next().await {
            let chunk = chunk?;
            tokio::io::AsyncWriteExt::write_all(&mut file, &chunk).await?;
        }
        tokio::io::AsyncWriteExt::flush(&mut file).await?;
        Ok(())
    }

    /// Stores `produced` at a fresh blob path and returns its size and checksum. A result
    /// over [`CHECKSUM_LATER_BYTES`] gets no checksum yet: reading it for its MD5 would hold
    /// the transfer back (about 1.5 s a GB, more than everything else the service adds), so
    /// [`Runner::fill_checksum`] reads it once the transfer has completed.
    async fn store_result(&self, produced: &Produced, path: &BlobPath) -> Result<Stored, Failed> {
        let options = WriteOptions {
            size_max: self.result_bytes_max,
            create_only: true,
            expected_md5: None,
            properties: basin_blob::BlobProperties::default(),
        };
        let size = tokio::fs::metadata(&produced.file).await?.len();
        if size > CHECKSUM_LATER_BYTES {
            let meta = self
                .blobs
                .put_file_unhashed(path, &produced.file, options)
                .await?;
            return Ok(Stored {
                size: meta.size,
                checksum: None,
            });
        }
        let written = self.blobs.put_file(path, &produced.file, options).await?;
        Ok(Stored {
            size: written.meta.size,
            checksum: Some(checksum_of(&written.md5)),
        })
    }

    /// Records the checksum of a result stored without one, unless its dataset moved on.
    async fn fill_checksum(&self, stored: &Stored, path: &BlobPath, produced: &Produced) {
        if stored.checksum.is_some() {
            return;
        }
        let file = produced.file.clone();
        let hashed =
            tokio::task::spawn_blocking(move || basin_blob::tally_file(&file, u64::MAX, None))
                .await;
        let result = match hashed {
            Ok(Ok((_, md5))) => self
                .datasets
                .checksum_found(&path.key(), &checksum_of(&md5))
                .await
                .map_err(|error| error.to_string()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        if let Err(error) = result {
            tracing::warn!(%error, blob = %path.key(), "could not record a result's checksum");
        }
    }

    /// Publishes the result and ends the transfer, in one transaction.
    async fn publish(&self, row: &TransferRow, produced: Produced) -> Result<(), Failed> {
        let plan = row
            .plan()
            .map_err(|error| Failed(format!("the stored transfer is unreadable: {error}")))?;
        let tenant = row.tenant_id;
        match &plan.target {
            Target::NewDataset { project_id, data } => {
                let id = DatasetId::new_random();
                let path = BlobPath::parse(
                    DATASETS_CONTAINER,
                    &format!("{tenant}/{id}/{}", produced.file_name),
                )?;
                let stored = self.store_result(&produced, &path).await?;
                let result = self
                    .publish_dataset(row, *project_id, data, id, &path, &stored, &produced)
                    .await;
                if matches!(result, Ok(true)) {
                    self.fill_checksum(&stored, &path, &produced).await;
                } else {
                    self.remove_blob(&path).await;
                }
                result.map(|_| ())
            }
            Target::ReplaceContent { dataset_id } | Target::AppendContent { dataset_id } => {
                let old = self.live_dataset(*dataset_id).await?;
                let path = BlobPath::parse(
                    DATASETS_CONTAINER,
                    &format!("{tenant}/{dataset_id}/{}/{}", row.id, produced.file_name),
                )?;
                let stored = self.store_result(&produced, &path).await?;
                // An append extends the content it read; if another transfer replaced that
                // content meanwhile, publishing would silently drop the other's change.
                let appended_to = produced.appended_to.as_deref();
                let result = self
                    .publish_content(row, &old, appended_to, &path, &stored, &produced)
                    .await;
                match &result {
                    Ok(Some(replaced)) => {
                        self.fill_checksum(&stored, &path, &produced).await;
                        if let Ok(replaced_path) = BlobPath::parse_key(replaced)
                            && *replaced != path.key()
                        {
                            self.remove_blob(&replaced_path).await;
                        }
                    }
                    Ok(None) | Err(_) => self.remove_blob(&path).await,
                }
                result.map(|_| ())
            }
            Target::Download { .. } => self.publish_download(row, &produced).await,
        }
    }

    /// Stores an export's result and ends the transfer with its blob as `downloadPath`.
    async fn publish_download(&self, row: &TransferRow, produced: &Produced) -> Result<(), Failed> {
        let path = BlobPath::parse(
            EXPORTS_CONTAINER,
            &format!("{}/{}/{}", row.tenant_id, row.id, produced.file_name),
        )?;
        self.store_result(produced, &path).await?;
        let outcome = completed(produced, JsonText::empty_array(), Some(path.key()));
        let mut tx = self.db.begin().await?;
        let ended =
            store::finish_in(&mut tx, row.id, &self.holder, self.clock.now(), &outcome).await?;
        if ended {
            tx.commit().await?;
        } else {
            drop(tx);
            self.remove_blob(&path).await;
        }
        Ok(())
    }

    /// Creates the new dataset and ends the transfer; false when the lease was lost.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site; the parts of one result"
    )]
    async fn publish_dataset(
        &self,
        row: &TransferRow,
        project: crate::ids::ProjectId,
        data: &OutputDatasetData,
        id: DatasetId,
        path: &BlobPath,
        stored: &Stored,
        produced: &Produced,
    ) -> Result<bool, Failed> {
        if !self.datasets.project_is_live(project).await? {
            return Err(Failed(
                "the target project was deleted or moved to the recycle bin".to_owned(),
            ));
        }
        let object = |value: &Option<serde_json::Value>| {
            value
                .as_ref()
                .filter(|value| value.is_object())
                .map_or_else(JsonText::empty_object, JsonText::from_value)
        };
        let input = NewDataset {
            id,
            name: data.name.clone(),
            description: data.description.clone().unwrap_or_default(),
            data_path: path.key(),
            storage_size: stored.size,
            checksum: stored.checksum.clone(),
            metadata: object(&data.metadata),
            properties: object(&data.properties),
            details: Some(details_of(produced)),
        };
        let results = vec![ImportResultDto {
            project_id: project,
            dataset_id: id,
        }];
        let outcome = completed(
            produced,
            JsonText::from_value(&serde_json::to_value(&results)?),
            None,
        );
        let caller = creator_of(row);
        let mut tx = self.db.begin().await?;
        if !store::finish_in(&mut tx, row.id, &self.holder, self.clock.now(), &outcome).await? {
            return Ok(false);
        }
        self.datasets
            .create_in(&mut tx, &caller, row.tenant_id, project, input)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Replaces the dataset's content and ends the transfer. Returns the blob key of the
    /// content replaced, or `None` when the lease was lost. With `appended_to`, fails unless
    /// that is still the dataset's content.
    async fn publish_content(
        &self,
        row: &TransferRow,
        old: &crate::datasets::model::DatasetRow,
        appended_to: Option<&str>,
        path: &BlobPath,
        stored: &Stored,
        produced: &Produced,
    ) -> Result<Option<String>, Failed> {
        let results = vec![ImportResultDto {
            project_id: old.project_id,
            dataset_id: old.id,
        }];
        let outcome = completed(
            produced,
            JsonText::from_value(&serde_json::to_value(&results)?),
            None,
        );
        let content = NewContent {
            data_path: path.key(),
            storage_size: stored.size,
            checksum: stored.checksum.clone(),
            details: details_of(produced),
        };
        let mut tx = self.db.begin().await?;
        if !store::finish_in(&mut tx, row.id, &self.holder, self.clock.now(), &outcome).await? {
            return Ok(None);
        }
        let replaced = self
            .datasets
            .replace_content_in(&mut tx, old.id, &content, row.created_by)
            .await?
            .ok_or_else(|| {
                Failed("the dataset was deleted or moved to the recycle bin".to_owned())
            })?;
        if appended_to.is_some_and(|appended_to| appended_to != replaced) {
            return Err(Failed(
                "the dataset's content was replaced while the append ran; nothing was appended, append again"
                    .to_owned(),
            ));
        }
        tx.commit().await?;
        Ok(Some(replaced))
    }

    async fn remove_blob(&self, path: &BlobPath) {
        match self.blobs.delete(path).await {
            Ok(()) | Err(basin_blob::BlobError::NotFound(_)) => {}
            Err(error) => {
                tracing::warn!(%error, blob = %path.key(), "could not remove a transfer's blob");
            }
        }
    }
}

/// The creator of a transfer as dataset rows record it.
fn creator_of(row: &TransferRow) -> crate::auth::Caller {
    crate::auth::Caller::recorded(row.created_by)
}

fn details_of(produced: &Produced) -> ContentDetails {
    crate::transfers::details::details(&produced.format, produced.summary.as_ref())
}

/// `message` as the user may read it: every path inside the work folder (`<work
/// dir>/<transfer>/in/gre.zip`, a writer's staging folder below `out/`) is cut to its last
/// segment, the file as the user named it. The worker's folders are the server's business;
/// the full message stays in the log.
fn without_server_paths(message: &str, work_dir: &Path) -> String {
    let prefix = work_dir.display().to_string();
    let prefix = prefix.trim_end_matches('/');
    if prefix.is_empty() {
        return message.to_owned();
    }
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at]);
        rest = &rest[at + prefix.len()..];
        // Skip the folders below the prefix: `segment/` runs up to the file name.
        while let Some(slash) = rest.find('/') {
            let segment = &rest[..slash];
            if segment.contains(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ':')) {
                break;
            }
            rest = &rest[slash + 1..];
        }
    }
    out.push_str(rest);
    out
}

fn file_name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || "data".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// Removes a transfer's folder; a folder already gone is fine.
pub(crate) async fn remove_dir(dir: &Path) {
    match tokio::fs::remove_dir_all(dir).await {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            tracing::warn!(%error, dir = %dir.display(), "could not remove a transfer's temporary files");
        }
    }
}

/// Packs the files of a multi-file result into `target`, on a blocking thread.
async fn pack(files: Vec<PathBuf>, target: PathBuf) -> Result<(), Failed> {
    tokio::task::spawn_blocking(move || zip_files(&files, &target))
        .await
        .map_err(|error| Failed(format!("packing the result failed: {error}")))?
}

/// Packs the files of a multi-file result (Shapefile parts, VTU steps) into one zip.
fn zip_files(files: &[PathBuf], target: &Path) -> Result<(), Failed> {
    let out = std::fs::File::create(target)?;
    let mut zip = zip::ZipWriter::new(std::io::BufWriter::new(out));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    for file in files {
        zip.start_file(file_name_of(file), options)?;
        let mut input = std::fs::File::open(file)?;
        std::io::copy(&mut input, &mut zip)?;
    }
    zip.finish()?;
    Ok(())
}

/// How a transfer that produced `produced` ends.
fn completed(
    produced: &Produced,
    import_results: JsonText,
    download_blob: Option<String>,
) -> Outcome {
    Outcome {
        status: TransferStatus::Completed,
        error_message: None,
        import_results,
        download_blob,
        format: Some(produced.format.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::without_server_paths;
    use std::path::Path;

    #[test]
    fn messages_name_files_as_the_user_sent_them_never_a_server_path() {
        let work = Path::new("/srv/basin/work");
        for (message, expected) in [
            (
                "reading /srv/basin/work/0190/in/gre.zip: corrupt deflate stream",
                "reading gre.zip: corrupt deflate stream",
            ),
            (
                "writing /srv/basin/work/0190/out/.tmpA1/river lines.shp: disk full; \
                 then /srv/basin/work/0190/in/a.asc",
                "writing river lines.shp: disk full; then a.asc",
            ),
            ("no path here", "no path here"),
            (
                "reading /srv/basin/work/0190/in/x.tif: see http://example.org/a/b",
                "reading x.tif: see http://example.org/a/b",
            ),
        ] {
            assert_eq!(without_server_paths(message, work), expected);
        }
        let relative = Path::new("basin-data/work/");
        assert_eq!(
            without_server_paths("reading basin-data/work/7/in/a b.dfsu: bad", relative),
            "reading a b.dfsu: bad"
        );
    }
}
