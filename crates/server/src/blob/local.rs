//! The default backend: blobs as files in a folder (`data_dir/blobs`).
//!
//! Layout under the root: `<container>/<name segments>` for blobs, `.tmp/<uuid>` for writes in
//! progress, `.blocks/<sha256 of path>/<sha256 of block id>` for staged blocks and
//! `.props/<sha256 of path>` for the properties a client stored with a blob (JSON; none when
//! it stored none). Container names cannot start with a dot, so these folders never collide
//! with blobs, and hashed names keep client input out of their paths.
//!
//! A write streams into a file under `.tmp`, is synced, and only then renamed (or, for
//! create-only writes, hard-linked, which fails atomically if the blob exists) into place, so
//! readers never see a partial blob and a failed write leaves nothing. `.tmp` lives under the
//! same root so the rename never crosses file systems. Properties are replaced right after the
//! blob, the same way; a reader in between sees the new bytes with the old properties.

use std::io::{self, ErrorKind, SeekFrom};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use tokio::fs::{self, File};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufWriter};
use tokio_util::io::ReaderStream;

use crate::blob::blocks::BlockId;
use crate::blob::path::BlobPath;
use crate::blob::range::RangeSpec;
use crate::blob::store::{
    BlobError, BlobMeta, BlobProperties, BlobRead, BlobStore, ByteStream, StagedBlock, Tally,
    WriteOptions, Written, hashed_name, tally_file,
};

/// Folder of writes in progress.
const TMP_DIR: &str = ".tmp";
/// Folder of staged blocks.
const BLOCKS_DIR: &str = ".blocks";
/// Folder of blob properties.
const PROPS_DIR: &str = ".props";
/// Buffer between the network and the disk, and chunk size of reads.
const IO_BUFFER_BYTES: usize = 256 * 1024;

/// Blobs in a local folder.
#[derive(Debug, Clone)]
pub(crate) struct LocalBlobStore {
    root: PathBuf,
}

/// A file under `.tmp` that is removed when dropped unless it was published. Removing on drop
/// also covers a handler future dropped midway (client gone, shutdown).
struct TempFile {
    path: PathBuf,
    armed: bool,
}

impl TempFile {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl LocalBlobStore {
    /// A store rooted at `root`, created if missing.
    pub(crate) async fn open(root: impl Into<PathBuf>) -> io::Result<Self> {
        let root = root.into();
        fs::create_dir_all(root.join(TMP_DIR)).await?;
        fs::create_dir_all(root.join(BLOCKS_DIR)).await?;
        fs::create_dir_all(root.join(PROPS_DIR)).await?;
        Ok(Self { root })
    }

    /// Removes writes in progress and staged blocks older than `age`: leftovers of crashed
    /// processes and of uploads never committed (Azure forgets uncommitted blocks after a
    /// week). Returns how many entries were removed.
    pub(crate) async fn sweep(&self, age: Duration) -> io::Result<usize> {
        let cutoff = SystemTime::now()
            .checked_sub(age)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let mut removed = 0usize;
        for folder in [TMP_DIR, BLOCKS_DIR] {
            let mut entries = fs::read_dir(self.root.join(folder)).await?;
            while let Some(entry) = entries.next_entry().await? {
                let metadata = entry.metadata().await?;
                if metadata.modified().unwrap_or(SystemTime::now()) >= cutoff {
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

    fn props_file(&self, path: &BlobPath) -> PathBuf {
        self.root.join(PROPS_DIR).join(hashed_name(&path.key()))
    }

    /// Replaces the properties of the blob at `path` (just published).
    async fn store_properties(
        &self,
        path: &BlobPath,
        properties: &BlobProperties,
    ) -> Result<(), BlobError> {
        let target = self.props_file(path);
        if properties.is_empty() {
            return match fs::remove_file(&target).await {
                Err(error) if error.kind() != ErrorKind::NotFound => Err(BlobError::storage(error)),
                _ => Ok(()),
            };
        }
        let json = serde_json::to_vec(properties).map_err(BlobError::storage)?;
        let (temp, mut writer) = self.temp_file().await?;
        writer.write_all(&json).await.map_err(BlobError::storage)?;
        finish_file(writer).await?;
        fs::rename(&temp.path, &target)
            .await
            .map_err(BlobError::storage)?;
        temp.disarm();
        Ok(())
    }

    /// The properties stored with the blob at `path`; none when there is no record, or when it
    /// cannot be read (the bytes matter more than their labels).
    async fn load_properties(&self, path: &BlobPath) -> BlobProperties {
        let file = self.props_file(path);
        match fs::read(&file).await {
            Ok(json) => serde_json::from_slice(&json).unwrap_or_else(|error| {
                tracing::warn!(file = %file.display(), %error, "unreadable blob properties");
                BlobProperties::default()
            }),
            Err(error) if error.kind() == ErrorKind::NotFound => BlobProperties::default(),
            Err(error) => {
                tracing::warn!(file = %file.display(), %error, "unreadable blob properties");
                BlobProperties::default()
            }
        }
    }

    async fn temp_file(&self) -> Result<(TempFile, BufWriter<File>), BlobError> {
        let path = self
            .root
            .join(TMP_DIR)
            .join(uuid::Uuid::new_v4().to_string());
        let file = File::create_new(&path).await.map_err(BlobError::storage)?;
        let temp = TempFile { path, armed: true };
        Ok((temp, BufWriter::with_capacity(IO_BUFFER_BYTES, file)))
    }

    /// Streams `body` into a new temporary file, counting and hashing it.
    async fn write_temp(
        &self,
        mut body: ByteStream,
        options: &WriteOptions,
    ) -> Result<(TempFile, std::fs::Metadata, u64, [u8; 16]), BlobError> {
        let (temp, mut writer) = self.temp_file().await?;
        let mut tally = Tally::new(options.size_max);
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(BlobError::Body)?;
            tally.add(&chunk)?;
            writer.write_all(&chunk).await.map_err(BlobError::storage)?;
        }
        let (size, md5) = tally.finish(options.expected_md5)?;
        let metadata = finish_file(writer).await?;
        Ok((temp, metadata, size, md5))
    }

    /// Makes a finished temporary file the blob at `path`.
    async fn publish(
        &self,
        temp: TempFile,
        path: &BlobPath,
        create_only: bool,
    ) -> Result<(), BlobError> {
        let target = self.blob_file(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)
                .await
                .map_err(|error| conflict_or_storage(error, path))?;
        }
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

    /// Publishes `file` as the blob at `path` by a hard link, synced, and with its MD5 read
    /// meanwhile when `hash`. `None` when it cannot be linked (another disk, or a symbolic
    /// link, which would itself be linked): the caller copies it.
    async fn link_file(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: &WriteOptions,
        hash: bool,
    ) -> Result<Option<(std::fs::Metadata, Option<[u8; 16]>)>, BlobError> {
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        let regular = fs::symlink_metadata(file)
            .await
            .map_err(BlobError::storage)?
            .is_file();
        let temp = TempFile {
            path: self
                .root
                .join(TMP_DIR)
                .join(uuid::Uuid::new_v4().to_string()),
            armed: true,
        };
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
        if metadata.len() > options.size_max {
            return Err(BlobError::TooLarge {
                limit_bytes: options.size_max,
            });
        }
        self.publish(temp, path, options.create_only).await?;
        self.store_properties(path, &options.properties).await?;
        Ok(Some((metadata, md5)))
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
        match fs::metadata(self.blob_file(path)).await {
            Ok(metadata) if metadata.is_file() => Err(BlobError::AlreadyExists(path.key())),
            _ => Ok(()),
        }
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
        let (temp, metadata, _, md5) = self.write_temp(body, &options).await?;
        self.publish(temp, path, options.create_only).await?;
        self.store_properties(path, &options.properties).await?;
        Ok(Written {
            meta: meta_of(&metadata, options.properties),
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
        if let Some((metadata, Some(md5))) = self.link_file(path, file, &options, true).await? {
            return Ok(Written {
                meta: meta_of(&metadata, options.properties),
                md5,
            });
        }
        self.copy_file(path, file, options).await
    }

    async fn put_file_unhashed(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: WriteOptions,
    ) -> Result<BlobMeta, BlobError> {
        if let Some((metadata, _)) = self.link_file(path, file, &options, false).await? {
            return Ok(meta_of(&metadata, options.properties));
        }
        Ok(self.copy_file(path, file, options).await?.meta)
    }

    async fn get(&self, path: &BlobPath, range: Option<RangeSpec>) -> Result<BlobRead, BlobError> {
        let mut file = match File::open(self.blob_file(path)).await {
            Ok(file) => file,
            Err(error) => return Err(not_found_or_storage(error, path)),
        };
        let metadata = file.metadata().await.map_err(BlobError::storage)?;
        if !metadata.is_file() {
            return Err(BlobError::NotFound(path.key()));
        }
        let meta = meta_of(&metadata, self.load_properties(path).await);
        let selected = match range {
            None => None,
            Some(spec) => Some(
                spec.resolve(meta.size)
                    .ok_or(BlobError::RangeNotSatisfiable { size: meta.size })?,
            ),
        };
        let (start, length) = match &selected {
            Some(range) => (range.start, range.end.saturating_sub(range.start)),
            None => (0, meta.size),
        };
        file.seek(SeekFrom::Start(start))
            .await
            .map_err(BlobError::storage)?;
        let body = ReaderStream::with_capacity(file.take(length), IO_BUFFER_BYTES).boxed();
        Ok(BlobRead {
            meta,
            range: selected,
            body,
        })
    }

    fn local_file(&self, path: &BlobPath) -> Option<PathBuf> {
        Some(self.blob_file(path))
    }

    async fn head(&self, path: &BlobPath) -> Result<BlobMeta, BlobError> {
        match fs::metadata(self.blob_file(path)).await {
            Ok(metadata) if metadata.is_file() => {
                Ok(meta_of(&metadata, self.load_properties(path).await))
            }
            Ok(_) => Err(BlobError::NotFound(path.key())),
            Err(error) => Err(not_found_or_storage(error, path)),
        }
    }

    async fn delete(&self, path: &BlobPath) -> Result<(), BlobError> {
        self.head(path).await?;
        fs::remove_file(self.blob_file(path))
            .await
            .map_err(|error| not_found_or_storage(error, path))?;
        self.store_properties(path, &BlobProperties::default())
            .await
    }

    async fn delete_prefix(&self, prefix: &BlobPath) -> Result<u64, BlobError> {
        let top = self.blob_file(prefix);
        let metadata = match fs::symlink_metadata(&top).await {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(0),
            Err(error) => return Err(BlobError::storage(error)),
        };
        if metadata.is_file() {
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
                match fs::remove_file(entry.path()).await {
                    Ok(()) => removed = removed.saturating_add(1),
                    Err(error) if error.kind() == ErrorKind::NotFound => {}
                    Err(error) => return Err(BlobError::storage(error)),
                }
                self.store_properties(&path, &BlobProperties::default())
                    .await?;
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
        let (temp, _, size, md5) = self.write_temp(body, &options).await?;
        fs::create_dir_all(self.blocks_dir(path))
            .await
            .map_err(BlobError::storage)?;
        fs::rename(&temp.path, self.block_file(path, block))
            .await
            .map_err(BlobError::storage)?;
        temp.disarm();
        Ok(StagedBlock { size, md5 })
    }

    async fn sweep(&self, age: Duration) -> Result<usize, BlobError> {
        LocalBlobStore::sweep(self, age)
            .await
            .map_err(BlobError::storage)
    }

    async fn commit_blocks(
        &self,
        path: &BlobPath,
        blocks: &[BlockId],
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        // Check every block and the total before copying a byte.
        let mut total = 0u64;
        for block in blocks {
            let metadata = fs::metadata(self.block_file(path, block))
                .await
                .map_err(|_| BlobError::BlockNotFound(block.as_str().to_owned()))?;
            total = total.saturating_add(metadata.len());
        }
        if total > options.size_max {
            return Err(BlobError::TooLarge {
                limit_bytes: options.size_max,
            });
        }
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        let (temp, mut writer) = self.temp_file().await?;
        let mut tally = Tally::new(options.size_max);
        let mut buffer = vec![0u8; IO_BUFFER_BYTES];
        for block in blocks {
            let mut file = File::open(self.block_file(path, block))
                .await
                .map_err(|_| BlobError::BlockNotFound(block.as_str().to_owned()))?;
            loop {
                let read = file.read(&mut buffer).await.map_err(BlobError::storage)?;
                let Some(chunk) = buffer.get(..read).filter(|chunk| !chunk.is_empty()) else {
                    break;
                };
                tally.add(chunk)?;
                writer.write_all(chunk).await.map_err(BlobError::storage)?;
            }
        }
        let (_, md5) = tally.finish(None)?;
        let metadata = finish_file(writer).await?;
        self.publish(temp, path, options.create_only).await?;
        self.store_properties(path, &options.properties).await?;
        let _ = fs::remove_dir_all(self.blocks_dir(path)).await;
        Ok(Written {
            meta: meta_of(&metadata, options.properties),
            md5,
        })
    }
}

/// Flushes and syncs a written file and returns its metadata.
async fn finish_file(mut writer: BufWriter<File>) -> Result<std::fs::Metadata, BlobError> {
    writer.flush().await.map_err(BlobError::storage)?;
    let file = writer.into_inner();
    file.sync_all().await.map_err(BlobError::storage)?;
    file.metadata().await.map_err(BlobError::storage)
}

fn meta_of(metadata: &std::fs::Metadata, properties: BlobProperties) -> BlobMeta {
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let last_modified = DateTime::<Utc>::from(modified);
    let nanos = last_modified.timestamp_nanos_opt().unwrap_or_default();
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(metadata);
    #[cfg(not(unix))]
    let inode = 0u64;
    let tag = hashed_name(&format!("{nanos}:{}:{inode}", metadata.len()));
    BlobMeta {
        size: metadata.len(),
        etag: format!(
            "\"0x{}\"",
            tag.get(..16).unwrap_or(&tag).to_ascii_uppercase()
        ),
        last_modified,
        properties,
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
    use super::*;
    use crate::blob::store::tests_support::*;

    #[tokio::test]
    async fn the_local_backend_keeps_the_store_contract() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalBlobStore::open(dir.path().join("blobs"))
            .await
            .unwrap();
        check_store_contract(&store).await;
        let leftovers = std::fs::read_dir(dir.path().join("blobs").join(TMP_DIR))
            .unwrap()
            .count();
        assert_eq!(leftovers, 0, "no temporary files remain");
    }

    #[tokio::test]
    async fn a_blob_cannot_be_a_folder_of_blobs_too() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalBlobStore::open(dir.path()).await.unwrap();
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
    }

    #[tokio::test]
    async fn sweeping_removes_only_old_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalBlobStore::open(dir.path()).await.unwrap();
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
    }
}
