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
//! Create-only writes (`If-None-Match: *`) check for the blob before writing and again before
//! completing: object stores offer no atomic create-if-absent for multipart uploads, so two
//! racing create-only uploads of one path can both succeed. Upload paths are fresh uuids, so
//! this matters only to clients that reuse a path on purpose.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use object_store::path::{Path as ObjectPath, PathPart};
use object_store::{
    Attribute, AttributeValue, Attributes, GetOptions, GetRange, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, WriteMultipart,
};

use crate::blob::blocks::BlockId;
use crate::blob::path::BlobPath;
use crate::blob::range::RangeSpec;
use crate::blob::store::{
    BlobError, BlobMeta, BlobProperties, BlobRead, BlobStore, ByteStream, StagedBlock, Tally,
    WriteOptions, Written, hashed_name,
};

/// Prefix of staged blocks inside the store's prefix.
const BLOCKS_PREFIX: &str = ".blocks";
/// Size of each multipart part: above S3's 5 MiB minimum, small enough to keep memory flat.
const PART_BYTES: usize = 8 * 1024 * 1024;
/// Parts uploaded at once per write; memory per upload is at most this many parts.
const PARTS_IN_FLIGHT_MAX: usize = 4;

/// Blobs in an object store.
#[derive(Debug, Clone)]
pub(crate) struct ObjectBlobStore {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
}

impl ObjectBlobStore {
    /// A store over `store`, keeping blobs under `prefix`.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, prefix: ObjectPath) -> Self {
        Self { store, prefix }
    }

    /// The store a `blob.url` names (`s3://bucket/prefix`, `az://container/prefix`,
    /// `gs://bucket/prefix`, `memory://`), configured with `options` (the builders' keys, such
    /// as `aws_access_key_id` or `azure_storage_account_name`).
    pub(crate) fn from_url(
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
        let meta = meta_of(&result.meta, properties_of(&result.attributes));
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
    ) -> Result<(u64, [u8; 16]), BlobError> {
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
            Ok(finished) => {
                writer.finish().await.map_err(BlobError::storage)?;
                Ok(finished)
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
        let (_, md5) = self.write(&location, body, options, check).await?;
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
            .map_err(|error| not_found_or_storage(error, path))
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
        let (size, md5) = self.write(&location, body, options, None).await?;
        Ok(StagedBlock { size, md5 })
    }

    async fn delete_prefix(&self, prefix: &BlobPath) -> Result<u64, BlobError> {
        // `list` matches whole path segments, so `a/b` never takes `a/bc`; the blob named
        // `prefix` itself is not listed under it and goes separately.
        let folder = self.location(prefix);
        let mut count = 0_u64;
        match self.store.head(&folder).await {
            Ok(_) => match self.store.delete(&folder).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => count = 1,
                Err(error) => return Err(BlobError::storage(error)),
            },
            Err(object_store::Error::NotFound { .. }) => {}
            Err(error) => return Err(BlobError::storage(error)),
        }
        let below = self
            .store
            .list(Some(&folder))
            .map_ok(|meta| meta.location)
            .boxed();
        let removed = self
            .store
            .delete_stream(below)
            .try_collect::<Vec<_>>()
            .await
            .map_err(BlobError::storage)?;
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
        for block in blocks {
            let meta = self
                .store
                .head(&self.block_location(path, block))
                .await
                .map_err(|_| BlobError::BlockNotFound(block.as_str().to_owned()))?;
            total = total.saturating_add(meta.size);
        }
        if total > options.size_max {
            return Err(BlobError::TooLarge {
                limit_bytes: options.size_max,
            });
        }
        if options.create_only {
            self.fail_if_exists(path).await?;
        }
        let sources: Vec<ObjectPath> = blocks
            .iter()
            .map(|block| self.block_location(path, block))
            .collect();
        let store = self.store.clone();
        let body = futures::stream::iter(sources)
            .then(move |source| {
                let store = store.clone();
                async move { store.get(&source).await }
            })
            .map_ok(|result| result.into_stream())
            .try_flatten()
            .map_err(std::io::Error::other)
            .boxed();
        let location = self.location(path);
        let check = options.create_only.then_some(path);
        let options = WriteOptions {
            expected_md5: None,
            ..options
        };
        let (_, md5) = self
            .write(&location, body, options, check)
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

fn meta_of(meta: &ObjectMeta, properties: BlobProperties) -> BlobMeta {
    let etag = match &meta.e_tag {
        Some(tag) if tag.starts_with('"') || tag.starts_with("W/") => tag.clone(),
        Some(tag) => format!("\"{tag}\""),
        None => format!(
            "\"{}-{}\"",
            meta.last_modified.timestamp_micros(),
            meta.size
        ),
    };
    BlobMeta {
        size: meta.size,
        etag,
        last_modified: meta.last_modified,
        properties,
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
            Attribute::Metadata(name) => {
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
    use crate::blob::store::tests_support::*;

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
}
