//! The crate as another program uses it: open a store from a location, write and read a blob,
//! sign and check a URL, without anything of the server.

#![expect(
    clippy::expect_used,
    reason = "the helpers of a test fail it as a test does"
)]

use std::collections::BTreeMap;
use std::time::Duration;

use basin_blob::signing::{BlobSigner, Permissions, SasError};
use basin_blob::{BlobPath, BlobStore, ByteStream, OpenError, WriteOptions};
use futures::{StreamExt, TryStreamExt};

fn body(bytes: &'static [u8]) -> ByteStream {
    futures::stream::iter([Ok(bytes::Bytes::from_static(bytes))]).boxed()
}

fn write_options() -> WriteOptions {
    WriteOptions {
        size_max: 1024,
        create_only: false,
        expected_md5: None,
        properties: basin_blob::BlobProperties::default(),
    }
}

async fn round_trip(store: &dyn BlobStore) -> Vec<u8> {
    let path = BlobPath::parse("datasets", "tenant/dataset/depth.asc").expect("a valid path");
    store
        .put(&path, body(b"ncols 1"), write_options())
        .await
        .expect("the write completes");
    let read = store.get(&path, None).await.expect("the blob is there");
    let chunks: Vec<bytes::Bytes> = read.body.try_collect().await.expect("the body reads");
    chunks.concat()
}

#[tokio::test]
async fn no_location_is_a_folder_and_memory_is_an_object_store() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let options = BTreeMap::new();
    let delay = Duration::from_secs(3600);
    let local = basin_blob::open(None, folder.path(), &options, delay)
        .await
        .expect("the default folder opens");
    assert_eq!(round_trip(local.as_ref()).await, b"ncols 1");
    assert!(
        folder
            .path()
            .join("datasets/tenant/dataset/depth.asc")
            .is_file()
    );

    let memory = basin_blob::open(Some("memory://"), folder.path(), &options, delay)
        .await
        .expect("memory:// opens");
    assert_eq!(round_trip(memory.as_ref()).await, b"ncols 1");
}

#[tokio::test]
async fn a_location_that_is_no_store_is_a_clear_error() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let options = BTreeMap::new();
    let delay = Duration::from_secs(3600);
    let open = |location: &'static str| {
        let root = folder.path().to_owned();
        let options = options.clone();
        async move { basin_blob::open(Some(location), &root, &options, delay).await }
    };
    assert!(matches!(
        open("not a url").await,
        Err(OpenError::NotAUrl(_))
    ));
    assert!(matches!(
        open("file://host.example/blobs").await,
        Err(OpenError::NotALocalPath(_))
    ));
    assert!(matches!(
        open("ftp://host.example/blobs").await,
        Err(OpenError::ObjectStore { .. })
    ));
}

#[test]
fn a_signature_grants_what_it_names_until_it_expires_and_nothing_else() {
    let signer = BlobSigner::new(b"a secret of at least thirty-two bytes!!");
    let path = BlobPath::parse("uploads", "tenant/file.dfs0").expect("a valid path");
    let now = chrono::Utc::now();
    let expiry = now + chrono::TimeDelta::hours(1);
    let query = signer.sign(&path, Permissions::READ, expiry);

    let granted = signer.verify_query(&path, Some(&query), Permissions::READ, now);
    assert_eq!(granted, Ok(Permissions::READ));
    assert_eq!(
        signer.verify_query(&path, Some(&query), Permissions::WRITE, now),
        Err(SasError::Permission)
    );
    let later = expiry + chrono::TimeDelta::seconds(1);
    assert_eq!(
        signer.verify_query(&path, Some(&query), Permissions::READ, later),
        Err(SasError::Expired)
    );
    let other = BlobPath::parse("uploads", "tenant/other.dfs0").expect("a valid path");
    assert_eq!(
        signer.verify_query(&other, Some(&query), Permissions::READ, now),
        Err(SasError::Signature)
    );
    let edited = query.replace("sp=r", "sp=rw");
    assert_eq!(
        signer.verify_query(&path, Some(&edited), Permissions::WRITE, now),
        Err(SasError::Signature)
    );
}
