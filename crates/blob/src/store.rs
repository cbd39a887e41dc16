//! The [`BlobStore`] trait every backend implements, and what its calls take and return.
//!
//! Everything streams: bodies arrive as a [`ByteStream`] and reads return one, so a 5 GiB
//! upload or download never sits in memory. Writes are all-or-nothing: a backend writes to a
//! temporary place and makes the blob visible only once every byte arrived and checked out,
//! so a failed, interrupted or oversized upload leaves no blob behind.

use std::fmt::Debug;
use std::io;
use std::ops::Range;

use async_trait::async_trait;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::stream::BoxStream;
use md5::{Digest, Md5};

use crate::blocks::BlockId;
use crate::path::BlobPath;
use crate::range::RangeSpec;

/// A stream of body bytes. An `Err` item means the sender failed (the client went away, or a
/// chunk was late); the write that reads it is abandoned.
pub type ByteStream = BoxStream<'static, io::Result<Bytes>>;

/// What a backend knows about a stored blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMeta {
    /// Size in bytes.
    pub size: u64,
    /// Opaque version tag, quoted as HTTP wants it (`"..."`); changes on every write.
    pub etag: String,
    /// When the blob was last written.
    pub last_modified: DateTime<Utc>,
    /// What the client stored with the blob.
    pub properties: BlobProperties,
    /// MD5 of the whole blob, returned to readers as `Content-MD5`, when the backend has it at
    /// hand (see [`BlobStore::content_md5`] for the backends that keep it aside).
    pub md5: Option<[u8; 16]>,
}

/// What a client stores with a blob and gets back with every read: Azure's blob HTTP headers
/// (`x-ms-blob-content-type` and the like) and metadata (`x-ms-meta-<name>`). Values are
/// visible ASCII, as HTTP headers carry them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BlobProperties {
    /// `Content-Type` of reads; `application/octet-stream` when not set.
    pub content_type: Option<String>,
    /// `Content-Encoding` of reads.
    pub content_encoding: Option<String>,
    /// `Content-Language` of reads.
    pub content_language: Option<String>,
    /// `Content-Disposition` of reads.
    pub content_disposition: Option<String>,
    /// `Cache-Control` of reads.
    pub cache_control: Option<String>,
    /// Metadata, by name (lower case: HTTP/1.1 header names are case-insensitive).
    pub metadata: std::collections::BTreeMap<String, String>,
}

impl BlobProperties {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Conditions and limits of a write, and what to store with the blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// The write fails with [`BlobError::TooLarge`] past this many bytes.
    pub size_max: u64,
    /// Fail with [`BlobError::AlreadyExists`] if the blob exists (`If-None-Match: *`).
    pub create_only: bool,
    /// The MD5 the client says the body has (`Content-MD5`); a mismatch fails the write.
    pub expected_md5: Option<[u8; 16]>,
    /// Stored with the blob, replacing what an earlier version had (ignored by
    /// [`BlobStore::stage_block`]).
    pub properties: BlobProperties,
}

/// The result of a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The stored blob.
    pub meta: BlobMeta,
    /// MD5 of the bytes written, returned to clients as `Content-MD5`.
    pub md5: [u8; 16],
}

/// A staged block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagedBlock {
    /// Size in bytes.
    pub size: u64,
    /// MD5 of the block, computed only when the client sent one to check (Azure answers
    /// `Content-MD5` to a Put Block only then): hashing every block would cost a second MD5
    /// pass over the upload, beside the whole blob's.
    pub md5: Option<[u8; 16]>,
}

/// An open read.
pub struct BlobRead {
    /// The blob read from.
    pub meta: BlobMeta,
    /// The bytes sent, when a range was asked for (always within `0..meta.size`).
    pub range: Option<Range<u64>>,
    /// The bytes.
    pub body: ByteStream,
}

impl Debug for BlobRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobRead")
            .field("meta", &self.meta)
            .field("range", &self.range)
            .finish_non_exhaustive()
    }
}

/// Why a blob operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// No blob at this path.
    #[error("blob {0} not found")]
    NotFound(String),
    /// The blob exists and the write was create-only.
    #[error("blob {0} already exists")]
    AlreadyExists(String),
    /// The body exceeded the write's limit.
    #[error("the body exceeds {limit_bytes} bytes")]
    TooLarge {
        /// The limit.
        limit_bytes: u64,
    },
    /// The body does not match its `Content-MD5`.
    #[error("the body does not match its Content-MD5")]
    Md5Mismatch,
    /// A block named in a block list was never staged.
    #[error("block {0} was not staged")]
    BlockNotFound(String),
    /// The range selects nothing in a blob of this size.
    #[error("the range selects nothing in a blob of {size} bytes")]
    RangeNotSatisfiable {
        /// The blob's size.
        size: u64,
    },
    /// The path runs through an existing blob, or a blob is where a folder of blobs is (local
    /// folders cannot hold both `a/b` and `a/b/c`).
    #[error("blob path {0} conflicts with an existing blob")]
    PathConflict(String),
    /// Reading the request body failed: the client went away, sent too little or stalled.
    #[error("the request body could not be read")]
    Body(#[source] io::Error),
    /// The storage itself failed.
    #[error("blob storage failed")]
    Storage(#[source] anyhow::Error),
}

impl BlobError {
    /// A storage fault from any cause.
    pub fn storage(cause: impl Into<anyhow::Error>) -> Self {
        Self::Storage(cause.into())
    }
}

/// Blob storage. Implementations are cheap to share (`Arc<dyn BlobStore>`).
///
/// Invariants every backend keeps: a blob becomes visible only when a `put` or
/// `commit_blocks` completed, with every byte; a failed write leaves the previous blob (or
/// none) in place; reads of a blob that is being replaced see the old or the new bytes, never
/// a mix. Paths are already checked ([`BlobPath`]), so backends need not re-validate them.
#[async_trait]
pub trait BlobStore: Send + Sync + Debug {
    /// Writes a blob from a stream, replacing any blob at `path` unless `create_only`.
    async fn put(
        &self,
        path: &BlobPath,
        body: ByteStream,
        options: WriteOptions,
    ) -> Result<Written, BlobError>;

    /// Writes a blob from a local file, as [`BlobStore::put`] would from its bytes. The file
    /// is the caller's to remove afterwards; a backend may link it into place instead of
    /// copying it (the local folder does, when both are on one disk).
    async fn put_file(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        let file = tokio::fs::File::open(file)
            .await
            .map_err(BlobError::storage)?;
        let body = futures::StreamExt::boxed(tokio_util::io::ReaderStream::with_capacity(
            file,
            256 * 1024,
        ));
        self.put(path, body, options).await
    }

    /// Like [`BlobStore::put_file`] without reading the file for its MD5, for a caller that
    /// checksums it later; returns the blob's metadata. Backends that must send the bytes
    /// anyway hash them on the way and drop the hash.
    async fn put_file_unhashed(
        &self,
        path: &BlobPath,
        file: &std::path::Path,
        options: WriteOptions,
    ) -> Result<BlobMeta, BlobError> {
        Ok(self.put_file(path, file, options).await?.meta)
    }

    /// Opens a blob for reading, the whole of it or one range.
    async fn get(&self, path: &BlobPath, range: Option<RangeSpec>) -> Result<BlobRead, BlobError>;

    /// What is stored at `path`.
    async fn head(&self, path: &BlobPath) -> Result<BlobMeta, BlobError>;

    /// The MD5 of the whole blob `meta` describes, for `Content-MD5` on reads: `meta.md5`
    /// where the backend keeps it with the blob. Backends that keep it aside look it up and
    /// answer `None` unless it belongs to that very version, so a reader never gets the MD5 of
    /// other bytes.
    async fn content_md5(&self, path: &BlobPath, meta: &BlobMeta) -> Option<[u8; 16]> {
        let _ = path;
        meta.md5
    }

    /// Removes a blob; removing a missing blob is [`BlobError::NotFound`].
    async fn delete(&self, path: &BlobPath) -> Result<(), BlobError>;

    /// Stages a block of a future blob, replacing a block staged under the same id. Only
    /// `size_max`, `expected_md5` of `options` apply.
    async fn stage_block(
        &self,
        path: &BlobPath,
        block: &BlockId,
        body: ByteStream,
        options: WriteOptions,
    ) -> Result<StagedBlock, BlobError>;

    /// Writes the blob as the concatenation of staged blocks, in order, then forgets every
    /// block staged for `path`. The endpoint's parser names each block at most once, but a
    /// backend accepts repeats. The result's MD5 is the whole blob's.
    async fn commit_blocks(
        &self,
        path: &BlobPath,
        blocks: &[BlockId],
        options: WriteOptions,
    ) -> Result<Written, BlobError>;

    /// The file holding the blob, for backends that keep blobs as local files: readers may open
    /// it in place instead of copying it (never write to it). A write replaces the file
    /// atomically, so a reader that opened it keeps reading the version it opened. `None` for
    /// remote backends.
    fn local_file(&self, path: &BlobPath) -> Option<std::path::PathBuf> {
        let _ = path;
        None
    }

    /// Like [`BlobStore::local_file`] for a caller about to read the whole blob: a backend that
    /// keeps a fresh commit as several files (the folder's extents) makes it one file first,
    /// which costs the same as reading it once and spares every later reader the copy.
    async fn local_file_now(&self, path: &BlobPath) -> Option<std::path::PathBuf> {
        self.local_file(path)
    }

    /// Removes every blob named `prefix` or below `prefix/` (a folder of blobs, such as a
    /// stored tile pyramid); returns how many it removed. Nothing there is not an error, so a
    /// rerun after a crash finishes the job.
    async fn delete_prefix(&self, prefix: &BlobPath) -> Result<u64, BlobError>;

    /// Removes leftovers older than `age`: blocks staged and never committed, and writes that a
    /// crashed process left behind. Returns how many entries it removed. Committed blobs are
    /// never touched.
    async fn sweep(&self, age: std::time::Duration) -> Result<usize, BlobError>;
}

/// Counts and hashes bytes on their way to storage and enforces the size limit, so each
/// backend checks the same things the same way.
#[derive(Debug, Clone)]
pub(crate) struct Tally {
    size: u64,
    size_max: u64,
    md5: Option<Md5>,
}

impl Tally {
    pub fn new(size_max: u64) -> Self {
        Self {
            size: 0,
            size_max,
            md5: Some(Md5::new()),
        }
    }

    /// A tally that hashes only when `expected_md5` is set, to check it.
    pub fn checking(size_max: u64, expected_md5: Option<[u8; 16]>) -> Self {
        Self {
            md5: expected_md5.map(|_| Md5::new()),
            ..Self::new(size_max)
        }
    }

    /// Accounts for one chunk; fails once the total passes the limit.
    pub fn add(&mut self, chunk: &[u8]) -> Result<(), BlobError> {
        let length = u64::try_from(chunk.len()).unwrap_or(u64::MAX);
        self.size = self.size.saturating_add(length);
        within_limit(self.size, self.size_max)?;
        if let Some(md5) = &mut self.md5 {
            md5.update(chunk);
        }
        Ok(())
    }

    /// The size and MD5 so far, checked against the MD5 the client announced.
    pub fn finish(self, expected_md5: Option<[u8; 16]>) -> Result<(u64, [u8; 16]), BlobError> {
        let (size, md5) = self.finish_checked(expected_md5)?;
        Ok((size, md5.unwrap_or_default()))
    }

    /// The size, and the MD5 when this tally hashed, checked against the one announced.
    pub fn finish_checked(
        self,
        expected_md5: Option<[u8; 16]>,
    ) -> Result<(u64, Option<[u8; 16]>), BlobError> {
        let md5: Option<[u8; 16]> = self.md5.map(|md5| md5.finalize().into());
        match (expected_md5, md5) {
            (Some(expected), Some(md5)) if expected != md5 => Err(BlobError::Md5Mismatch),
            (Some(_), None) => Err(BlobError::Md5Mismatch),
            _ => Ok((self.size, md5)),
        }
    }
}

/// Fails with [`BlobError::TooLarge`] when `size` passes `size_max`: the one size rule of every
/// write, whole or by blocks.
pub(crate) fn within_limit(size: u64, size_max: u64) -> Result<(), BlobError> {
    if size > size_max {
        return Err(BlobError::TooLarge {
            limit_bytes: size_max,
        });
    }
    Ok(())
}

/// Hashes bytes with MD5 on a blocking thread while the caller writes them, so a write costs
/// the slower of the two instead of their sum (MD5 runs at about 600 MB/s on one core, a
/// fifth of the time of a 10 MiB PUT here). The channel is bounded: a hasher that falls
/// behind slows the writer rather than buffering the body.
pub(crate) struct Hashing {
    sender: Option<tokio::sync::mpsc::Sender<Bytes>>,
    task: tokio::task::JoinHandle<[u8; 16]>,
}

impl Hashing {
    /// Chunks in flight between the writer and the hashing thread.
    const CHUNKS_IN_FLIGHT: usize = 16;

    pub fn start() -> Self {
        let (sender, mut receiver) = tokio::sync::mpsc::channel::<Bytes>(Self::CHUNKS_IN_FLIGHT);
        let task = tokio::task::spawn_blocking(move || {
            let mut md5 = Md5::new();
            while let Some(chunk) = receiver.blocking_recv() {
                md5.update(&chunk);
            }
            md5.finalize().into()
        });
        Self {
            sender: Some(sender),
            task,
        }
    }

    /// Hands one chunk to the hashing thread (a reference count, not a copy).
    pub async fn feed(&self, chunk: Bytes) -> Result<(), BlobError> {
        let stopped = || BlobError::storage(anyhow::anyhow!("the MD5 thread stopped"));
        let sender = self.sender.as_ref().ok_or_else(stopped)?;
        sender.send(chunk).await.map_err(|_| stopped())
    }

    /// The MD5 of every chunk fed, once the thread has hashed them all.
    pub async fn finish(mut self) -> Result<[u8; 16], BlobError> {
        drop(self.sender.take());
        (&mut self.task).await.map_err(BlobError::storage)
    }
}

/// Size and MD5 of the local file at `path`, read in 1 MiB blocks, checked as a write of it
/// would be (past `size_max`, or not `expected_md5`, is an error). Blocking: call it from a
/// blocking thread.
pub fn tally_file(
    path: &std::path::Path,
    size_max: u64,
    expected_md5: Option<[u8; 16]>,
) -> Result<(u64, [u8; 16]), BlobError> {
    let mut reader = std::fs::File::open(path).map_err(BlobError::storage)?;
    let mut tally = Tally::new(size_max);
    let mut buffer = vec![0_u8; 1 << 20];
    loop {
        let read = io::Read::read(&mut reader, &mut buffer).map_err(BlobError::storage)?;
        match buffer.get(..read) {
            Some(chunk) if !chunk.is_empty() => tally.add(chunk)?,
            _ => break,
        }
    }
    tally.finish(expected_md5)
}

/// A hex digest naming something by a hash, for staging areas whose names must not reveal or
/// depend on client input (`.blocks/<hash of path>/<hash of block id>`).
pub(crate) fn hashed_name(input: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, input.as_bytes());
    digest
        .as_ref()
        .iter()
        .fold(String::with_capacity(64), |mut name, byte| {
            use std::fmt::Write;
            let _ = write!(name, "{byte:02x}");
            name
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashing_on_a_thread_gives_the_md5_of_every_chunk_in_order() {
        let hashing = Hashing::start();
        let mut whole = Vec::new();
        for index in 0..100_u8 {
            let chunk = vec![index; usize::from(index) * 997];
            whole.extend_from_slice(&chunk);
            hashing.feed(Bytes::from(chunk)).await.unwrap();
        }
        let expected: [u8; 16] = Md5::digest(&whole).into();
        assert_eq!(hashing.finish().await.unwrap(), expected);
        let empty: [u8; 16] = Md5::digest(b"").into();
        assert_eq!(Hashing::start().finish().await.unwrap(), empty);
        // Dropped part way (a failed write): the thread ends on its own.
        let abandoned = Hashing::start();
        abandoned.feed(Bytes::from_static(b"abc")).await.unwrap();
        drop(abandoned);
    }

    #[test]
    fn the_tally_counts_hashes_and_stops_past_the_limit() {
        let mut tally = Tally::new(6);
        tally.add(b"abc").unwrap();
        tally.add(b"def").unwrap();
        let (size, md5) = tally.clone().finish(None).unwrap();
        assert_eq!(size, 6);
        let expected: [u8; 16] = Md5::digest(b"abcdef").into();
        assert_eq!(md5, expected);
        assert!(matches!(
            tally.clone().finish(Some([0; 16])),
            Err(BlobError::Md5Mismatch)
        ));
        assert!(matches!(
            tally.add(b"g"),
            Err(BlobError::TooLarge { limit_bytes: 6 })
        ));
    }
}
