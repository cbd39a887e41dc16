//! The default backend: blobs as files in a folder (`data_dir/blobs`).
//!
//! Layout under the root:
//! - `<container>/<name segments>`: a blob, as a plain file, or as a symbolic link to the
//!   version folder of a block commit not yet compacted (see `extents.rs`);
//! - `.tmp/<uuid>`: writes in progress;
//! - `.blocks/<sha256 of path>/<sha256 of block id>`: staged blocks;
//! - `.extents/<uuid>/`: committed versions (`extents.rs`);
//! - `.records/<sha256 of path>/<identity>`: properties and MD5 of plain-file blobs
//!   (`records.rs`).
//!
//! Container names cannot start with a dot, so these folders never collide with blobs, and
//! hashed names keep client input out of their paths.
//!
//! A write streams into a file under `.tmp`, is synced, and only then renamed (or, for
//! create-only writes, hard-linked, which fails atomically if the blob exists) into place, so
//! readers never see a partial blob and a failed write leaves nothing. `.tmp` lives under the
//! same root so the rename never crosses file systems. A blob's record is written before its
//! file is published and names that very file, so the properties and MD5 a reader gets always
//! belong to the bytes it reads. A block commit copies nothing: it publishes the blocks as
//! extents and compacts them later, in the background.
//!
//! Publishing, compaction and pruning of a path are serialized by a lock in memory and a file
//! lock (`flock`, striped by path), so replicas may share one folder on a file system with
//! locks (local, or NFSv4). The folder needs symbolic links, as every Unix file system has.

mod chain;
mod extents;
mod records;

use std::collections::HashMap;
use std::io::{self, ErrorKind, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::{FutureExt, StreamExt};
use tokio::fs::{self, File};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;
use tokio_util::io::ReaderStream;

use crate::blob::blocks::BlockId;
use crate::blob::path::BlobPath;
use crate::blob::range::RangeSpec;
use crate::blob::store::{
    BlobError, BlobMeta, BlobRead, BlobStore, ByteStream, Hashing, StagedBlock, Tally,
    WriteOptions, Written, hashed_name, tally_file, within_limit,
};
use chain::{Chains, inode_of};
use extents::{EXTENTS_DIR, Extent, MANIFEST, Manifest};
use records::{RECORDS_DIR, Record, Records, identity};

/// Folder of writes in progress.
const TMP_DIR: &str = ".tmp";
/// Folder of staged blocks.
const BLOCKS_DIR: &str = ".blocks";
/// Folder of the lock files serializing the publishing of paths across processes.
const LOCKS_DIR: &str = ".locks";
/// Buffer between the network and the disk, and chunk size of reads.
const IO_BUFFER_BYTES: usize = 256 * 1024;
/// How long after a commit its extents are compacted, by default.
#[cfg(test)]
const COMPACTION_DELAY: Duration =
    Duration::from_secs(crate::limits::BLOB_COMPACTION_DELAY_SECONDS);
/// How long a version folder outlives its blob's next version, so that reads which started on
/// it end whole.
const RETIRED_VERSION_KEPT: Duration = Duration::from_secs(3600);
/// Locks serializing the publishing of paths, by hash.
const LOCK_STRIPES: usize = 64;
/// A read retries this often when the blob changes form under it (compacted, replaced).
const OPEN_TRIES: usize = 4;

/// Blobs in a local folder.
#[derive(Debug, Clone)]
pub(crate) struct LocalBlobStore {
    root: PathBuf,
    records: Records,
    shared: Arc<Shared>,
}

/// What the clones of a store share.
#[derive(Debug)]
struct Shared {
    locks: Vec<tokio::sync::Mutex<()>>,
    chains: Chains,
    compactions: mpsc::UnboundedSender<Compaction>,
    compaction_delay: Duration,
}

/// Held while a path is published, compacted or removed; released when dropped (closing the
/// lock file releases its `flock`).
struct PathLock<'a> {
    _local: tokio::sync::MutexGuard<'a, ()>,
    _shared: std::fs::File,
}

/// A version to compact, once due.
#[derive(Debug)]
struct Compaction {
    version: uuid::Uuid,
    due: tokio::time::Instant,
}

/// A temporary file under `.tmp`, or a version folder being built, removed when dropped
/// unless it was published. Removing on drop also covers a handler future dropped midway
/// (client gone, shutdown).
struct Unpublished {
    path: PathBuf,
    folder: bool,
    armed: bool,
}

impl Unpublished {
    fn file(path: PathBuf) -> Self {
        Self {
            path,
            folder: false,
            armed: true,
        }
    }

    fn folder(path: PathBuf) -> Self {
        Self {
            path,
            folder: true,
            armed: true,
        }
    }

    /// Keeps the file or folder: it was published, or it is not ours to remove.
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Unpublished {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let _ = if self.folder {
            std::fs::remove_dir_all(&self.path)
        } else {
            std::fs::remove_file(&self.path)
        };
    }
}

/// What a blob path holds, opened.
enum Stored {
    /// A plain file.
    File {
        file: File,
        metadata: std::fs::Metadata,
    },
    /// A committed version kept as extents.
    Extents { dir: PathBuf, manifest: Manifest },
}

impl LocalBlobStore {
    /// A store rooted at `root`, created if missing, compacting with the default delay.
    #[cfg(test)]
    pub(crate) async fn open(root: impl Into<PathBuf>) -> io::Result<Self> {
        Self::open_with(root, COMPACTION_DELAY).await
    }

    /// A store that compacts a commit `compaction_delay` after it.
    pub(crate) async fn open_with(
        root: impl Into<PathBuf>,
        compaction_delay: Duration,
    ) -> io::Result<Self> {
        let root = root.into();
        for folder in [TMP_DIR, BLOCKS_DIR, EXTENTS_DIR, RECORDS_DIR, LOCKS_DIR] {
            fs::create_dir_all(root.join(folder)).await?;
        }
        let (compactions, queue) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            locks: (0..LOCK_STRIPES)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
            chains: Chains::default(),
            compactions,
            compaction_delay,
        });
        tokio::spawn(compact_when_due(
            Arc::downgrade(&shared),
            root.clone(),
            queue,
        ));
        Ok(Self {
            records: Records::new(root.clone()),
            root,
            shared,
        })
    }

    /// Removes writes in progress and staged blocks older than `age` (leftovers of crashed
    /// processes and of uploads never committed: Azure forgets uncommitted blocks after a
    /// week), and version folders no blob names any more, an hour (at most `age`) after they
    /// were replaced. Queues the compaction of versions still in use, which a restart
    /// interrupted. Returns how many entries were removed.
    pub(crate) async fn sweep(&self, age: Duration) -> io::Result<usize> {
        let now = SystemTime::now();
        let cutoff = now.checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH);
        let mut removed = 0usize;
        for folder in [TMP_DIR, BLOCKS_DIR] {
            let mut entries = fs::read_dir(self.root.join(folder)).await?;
            while let Some(entry) = entries.next_entry().await? {
                let metadata = entry.metadata().await?;
                if metadata.modified().unwrap_or(now) >= cutoff {
                    continue;
                }
                let result = if metadata.is_dir() {
                    fs::remove_dir_all(entry.path()).await
                } else {
                    fs::remove_file(entry.path()).await
                };
                if result.is_ok() {
                    removed = removed.saturating_add(1);
                }
            }
        }
        self.shared.chains.forget_older(age);
        let retired_cutoff = now
            .checked_sub(age.min(RETIRED_VERSION_KEPT))
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let mut versions = fs::read_dir(self.root.join(EXTENTS_DIR)).await?;
        while let Some(entry) = versions.next_entry().await? {
            let Some(version) = entry
                .file_name()
                .to_str()
                .and_then(|name| uuid::Uuid::parse_str(name).ok())
            else {
                continue;
            };
            if let Ok(manifest) = extents::load_manifest(&entry.path()).await
                && let Some(path) = manifest.path()
                && self.version_at(&path).await == Some(version)
            {
                self.queue_compaction(version, Duration::ZERO);
                continue;
            }
            let metadata = entry.metadata().await?;
            if metadata.modified().unwrap_or(now) < retired_cutoff
                && fs::remove_dir_all(entry.path()).await.is_ok()
            {
                removed = removed.saturating_add(1);
            }
        }
        Ok(removed)
    }

    fn blob_file(&self, path: &BlobPath) -> PathBuf {
        let mut file = self.root.join(path.container());
        for segment in path.segments() {
            file.push(segment);
        }
        file
    }

    fn blocks_dir(&self, path: &BlobPath) -> PathBuf {
        self.root.join(BLOCKS_DIR).join(hashed_name(&path.key()))
    }

    fn block_file(&self, path: &BlobPath, block: &BlockId) -> PathBuf {
        self.blocks_dir(path).join(hashed_name(block.as_str()))
    }

    fn temp_path(&self) -> PathBuf {
        self.root
            .join(TMP_DIR)
            .join(uuid::Uuid::new_v4().to_string())
    }

    /// Takes the lock serializing what publishes, compacts or removes `path`: a lock in
    /// memory for this process's tasks, then a file lock (`flock`) for other processes on a
    /// shared folder. Both are striped by a hash of the path.
    async fn lock_path(&self, path: &BlobPath) -> Result<PathLock<'_>, BlobError> {
        let hash = hashed_name(&path.key());
        let index = hash
            .get(..4)
            .and_then(|prefix| usize::from_str_radix(prefix, 16).ok())
            .unwrap_or(0)
            % LOCK_STRIPES;
        let stripe = self
            .shared
            .locks
            .get(index)
            .ok_or_else(|| BlobError::storage(io::Error::other("no lock stripe")))?;
        let local = stripe.lock().await;
        let file = self.root.join(LOCKS_DIR).join(format!("{index:02x}"));
        let shared = crate::file_lock::lock_exclusive(file)
            .await
            .map_err(BlobError::storage)?;
        Ok(PathLock {
            _local: local,
            _shared: shared,
        })
    }

    /// The version the blob at `path` is, when it is kept as extents.
    async fn version_at(&self, path: &BlobPath) -> Option<uuid::Uuid> {
        let link = fs::read_link(self.blob_file(path)).await.ok()?;
        extents::version_of_link(&link)
    }

    /// Marks a replaced version's folder as replaced now; the sweep removes it an hour later.
    async fn retire(&self, version: Option<uuid::Uuid>) {
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

    fn queue_compaction(&self, version: uuid::Uuid, delay: Duration) {
        let now = tokio::time::Instant::now();
        let due = now.checked_add(delay).unwrap_or(now);
        let _ = self.shared.compactions.send(Compaction { version, due });
    }

    /// What `path` holds now, opened. A blob that changes form while it is looked at (a file
    /// replaced by a commit's link, a link by its compacted file) is looked at again.
    async fn open_stored(&self, path: &BlobPath) -> Result<Stored, BlobError> {
        let target = self.blob_file(path);
        for _ in 0..OPEN_TRIES {
            let metadata = fs::symlink_metadata(&target)
                .await
                .map_err(|error| not_found_or_storage(error, path))?;
            if metadata.is_symlink() {
                let Ok(link) = fs::read_link(&target).await else {
                    continue;
                };
                let version =
                    extents::version_of_link(&link).ok_or(BlobError::NotFound(path.key()))?;
                let dir = extents::version_dir(&self.root, version);
                match extents::load_manifest(&dir).await {
                    Ok(manifest) => return Ok(Stored::Extents { dir, manifest }),
                    Err(error) if error.kind() == ErrorKind::NotFound => {}
                    Err(error) => return Err(BlobError::storage(error)),
                }
            } else if metadata.is_file() {
                match File::open(&target).await {
                    Ok(file) => {
                        let metadata = file.metadata().await.map_err(BlobError::storage)?;
                        if metadata.is_file() {
                            return Ok(Stored::File { file, metadata });
                        }
                    }
                    // A link that replaced the file resolves nowhere: look again.
                    Err(error)
                        if matches!(
                            error.kind(),
                            ErrorKind::NotFound | ErrorKind::NotADirectory
                        ) => {}
                    Err(error) => return Err(BlobError::storage(error)),
                }
            } else {
                break;
            }
        }
        Err(BlobError::NotFound(path.key()))
    }

    /// Where a read of the extents of version `etag` goes once compaction removed them: the
    /// blob's file, if it is that version.
    fn compacted_reader(&self, path: &BlobPath, etag: String) -> extents::Compacted {
        let store = self.clone();
        let path = path.clone();
        Arc::new(move |offset| {
            let (store, path, etag) = (store.clone(), path.clone(), etag.clone());
            async move {
                let mut file = File::open(store.blob_file(&path)).await?;
                let metadata = file.metadata().await?;
                let record = store.records.load(&path, &identity(&metadata)).await;
                if !metadata.is_file() || record.etag.as_deref() != Some(etag.as_str()) {
                    return Err(io::Error::new(
                        ErrorKind::NotFound,
                        "the blob was replaced during the read",
                    ));
                }
                file.seek(SeekFrom::Start(offset)).await?;
                Ok(file)
            }
            .boxed()
        })
    }

    /// What readers are told about a plain-file blob.
    async fn file_meta(&self, path: &BlobPath, metadata: &std::fs::Metadata) -> BlobMeta {
        let identity = identity(metadata);
        let record = self.records.load(path, &identity).await;
        meta_of(metadata, &identity, record)
    }

    async fn temp_file(&self) -> Result<(Unpublished, BufWriter<File>), BlobError> {
        let path = self.temp_path();
        let file = File::create_new(&path).await.map_err(BlobError::storage)?;
        let temp = Unpublished::file(path);
        Ok((temp, BufWriter::with_capacity(IO_BUFFER_BYTES, file)))
    }

    /// Streams `body` into a new temporary file, counting it, and hashing it when `hash` or
    /// when the client announced an MD5 to check.
    async fn write_temp(
        &self,
        mut body: ByteStream,
        options: &WriteOptions,
        hash: bool,
    ) -> Result<(Unpublished, std::fs::Metadata, u64, Option<[u8; 16]>), BlobError> {
        let (temp, mut writer) = self.temp_file().await?;
        // Counted here, hashed on another thread while the bytes go to disk.
        let mut tally = Tally::checking(options.size_max, None);
        let hashing = (hash || options.expected_md5.is_some()).then(Hashing::start);
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(BlobError::Body)?;
            tally.add(&chunk)?;
            if let Some(hashing) = &hashing {
                hashing.feed(chunk.clone()).await?;
            }
            writer.write_all(&chunk).await.map_err(BlobError::storage)?;
        }
        let (size, _) = tally.finish_checked(None)?;
        let md5 = match hashing {
            Some(hashing) => Some(hashing.finish().await?),
            None => None,
        };
        if options.expected_md5.is_some() && md5 != options.expected_md5 {
            return Err(BlobError::Md5Mismatch);
        }
        let metadata = finish_file(writer).await?;
        Ok((temp, metadata, size, md5))
    }

    /// Publishes a finished temporary file (described by `metadata`) as the blob at `path`,
    /// with its record.
    async fn publish_file(
        &self,
        temp: Unpublished,
        metadata: &std::fs::Metadata,
        path: &BlobPath,
        create_only: bool,
        record: &Record,
    ) -> Result<(), BlobError> {
        let identity = identity(metadata);
        let guard = self.lock_path(path).await?;
        let replaced = self.version_at(path).await;
        self.records
            .store(path, &identity, record, self.temp_path())
            .await?;
        if let Err(error) = self.publish(temp, path, create_only).await {
            let _ = self.records.remove(path, &identity).await;
            return Err(error);
        }
        self.prune_records(path, Some(&identity)).await;
        drop(guard);
        self.retire(replaced).await;
        Ok(())
    }

    /// Removes the records of versions `path` no longer holds. A failure leaves a stale record
    /// behind, which no reader takes (it names another file), so it does not fail the write.
    async fn prune_records(&self, path: &BlobPath, keep: Option<&str>) {
        if let Err(error) = self.records.prune(path, keep).await {
            tracing::warn!(%path, %error, "cannot remove stale blob records");
        }
    }

    /// Moves a finished temporary file to `path`.
    async fn publish(
        &self,
        temp: Unpublished,
        path: &BlobPath,
        create_only: bool,
    ) -> Result<(), BlobError> {
        let target = self.blob_file(path);
        self.make_parent(path, &target).await?;
        if create_only {
            fs::hard_link(&temp.path, &target)
                .await
                .map_err(|error| match error.kind() {
                    ErrorKind::AlreadyExists => BlobError::AlreadyExists(path.key()),
                    _ => conflict_or_storage(error, path),
                })?;
            // The link is the blob now; the temporary name goes with the guard.
            drop(temp);
        } else {
            fs::rename(&temp.path, &target)
                .await
                .map_err(|error| conflict_or_storage(error, path))?;
            temp.disarm();
        }
        Ok(())
    }

    async fn make_parent(&self, path: &BlobPath, target: &Path) -> Result<(), BlobError> {
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)
                .await
                .map_err(|error| conflict_or_storage(error, path))?;
        }
        Ok(())
    }

    /// Publishes `file` as the blob at `path` by a hard link, synced, and with its MD5 read
    /// meanwhile when `hash`. `None` when it cannot be linked (another disk, or a symbolic
    /// link, which would itself be linked): the caller copies it.
    async fn link_file(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: &WriteOptions,
        hash: bool,
    ) -> Result<Option<(BlobMeta, Option<[u8; 16]>)>, BlobError> {
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        let regular = fs::symlink_metadata(file)
            .await
            .map_err(BlobError::storage)?
            .is_file();
        let temp = Unpublished::file(self.temp_path());
        if !regular || fs::hard_link(file, &temp.path).await.is_err() {
            temp.disarm();
            return Ok(None);
        }
        let hashing = async {
            if !hash {
                return Ok(None);
            }
            let linked = temp.path.clone();
            let size_max = options.size_max;
            let expected_md5 = options.expected_md5;
            let hashed =
                tokio::task::spawn_blocking(move || tally_file(&linked, size_max, expected_md5))
                    .await
                    .map_err(|error| BlobError::storage(io::Error::other(error)))?;
            hashed.map(|(_, md5)| Some(md5))
        };
        let syncing = async {
            let file = File::open(&temp.path).await.map_err(BlobError::storage)?;
            file.sync_all().await.map_err(BlobError::storage)?;
            file.metadata().await.map_err(BlobError::storage)
        };
        let (md5, metadata) = tokio::join!(hashing, syncing);
        let (md5, metadata) = (md5?, metadata?);
        within_limit(metadata.len(), options.size_max)?;
        let record = Record {
            properties: options.properties.clone(),
            md5,
            etag: None,
        };
        self.publish_file(temp, &metadata, path, options.create_only, &record)
            .await?;
        Ok(Some((
            meta_of(&metadata, &identity(&metadata), record),
            md5,
        )))
    }

    /// Writes the blob at `path` from a copy of `file`, for a file that cannot be linked.
    async fn copy_file(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        let file = File::open(file).await.map_err(BlobError::storage)?;
        let body = ReaderStream::with_capacity(file, IO_BUFFER_BYTES).boxed();
        self.put(path, body, options).await
    }

    async fn fail_if_exists(&self, path: &BlobPath) -> Result<(), BlobError> {
        match fs::symlink_metadata(self.blob_file(path)).await {
            Ok(metadata) if metadata.is_file() || metadata.is_symlink() => {
                Err(BlobError::AlreadyExists(path.key()))
            }
            _ => Ok(()),
        }
    }

    /// Links the blocks of a commit into the new version folder `dir` (each block once, in
    /// order of first use): the extents, and for each entry of the list its segment file and
    /// the block id with the inode committed.
    async fn link_blocks(
        &self,
        path: &BlobPath,
        blocks: &[BlockId],
        dir: &Path,
    ) -> Result<(Vec<Extent>, Vec<PathBuf>, Vec<(BlockId, u64)>), BlobError> {
        let mut segments: HashMap<&BlockId, (u32, u64, u64)> = HashMap::new();
        let mut extents = Vec::with_capacity(blocks.len());
        let mut files = Vec::with_capacity(blocks.len());
        let mut committed = Vec::with_capacity(blocks.len());
        for block in blocks {
            let (segment, length, inode) = match segments.get(block) {
                Some(&known) => known,
                None => {
                    let segment = u32::try_from(segments.len()).map_err(BlobError::storage)?;
                    let file = dir.join(segment.to_string());
                    fs::hard_link(self.block_file(path, block), &file)
                        .await
                        .map_err(|error| match error.kind() {
                            ErrorKind::NotFound => {
                                BlobError::BlockNotFound(block.as_str().to_owned())
                            }
                            _ => BlobError::storage(error),
                        })?;
                    let metadata = fs::metadata(&file).await.map_err(BlobError::storage)?;
                    let known = (segment, metadata.len(), inode_of(&metadata));
                    segments.insert(block, known);
                    known
                }
            };
            extents.push(Extent { segment, length });
            files.push(dir.join(segment.to_string()));
            committed.push((block.clone(), inode));
        }
        Ok((extents, files, committed))
    }

    /// Makes the version in `dir` (complete and synced) the blob at `path`: a symbolic link
    /// naming it, renamed into place (created in place for a create-only commit, which fails
    /// atomically if the blob exists).
    async fn publish_version(
        &self,
        path: &BlobPath,
        version: uuid::Uuid,
        create_only: bool,
    ) -> Result<(), BlobError> {
        let target = self.blob_file(path);
        let text = extents::link_text(version);
        let guard = self.lock_path(path).await?;
        let replaced = self.version_at(path).await;
        self.make_parent(path, &target).await?;
        if create_only {
            make_link(&text, &target)
                .await
                .map_err(|error| match error.kind() {
                    ErrorKind::AlreadyExists => BlobError::AlreadyExists(path.key()),
                    _ => conflict_or_storage(error, path),
                })?;
        } else {
            let link = self.temp_path();
            make_link(&text, &link).await.map_err(BlobError::storage)?;
            if let Err(error) = fs::rename(&link, &target).await {
                let _ = fs::remove_file(&link).await;
                return Err(conflict_or_storage(error, path));
            }
        }
        // Extents carry their own record.
        self.prune_records(path, None).await;
        drop(guard);
        self.retire(replaced).await;
        Ok(())
    }

    /// Copies the extents of `version` into one file that replaces the blob's link, if the
    /// blob still is that version. The file keeps the version's ETag, time, MD5 and
    /// properties.
    async fn compact(&self, version: uuid::Uuid) -> Result<(), BlobError> {
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
async fn compact_when_due(
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

#[cfg(unix)]
async fn make_link(text: &str, at: &Path) -> io::Result<()> {
    fs::symlink(text, at).await
}

#[cfg(not(unix))]
async fn make_link(_text: &str, _at: &Path) -> io::Result<()> {
    Err(io::Error::new(
        ErrorKind::Unsupported,
        "the folder backend needs symbolic links",
    ))
}

#[async_trait]
impl BlobStore for LocalBlobStore {
    async fn put(
        &self,
        path: &BlobPath,
        body: ByteStream,
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        let (temp, metadata, _, md5) = self.write_temp(body, &options, true).await?;
        let md5 = md5.unwrap_or_default();
        let record = Record {
            properties: options.properties.clone(),
            md5: Some(md5),
            etag: None,
        };
        self.publish_file(temp, &metadata, path, options.create_only, &record)
            .await?;
        Ok(Written {
            meta: meta_of(&metadata, &identity(&metadata), record),
            md5,
        })
    }

    /// Links `file` into place instead of copying it: the checksum is read from it while its
    /// bytes are made durable, both at once. A file on another disk is copied.
    async fn put_file(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        if let Some((meta, Some(md5))) = self.link_file(path, file, &options, true).await? {
            return Ok(Written { meta, md5 });
        }
        self.copy_file(path, file, options).await
    }

    async fn put_file_unhashed(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: WriteOptions,
    ) -> Result<BlobMeta, BlobError> {
        if let Some((meta, _)) = self.link_file(path, file, &options, false).await? {
            return Ok(meta);
        }
        Ok(self.copy_file(path, file, options).await?.meta)
    }

    async fn get(&self, path: &BlobPath, range: Option<RangeSpec>) -> Result<BlobRead, BlobError> {
        let (meta, stored) = match self.open_stored(path).await? {
            Stored::File { file, metadata } => (self.file_meta(path, &metadata).await, Ok(file)),
            Stored::Extents { dir, manifest } => {
                let compacted = self.compacted_reader(path, manifest.etag.clone());
                (manifest.meta(), Err((dir, manifest.extents, compacted)))
            }
        };
        let selected = match range {
            None => None,
            Some(spec) => Some(
                spec.resolve(meta.size)
                    .ok_or(BlobError::RangeNotSatisfiable { size: meta.size })?,
            ),
        };
        let bytes = selected.clone().unwrap_or(0..meta.size);
        let body = match stored {
            Ok(mut file) => {
                file.seek(SeekFrom::Start(bytes.start))
                    .await
                    .map_err(BlobError::storage)?;
                let length = bytes.end.saturating_sub(bytes.start);
                ReaderStream::with_capacity(file.take(length), IO_BUFFER_BYTES).boxed()
            }
            Err((dir, extents, compacted)) => extents::read(&dir, &extents, bytes, compacted),
        };
        Ok(BlobRead {
            meta,
            range: selected,
            body,
        })
    }

    /// Only a blob that is one file: extents not yet compacted are read through
    /// [`BlobStore::get`].
    fn local_file(&self, path: &BlobPath) -> Option<PathBuf> {
        let file = self.blob_file(path);
        std::fs::symlink_metadata(&file)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|_| file)
    }

    /// Compacts a blob still kept as extents before answering its file.
    async fn local_file_now(&self, path: &BlobPath) -> Option<PathBuf> {
        if let Some(version) = self.version_at(path).await
            && let Err(error) = self.compact(version).await
        {
            tracing::warn!(%path, %error, "cannot compact a blob for a reader");
        }
        self.local_file(path)
    }

    async fn head(&self, path: &BlobPath) -> Result<BlobMeta, BlobError> {
        match self.open_stored(path).await? {
            Stored::File { metadata, .. } => Ok(self.file_meta(path, &metadata).await),
            Stored::Extents { manifest, .. } => Ok(manifest.meta()),
        }
    }

    async fn delete(&self, path: &BlobPath) -> Result<(), BlobError> {
        let target = self.blob_file(path);
        let guard = self.lock_path(path).await?;
        let metadata = fs::symlink_metadata(&target)
            .await
            .map_err(|error| not_found_or_storage(error, path))?;
        if metadata.is_dir() {
            return Err(BlobError::NotFound(path.key()));
        }
        let replaced = self.version_at(path).await;
        fs::remove_file(&target)
            .await
            .map_err(|error| not_found_or_storage(error, path))?;
        self.prune_records(path, None).await;
        drop(guard);
        self.retire(replaced).await;
        Ok(())
    }

    async fn delete_prefix(&self, prefix: &BlobPath) -> Result<u64, BlobError> {
        let top = self.blob_file(prefix);
        let metadata = match fs::symlink_metadata(&top).await {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(0),
            Err(error) => return Err(BlobError::storage(error)),
        };
        if !metadata.is_dir() {
            self.delete(prefix).await?;
            return Ok(1);
        }
        // Depth first, with an explicit stack: the folder is ours (a blob name's segments),
        // bounded by the blob name limits, and never follows links out of the root.
        let mut removed = 0_u64;
        let mut folders = vec![(top.clone(), prefix.name().to_owned())];
        let mut emptied = Vec::new();
        while let Some((folder, name)) = folders.pop() {
            let mut entries = match fs::read_dir(&folder).await {
                Ok(entries) => entries,
                Err(error) if error.kind() == ErrorKind::NotFound => continue,
                Err(error) => return Err(BlobError::storage(error)),
            };
            while let Some(entry) = entries.next_entry().await.map_err(BlobError::storage)? {
                let Some(segment) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let child = format!("{name}/{segment}");
                let kind = entry.file_type().await.map_err(BlobError::storage)?;
                if kind.is_dir() {
                    folders.push((entry.path(), child));
                    continue;
                }
                let Ok(path) = BlobPath::parse(prefix.container(), &child) else {
                    continue;
                };
                match self.delete(&path).await {
                    Ok(()) => removed = removed.saturating_add(1),
                    Err(BlobError::NotFound(_)) => {}
                    Err(error) => return Err(error),
                }
            }
            emptied.push(folder);
        }
        // Deepest folders were pushed last; a folder a concurrent write refilled stays.
        for folder in emptied.iter().rev() {
            let _ = fs::remove_dir(folder).await;
        }
        Ok(removed)
    }

    async fn stage_block(
        &self,
        path: &BlobPath,
        block: &BlockId,
        body: ByteStream,
        options: WriteOptions,
    ) -> Result<StagedBlock, BlobError> {
        let place = self
            .shared
            .chains
            .begin(&hashed_name(&path.key()), block)
            .await;
        let (temp, _, size, md5) = self.write_temp(body, &options, false).await?;
        fs::create_dir_all(self.blocks_dir(path))
            .await
            .map_err(BlobError::storage)?;
        let file = self.block_file(path, block);
        fs::rename(&temp.path, &file)
            .await
            .map_err(BlobError::storage)?;
        temp.disarm();
        if let Some(place) = place {
            place.stored(&file).await;
        }
        Ok(StagedBlock { size, md5 })
    }

    async fn sweep(&self, age: Duration) -> Result<usize, BlobError> {
        LocalBlobStore::sweep(self, age)
            .await
            .map_err(BlobError::storage)
    }

    /// Publishes the blocks as extents of a new version: no byte is copied. The whole blob's
    /// MD5 comes from the upload's chain when the list is the order the blocks were staged
    /// in, and from one read of the blocks otherwise.
    async fn commit_blocks(
        &self,
        path: &BlobPath,
        blocks: &[BlockId],
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        // Check every block and the total before linking anything.
        let mut total = 0u64;
        for block in blocks {
            let metadata = fs::metadata(self.block_file(path, block))
                .await
                .map_err(|_| BlobError::BlockNotFound(block.as_str().to_owned()))?;
            total = total.saturating_add(metadata.len());
        }
        within_limit(total, options.size_max)?;
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        let version = uuid::Uuid::new_v4();
        let dir = extents::version_dir(&self.root, version);
        fs::create_dir_all(&dir).await.map_err(BlobError::storage)?;
        let unpublished = Unpublished::folder(dir.clone());
        let (extents, files, committed) = self.link_blocks(path, blocks, &dir).await?;
        let size = extents
            .iter()
            .fold(0u64, |size, extent| size.saturating_add(extent.length));
        // A block staged again since the check may have grown.
        within_limit(size, options.size_max)?;
        let upload = hashed_name(&path.key());
        let chained = self
            .shared
            .chains
            .take_if_exactly(&upload, &committed)
            .await;
        tracing::debug!(
            blocks = blocks.len(),
            size,
            md5_from_chain = chained.is_some(),
            "committing blocks"
        );
        let md5 = match chained {
            Some(md5) => md5,
            None => tokio::task::spawn_blocking(move || extents::hash_files(&files))
                .await
                .map_err(|error| BlobError::storage(io::Error::other(error)))??,
        };
        let manifest = Manifest {
            container: path.container().to_owned(),
            name: path.name().to_owned(),
            size,
            md5,
            etag: extents::etag_of(version),
            modified: Utc::now(),
            properties: options.properties.clone(),
            extents,
        };
        write_manifest(&dir, &manifest).await?;
        self.publish_version(path, version, options.create_only)
            .await?;
        unpublished.disarm();
        let _ = fs::remove_dir_all(self.blocks_dir(path)).await;
        self.shared.chains.forget(&upload);
        self.queue_compaction(version, self.shared.compaction_delay);
        Ok(Written {
            meta: manifest.meta(),
            md5,
        })
    }
}

/// Writes the manifest of a version and makes the folder durable: after this, publishing the
/// version is one rename.
async fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), BlobError> {
    let json = serde_json::to_vec(manifest).map_err(BlobError::storage)?;
    let mut file = File::create_new(dir.join(MANIFEST))
        .await
        .map_err(BlobError::storage)?;
    file.write_all(&json).await.map_err(BlobError::storage)?;
    file.sync_all().await.map_err(BlobError::storage)?;
    File::open(dir)
        .await
        .map_err(BlobError::storage)?
        .sync_all()
        .await
        .map_err(BlobError::storage)
}

/// Flushes and syncs a written file and returns its metadata.
async fn finish_file(mut writer: BufWriter<File>) -> Result<std::fs::Metadata, BlobError> {
    writer.flush().await.map_err(BlobError::storage)?;
    let file = writer.into_inner();
    file.sync_all().await.map_err(BlobError::storage)?;
    file.metadata().await.map_err(BlobError::storage)
}

/// What readers are told about a plain-file blob whose identity is `identity`.
fn meta_of(metadata: &std::fs::Metadata, identity: &str, record: Record) -> BlobMeta {
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let etag = record.etag.unwrap_or_else(|| {
        format!(
            "\"0x{}\"",
            identity.get(..16).unwrap_or(identity).to_ascii_uppercase()
        )
    });
    BlobMeta {
        size: metadata.len(),
        etag,
        last_modified: DateTime::<Utc>::from(modified),
        properties: record.properties,
        md5: record.md5,
    }
}

fn not_found_or_storage(error: io::Error, path: &BlobPath) -> BlobError {
    match error.kind() {
        ErrorKind::NotFound | ErrorKind::NotADirectory | ErrorKind::IsADirectory => {
            BlobError::NotFound(path.key())
        }
        _ => BlobError::storage(error),
    }
}

fn conflict_or_storage(error: io::Error, path: &BlobPath) -> BlobError {
    match error.kind() {
        ErrorKind::NotADirectory
        | ErrorKind::IsADirectory
        | ErrorKind::AlreadyExists
        | ErrorKind::DirectoryNotEmpty => BlobError::PathConflict(path.key()),
        _ => BlobError::storage(error),
    }
}

#[cfg(test)]
mod tests {
    use md5::{Digest, Md5};

    use super::*;
    use crate::blob::store::tests_support::*;

    /// A store that compacts only when told to (the delay outlasts every test).
    async fn store_without_compaction(root: &Path) -> LocalBlobStore {
        LocalBlobStore::open_with(root, Duration::from_secs(24 * 3600))
            .await
            .unwrap()
    }

    async fn stage(store: &LocalBlobStore, path: &BlobPath, parts: &[&[u8]]) -> Vec<BlockId> {
        let mut ids = Vec::new();
        for (n, part) in parts.iter().enumerate() {
            let id = BlockId::parse(&base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                format!("block-{n:04}"),
            ))
            .unwrap();
            store
                .stage_block(path, &id, body(part), options(1 << 30))
                .await
                .unwrap();
            ids.push(id);
        }
        ids
    }

    #[tokio::test]
    async fn the_local_backend_keeps_the_store_contract() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(&dir.path().join("blobs")).await;
        check_store_contract(&store).await;
        let leftovers = std::fs::read_dir(dir.path().join("blobs").join(TMP_DIR))
            .unwrap()
            .count();
        assert_eq!(leftovers, 0, "no temporary files remain");
    }

    #[tokio::test]
    async fn the_contract_holds_with_compaction_racing_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalBlobStore::open_with(dir.path(), Duration::ZERO)
            .await
            .unwrap();
        check_store_contract(&store).await;
    }

    #[tokio::test]
    async fn a_commit_links_the_staged_blocks_and_copies_no_byte() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/model.dfsu").unwrap();
        let parts: [&[u8]; 3] = [&[1; 1000], &[2; 1000], &[3; 10]];
        let ids = stage(&store, &path, &parts).await;
        let staged: Vec<u64> = ids
            .iter()
            .map(|id| inode_of(&std::fs::metadata(store.block_file(&path, id)).unwrap()))
            .collect();
        let written = store
            .commit_blocks(&path, &ids, options(1 << 30))
            .await
            .unwrap();
        let file = store.blob_file(&path);
        assert!(std::fs::symlink_metadata(&file).unwrap().is_symlink());
        assert!(
            std::fs::metadata(&file).is_err(),
            "the link resolves nowhere"
        );
        let version = store.version_at(&path).await.unwrap();
        let version_dir = extents::version_dir(dir.path(), version);
        let segments: Vec<u64> = (0..3)
            .map(|n| inode_of(&std::fs::metadata(version_dir.join(n.to_string())).unwrap()))
            .collect();
        assert_eq!(segments, staged, "the blob's extents are the staged files");
        assert!(
            store.local_file(&path).is_none(),
            "extents are not one file"
        );
        assert!(
            !store.blocks_dir(&path).exists(),
            "the commit forgets the blocks"
        );
        let expected = parts.concat();
        assert_eq!(read(&store, &path, None).await, expected);
        assert_eq!(written.md5, <[u8; 16]>::from(Md5::digest(&expected)));
        // A second commit replaces it; the first version stays until the sweep.
        let ids = stage(&store, &path, &[b"new"]).await;
        store.commit_blocks(&path, &ids, options(10)).await.unwrap();
        assert_eq!(read(&store, &path, None).await, b"new");
        assert!(
            version_dir.exists(),
            "a replaced version outlives reads begun on it"
        );
        assert_eq!(store.sweep(Duration::from_secs(3600)).await.unwrap(), 0);
        assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 1);
        assert!(!version_dir.exists());
        assert_eq!(read(&store, &path, None).await, b"new");
    }

    #[tokio::test]
    async fn compaction_makes_one_file_with_the_same_tag_time_md5_and_properties() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/result.dfs2").unwrap();
        let parts: [&[u8]; 3] = [&[7; 4096], b"middle", &[9; 5000]];
        let ids = stage(&store, &path, &parts).await;
        let with_labels = WriteOptions {
            properties: labelled(),
            ..options(1 << 30)
        };
        let written = store.commit_blocks(&path, &ids, with_labels).await.unwrap();
        let before = store.head(&path).await.unwrap();
        let version = store.version_at(&path).await.unwrap();
        store.compact(version).await.unwrap();
        let file = store.local_file(&path).expect("one file after compaction");
        assert_eq!(std::fs::read(&file).unwrap(), parts.concat());
        let after = store.head(&path).await.unwrap();
        assert_eq!(
            after, before,
            "tag, time, size, MD5 and properties are kept"
        );
        assert_eq!(after.md5, Some(written.md5));
        assert_eq!(after.properties, labelled());
        // The version folder went with the compaction; compacting again changes nothing.
        store.compact(version).await.unwrap();
        assert_eq!(store.head(&path).await.unwrap(), before);
        assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 0);
        assert_eq!(read(&store, &path, None).await, parts.concat());
        let records = std::fs::read_dir(dir.path().join(RECORDS_DIR))
            .unwrap()
            .count();
        assert_eq!(records, 1, "one record folder, for the one blob");
    }

    #[tokio::test]
    async fn a_reader_needing_one_file_has_the_extents_compacted_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/to-convert.tif").unwrap();
        let ids = stage(&store, &path, &[b"head", b"tail"]).await;
        let written = store.commit_blocks(&path, &ids, options(10)).await.unwrap();
        assert!(store.local_file(&path).is_none());
        let file = store.local_file_now(&path).await.expect("one file");
        assert_eq!(std::fs::read(file).unwrap(), b"headtail");
        assert_eq!(store.head(&path).await.unwrap(), written.meta);
        let missing = BlobPath::parse("uploads", "t/missing").unwrap();
        assert!(store.local_file_now(&missing).await.is_none());
    }

    #[tokio::test]
    async fn compaction_in_the_background_follows_the_delay() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalBlobStore::open_with(dir.path(), Duration::ZERO)
            .await
            .unwrap();
        let path = BlobPath::parse("uploads", "t/soon").unwrap();
        let ids = stage(&store, &path, &[b"one", b"two"]).await;
        let written = store.commit_blocks(&path, &ids, options(10)).await.unwrap();
        let mut waited = 0;
        while store.local_file(&path).is_none() {
            assert!(waited < 500, "compacted within 5 s");
            tokio::time::sleep(Duration::from_millis(10)).await;
            waited += 1;
        }
        assert_eq!(read(&store, &path, None).await, b"onetwo");
        assert_eq!(store.head(&path).await.unwrap(), written.meta);
    }

    #[tokio::test]
    async fn a_read_begun_on_extents_ends_whole_when_the_blob_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/busy").unwrap();
        let parts: Vec<Vec<u8>> = (0..4u8).map(|n| vec![n; 700 * 1024]).collect();
        let slices: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let ids = stage(&store, &path, &slices).await;
        store
            .commit_blocks(&path, &ids, options(1 << 30))
            .await
            .unwrap();
        let version = store.version_at(&path).await.unwrap();
        let read_all = |mut reading: ByteStream, mut got: Vec<u8>| async move {
            while let Some(chunk) = reading.next().await {
                got.extend_from_slice(&chunk.unwrap());
            }
            got
        };
        // Compacted while a read goes on: the read ends in the compacted file.
        let mut reading = store.get(&path, None).await.unwrap().body;
        let first = reading.next().await.unwrap().unwrap().to_vec();
        store.compact(version).await.unwrap();
        assert!(!extents::version_dir(dir.path(), version).exists());
        assert_eq!(read_all(reading, first).await, parts.concat());
        // Replaced by another commit, then deleted, while a read goes on: the replaced
        // version's folder outlives the read.
        let ids = stage(&store, &path, &slices).await;
        store
            .commit_blocks(&path, &ids, options(1 << 30))
            .await
            .unwrap();
        let mut reading = store.get(&path, None).await.unwrap().body;
        let first = reading.next().await.unwrap().unwrap().to_vec();
        store.put(&path, body(b"other"), options(10)).await.unwrap();
        store.delete(&path).await.unwrap();
        let week = Duration::from_secs(7 * 24 * 3600);
        assert_eq!(store.sweep(week).await.unwrap(), 0);
        assert_eq!(read_all(reading, first).await, parts.concat());
        // A read of a version compacted and then replaced fails rather than mix versions.
        let ids = stage(&store, &path, &slices).await;
        store
            .commit_blocks(&path, &ids, options(1 << 30))
            .await
            .unwrap();
        let version = store.version_at(&path).await.unwrap();
        let mut reading = store.get(&path, None).await.unwrap().body;
        let _ = reading.next().await.unwrap().unwrap();
        store.compact(version).await.unwrap();
        store.put(&path, body(b"other"), options(10)).await.unwrap();
        let mut failed = false;
        while let Some(chunk) = reading.next().await {
            if chunk.is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed, "no bytes of another version are served");
    }

    #[tokio::test]
    async fn a_record_names_its_file_so_an_older_one_is_never_taken() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/record").unwrap();
        let first = WriteOptions {
            properties: labelled(),
            ..options(10)
        };
        store.put(&path, body(b"first"), first).await.unwrap();
        let old_meta = store.head(&path).await.unwrap();
        // Another version appears in place without its record (as when a crash came between
        // the two): its readers get no MD5 and no properties, never the old ones.
        let file = store.blob_file(&path);
        let temp = dir.path().join(TMP_DIR).join("replacement");
        std::fs::write(&temp, b"second").unwrap();
        std::fs::rename(&temp, &file).unwrap();
        let meta = store.head(&path).await.unwrap();
        assert_ne!(meta.etag, old_meta.etag);
        assert_eq!(meta.md5, None);
        assert!(meta.properties.is_empty());
        store.put(&path, body(b"third"), options(10)).await.unwrap();
        let meta = store.head(&path).await.unwrap();
        assert_eq!(meta.md5, Some(<[u8; 16]>::from(Md5::digest(b"third"))));
        let records = std::fs::read_dir(store.records.dir_for_tests(&path))
            .unwrap()
            .count();
        assert_eq!(records, 1, "older records are pruned");
        store.delete(&path).await.unwrap();
        assert!(!store.records.dir_for_tests(&path).exists());
    }

    #[tokio::test]
    async fn properties_written_before_records_are_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/legacy").unwrap();
        let file = store.blob_file(&path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"bytes").unwrap();
        let legacy = dir
            .path()
            .join(records::LEGACY_PROPS_DIR)
            .join(hashed_name(&path.key()));
        std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
        std::fs::write(&legacy, serde_json::to_vec(&labelled()).unwrap()).unwrap();
        assert_eq!(store.head(&path).await.unwrap().properties, labelled());
        store.put(&path, body(b"new"), options(10)).await.unwrap();
        assert!(!legacy.exists(), "replaced with the blob");
    }

    #[tokio::test]
    async fn a_blob_cannot_be_a_folder_of_blobs_too() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let file = BlobPath::parse("uploads", "a/b").unwrap();
        let nested = BlobPath::parse("uploads", "a/b/c").unwrap();
        store.put(&file, body(b"x"), options(10)).await.unwrap();
        let error = store
            .put(&nested, body(b"y"), options(10))
            .await
            .unwrap_err();
        assert!(matches!(error, BlobError::PathConflict(_)), "{error:?}");
        assert!(matches!(
            store.head(&BlobPath::parse("uploads", "a").unwrap()).await,
            Err(BlobError::NotFound(_))
        ));
        // The same with a blob kept as extents.
        let linked = BlobPath::parse("uploads", "e/f").unwrap();
        let ids = stage(&store, &linked, &[b"z"]).await;
        store
            .commit_blocks(&linked, &ids, options(10))
            .await
            .unwrap();
        let below = BlobPath::parse("uploads", "e/f/g").unwrap();
        let ids = stage(&store, &below, &[b"w"]).await;
        let error = store
            .commit_blocks(&below, &ids, options(10))
            .await
            .unwrap_err();
        assert!(matches!(error, BlobError::PathConflict(_)), "{error:?}");
        assert_eq!(read(&store, &linked, None).await, b"z");
    }

    #[tokio::test]
    async fn sweeping_removes_only_old_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/u").unwrap();
        let block = BlockId::parse("YWJj").unwrap();
        store
            .stage_block(&path, &block, body(b"abc"), options(10))
            .await
            .unwrap();
        assert_eq!(store.sweep(Duration::from_secs(3600)).await.unwrap(), 0);
        assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 1);
        let error = store
            .commit_blocks(&path, &[block], options(10))
            .await
            .unwrap_err();
        assert!(matches!(error, BlobError::BlockNotFound(_)));
        // A version folder a crashed commit left unpublished goes too; a published one stays.
        let ids = stage(&store, &path, &[b"kept"]).await;
        store.commit_blocks(&path, &ids, options(10)).await.unwrap();
        std::fs::create_dir_all(extents::version_dir(dir.path(), uuid::Uuid::new_v4())).unwrap();
        assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 1);
        assert_eq!(read(&store, &path, None).await, b"kept");
    }

    #[tokio::test]
    async fn a_failed_commit_keeps_the_blocks_and_leaves_no_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_without_compaction(dir.path()).await;
        let path = BlobPath::parse("uploads", "t/once").unwrap();
        store.put(&path, body(b"there"), options(10)).await.unwrap();
        let ids = stage(&store, &path, &[b"a", b"b"]).await;
        let create_only = WriteOptions {
            create_only: true,
            ..options(10)
        };
        let error = store
            .commit_blocks(&path, &ids, create_only)
            .await
            .unwrap_err();
        assert!(matches!(error, BlobError::AlreadyExists(_)), "{error:?}");
        let versions = std::fs::read_dir(dir.path().join(EXTENTS_DIR))
            .unwrap()
            .count();
        assert_eq!(versions, 0);
        store.commit_blocks(&path, &ids, options(10)).await.unwrap();
        assert_eq!(read(&store, &path, None).await, b"ab");
    }
}
