//! The scale-out backend: S3, Azure Blob Storage, Google Cloud Storage (or memory, for tests)
//! through `object_store`, chosen at run time from `blob.url`.
//!
//! Clients still talk to Basin's own Azure-compatible endpoint, whatever the backend: one
//! protocol for every deployment, and Basin checks signatures and limits itself. Bytes stream
//! through in multipart uploads, which object stores make visible only on completion, so an
//! abandoned upload leaves no object (it is aborted). Blocks are staged as objects under
//! `.blocks/<sha256 of path>/` and composed into one multipart upload on commit; blocks never
//! committed are swept after a week, as Azure forgets them. A multipart upload that a crashed
//! process never aborted is the store's to expire: on S3 and GCS a lifecycle rule
//! `AbortIncompleteMultipartUpload` does it; Azure drops uncommitted blocks after a week.
//!
//! Every blob's MD5 is kept for `Content-MD5`. A blob of at most one part is sent in one
//! request, with its MD5 as object metadata (`basin-content-md5`). A larger one is a multipart
//! upload, whose metadata is fixed before its bytes are seen, so its MD5 goes to a record
//! object `.md5/<sha256 of location>` naming the ETag the upload completed with: a reader
//! takes it only for that version, never for bytes written since.
//!
//! Create-only writes (`If-None-Match: *`) check for the blob before writing and again before
//! completing: object stores offer no atomic create-if-absent for multipart uploads, so two
//! racing create-only uploads of one path can both succeed. Upload paths are fresh uuids, so
//! this matters only to clients that reuse a path on purpose.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::{Path as ObjectPath, PathPart};
use object_store::{
    Attribute, AttributeValue, Attributes, GetOptions, GetRange, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, WriteMultipart,
};

use crate::blocks::BlockId;
use crate::path::BlobPath;
use crate::range::RangeSpec;
use crate::store::{
    BlobError, BlobMeta, BlobProperties, BlobRead, BlobStore, ByteStream, StagedBlock, Tally,
    WriteOptions, Written, hashed_name, within_limit,
};

/// Prefix of staged blocks inside the store's prefix.
const BLOCKS_PREFIX: &str = ".blocks";
/// Prefix of the MD5 records of blobs written in several parts, inside the store's prefix.
const MD5_PREFIX: &str = ".md5";
/// The object metadata holding the MD5 of a blob written in one request: not a C# identifier,
/// so no client's `x-ms-meta-` name can be it.
const MD5_ATTRIBUTE: &str = "basin-content-md5";
/// Size of each multipart part: above S3's 5 MiB minimum, small enough to keep memory flat.
const PART_BYTES: usize = 8 * 1024 * 1024;
/// Parts uploaded at once per write; memory per upload is at most this many parts.
const PARTS_IN_FLIGHT_MAX: usize = 4;

/// Blobs in an object store.
#[derive(Debug, Clone)]
pub struct ObjectBlobStore {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
}

impl ObjectBlobStore {
    /// A store over `store`, keeping blobs under `prefix`.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: ObjectPath) -> Self {
        Self { store, prefix }
    }

    /// The store a `blob.url` names (`s3://bucket/prefix`, `az://container/prefix`,
    /// `gs://bucket/prefix`, `memory://`), configured with `options` (the builders' keys, such
    /// as `aws_access_key_id` or `azure_storage_account_name`).
    pub fn from_url(
        url: &url::Url,
        options: &BTreeMap<String, String>,
    ) -> Result<Self, object_store::Error> {
        let (store, prefix) = object_store::parse_url_opts(url, options.iter())?;
        Ok(Self::new(Arc::from(store), prefix))
    }

    fn location(&self, path: &BlobPath) -> ObjectPath {
        let parts = std::iter::once(path.container()).chain(path.segments());
        self.under_prefix(parts)
    }

    fn blocks_location(&self, path: &BlobPath) -> ObjectPath {
        let key = hashed_name(&path.key());
        self.under_prefix([BLOCKS_PREFIX, key.as_str()].into_iter())
    }

    fn block_location(&self, path: &BlobPath, block: &BlockId) -> ObjectPath {
        let path_key = hashed_name(&path.key());
        let block_key = hashed_name(block.as_str());
        self.under_prefix([BLOCKS_PREFIX, path_key.as_str(), block_key.as_str()].into_iter())
    }

    fn under_prefix<'a>(&self, parts: impl Iterator<Item = &'a str>) -> ObjectPath {
        parts.fold(self.prefix.clone(), |location, part| {
            location.join(PathPart::from(part))
        })
    }

    /// What is stored at `location`, with its properties (a plain `head` leaves those out).
    async fn meta(
        &self,
        location: &ObjectPath,
        path: &BlobPath,
    ) -> Result<(ObjectMeta, BlobMeta), BlobError> {
        let options = GetOptions {
            head: true,
            ..GetOptions::default()
        };
        let result = self
            .store
            .get_opts(location, options)
            .await
            .map_err(|error| not_found_or_storage(error, path))?;
        let meta = meta_of(&result.meta, &result.attributes);
        Ok((result.meta, meta))
    }

    async fn fail_if_exists(&self, path: &BlobPath) -> Result<(), BlobError> {
        match self.store.head(&self.location(path)).await {
            Ok(_) => Err(BlobError::AlreadyExists(path.key())),
            Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(BlobError::storage(error)),
        }
    }

    /// Streams `body` into a multipart upload at `location`; aborts it on any failure.
    async fn write(
        &self,
        location: &ObjectPath,
        body: ByteStream,
        options: WriteOptions,
        before_complete: Option<&BlobPath>,
    ) -> Result<(u64, [u8; 16], Option<String>), BlobError> {
        let upload = self
            .store
            .put_multipart_opts(
                location,
                PutMultipartOptions {
                    attributes: attributes_of(&options.properties),
                    ..PutMultipartOptions::default()
                },
            )
            .await
            .map_err(BlobError::storage)?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
        let result = async {
            let tally = feed(&mut writer, body, options.size_max).await?;
            let finished = tally.finish(options.expected_md5)?;
            if let Some(path) = before_complete {
                self.fail_if_exists(path).await?;
            }
            Ok(finished)
        }
        .await;
        match result {
            Ok((size, md5)) => {
                let done = writer.finish().await.map_err(BlobError::storage)?;
                Ok((size, md5, done.e_tag))
            }
            Err(error) => {
                let _ = writer.abort().await;
                Err(error)
            }
        }
    }

    /// Removes every staged block of `path`.
    async fn forget_blocks(&self, path: &BlobPath) -> Result<(), BlobError> {
        let prefix = self.blocks_location(path);
        let locations = self
            .store
            .list(Some(&prefix))
            .map_ok(|meta| meta.location)
            .boxed();
        self.store
            .delete_stream(locations)
            .try_collect::<Vec<_>>()
            .await
            .map_err(BlobError::storage)?;
        Ok(())
    }
}

impl ObjectBlobStore {
    fn md5_location(&self, location: &ObjectPath) -> ObjectPath {
        let key = hashed_name(location.as_ref());
        self.under_prefix([MD5_PREFIX, key.as_str()].into_iter())
    }

    /// Writes a blob of at most one part in one request, its MD5 among its metadata.
    async fn put_whole(
        &self,
        location: &ObjectPath,
        chunks: Vec<Bytes>,
        options: &WriteOptions,
        before_put: Option<&BlobPath>,
    ) -> Result<[u8; 16], BlobError> {
        let mut tally = Tally::new(options.size_max);
        for chunk in &chunks {
            tally.add(chunk)?;
        }
        let (_, md5) = tally.finish(options.expected_md5)?;
        if let Some(path) = before_put {
            self.fail_if_exists(path).await?;
        }
        let mut attributes = attributes_of(&options.properties);
        attributes.insert(
            Attribute::Metadata(MD5_ATTRIBUTE.into()),
            AttributeValue::from(STANDARD.encode(md5)),
        );
        let put = PutOptions {
            attributes,
            ..PutOptions::default()
        };
        self.store
            .put_opts(location, chunks.into_iter().collect::<PutPayload>(), put)
            .await
            .map_err(BlobError::storage)?;
        Ok(md5)
    }

    /// Writes a blob from `body`: in one request if it fits in a part, else in parts with an
    /// MD5 record beside it.
    async fn write_blob(
        &self,
        location: &ObjectPath,
        body: ByteStream,
        options: WriteOptions,
        before_complete: Option<&BlobPath>,
    ) -> Result<[u8; 16], BlobError> {
        let (first, rest) = first_part(body).await?;
        let Some(rest) = rest else {
            return self
                .put_whole(location, first, &options, before_complete)
                .await;
        };
        let body = futures::stream::iter(first.into_iter().map(Ok))
            .chain(rest)
            .boxed();
        let (_, md5, e_tag) = self.write(location, body, options, before_complete).await?;
        self.record_md5(location, e_tag, md5).await;
        Ok(md5)
    }

    /// Keeps the MD5 of the version `e_tag` of the blob at `location`. Failing leaves the blob
    /// without `Content-MD5`, never with a wrong one, so it does not fail the write.
    async fn record_md5(&self, location: &ObjectPath, e_tag: Option<String>, md5: [u8; 16]) {
        let Some(e_tag) = e_tag else {
            return;
        };
        let record = Md5Record {
            etag: quoted(&e_tag),
            md5,
        };
        let Ok(json) = serde_json::to_vec(&record) else {
            return;
        };
        if let Err(error) = self
            .store
            .put(&self.md5_location(location), PutPayload::from(json))
            .await
        {
            tracing::warn!(%location, %error, "cannot record a blob's MD5");
        }
    }

    async fn forget_md5(&self, location: &ObjectPath) {
        match self.store.delete(&self.md5_location(location)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(error) => tracing::warn!(%location, %error, "cannot remove a blob's MD5 record"),
        }
    }
}

/// The MD5 of one version of a blob written in parts.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Md5Record {
    /// The version's ETag, quoted as [`BlobMeta::etag`].
    etag: String,
    md5: [u8; 16],
}

/// Reads `body` until it passes one part: the chunks read, and the rest of the body when there
/// is more.
async fn first_part(mut body: ByteStream) -> Result<(Vec<Bytes>, Option<ByteStream>), BlobError> {
    let mut chunks = Vec::new();
    let mut size = 0usize;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(BlobError::Body)?;
        size = size.saturating_add(chunk.len());
        chunks.push(chunk);
        if size > PART_BYTES {
            return Ok((chunks, Some(body)));
        }
    }
    Ok((chunks, None))
}

/// Feeds a stream into a multipart writer through a tally.
async fn feed(
    writer: &mut WriteMultipart,
    mut body: ByteStream,
    size_max: u64,
) -> Result<Tally, BlobError> {
    let mut tally = Tally::new(size_max);
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(BlobError::Body)?;
        tally.add(&chunk)?;
        writer
            .wait_for_capacity(PARTS_IN_FLIGHT_MAX)
            .await
            .map_err(BlobError::storage)?;
        writer.put(chunk);
    }
    Ok(tally)
}

#[async_trait]
impl BlobStore for ObjectBlobStore {
    async fn put(
        &self,
        path: &BlobPath,
        body: ByteStream,
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        let location = self.location(path);
        let check = options.create_only.then_some(path);
        let md5 = self.write_blob(&location, body, options, check).await?;
        let (_, meta) = self.meta(&location, path).await?;
        Ok(Written { meta, md5 })
    }

    async fn get(&self, path: &BlobPath, range: Option<RangeSpec>) -> Result<BlobRead, BlobError> {
        let location = self.location(path);
        let (head, meta) = self.meta(&location, path).await?;
        let selected = match range {
            None => None,
            Some(spec) => Some(
                spec.resolve(meta.size)
                    .ok_or(BlobError::RangeNotSatisfiable { size: meta.size })?,
            ),
        };
        let options = GetOptions {
            range: selected.clone().map(GetRange::Bounded),
            // The bytes must come from the version the headers describe.
            if_match: head.e_tag.clone(),
            ..GetOptions::default()
        };
        let result = self
            .store
            .get_opts(&location, options)
            .await
            .map_err(|error| not_found_or_storage(error, path))?;
        let body = result.into_stream().map_err(std::io::Error::other).boxed();
        Ok(BlobRead {
            meta,
            range: selected,
            body,
        })
    }

    async fn head(&self, path: &BlobPath) -> Result<BlobMeta, BlobError> {
        let (_, meta) = self.meta(&self.location(path), path).await?;
        Ok(meta)
    }

    async fn delete(&self, path: &BlobPath) -> Result<(), BlobError> {
        let location = self.location(path);
        self.meta(&location, path).await?;
        self.store
            .delete(&location)
            .await
            .map_err(|error| not_found_or_storage(error, path))?;
        self.forget_md5(&location).await;
        Ok(())
    }

    async fn content_md5(&self, path: &BlobPath, meta: &BlobMeta) -> Option<[u8; 16]> {
        if meta.md5.is_some() {
            return meta.md5;
        }
        // Blobs of one part carry their MD5; only larger ones may have a record.
        if meta.size <= u64::try_from(PART_BYTES).unwrap_or(u64::MAX) {
            return None;
        }
        let record = self
            .store
            .get(&self.md5_location(&self.location(path)))
            .await
            .ok()?
            .bytes()
            .await
            .ok()?;
        let record: Md5Record = serde_json::from_slice(&record).ok()?;
        (record.etag == meta.etag).then_some(record.md5)
    }

    async fn stage_block(
        &self,
        path: &BlobPath,
        block: &BlockId,
        body: ByteStream,
        options: WriteOptions,
    ) -> Result<StagedBlock, BlobError> {
        let location = self.block_location(path, block);
        let options = WriteOptions {
            properties: BlobProperties::default(),
            ..options
        };
        let checked = options.expected_md5.is_some();
        let (size, md5, _) = self.write(&location, body, options, None).await?;
        Ok(StagedBlock {
            size,
            md5: checked.then_some(md5),
        })
    }

    async fn delete_prefix(&self, prefix: &BlobPath) -> Result<u64, BlobError> {
        // `list` matches whole path segments, so `a/b` never takes `a/bc`; the blob named
        // `prefix` itself is not listed under it and goes separately.
        let folder = self.location(prefix);
        let mut count = 0_u64;
        match self.store.head(&folder).await {
            Ok(_) => match self.store.delete(&folder).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {
                    self.forget_md5(&folder).await;
                    count = 1;
                }
                Err(error) => return Err(BlobError::storage(error)),
            },
            Err(object_store::Error::NotFound { .. }) => {}
            Err(error) => return Err(BlobError::storage(error)),
        }
        // Blobs larger than a part have an MD5 record to remove with them.
        let part = u64::try_from(PART_BYTES).unwrap_or(u64::MAX);
        let large = Arc::new(std::sync::Mutex::new(Vec::new()));
        let noted = large.clone();
        let below = self
            .store
            .list(Some(&folder))
            .map_ok(move |meta| {
                if meta.size > part {
                    noted
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(meta.location.clone());
                }
                meta.location
            })
            .boxed();
        let removed = self
            .store
            .delete_stream(below)
            .try_collect::<Vec<_>>()
            .await
            .map_err(BlobError::storage)?;
        let large = std::mem::take(
            &mut *large
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for location in &large {
            self.forget_md5(location).await;
        }
        Ok(count.saturating_add(u64::try_from(removed.len()).unwrap_or(u64::MAX)))
    }

    async fn sweep(&self, age: std::time::Duration) -> Result<usize, BlobError> {
        let age = chrono::TimeDelta::from_std(age).unwrap_or(chrono::TimeDelta::MAX);
        let cutoff = chrono::Utc::now()
            .checked_sub_signed(age)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        let blocks = self.under_prefix(std::iter::once(BLOCKS_PREFIX));
        let stale = self
            .store
            .list(Some(&blocks))
            .try_filter(move |meta| std::future::ready(meta.last_modified < cutoff))
            .map_ok(|meta| meta.location)
            .boxed();
        let removed = self
            .store
            .delete_stream(stale)
            .try_collect::<Vec<_>>()
            .await
            .map_err(BlobError::storage)?;
        Ok(removed.len())
    }

    async fn commit_blocks(
        &self,
        path: &BlobPath,
        blocks: &[BlockId],
        options: WriteOptions,
    ) -> Result<Written, BlobError> {
        let mut total = 0u64;
        let mut sources = Vec::with_capacity(blocks.len());
        for block in blocks {
            let location = self.block_location(path, block);
            let meta = self
                .store
                .head(&location)
                .await
                .map_err(|_| BlobError::BlockNotFound(block.as_str().to_owned()))?;
            total = total.saturating_add(meta.size);
            sources.push((location, meta.size));
        }
        within_limit(total, options.size_max)?;
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        // Blocks of up to a part are fetched whole, several at once, so the store's latency
        // per request overlaps the upload of earlier parts; larger blocks stream.
        let store = self.store.clone();
        let part = u64::try_from(PART_BYTES).unwrap_or(u64::MAX);
        let body = futures::stream::iter(sources)
            .map(move |(source, size)| {
                let store = store.clone();
                async move {
                    let read = store.get(&source).await?;
                    if size <= part {
                        let bytes = read.bytes().await?;
                        Ok::<_, object_store::Error>(
                            futures::stream::once(std::future::ready(Ok(bytes))).boxed(),
                        )
                    } else {
                        Ok(read.into_stream())
                    }
                }
            })
            .buffered(PARTS_IN_FLIGHT_MAX)
            .try_flatten()
            .map_err(std::io::Error::other)
            .boxed();
        let location = self.location(path);
        let check = options.create_only.then_some(path);
        let options = WriteOptions {
            expected_md5: None,
            ..options
        };
        let md5 = self
            .write_blob(&location, body, options, check)
            .await
            .map_err(|error| match error {
                // A block read failing here is storage, not the client's body.
                BlobError::Body(cause) => BlobError::storage(cause),
                other => other,
            })?;
        self.forget_blocks(path).await?;
        let (_, meta) = self.meta(&location, path).await?;
        Ok(Written { meta, md5 })
    }
}

fn meta_of(meta: &ObjectMeta, attributes: &Attributes) -> BlobMeta {
    let etag = match &meta.e_tag {
        Some(tag) => quoted(tag),
        None => format!(
            "\"{}-{}\"",
            meta.last_modified.timestamp_micros(),
            meta.size
        ),
    };
    let md5 = attributes
        .iter()
        .find_map(|(attribute, value)| match attribute {
            Attribute::Metadata(name) if name.eq_ignore_ascii_case(MD5_ATTRIBUTE) => STANDARD
                .decode(value.as_ref())
                .ok()
                .and_then(|bytes| <[u8; 16]>::try_from(bytes).ok()),
            _ => None,
        });
    BlobMeta {
        size: meta.size,
        etag,
        last_modified: meta.last_modified,
        properties: properties_of(attributes),
        md5,
    }
}

/// An object store's ETag in the quoted form HTTP wants.
fn quoted(tag: &str) -> String {
    if tag.starts_with('"') || tag.starts_with("W/") {
        tag.to_owned()
    } else {
        format!("\"{tag}\"")
    }
}

/// Blob properties as object attributes, which S3, Azure and GCS store as the object's own
/// headers and user metadata.
fn attributes_of(properties: &BlobProperties) -> Attributes {
    let headers = [
        (Attribute::ContentType, &properties.content_type),
        (Attribute::ContentEncoding, &properties.content_encoding),
        (Attribute::ContentLanguage, &properties.content_language),
        (
            Attribute::ContentDisposition,
            &properties.content_disposition,
        ),
        (Attribute::CacheControl, &properties.cache_control),
    ];
    let headers = headers
        .into_iter()
        .filter_map(|(attribute, value)| Some((attribute, AttributeValue::from(value.clone()?))));
    let metadata = properties.metadata.iter().map(|(name, value)| {
        (
            Attribute::Metadata(name.clone().into()),
            AttributeValue::from(value.clone()),
        )
    });
    headers.chain(metadata).collect()
}

fn properties_of(attributes: &Attributes) -> BlobProperties {
    let mut properties = BlobProperties::default();
    for (attribute, value) in attributes.iter() {
        let value = value.to_string();
        match attribute {
            Attribute::ContentType => properties.content_type = Some(value),
            Attribute::ContentEncoding => properties.content_encoding = Some(value),
            Attribute::ContentLanguage => properties.content_language = Some(value),
            Attribute::ContentDisposition => properties.content_disposition = Some(value),
            Attribute::CacheControl => properties.cache_control = Some(value),
            Attribute::Metadata(name) if !name.eq_ignore_ascii_case(MD5_ATTRIBUTE) => {
                properties.metadata.insert(name.to_ascii_lowercase(), value);
            }
            _ => {}
        }
    }
    properties
}

fn not_found_or_storage(error: object_store::Error, path: &BlobPath) -> BlobError {
    match error {
        object_store::Error::NotFound { .. } => BlobError::NotFound(path.key()),
        other => BlobError::storage(other),
    }
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;

    use super::*;
    use crate::contract::*;

    #[tokio::test]
    async fn the_object_store_backend_keeps_the_store_contract() {
        let memory = Arc::new(InMemory::new());
        let store = ObjectBlobStore::new(memory.clone(), ObjectPath::from("basin"));
        check_store_contract(&store).await;
        // Everything lives under the prefix; blocks only under `.blocks` (one block of a failed
        // create-only commit is left, as it should be).
        let keys: Vec<String> = memory
            .list(None)
            .map_ok(|meta| meta.location.to_string())
            .try_collect()
            .await
            .unwrap();
        let blobs: Vec<&String> = keys
            .iter()
            .filter(|key| !key.contains(BLOCKS_PREFIX))
            .collect();
        assert_eq!(
            blobs,
            ["basin/uploads/tenant/blocks", "basin/uploads/tenant/empty"]
        );
        assert_eq!(keys.len(), 3, "{keys:?}");
    }

    #[tokio::test]
    async fn sweeping_removes_only_old_uncommitted_blocks() {
        let store = ObjectBlobStore::new(Arc::new(InMemory::new()), ObjectPath::from("p"));
        let committed = BlobPath::parse("uploads", "t/done").unwrap();
        let pending = BlobPath::parse("uploads", "t/pending").unwrap();
        let first = BlockId::parse("YWJj").unwrap();
        let second = BlockId::parse("ZGVm").unwrap();
        for block in [&first, &second] {
            store
                .stage_block(&pending, block, body(b"abc"), options(10))
                .await
                .unwrap();
        }
        store
            .stage_block(&committed, &first, body(b"xyz"), options(10))
            .await
            .unwrap();
        store
            .commit_blocks(&committed, std::slice::from_ref(&first), options(10))
            .await
            .unwrap();
        let hour = std::time::Duration::from_secs(3600);
        assert_eq!(store.sweep(hour).await.unwrap(), 0);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        assert_eq!(store.sweep(std::time::Duration::ZERO).await.unwrap(), 2);
        let error = store
            .commit_blocks(&pending, &[first, second], options(10))
            .await
            .unwrap_err();
        assert!(matches!(error, BlobError::BlockNotFound(_)), "{error:?}");
        assert_eq!(read(&store, &committed, None).await, b"xyz");
        assert_eq!(store.sweep(std::time::Duration::ZERO).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_memory_url_opens_the_in_memory_backend() {
        let url = url::Url::parse("memory:///prefix").unwrap();
        let store = ObjectBlobStore::from_url(&url, &BTreeMap::new()).unwrap();
        let path = BlobPath::parse("uploads", "a/b").unwrap();
        store.put(&path, body(b"abc"), options(3)).await.unwrap();
        assert_eq!(read(&store, &path, None).await, b"abc");
        assert_eq!(store.location(&path).to_string(), "prefix/uploads/a/b");
    }

    #[tokio::test]
    async fn a_large_upload_goes_in_several_parts() {
        let store = ObjectBlobStore::new(Arc::new(InMemory::new()), ObjectPath::default());
        let path = BlobPath::parse("uploads", "big").unwrap();
        let data: Vec<u8> = (0..PART_BYTES * 2 + 17).map(|i| (i % 251) as u8).collect();
        let chunks: Vec<std::io::Result<bytes::Bytes>> = data
            .chunks(64 * 1024)
            .map(|chunk| Ok(bytes::Bytes::copy_from_slice(chunk)))
            .collect();
        let written = store
            .put(
                &path,
                futures::stream::iter(chunks).boxed(),
                options(u64::MAX),
            )
            .await
            .unwrap();
        assert_eq!(written.meta.size, data.len() as u64);
        assert_eq!(read(&store, &path, None).await, data);
    }

    fn stream_of(data: &[u8]) -> ByteStream {
        let chunks: Vec<std::io::Result<Bytes>> = data
            .chunks(64 * 1024)
            .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
            .collect();
        futures::stream::iter(chunks).boxed()
    }

    #[tokio::test]
    async fn the_md5_of_a_blob_in_parts_is_recorded_for_that_version_only() {
        use md5::Digest;
        let memory = Arc::new(InMemory::new());
        let store = ObjectBlobStore::new(memory.clone(), ObjectPath::from("p"));
        let path = BlobPath::parse("pyramids", "t/v1/big").unwrap();
        let data: Vec<u8> = (0..PART_BYTES + 5).map(|i| (i % 253) as u8).collect();
        let written = store
            .put(&path, stream_of(&data), options(u64::MAX))
            .await
            .unwrap();
        let md5: [u8; 16] = md5::Md5::digest(&data).into();
        assert_eq!(written.md5, md5);
        let head = store.head(&path).await.unwrap();
        assert_eq!(head.md5, None, "not in the object's metadata");
        assert_eq!(store.content_md5(&path, &head).await, Some(md5));
        assert!(head.properties.metadata.is_empty());
        // Bytes written behind Basin's back make another version: its record is not taken.
        memory
            .put(
                &store.location(&path),
                PutPayload::from(vec![1u8; PART_BYTES + 9]),
            )
            .await
            .unwrap();
        let other = store.head(&path).await.unwrap();
        assert_eq!(store.content_md5(&path, &other).await, None);
        // Deleting the blob, or a prefix above it, removes its record.
        let records = |memory: Arc<InMemory>| async move {
            memory
                .list(Some(&ObjectPath::from("p/.md5")))
                .try_collect::<Vec<_>>()
                .await
                .unwrap()
                .len()
        };
        assert_eq!(records(memory.clone()).await, 1);
        store.delete(&path).await.unwrap();
        assert_eq!(records(memory.clone()).await, 0);
        store
            .put(&path, stream_of(&data), options(u64::MAX))
            .await
            .unwrap();
        let small = BlobPath::parse("pyramids", "t/v1/small").unwrap();
        store
            .put(&small, stream_of(b"tile"), options(10))
            .await
            .unwrap();
        assert_eq!(records(memory.clone()).await, 1);
        let prefix = BlobPath::parse("pyramids", "t/v1").unwrap();
        assert_eq!(store.delete_prefix(&prefix).await.unwrap(), 2);
        assert_eq!(records(memory.clone()).await, 0);
    }

    #[tokio::test]
    async fn a_blob_of_one_part_is_one_request_with_its_md5_as_metadata() {
        use md5::Digest;
        let memory = Arc::new(InMemory::new());
        let store = ObjectBlobStore::new(memory.clone(), ObjectPath::from("p"));
        let path = BlobPath::parse("uploads", "t/small").unwrap();
        let data = vec![5u8; PART_BYTES];
        let with_labels = WriteOptions {
            properties: labelled(),
            ..options(u64::MAX)
        };
        store
            .put(&path, stream_of(&data), with_labels)
            .await
            .unwrap();
        let head = store.head(&path).await.unwrap();
        assert_eq!(head.md5, Some(md5::Md5::digest(&data).into()));
        assert_eq!(
            head.properties,
            labelled(),
            "the MD5 is not a client's metadata"
        );
        let listed = memory.list(None).try_collect::<Vec<_>>().await.unwrap();
        assert_eq!(listed.len(), 1, "no record beside it");
    }
}
