//! What the folder backend keeps beside a blob stored as a plain file: the properties a client
//! stored with it, the MD5 of its bytes and, for a blob compacted from extents, the ETag it
//! had before.
//!
//! A record is named after the identity of the file it describes (inode, size and modification
//! time), in a folder per blob path: `.records/<sha256 of path>/<identity>`. It is written
//! before its file is published and pruned once another version replaced that file, so a
//! reader finds the record of exactly the file it opened, or none: never the MD5 of other
//! bytes. Files published before records existed keep their properties in
//! `.props/<sha256 of path>`, which is still read.

use std::io::ErrorKind;
use std::path::PathBuf;
use std::time::SystemTime;

use tokio::fs;
use tokio::io::AsyncWriteExt;

use crate::path::BlobPath;
use crate::store::{BlobError, BlobProperties, hashed_name};

/// Folder of records.
pub(super) const RECORDS_DIR: &str = ".records";
/// Folder of properties written before records existed.
pub(super) const LEGACY_PROPS_DIR: &str = ".props";

/// What is kept beside one version of a blob.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Record {
    /// What the client stored with the blob.
    pub(super) properties: BlobProperties,
    /// MD5 of the whole blob, when it was computed.
    pub(super) md5: Option<[u8; 16]>,
    /// The ETag to present instead of the one the file's identity gives: a compacted blob
    /// keeps the tag it had as extents, so downloads in progress (`If-Match`) go on.
    pub(super) etag: Option<String>,
}

impl Record {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The identity of a file's content as the folder sees it: a new write makes a new inode (or,
/// for the same inode, a new modification time), so two versions never share one.
pub(super) fn identity(metadata: &std::fs::Metadata) -> String {
    let nanos = metadata
        .modified()
        .ok()
        .and_then(|modified| modified.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos());
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(metadata);
    #[cfg(not(unix))]
    let inode = 0u64;
    hashed_name(&format!("{nanos}:{}:{inode}", metadata.len()))
}

/// The records under a store's root.
#[derive(Debug, Clone)]
pub(super) struct Records {
    root: PathBuf,
}

impl Records {
    pub(super) fn new(root: PathBuf) -> Self {
        Self { root }
    }

    fn dir(&self, path: &BlobPath) -> PathBuf {
        self.root.join(RECORDS_DIR).join(hashed_name(&path.key()))
    }

    #[cfg(test)]
    pub(super) fn dir_for_tests(&self, path: &BlobPath) -> PathBuf {
        self.dir(path)
    }

    fn legacy_file(&self, path: &BlobPath) -> PathBuf {
        self.root
            .join(LEGACY_PROPS_DIR)
            .join(hashed_name(&path.key()))
    }

    /// The record of the file whose identity is `identity`; empty when there is none, or when
    /// it cannot be read (the bytes matter more than their labels).
    pub(super) async fn load(&self, path: &BlobPath, identity: &str) -> Record {
        let file = self.dir(path).join(identity);
        match fs::read(&file).await {
            Ok(json) => serde_json::from_slice(&json).unwrap_or_else(|error| {
                tracing::warn!(file = %file.display(), %error, "unreadable blob record");
                Record::default()
            }),
            Err(error) if error.kind() == ErrorKind::NotFound => Record {
                properties: self.load_legacy(path).await,
                ..Record::default()
            },
            Err(error) => {
                tracing::warn!(file = %file.display(), %error, "unreadable blob record");
                Record::default()
            }
        }
    }

    async fn load_legacy(&self, path: &BlobPath) -> BlobProperties {
        let file = self.legacy_file(path);
        match fs::read(&file).await {
            Ok(json) => serde_json::from_slice(&json).unwrap_or_default(),
            Err(_) => BlobProperties::default(),
        }
    }

    /// Writes the record of a file not yet published (through `temp`, a fresh name in the
    /// store's temporary folder, then renamed).
    pub(super) async fn store(
        &self,
        path: &BlobPath,
        identity: &str,
        record: &Record,
        temp: PathBuf,
    ) -> Result<(), BlobError> {
        if record.is_empty() {
            return Ok(());
        }
        let dir = self.dir(path);
        fs::create_dir_all(&dir).await.map_err(BlobError::storage)?;
        let json = serde_json::to_vec(record).map_err(BlobError::storage)?;
        // A record of the MD5 alone is not synced: one lost or torn by a power failure leaves
        // its blob without `Content-MD5` (a torn record does not parse), never with a wrong one,
        // and a sync per write would cost small uploads more than all else they do. What the
        // client stored is synced, as it cannot be had again.
        let durable = !record.properties.is_empty();
        let written = async {
            let mut file = fs::File::create_new(&temp).await?;
            file.write_all(&json).await?;
            if durable {
                file.sync_all().await?;
            }
            fs::rename(&temp, dir.join(identity)).await
        }
        .await;
        if written.is_err() {
            let _ = fs::remove_file(&temp).await;
        }
        written.map_err(BlobError::storage)
    }

    /// Removes the record of the file `identity` (never published).
    pub(super) async fn remove(&self, path: &BlobPath, identity: &str) -> std::io::Result<()> {
        fs::remove_file(self.dir(path).join(identity)).await
    }

    /// Removes every record of `path` but the one of `keep` (the file now published; none
    /// once the blob is gone or is extents, which carry their own).
    pub(super) async fn prune(&self, path: &BlobPath, keep: Option<&str>) -> Result<(), BlobError> {
        match fs::remove_file(self.legacy_file(path)).await {
            Err(error) if error.kind() != ErrorKind::NotFound => {
                return Err(BlobError::storage(error));
            }
            _ => {}
        }
        let dir = self.dir(path);
        let mut entries = match fs::read_dir(&dir).await {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(BlobError::storage(error)),
        };
        while let Some(entry) = entries.next_entry().await.map_err(BlobError::storage)? {
            if keep.is_some_and(|keep| entry.file_name().to_str() == Some(keep)) {
                continue;
            }
            match fs::remove_file(entry.path()).await {
                Err(error) if error.kind() != ErrorKind::NotFound => {
                    return Err(BlobError::storage(error));
                }
                _ => {}
            }
        }
        if keep.is_none() {
            let _ = fs::remove_dir(&dir).await;
        }
        Ok(())
    }
}
