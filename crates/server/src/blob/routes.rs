//! The blob endpoint `/basin/<container>/<blob>`: the subset of the Azure Blob REST protocol
//! that standard blob clients use to upload and download through signed URLs.
//!
//! - `PUT` with `x-ms-blob-type: BlockBlob`: the whole blob (201; `If-None-Match: *` is 409
//!   when it exists).
//! - `PUT ?comp=block&blockid=<base64>`: stage a block; `PUT ?comp=blocklist`: commit blocks.
//! - `GET` (200, or 206 with `x-ms-range`/`Range`; 416 when the range selects nothing) and
//!   `HEAD`, with the whole blob's `Content-MD5` (`x-ms-blob-content-md5` on a range, whose
//!   own MD5 `x-ms-range-get-content-md5: true` asks for).
//!
//! The signature in the query is the credential, so these routes take no API key. They stream
//! bodies with their own limits (`limits.upload_bytes_max`, 4000 MiB per block) instead of the
//! JSON body limit, and are exempt from the request timeout: a stalled body is cut off after
//! `limits.upload_idle_timeout_ms` without data instead. Every request is checked in the same
//! order (name, signature, expiry, permission, then limits) before anything is read or written.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRef, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use futures::StreamExt;
use md5::Digest;

use crate::blob::azure::{
    AzureError, REQUEST_ID_HEADER, SERVICE_VERSION, VERSION_HEADER, insert_meta,
};
use crate::blob::properties;
use crate::blob_urls::{BlobUrlError, blob_path_from_request_path};
use crate::http::problem::REQUEST_ID_HEADER as BASIN_REQUEST_ID;
use crate::limits::{BLOCK_BYTES_MAX, RANGE_MD5_BYTES_MAX};
use basin_blob::ACCOUNT;
use basin_blob::blocks::{BlockId, parse_block_list};
use basin_blob::limits::BLOCK_LIST_BYTES_MAX;
use basin_blob::path::BlobPath;
use basin_blob::range::RangeSpec;
use basin_blob::signing::Permissions;
use basin_blob::{BlobMeta, BlobProperties, ByteStream, WriteOptions, Written};

/// What the blob endpoint need: a substate of the app's state (axum `FromRef`).
#[derive(Debug, Clone)]
pub(crate) struct BlobState {
    /// Storage.
    pub(crate) blobs: std::sync::Arc<dyn basin_blob::BlobStore>,
    /// Signature checks.
    pub(crate) blob_urls: crate::blob_urls::BlobUrls,
    /// Time, for URL expiry.
    pub(crate) clock: std::sync::Arc<dyn crate::clock::Clock>,
    /// Upload limits.
    pub(crate) blob_limits: crate::config::BlobLimits,
    /// The datasets whose content is written.
    pub(crate) datasets: crate::datasets::service::DatasetService,
    /// Uploads, recorded as they are written.
    pub(crate) uploads: crate::transfers::uploads::UploadKeeper,
}

/// The blob routes (not in the OpenAPI document: the protocol is Azure's, documented in
/// docs/blobs.md).
pub(crate) fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    BlobState: FromRef<S>,
{
    Router::new()
        .route(
            &format!("/{ACCOUNT}/{{container}}/{{*blob}}"),
            get(get_blob).head(head_blob).put(put_blob),
        )
        .layer(DefaultBodyLimit::disable())
        .layer(from_fn(azure_headers))
}

/// Adds `x-ms-version` and `x-ms-request-id` (the request id) to every blob response.
async fn azure_headers(request: Request, next: Next) -> Response {
    let request_id = request.headers().get(BASIN_REQUEST_ID).cloned();
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(VERSION_HEADER, HeaderValue::from_static(SERVICE_VERSION));
    if let Some(id) = request_id {
        headers.insert(REQUEST_ID_HEADER, id);
    }
    response
}

/// What a request addresses and the query values the endpoint reads.
struct Target {
    path: BlobPath,
    comp: Option<String>,
    block_id: Option<String>,
}

impl Target {
    fn parse(request: &Request) -> Result<Self, AzureError> {
        let path = blob_path_from_request_path(request.uri().path())
            .unwrap_or(Err(BlobUrlError::NotABlobUrl))
            .map_err(AzureError::InvalidName)?;
        let mut comp = None;
        let mut block_id = None;
        for (key, value) in form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes()) {
            match key.as_ref() {
                "comp" => comp = Some(value.into_owned()),
                "blockid" => block_id = Some(value.into_owned()),
                _ => {}
            }
        }
        Ok(Self {
            path,
            comp,
            block_id,
        })
    }

    /// Verifies the signature for an operation needing one of `required`.
    fn authorize(
        &self,
        state: &BlobState,
        request: &Request,
        required: Permissions,
    ) -> Result<Permissions, AzureError> {
        let now = state.clock.now();
        Ok(state.blob_urls.signer().verify_query(
            &self.path,
            request.uri().query(),
            required,
            now,
        )?)
    }
}

const WRITE: Permissions = Permissions::CREATE
    .union(Permissions::WRITE)
    .union(Permissions::ADD);

async fn put_blob(
    State(state): State<BlobState>,
    request: Request,
) -> Result<Response, AzureError> {
    let target = Target::parse(&request)?;
    let granted = target.authorize(&state, &request, WRITE)?;
    check_content_live(&state, &target).await?;
    match target.comp.as_deref() {
        None => put_whole_blob(&state, target, granted, request).await,
        Some("block") => put_block(&state, target, granted, request).await,
        Some("blocklist") => put_block_list(&state, target, granted, request).await,
        Some(_) => Err(AzureError::InvalidQueryParameter("comp")),
    }
}

async fn put_whole_blob(
    state: &BlobState,
    target: Target,
    granted: Permissions,
    request: Request,
) -> Result<Response, AzureError> {
    require_create(granted)?;
    match header_str(request.headers(), "x-ms-blob-type")? {
        None => return Err(AzureError::MissingHeader("x-ms-blob-type")),
        Some("BlockBlob") => {}
        Some(_) => return Err(AzureError::InvalidHeader("x-ms-blob-type")),
    }
    let size_max = state.blob_limits.upload_bytes_max;
    let options = WriteOptions {
        properties: properties::from_headers(request.headers(), properties::Request::PutBlob)?,
        ..write_options(request.headers(), granted, size_max)?
    };
    let written = state
        .blobs
        .put(
            &target.path,
            body_stream(request, state.blob_limits.upload_idle_timeout),
            options,
        )
        .await?;
    record_content(state, &target, &written).await?;
    let mut response = StatusCode::CREATED.into_response();
    let headers = response.headers_mut();
    insert_meta(headers, &written.meta);
    insert_md5(headers, written.md5);
    insert_not_encrypted(headers);
    Ok(response)
}

async fn put_block(
    state: &BlobState,
    target: Target,
    granted: Permissions,
    request: Request,
) -> Result<Response, AzureError> {
    let raw = target
        .block_id
        .as_deref()
        .ok_or(AzureError::InvalidQueryParameter("blockid"))?;
    let block = BlockId::parse(raw).map_err(AzureError::InvalidBlockId)?;
    let size_max = state.blob_limits.upload_bytes_max.min(BLOCK_BYTES_MAX);
    let options = write_options(request.headers(), granted, size_max)?;
    let staged = state
        .blobs
        .stage_block(
            &target.path,
            &block,
            body_stream(request, state.blob_limits.upload_idle_timeout),
            options,
        )
        .await?;
    let mut response = StatusCode::CREATED.into_response();
    let headers = response.headers_mut();
    if let Some(md5) = staged.md5 {
        insert_md5(headers, md5);
    }
    insert_not_encrypted(headers);
    Ok(response)
}

async fn put_block_list(
    state: &BlobState,
    target: Target,
    granted: Permissions,
    request: Request,
) -> Result<Response, AzureError> {
    require_create(granted)?;
    let options = WriteOptions {
        expected_md5: None,
        properties: properties::from_headers(request.headers(), properties::Request::PutBlockList)?,
        ..write_options(
            request.headers(),
            granted,
            state.blob_limits.upload_bytes_max,
        )?
    };
    let limit = u64::try_from(BLOCK_LIST_BYTES_MAX).unwrap_or(u64::MAX);
    check_content_length(request.headers(), limit)?;
    let body = read_bounded(
        body_stream(request, state.blob_limits.upload_idle_timeout),
        BLOCK_LIST_BYTES_MAX,
    )
    .await?;
    let blocks = parse_block_list(&body)?;
    let written = state
        .blobs
        .commit_blocks(&target.path, &blocks, options)
        .await?;
    record_content(state, &target, &written).await?;
    let mut response = StatusCode::CREATED.into_response();
    let headers = response.headers_mut();
    insert_meta(headers, &written.meta);
    insert_not_encrypted(headers);
    Ok(response)
}

/// A signed URL stays valid after its dataset is deleted, but content in the recycle bin is
/// neither served nor changed: the bin keeps it as it was deleted, and a delete must take
/// away every URL handed out before it. Reads and writes (whole blobs, blocks and block lists)
/// are refused alike, until a restore.
async fn check_content_live(state: &BlobState, target: &Target) -> Result<(), AzureError> {
    match state.datasets.check_content_live(&target.path.key()).await {
        Ok(()) => Ok(()),
        Err(crate::datasets::service::DatasetError::InRecycleBin) => Err(AzureError::InRecycleBin),
        Err(error) => Err(AzureError::Internal(error.into())),
    }
}

/// [`check_content_live`] for a read: content in the recycle bin is refused, and content
/// that is gone (removed for good) is simply not found, as for any path with nothing there.
async fn check_readable(state: &BlobState, target: &Target) -> Result<(), AzureError> {
    match check_content_live(state, target).await {
        Err(AzureError::InRecycleBin) => match state.blobs.head(&target.path).await {
            Err(error @ basin_blob::BlobError::NotFound(_)) => Err(error.into()),
            _ => Err(AzureError::InRecycleBin),
        },
        other => other,
    }
}

/// Tells the datasets stored at this blob (or the upload records, for an upload) their new size
/// and checksum. Failing here fails the write request, so the client retries and the record
/// never disagrees with the bytes.
///
/// A dataset removed for good while the write ran leaves nothing to reach the blob: it is
/// deleted again and the write refused, so that nothing is leaked.
async fn record_content(
    state: &BlobState,
    target: &Target,
    written: &Written,
) -> Result<(), AzureError> {
    state
        .uploads
        .written(&target.path, written.meta.size)
        .await
        .map_err(|error| AzureError::Internal(error.into()))?;
    let key = target.path.key();
    let internal =
        |error: crate::datasets::service::DatasetError| AzureError::Internal(error.into());
    state
        .datasets
        .content_written(&key, written.meta.size, written.md5)
        .await
        .map_err(internal)?;
    if !state
        .datasets
        .content_reachable(&key)
        .await
        .map_err(internal)?
    {
        state.blobs.delete(&target.path).await?;
        return Err(AzureError::InRecycleBin);
    }
    Ok(())
}

async fn get_blob(
    State(state): State<BlobState>,
    request: Request,
) -> Result<Response, AzureError> {
    let target = Target::parse(&request)?;
    target.authorize(&state, &request, Permissions::READ)?;
    check_readable(&state, &target).await?;
    if target.comp.is_some() {
        return Err(AzureError::InvalidQueryParameter("comp"));
    }
    let range = requested_range(request.headers())?;
    let range_md5 = range_md5_requested(request.headers(), range.is_some())?;
    let read = state.blobs.get(&target.path, range).await?;
    check_if_match(request.headers(), &read.meta)?;
    let blob_md5 = state.blobs.content_md5(&target.path, &read.meta).await;
    let (status, length) = match &read.range {
        Some(range) => (
            StatusCode::PARTIAL_CONTENT,
            range.end.saturating_sub(range.start),
        ),
        None => (StatusCode::OK, read.meta.size),
    };
    // The MD5 of a range is computed before the first byte is sent, so the range (at most
    // 4 MiB) is read whole first.
    let (body, body_md5) = if range_md5 {
        if length > RANGE_MD5_BYTES_MAX {
            return Err(AzureError::InvalidHeader("x-ms-range-get-content-md5"));
        }
        let bytes = read_bounded(read.body, usize::try_from(RANGE_MD5_BYTES_MAX).unwrap_or(0))
            .await
            .map_err(|_| AzureError::Internal(anyhow::anyhow!("the blob could not be read")))?;
        let md5: [u8; 16] = md5::Md5::digest(&bytes).into();
        (Body::from(bytes), Some(md5))
    } else if read.range.is_none() {
        (Body::from_stream(read.body), blob_md5)
    } else {
        (Body::from_stream(read.body), None)
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    insert_read_headers(headers, &read.meta, length, &target.path);
    if let Some(md5) = body_md5 {
        insert_md5(headers, md5);
    }
    if let Some(range) = &read.range {
        if let Some(md5) = blob_md5 {
            insert_md5_as(headers, "x-ms-blob-content-md5", md5);
        }
        let last = range.end.saturating_sub(1);
        let value = format!("bytes {}-{last}/{}", range.start, read.meta.size);
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(header::CONTENT_RANGE, value);
        }
    }
    Ok(response)
}

/// Whether the client asks for the MD5 of the range it reads (`x-ms-range-get-content-md5:
/// true`), which Azure gives for ranges of at most 4 MiB and only with a range.
fn range_md5_requested(headers: &HeaderMap, ranged: bool) -> Result<bool, AzureError> {
    const NAME: &str = "x-ms-range-get-content-md5";
    match header_str(headers, NAME)?.map(str::trim) {
        None => Ok(false),
        Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
        Some(value) if value.eq_ignore_ascii_case("true") && ranged => Ok(true),
        Some(_) => Err(AzureError::InvalidHeader(NAME)),
    }
}

async fn head_blob(
    State(state): State<BlobState>,
    request: Request,
) -> Result<Response, AzureError> {
    let target = Target::parse(&request)?;
    target.authorize(&state, &request, Permissions::READ)?;
    check_readable(&state, &target).await?;
    let meta = state.blobs.head(&target.path).await?;
    check_if_match(request.headers(), &meta)?;
    let mut response = StatusCode::OK.into_response();
    insert_read_headers(response.headers_mut(), &meta, meta.size, &target.path);
    if let Some(md5) = state.blobs.content_md5(&target.path, &meta).await {
        insert_md5(response.headers_mut(), md5);
    }
    Ok(response)
}

/// Writing a whole blob needs `c` or `w` (`a` alone only stages blocks).
fn require_create(granted: Permissions) -> Result<(), AzureError> {
    if granted.intersects(Permissions::CREATE.union(Permissions::WRITE)) {
        Ok(())
    } else {
        Err(AzureError::PermissionMismatch)
    }
}

/// Limits and conditions of a write from its headers and the URL's permissions: without `w`
/// a URL may only create, never replace.
fn write_options(
    headers: &HeaderMap,
    granted: Permissions,
    size_max: u64,
) -> Result<WriteOptions, AzureError> {
    check_content_length(headers, size_max)?;
    let if_none_match = header_str(headers, header::IF_NONE_MATCH.as_str())?;
    let expected_md5 = match header_str(headers, "content-md5")? {
        None => None,
        Some(raw) => Some(
            STANDARD
                .decode(raw.trim())
                .ok()
                .and_then(|bytes| <[u8; 16]>::try_from(bytes).ok())
                .ok_or(AzureError::InvalidHeader("Content-MD5"))?,
        ),
    };
    Ok(WriteOptions {
        size_max,
        create_only: if_none_match.is_some_and(|value| value.trim() == "*")
            || !granted.contains(Permissions::WRITE),
        expected_md5,
        properties: BlobProperties::default(),
    })
}

/// An announced body over the limit is refused before a byte is read.
fn check_content_length(headers: &HeaderMap, size_max: u64) -> Result<(), AzureError> {
    let Some(raw) = header_str(headers, header::CONTENT_LENGTH.as_str())? else {
        return Ok(());
    };
    let length: u64 = raw
        .trim()
        .parse()
        .map_err(|_| AzureError::InvalidHeader("Content-Length"))?;
    if length > size_max {
        return Err(AzureError::TooLarge {
            limit_bytes: size_max,
        });
    }
    Ok(())
}

/// `x-ms-range` wins over `Range`, as in Azure.
fn requested_range(headers: &HeaderMap) -> Result<Option<RangeSpec>, AzureError> {
    let (name, raw) = match header_str(headers, "x-ms-range")? {
        Some(raw) => ("x-ms-range", raw),
        None => match header_str(headers, header::RANGE.as_str())? {
            Some(raw) => ("Range", raw),
            None => return Ok(None),
        },
    };
    RangeSpec::parse(raw)
        .map(Some)
        .map_err(|_| AzureError::InvalidHeader(name))
}

/// `If-Match` (other than `*`) must name the blob's current ETag. Azure clients send it on
/// the second and later chunks of a download so that a replaced blob is never mixed in.
fn check_if_match(headers: &HeaderMap, meta: &BlobMeta) -> Result<(), AzureError> {
    match header_str(headers, header::IF_MATCH.as_str())? {
        Some(value)
            if value.trim() != "*" && value.split(',').all(|tag| tag.trim() != meta.etag) =>
        {
            Err(AzureError::ConditionNotMet)
        }
        _ => Ok(()),
    }
}

fn header_str<'a>(
    headers: &'a HeaderMap,
    name: &'static str,
) -> Result<Option<&'a str>, AzureError> {
    headers
        .get(name)
        .map(|value| value.to_str().map_err(|_| AzureError::InvalidHeader(name)))
        .transpose()
}

fn insert_read_headers(headers: &mut HeaderMap, meta: &BlobMeta, length: u64, path: &BlobPath) {
    insert_meta(headers, meta);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    properties::insert_into(headers, &meta.properties);
    properties::insert_safety_headers(headers, path.segments().last().unwrap_or("blob"));
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    headers.insert("x-ms-blob-type", HeaderValue::from_static("BlockBlob"));
    headers.insert("x-ms-server-encrypted", HeaderValue::from_static("false"));
}

fn insert_md5(headers: &mut HeaderMap, md5: [u8; 16]) {
    insert_md5_as(headers, "content-md5", md5);
}

fn insert_md5_as(headers: &mut HeaderMap, name: &'static str, md5: [u8; 16]) {
    if let Ok(value) = HeaderValue::from_str(&STANDARD.encode(md5)) {
        headers.insert(name, value);
    }
}

fn insert_not_encrypted(headers: &mut HeaderMap) {
    headers.insert(
        "x-ms-request-server-encrypted",
        HeaderValue::from_static("false"),
    );
}

/// The request body as a stream that fails if the client sends nothing for `idle`
/// (`limits.upload_idle_timeout_ms`).
fn body_stream(request: Request, idle: Duration) -> ByteStream {
    basin_blob::idle_limited(request.into_body().into_data_stream(), idle)
}

/// Reads a small body whole, failing past `limit` bytes.
async fn read_bounded(mut body: ByteStream, limit: usize) -> Result<Vec<u8>, AzureError> {
    let mut out = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|error| AzureError::from(basin_blob::BlobError::Body(error)))?;
        if out.len().saturating_add(chunk.len()) > limit {
            return Err(AzureError::TooLarge {
                limit_bytes: u64::try_from(limit).unwrap_or(u64::MAX),
            });
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
