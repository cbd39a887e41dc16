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
mod compaction;
mod extents;
mod publish;
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

use crate::blocks::BlockId;
use crate::path::BlobPath;
use crate::range::RangeSpec;
use crate::store::{
    BlobError, BlobMeta, BlobRead, BlobStore, ByteStream, Hashing, StagedBlock, Tally,
    WriteOptions, Written, hashed_name, tally_file, within_limit,
};
use chain::{Chains, inode_of};
use compaction::{Compaction, compact_when_due};
use extents::{EXTENTS_DIR, Extent, MANIFEST, Manifest};
use publish::{Unpublished, write_manifest};
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
pub struct LocalBlobStore {
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
    pub async fn open(root: impl Into<PathBuf>) -> io::Result<Self> {
        Self::open_with(root, COMPACTION_DELAY).await
    }

    /// A store that compacts a commit `compaction_delay` after it.
    pub async fn open_with(
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
    pub async fn sweep(&self, age: Duration) -> io::Result<usize> {
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

/// Whether `target`, just hard-linked to a [`BlobStore::local_file`], is a regular file. A
/// blob replaced by a block commit between the two calls is a symbolic link to its extents,
/// which a hard link copies as a link: such a `target` is removed, and the caller reads the
/// blob through [`BlobStore::get`] instead.
pub async fn linked_a_file(target: &Path) -> bool {
    match fs::symlink_metadata(target).await {
        Ok(metadata) if metadata.is_file() => true,
        _ => {
            let _ = fs::remove_file(target).await;
            false
        }
    }
}

#[cfg(test)]
mod tests;
