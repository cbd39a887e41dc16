//! Basin's blob store: byte sequences of up to several gigabytes, addressed by a
//! [`BlobPath`], kept in a local folder or an object store, written all or nothing, and
//! reached by clients through signed URLs.
//!
//! It knows nothing of HTTP servers, databases, tenants or Basin's configuration. The server
//! (crates/server) builds the endpoint that speaks the Azure Blob protocol on top of it, and
//! its areas keep dataset content, uploads and tile pyramids here.
//!
//! # What it promises
//!
//! **The store contract** ([`BlobStore`]), kept by every backend and checked against each by
//! the same tests (crates/blob/src/contract.rs):
//! - a blob becomes visible only when a write ([`BlobStore::put`], [`BlobStore::put_file`],
//!   [`BlobStore::commit_blocks`]) completed with every byte; a failed, interrupted, oversized
//!   or mismatched (`Content-MD5`) write leaves the previous blob, or none, in place;
//! - a reader of a blob being replaced sees the old bytes or the new, never a mix, with the
//!   properties and MD5 of the bytes it reads;
//! - a create-only write ([`WriteOptions::create_only`]) fails with
//!   [`BlobError::AlreadyExists`] when the blob exists;
//! - staged blocks ([`BlobStore::stage_block`]) become a blob only through a commit naming
//!   them, each at most once; blocks never committed, and writes of crashed processes, are
//!   removed by [`BlobStore::sweep`] once older than the age the caller gives;
//! - everything streams ([`ByteStream`]): memory use does not grow with a blob's size.
//!
//! **Paths** ([`BlobPath`]): a container and a name of `/`-separated segments, never empty,
//! `.` or `..`, without backslashes or control characters, within [`limits`]; parsed once, so
//! a backend maps every path to a file or key inside its root.
//!
//! **Backends**: [`LocalBlobStore`], files in a folder (publishing by rename or hard link,
//! block commits as extents compacted later, file locks so replicas may share the folder);
//! [`ObjectBlobStore`], S3, Azure Blob Storage, Google Cloud Storage or memory through
//! `object_store`. [`open`] picks one from a URL.
//!
//! **Signatures** ([`signing`]): shared-access-signature query parameters in Azure's shape,
//! HMAC-SHA256 with a key derived from the deployment's secret; a URL whose expiry or
//! permissions were edited is refused as a bad signature.
//!
//! # Layout
//! `store.rs` the contract and its types, `path.rs` paths, `blocks.rs` block ids and block
//! lists, `range.rs` byte ranges, `stream.rs` idle limits on bodies, `signing.rs` signatures,
//! `local/` the folder backend, `object.rs` the object-store backend, `file_lock.rs` the
//! `flock` both the folder backend and the server's SQLite migrations take, `limits.rs` every
//! bound.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod blocks;
#[cfg(test)]
mod contract;
pub mod file_lock;
pub mod limits;
mod local;
mod object;
pub mod path;
pub mod range;
pub mod signing;
mod store;
mod stream;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use local::{LocalBlobStore, linked_a_file};
pub use object::ObjectBlobStore;
pub use path::{BlobPath, BlobPathError, UPLOADS_CONTAINER};
pub use store::{
    BlobError, BlobMeta, BlobProperties, BlobRead, BlobStore, ByteStream, StagedBlock,
    WriteOptions, Written, tally_file,
};
pub use stream::{idle_limited, stalled};

/// The storage account name in blob URLs (`/basin/<container>/<blob>`), as Azurite-style URLs
/// carry one in the first path segment; signatures cover it.
pub const ACCOUNT: &str = "basin";

/// Why [`open`] could not open a store.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The location is not a URL.
    #[error("{0:?} is not a URL")]
    NotAUrl(String),
    /// A `file:` URL that names no local path.
    #[error("{0:?} is not a local path")]
    NotALocalPath(String),
    /// The folder of a local store cannot be created.
    #[error("cannot create the blob folder {folder}")]
    Folder {
        /// The folder.
        folder: std::path::PathBuf,
        /// Why.
        #[source]
        cause: std::io::Error,
    },
    /// `object_store` refused the URL or its options.
    #[error("cannot open the blob store {scheme}")]
    ObjectStore {
        /// The URL's scheme.
        scheme: String,
        /// Why.
        #[source]
        cause: object_store::Error,
    },
}

/// Opens the store `location` names: none or `file:///path` is a folder (`default_folder`
/// when none), compacting block commits `compaction_delay` after them; `s3://`,
/// `az://`/`azure://`, `gs://` and `memory://` go through `object_store`, configured with
/// `options` (the builders' keys, such as `aws_access_key_id`).
pub async fn open(
    location: Option<&str>,
    default_folder: &Path,
    options: &BTreeMap<String, String>,
    compaction_delay: Duration,
) -> Result<Arc<dyn BlobStore>, OpenError> {
    let Some(raw) = location else {
        return open_folder(default_folder, compaction_delay).await;
    };
    let url = url::Url::parse(raw).map_err(|_| OpenError::NotAUrl(raw.to_owned()))?;
    if url.scheme() == "file" {
        let folder = url
            .to_file_path()
            .map_err(|()| OpenError::NotALocalPath(raw.to_owned()))?;
        return open_folder(&folder, compaction_delay).await;
    }
    let store =
        ObjectBlobStore::from_url(&url, options).map_err(|cause| OpenError::ObjectStore {
            scheme: url.scheme().to_owned(),
            cause,
        })?;
    Ok(Arc::new(store))
}

async fn open_folder(
    folder: &Path,
    compaction_delay: Duration,
) -> Result<Arc<dyn BlobStore>, OpenError> {
    let store = LocalBlobStore::open_with(folder, compaction_delay)
        .await
        .map_err(|cause| OpenError::Folder {
            folder: folder.to_owned(),
            cause,
        })?;
    Ok(Arc::new(store))
}
