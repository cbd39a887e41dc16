//! Making a blob visible: writes go to a temporary file (or a version folder) that is removed
//! unless published, and are published by one rename or hard link under the path's lock, so a
//! reader sees the old blob or the new one and a failed write leaves nothing.

use super::*;

/// A temporary file under `.tmp`, or a version folder being built, removed when dropped
/// unless it was published. Removing on drop also covers a handler future dropped midway
/// (client gone, shutdown).
pub(super) struct Unpublished {
    pub(super) path: PathBuf,
    folder: bool,
    armed: bool,
}

impl Unpublished {
    pub(super) fn file(path: PathBuf) -> Self {
        Self {
            path,
            folder: false,
            armed: true,
        }
    }

    pub(super) fn folder(path: PathBuf) -> Self {
        Self {
            path,
            folder: true,
            armed: true,
        }
    }

    /// Keeps the file or folder: it was published, or it is not ours to remove.
    pub(super) fn disarm(mut self) {
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

impl LocalBlobStore {
    pub(super) async fn temp_file(&self) -> Result<(Unpublished, BufWriter<File>), BlobError> {
        let path = self.temp_path();
        let file = File::create_new(&path).await.map_err(BlobError::storage)?;
        let temp = Unpublished::file(path);
        Ok((temp, BufWriter::with_capacity(IO_BUFFER_BYTES, file)))
    }

    /// Streams `body` into a new temporary file, counting it, and hashing it when `hash` or
    /// when the client announced an MD5 to check.
    pub(super) async fn write_temp(
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
    pub(super) async fn publish_file(
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
    pub(super) async fn prune_records(&self, path: &BlobPath, keep: Option<&str>) {
        if let Err(error) = self.records.prune(path, keep).await {
            tracing::warn!(%path, %error, "cannot remove stale blob records");
        }
    }

    /// Moves a finished temporary file to `path`.
    pub(super) async fn publish(
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

    pub(super) async fn make_parent(
        &self,
        path: &BlobPath,
        target: &Path,
    ) -> Result<(), BlobError> {
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
    pub(super) async fn link_file(
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
    pub(super) async fn copy_file(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        let file = File::open(file).await.map_err(BlobError::storage)?;
        let body = ReaderStream::with_capacity(file, IO_BUFFER_BYTES).boxed();
        self.put(path, body, options).await
    }

    pub(super) async fn fail_if_exists(&self, path: &BlobPath) -> Result<(), BlobError> {
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
    pub(super) async fn link_blocks(
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
    pub(super) async fn publish_version(
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

/// Writes the manifest of a version and makes the folder durable: after this, publishing the
/// version is one rename.
pub(super) async fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), BlobError> {
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
pub(super) async fn finish_file(
    mut writer: BufWriter<File>,
) -> Result<std::fs::Metadata, BlobError> {
    writer.flush().await.map_err(BlobError::storage)?;
    let file = writer.into_inner();
    file.sync_all().await.map_err(BlobError::storage)?;
    file.metadata().await.map_err(BlobError::storage)
}
