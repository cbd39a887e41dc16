//! Compaction: a block commit publishes its blocks as extents at once, copying nothing, and a
//! background task copies them into one plain file once the commit is `compaction_delay` old
//! (or sooner, when a reader needs a file). The old version folder is kept an hour after it is
//! replaced, so reads that began on it end whole.

use super::*;

/// A version to compact, once due.
#[derive(Debug)]
pub(super) struct Compaction {
    version: uuid::Uuid,
    due: tokio::time::Instant,
}

impl LocalBlobStore {
    /// The version the blob at `path` is, when it is kept as extents.
    pub(super) async fn version_at(&self, path: &BlobPath) -> Option<uuid::Uuid> {
        let link = fs::read_link(self.blob_file(path)).await.ok()?;
        extents::version_of_link(&link)
    }

    /// Marks a replaced version's folder as replaced now; the sweep removes it an hour later.
    pub(super) async fn retire(&self, version: Option<uuid::Uuid>) {
        let Some(version) = version else {
            return;
        };
        let dir = extents::version_dir(&self.root, version);
        let touched = tokio::task::spawn_blocking(move || {
            std::fs::File::open(&dir)?.set_modified(SystemTime::now())
        })
        .await;
        if let Ok(Err(error)) = touched {
            tracing::warn!(%version, %error, "cannot mark a replaced blob version");
        }
    }

    pub(super) fn queue_compaction(&self, version: uuid::Uuid, delay: Duration) {
        let now = tokio::time::Instant::now();
        let due = now.checked_add(delay).unwrap_or(now);
        let _ = self.shared.compactions.send(Compaction { version, due });
    }

    /// Copies the extents of `version` into one file that replaces the blob's link, if the
    /// blob still is that version. The file keeps the version's ETag, time, MD5 and
    /// properties.
    pub(super) async fn compact(&self, version: uuid::Uuid) -> Result<(), BlobError> {
        let dir = extents::version_dir(&self.root, version);
        let manifest = match extents::load_manifest(&dir).await {
            Ok(manifest) => manifest,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(BlobError::storage(error)),
        };
        let Some(path) = manifest.path() else {
            return Ok(());
        };
        if self.version_at(&path).await != Some(version) {
            return Ok(());
        }
        let temp = Unpublished::file(self.temp_path());
        let (source, copy, target) = (dir.clone(), manifest.clone(), temp.path.clone());
        let metadata =
            tokio::task::spawn_blocking(move || extents::compact_into(&source, &copy, &target))
                .await
                .map_err(|error| BlobError::storage(io::Error::other(error)))?
                .map_err(BlobError::storage)?;
        let identity = identity(&metadata);
        let record = Record {
            properties: manifest.properties.clone(),
            md5: Some(manifest.md5),
            etag: Some(manifest.etag.clone()),
        };
        let guard = self.lock_path(&path).await?;
        if self.version_at(&path).await != Some(version) {
            return Ok(());
        }
        self.records
            .store(&path, &identity, &record, self.temp_path())
            .await?;
        if let Err(error) = fs::rename(&temp.path, self.blob_file(&path)).await {
            let _ = self.records.remove(&path, &identity).await;
            return Err(BlobError::storage(error));
        }
        temp.disarm();
        self.prune_records(&path, Some(&identity)).await;
        drop(guard);
        // Reads that began on the extents go on in the compacted file.
        if let Err(error) = fs::remove_dir_all(&dir).await {
            tracing::warn!(%version, %error, "cannot remove a compacted blob version");
        }
        Ok(())
    }
}

/// Runs compactions as they fall due, one at a time, for as long as the store is in use.
pub(super) async fn compact_when_due(
    shared: Weak<Shared>,
    root: PathBuf,
    mut queue: mpsc::UnboundedReceiver<Compaction>,
) {
    while let Some(job) = queue.recv().await {
        tokio::time::sleep_until(job.due).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let store = LocalBlobStore {
            records: Records::new(root.clone()),
            root: root.clone(),
            shared,
        };
        if let Err(error) = store.compact(job.version).await {
            tracing::warn!(version = %job.version, error = %error, "cannot compact a blob");
        }
    }
}
