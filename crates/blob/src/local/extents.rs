//! Blobs committed from blocks, kept as their blocks (extents) until compacted into one file.
//!
//! A commit links the staged block files into a version folder `.extents/<uuid>/` (as `0`,
//! `1`, ... in order of first use), writes `manifest.json` there (the blob's path, size, MD5,
//! ETag, time, properties and the list of extents) and then publishes the version by renaming
//! a symbolic link onto the blob's path. No byte is copied, so a commit takes the same time
//! for 1 KiB as for 5 GiB, and the rename makes it all-or-nothing: after a crash at any point
//! the path holds the old blob or the new one. The link's text, `/dev/null/basin-extents/<uuid>`,
//! resolves nowhere, so nothing that follows it by mistake reads other bytes.
//!
//! Reads stream the extents. In the background, a while after the commit, the version is
//! compacted: its extents are copied into one file by the kernel (`copy_file_range`, which is
//! a reflink where the file system has them), which replaces the link if it still names that
//! version, keeping the blob's ETag, time and MD5. Only then can in-place readers
//! ([`crate::BlobStore::local_file`]) open the blob as one file. A version folder no
//! blob names any more is removed by the sweep an hour after it was replaced, so a read that
//! started before stays whole.

use std::io::{ErrorKind, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use md5::{Digest, Md5};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_util::io::ReaderStream;

use crate::path::BlobPath;
use crate::store::{BlobError, BlobMeta, BlobProperties, ByteStream, hashed_name};

/// Folder of committed versions.
pub(super) const EXTENTS_DIR: &str = ".extents";
/// The manifest inside a version folder.
pub(super) const MANIFEST: &str = "manifest.json";
/// What a blob's symbolic link says before the version's uuid.
const LINK_PREFIX: &str = "/dev/null/basin-extents/";
/// Chunk size of reads.
const READ_CHUNK_BYTES: usize = 256 * 1024;

/// One committed version of a blob.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Manifest {
    /// Container of the blob.
    pub(super) container: String,
    /// Name of the blob in its container.
    pub(super) name: String,
    /// Size in bytes: the sum of the extents.
    pub(super) size: u64,
    /// MD5 of the whole blob.
    pub(super) md5: [u8; 16],
    /// The ETag, quoted.
    pub(super) etag: String,
    /// When it was committed.
    pub(super) modified: DateTime<Utc>,
    /// What the client stored with it.
    pub(super) properties: BlobProperties,
    /// The blob's bytes, in order.
    pub(super) extents: Vec<Extent>,
}

/// A run of bytes of a blob: the whole of one segment file of its version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Extent {
    /// The segment file, `<version folder>/<segment>`.
    pub(super) segment: u32,
    /// Its length.
    pub(super) length: u64,
}

impl Manifest {
    /// What readers are told about the blob.
    pub(super) fn meta(&self) -> BlobMeta {
        BlobMeta {
            size: self.size,
            etag: self.etag.clone(),
            last_modified: self.modified,
            properties: self.properties.clone(),
            md5: Some(self.md5),
        }
    }

    /// The blob this version belongs to.
    pub(super) fn path(&self) -> Option<BlobPath> {
        BlobPath::parse(&self.container, &self.name).ok()
    }
}

/// The ETag of a version: its uuid, hashed, in the form the folder's other tags take.
pub(super) fn etag_of(version: uuid::Uuid) -> String {
    let tag = hashed_name(&version.to_string());
    format!(
        "\"0x{}\"",
        tag.get(..16).unwrap_or(&tag).to_ascii_uppercase()
    )
}

/// What the blob's symbolic link says for `version`.
pub(super) fn link_text(version: uuid::Uuid) -> String {
    format!("{LINK_PREFIX}{version}")
}

/// The version a blob's symbolic link names; `None` for a link Basin did not make.
pub(super) fn version_of_link(target: &Path) -> Option<uuid::Uuid> {
    let uuid = target.to_str()?.strip_prefix(LINK_PREFIX)?;
    uuid::Uuid::parse_str(uuid).ok()
}

/// The folder of `version` under `root`.
pub(super) fn version_dir(root: &Path, version: uuid::Uuid) -> PathBuf {
    root.join(EXTENTS_DIR).join(version.to_string())
}

/// Reads the manifest of the version in `dir`.
pub(super) async fn load_manifest(dir: &Path) -> std::io::Result<Manifest> {
    let json = tokio::fs::read(dir.join(MANIFEST)).await?;
    serde_json::from_slice(&json)
        .map_err(|error| std::io::Error::new(ErrorKind::InvalidData, error))
}

/// Opens the blob's compacted file at an offset, for a read whose version folder was removed
/// after compaction: the same bytes are there. Fails if the blob is no longer that version.
pub(super) type Compacted = std::sync::Arc<
    dyn Fn(u64) -> futures::future::BoxFuture<'static, std::io::Result<tokio::fs::File>>
        + Send
        + Sync,
>;

/// The bytes of `range` of the version in `dir`, read one segment after the other; from
/// `compacted` once the segments are gone.
pub(super) fn read(
    dir: &Path,
    extents: &[Extent],
    range: Range<u64>,
    compacted: Compacted,
) -> ByteStream {
    let mut pieces = Vec::new();
    let mut start = 0u64;
    for extent in extents {
        let end = start.saturating_add(extent.length);
        if end > range.start && start < range.end {
            let from = range.start.max(start).saturating_sub(start);
            let to = range.end.min(end).saturating_sub(start);
            let file = dir.join(extent.segment.to_string());
            pieces.push((
                file,
                from,
                to.saturating_sub(from),
                start.saturating_add(from),
            ));
        }
        start = end;
    }
    futures::stream::iter(pieces)
        .then(move |(segment, from, length, offset)| {
            let compacted = compacted.clone();
            async move {
                let file = match tokio::fs::File::open(segment).await {
                    Ok(mut file) => {
                        file.seek(std::io::SeekFrom::Start(from)).await?;
                        file
                    }
                    Err(error) if error.kind() == ErrorKind::NotFound => compacted(offset).await?,
                    Err(error) => return Err(error),
                };
                Ok::<_, std::io::Error>(ReaderStream::with_capacity(
                    file.take(length),
                    READ_CHUNK_BYTES,
                ))
            }
        })
        .map(|opened| match opened {
            Ok(stream) => stream.boxed(),
            Err(error) => futures::stream::once(std::future::ready(Err(error))).boxed(),
        })
        .flatten()
        .boxed()
}

/// MD5 of the segment files in `files`, in order (a file may come more than once). Blocking.
pub(super) fn hash_files(files: &[PathBuf]) -> Result<[u8; 16], BlobError> {
    let mut md5 = Md5::new();
    let mut buffer = vec![0_u8; 1 << 20];
    for path in files {
        let mut file = std::fs::File::open(path).map_err(BlobError::storage)?;
        loop {
            let read = file.read(&mut buffer).map_err(BlobError::storage)?;
            match buffer.get(..read) {
                Some(chunk) if !chunk.is_empty() => md5.update(chunk),
                _ => break,
            }
        }
    }
    Ok(md5.finalize().into())
}

/// Copies the extents of the version in `dir` into the new file `target`, syncs it and gives
/// it the version's time. Blocking. `std::io::copy` between files is `copy_file_range` on
/// Linux: the kernel copies (or reflinks) without the bytes passing through Basin.
pub(super) fn compact_into(
    dir: &Path,
    manifest: &Manifest,
    target: &Path,
) -> std::io::Result<std::fs::Metadata> {
    let mut out = std::fs::File::create_new(target)?;
    for extent in &manifest.extents {
        let segment = std::fs::File::open(dir.join(extent.segment.to_string()))?;
        let copied = std::io::copy(&mut segment.take(extent.length), &mut out)?;
        if copied != extent.length {
            return Err(std::io::Error::new(
                ErrorKind::UnexpectedEof,
                "a segment is shorter than its extent",
            ));
        }
    }
    out.set_modified(manifest.modified.into())?;
    // The time is part of the file's identity, which names its record: it must last too.
    out.sync_all()?;
    out.metadata()
}
