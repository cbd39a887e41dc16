//! The contract every backend keeps (the invariants on [`BlobStore`]), checked against each
//! backend by its own tests: `local/tests.rs` and `object.rs`.

use futures::{StreamExt, TryStreamExt};

use std::io;

use bytes::Bytes;
use md5::{Digest, Md5};

use crate::blocks::BlockId;
use crate::path::BlobPath;
use crate::range::RangeSpec;
use crate::store::*;

pub fn body(bytes: &[u8]) -> ByteStream {
    let chunks: Vec<io::Result<Bytes>> = bytes
        .chunks(3)
        .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
        .collect();
    futures::stream::iter(chunks).boxed()
}

pub fn broken_body(bytes: &[u8]) -> ByteStream {
    let first = Ok(Bytes::copy_from_slice(bytes));
    let then = Err(io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "client went away",
    ));
    futures::stream::iter(vec![first, then]).boxed()
}

pub fn options(size_max: u64) -> WriteOptions {
    WriteOptions {
        size_max,
        create_only: false,
        expected_md5: None,
        properties: BlobProperties::default(),
    }
}

pub async fn read(store: &dyn BlobStore, path: &BlobPath, range: Option<RangeSpec>) -> Vec<u8> {
    let read = store.get(path, range).await.unwrap();
    let chunks: Vec<Bytes> = read.body.try_collect().await.unwrap();
    chunks.concat()
}

#[expect(
    clippy::too_many_lines,
    reason = "one contract, checked step by step on one store in the order a client would go"
)]
pub async fn check_store_contract(store: &dyn BlobStore) {
    let path = BlobPath::parse("uploads", "tenant/one/data.bin").unwrap();
    let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    let written = store.put(&path, body(&data), options(1000)).await.unwrap();
    assert_eq!(written.meta.size, 1000);
    let expected_md5: [u8; 16] = Md5::digest(&data).into();
    assert_eq!(written.md5, expected_md5);
    let head = store.head(&path).await.unwrap();
    assert_eq!(head.size, 1000);
    assert_eq!(store.content_md5(&path, &head).await, Some(expected_md5));
    assert_eq!(read(store, &path, None).await, data);
    let ranged = store
        .get(&path, Some(RangeSpec::FromTo(10, 19)))
        .await
        .unwrap();
    assert_eq!(ranged.range, Some(10..20));
    assert_eq!(
        read(store, &path, Some(RangeSpec::FromTo(10, 19))).await,
        data[10..20]
    );
    assert_eq!(
        read(store, &path, Some(RangeSpec::Suffix(5))).await,
        data[995..]
    );
    assert_eq!(
        read(store, &path, Some(RangeSpec::From(998))).await,
        data[998..]
    );
    assert!(matches!(
        store.get(&path, Some(RangeSpec::From(1000))).await,
        Err(BlobError::RangeNotSatisfiable { size: 1000 })
    ));

    // Create-only writes leave an existing blob alone.
    let create_only = WriteOptions {
        create_only: true,
        ..options(1000)
    };
    let error = store
        .put(&path, body(b"other"), create_only)
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::AlreadyExists(_)), "{error:?}");
    // Failed writes (too large, broken body, wrong MD5) leave the old blob as it was.
    let error = store
        .put(&path, body(&[1; 11]), options(10))
        .await
        .unwrap_err();
    assert!(
        matches!(error, BlobError::TooLarge { limit_bytes: 10 }),
        "{error:?}"
    );
    let error = store
        .put(&path, broken_body(b"abc"), options(10))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::Body(_)), "{error:?}");
    let wrong_md5 = WriteOptions {
        expected_md5: Some([0; 16]),
        ..options(10)
    };
    let error = store.put(&path, body(b"abc"), wrong_md5).await.unwrap_err();
    assert!(matches!(error, BlobError::Md5Mismatch), "{error:?}");
    assert_eq!(read(store, &path, None).await, data);
    // A failed first write leaves no blob.
    let fresh = BlobPath::parse("uploads", "tenant/two").unwrap();
    let _ = store
        .put(&fresh, broken_body(b"abc"), options(10))
        .await
        .unwrap_err();
    assert!(matches!(
        store.head(&fresh).await,
        Err(BlobError::NotFound(_))
    ));
    // An overwrite replaces the bytes, the etag and the MD5.
    let replaced = store.put(&path, body(b"new"), options(10)).await.unwrap();
    assert_ne!(replaced.meta.etag, written.meta.etag);
    assert_eq!(read(store, &path, None).await, b"new");
    let head = store.head(&path).await.unwrap();
    let new_md5: [u8; 16] = Md5::digest(b"new").into();
    assert_eq!(store.content_md5(&path, &head).await, Some(new_md5));
    assert!(matches!(
        store.get(&path, Some(RangeSpec::Suffix(0))).await,
        Err(BlobError::RangeNotSatisfiable { size: 3 })
    ));

    check_blocks(store).await;
    check_properties(store).await;
    check_put_file(store).await;
    check_delete_prefix(store).await;
    store.delete(&path).await.unwrap();
    assert!(matches!(
        store.head(&path).await,
        Err(BlobError::NotFound(_))
    ));
    assert!(matches!(
        store.delete(&path).await,
        Err(BlobError::NotFound(_))
    ));
    assert!(matches!(
        store.get(&path, None).await,
        Err(BlobError::NotFound(_))
    ));
}

/// Blocks committed in the order they were staged, in another order, and after one of
/// them was staged again: the bytes and the whole blob's MD5 are right each time, and every
/// range reads the right bytes across block boundaries.
async fn check_commit_orders(store: &dyn BlobStore) {
    let path = BlobPath::parse("uploads", "tenant/orders").unwrap();
    let ids: Vec<BlockId> = ["AAAA", "AAAB", "AAAC", "AAAD"]
        .iter()
        .map(|id| BlockId::parse(id).unwrap())
        .collect();
    let parts: [&[u8]; 4] = [b"alpha-", b"beta-", b"", b"gamma"];
    let lists: [&[usize]; 3] = [&[0, 1, 2, 3], &[3, 1, 0, 2], &[1, 3]];
    for (round, list) in lists.iter().enumerate() {
        for (id, part) in ids.iter().zip(parts) {
            store
                .stage_block(&path, id, body(part), options(10))
                .await
                .unwrap();
        }
        if round == 2 {
            // Staged again: the later bytes count.
            store
                .stage_block(&path, &ids[1], body(b"BETA-"), options(10))
                .await
                .unwrap();
        }
        let chosen: Vec<BlockId> = list.iter().map(|&n| ids[n].clone()).collect();
        let written = store
            .commit_blocks(&path, &chosen, options(100))
            .await
            .unwrap();
        let mut expected: Vec<u8> = list.iter().flat_map(|&n| parts[n].to_vec()).collect();
        if round == 2 {
            expected = b"BETA-gamma".to_vec();
        }
        let md5: [u8; 16] = Md5::digest(&expected).into();
        assert_eq!(written.md5, md5, "round {round}");
        assert_eq!(written.meta.size, expected.len() as u64);
        let head = store.head(&path).await.unwrap();
        assert_eq!(store.content_md5(&path, &head).await, Some(md5));
        assert_eq!(read(store, &path, None).await, expected, "round {round}");
        for first in 0..expected.len() {
            for last in first..expected.len() {
                let range = RangeSpec::FromTo(first as u64, last as u64);
                assert_eq!(
                    read(store, &path, Some(range)).await,
                    expected[first..=last],
                    "round {round}, bytes {first}-{last}"
                );
            }
        }
    }
    store.delete(&path).await.unwrap();
}

/// A prefix delete removes the blobs below it (with their properties) and nothing beside
/// it; a second run finds nothing.
async fn check_delete_prefix(store: &dyn BlobStore) {
    let below = [
        "tenant/pyramid/v1/manifest.json",
        "tenant/pyramid/v1/s0/0/0/0/0/0",
        "tenant/pyramid/v1/s0/0/0/1/0/1",
    ];
    for name in below {
        let path = BlobPath::parse("pyramids", name).unwrap();
        let options = WriteOptions {
            properties: labelled(),
            ..options(10)
        };
        store.put(&path, body(b"tile"), options).await.unwrap();
    }
    let beside = BlobPath::parse("pyramids", "tenant/pyramid-2/v1/manifest.json").unwrap();
    store
        .put(&beside, body(b"kept"), options(10))
        .await
        .unwrap();
    let prefix = BlobPath::parse("pyramids", "tenant/pyramid").unwrap();
    assert_eq!(store.delete_prefix(&prefix).await.unwrap(), 3);
    for name in below {
        let path = BlobPath::parse("pyramids", name).unwrap();
        assert!(matches!(
            store.head(&path).await,
            Err(BlobError::NotFound(_))
        ));
    }
    // A blob written again at a removed path has no properties left over.
    let again = BlobPath::parse("pyramids", below[0]).unwrap();
    store.put(&again, body(b"new"), options(10)).await.unwrap();
    assert!(store.head(&again).await.unwrap().properties.is_empty());
    store.delete(&again).await.unwrap();
    assert_eq!(read(store, &beside, None).await, b"kept");
    assert_eq!(store.delete_prefix(&prefix).await.unwrap(), 0);
    let single = BlobPath::parse("pyramids", "tenant/pyramid-2/v1/manifest.json").unwrap();
    assert_eq!(store.delete_prefix(&single).await.unwrap(), 1);
}

pub fn labelled() -> BlobProperties {
    BlobProperties {
        content_type: Some("image/tiff".into()),
        content_encoding: Some("identity".into()),
        content_language: Some("en".into()),
        content_disposition: Some("attachment; filename=\"grid.tif\"".into()),
        cache_control: Some("no-cache".into()),
        metadata: [("source".to_owned(), "model run 7".to_owned())].into(),
    }
}

/// A blob written from a local file (linked or copied) has its bytes, size and MD5, obeys
/// the same limits, and is not changed by what later happens to the file; a symbolic
/// link stores what it points to.
async fn check_put_file(store: &dyn BlobStore) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("result.tif");
    let data: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    std::fs::write(&file, &data).unwrap();
    let path = BlobPath::parse("datasets", "tenant/from-file/result.tif").unwrap();
    let create_only = WriteOptions {
        create_only: true,
        ..options(3000)
    };
    let written = store
        .put_file(&path, &file, create_only.clone())
        .await
        .unwrap();
    assert_eq!(written.meta.size, 3000);
    assert_eq!(written.md5, <[u8; 16]>::from(Md5::digest(&data)));
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, b"changed afterwards").unwrap();
    assert_eq!(read(store, &path, None).await, data);
    let error = store.put_file(&path, &file, create_only).await.unwrap_err();
    assert!(matches!(error, BlobError::AlreadyExists(_)), "{error:?}");
    let error = store.put_file(&path, &file, options(5)).await.unwrap_err();
    assert!(
        matches!(error, BlobError::TooLarge { limit_bytes: 5 }),
        "{error:?}"
    );
    assert_eq!(read(store, &path, None).await, data);
    let unhashed = BlobPath::parse("datasets", "tenant/from-file/unhashed.tif").unwrap();
    std::fs::write(&file, &data).unwrap();
    let meta = store
        .put_file_unhashed(&unhashed, &file, options(3000))
        .await
        .unwrap();
    assert_eq!(meta.size, 3000);
    assert_eq!(read(store, &unhashed, None).await, data);
    let error = store
        .put_file_unhashed(&unhashed, &file, options(5))
        .await
        .unwrap_err();
    assert!(
        matches!(error, BlobError::TooLarge { limit_bytes: 5 }),
        "{error:?}"
    );
    assert_eq!(read(store, &unhashed, None).await, data);
    store.delete(&unhashed).await.unwrap();
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, b"changed afterwards").unwrap();
    #[cfg(unix)]
    {
        let link = dir.path().join("link.tif");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        store.put_file(&path, &link, options(100)).await.unwrap();
        assert_eq!(read(store, &path, None).await, b"changed afterwards");
    }
    store.delete(&path).await.unwrap();
}

/// Properties come back with the blob, are replaced by every write and go with it.
async fn check_properties(store: &dyn BlobStore) {
    let path = BlobPath::parse("uploads", "tenant/labelled").unwrap();
    let with_labels = WriteOptions {
        properties: labelled(),
        ..options(10)
    };
    let written = store
        .put(&path, body(b"abc"), with_labels.clone())
        .await
        .unwrap();
    assert_eq!(written.meta.properties, labelled());
    assert_eq!(store.head(&path).await.unwrap().properties, labelled());
    assert_eq!(
        store.get(&path, None).await.unwrap().meta.properties,
        labelled()
    );
    // A failed write leaves the properties as they were.
    let error = store
        .put(&path, body(&[0; 11]), options(10))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::TooLarge { .. }), "{error:?}");
    assert_eq!(store.head(&path).await.unwrap().properties, labelled());
    store.put(&path, body(b"abc"), options(10)).await.unwrap();
    assert!(store.head(&path).await.unwrap().properties.is_empty());
    let block = BlockId::parse("AAAA").unwrap();
    store
        .stage_block(&path, &block, body(b"xyz"), with_labels.clone())
        .await
        .unwrap();
    let committed = store
        .commit_blocks(&path, std::slice::from_ref(&block), with_labels.clone())
        .await
        .unwrap();
    assert_eq!(committed.meta.properties, labelled());
    assert_eq!(store.head(&path).await.unwrap().properties, labelled());
    store.delete(&path).await.unwrap();
    store.put(&path, body(b"new"), options(10)).await.unwrap();
    assert!(store.head(&path).await.unwrap().properties.is_empty());
    store.delete(&path).await.unwrap();
}

#[expect(
    clippy::too_many_lines,
    reason = "one contract, checked step by step on one store in the order a client would go"
)]
async fn check_blocks(store: &dyn BlobStore) {
    let path = BlobPath::parse("uploads", "tenant/blocks").unwrap();
    let ids: Vec<BlockId> = ["AAAA", "AAAB", "AAAC"]
        .iter()
        .map(|id| BlockId::parse(id).unwrap())
        .collect();
    for (id, bytes) in ids.iter().zip([&b"one-"[..], b"two-", b"three"]) {
        let staged = store
            .stage_block(&path, id, body(bytes), options(10))
            .await
            .unwrap();
        assert_eq!(staged.size, bytes.len() as u64);
    }
    // Staging again under the same id replaces the block.
    store
        .stage_block(&path, &ids[0], body(b"ONE-"), options(10))
        .await
        .unwrap();
    assert!(
        matches!(store.head(&path).await, Err(BlobError::NotFound(_))),
        "uncommitted blocks are not a blob"
    );
    let error = store
        .stage_block(&path, &ids[0], body(&[0; 11]), options(10))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::TooLarge { .. }));
    let unknown = BlockId::parse("QUJD").unwrap();
    let error = store
        .commit_blocks(&path, &[ids[0].clone(), unknown], options(100))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::BlockNotFound(_)), "{error:?}");
    let error = store
        .commit_blocks(&path, &ids, options(5))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::TooLarge { .. }), "{error:?}");
    let order = [
        ids[2].clone(),
        ids[0].clone(),
        ids[1].clone(),
        ids[0].clone(),
    ];
    let written = store
        .commit_blocks(&path, &order, options(100))
        .await
        .unwrap();
    assert_eq!(written.meta.size, 17);
    assert_eq!(read(store, &path, None).await, b"threeONE-two-ONE-");
    let whole: [u8; 16] = Md5::digest(b"threeONE-two-ONE-").into();
    assert_eq!(written.md5, whole);
    let head = store.head(&path).await.unwrap();
    assert_eq!(store.content_md5(&path, &head).await, Some(whole));
    // Committing forgets the staged blocks.
    let error = store
        .commit_blocks(&path, &ids, options(100))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::BlockNotFound(_)));
    let create_only = WriteOptions {
        create_only: true,
        ..options(100)
    };
    store
        .stage_block(&path, &ids[0], body(b"x"), options(10))
        .await
        .unwrap();
    let error = store
        .commit_blocks(&path, &ids[..1], create_only.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::AlreadyExists(_)));
    check_commit_orders(store).await;
    let empty = BlobPath::parse("uploads", "tenant/empty").unwrap();
    let written = store.commit_blocks(&empty, &[], create_only).await.unwrap();
    assert_eq!(written.meta.size, 0);
    assert_eq!(read(store, &empty, None).await, b"");
}
