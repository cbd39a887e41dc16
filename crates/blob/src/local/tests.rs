use md5::{Digest, Md5};

use super::*;
use crate::contract::*;

/// A store that compacts only when told to (the delay outlasts every test).
async fn store_without_compaction(root: &Path) -> LocalBlobStore {
    LocalBlobStore::open_with(root, Duration::from_secs(24 * 3600))
        .await
        .unwrap()
}

async fn stage(store: &LocalBlobStore, path: &BlobPath, parts: &[&[u8]]) -> Vec<BlockId> {
    let mut ids = Vec::new();
    for (n, part) in parts.iter().enumerate() {
        let id = BlockId::parse(&base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("block-{n:04}"),
        ))
        .unwrap();
        store
            .stage_block(path, &id, body(part), options(1 << 30))
            .await
            .unwrap();
        ids.push(id);
    }
    ids
}

#[tokio::test]
async fn the_local_backend_keeps_the_store_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(&dir.path().join("blobs")).await;
    check_store_contract(&store).await;
    let leftovers = std::fs::read_dir(dir.path().join("blobs").join(TMP_DIR))
        .unwrap()
        .count();
    assert_eq!(leftovers, 0, "no temporary files remain");
}

#[tokio::test]
async fn the_contract_holds_with_compaction_racing_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalBlobStore::open_with(dir.path(), Duration::ZERO)
        .await
        .unwrap();
    check_store_contract(&store).await;
}

#[tokio::test]
async fn a_commit_links_the_staged_blocks_and_copies_no_byte() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/model.dfsu").unwrap();
    let parts: [&[u8]; 3] = [&[1; 1000], &[2; 1000], &[3; 10]];
    let ids = stage(&store, &path, &parts).await;
    let staged: Vec<u64> = ids
        .iter()
        .map(|id| inode_of(&std::fs::metadata(store.block_file(&path, id)).unwrap()))
        .collect();
    let written = store
        .commit_blocks(&path, &ids, options(1 << 30))
        .await
        .unwrap();
    let file = store.blob_file(&path);
    assert!(std::fs::symlink_metadata(&file).unwrap().is_symlink());
    assert!(
        std::fs::metadata(&file).is_err(),
        "the link resolves nowhere"
    );
    let version = store.version_at(&path).await.unwrap();
    let version_dir = extents::version_dir(dir.path(), version);
    let segments: Vec<u64> = (0..3)
        .map(|n| inode_of(&std::fs::metadata(version_dir.join(n.to_string())).unwrap()))
        .collect();
    assert_eq!(segments, staged, "the blob's extents are the staged files");
    assert!(
        store.local_file(&path).is_none(),
        "extents are not one file"
    );
    assert!(
        !store.blocks_dir(&path).exists(),
        "the commit forgets the blocks"
    );
    let expected = parts.concat();
    assert_eq!(read(&store, &path, None).await, expected);
    assert_eq!(written.md5, <[u8; 16]>::from(Md5::digest(&expected)));
    // A second commit replaces it; the first version stays until the sweep.
    let ids = stage(&store, &path, &[b"new"]).await;
    store.commit_blocks(&path, &ids, options(10)).await.unwrap();
    assert_eq!(read(&store, &path, None).await, b"new");
    assert!(
        version_dir.exists(),
        "a replaced version outlives reads begun on it"
    );
    assert_eq!(store.sweep(Duration::from_secs(3600)).await.unwrap(), 0);
    assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 1);
    assert!(!version_dir.exists());
    assert_eq!(read(&store, &path, None).await, b"new");
}

#[tokio::test]
async fn compaction_makes_one_file_with_the_same_tag_time_md5_and_properties() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/result.dfs2").unwrap();
    let parts: [&[u8]; 3] = [&[7; 4096], b"middle", &[9; 5000]];
    let ids = stage(&store, &path, &parts).await;
    let with_labels = WriteOptions {
        properties: labelled(),
        ..options(1 << 30)
    };
    let written = store.commit_blocks(&path, &ids, with_labels).await.unwrap();
    let before = store.head(&path).await.unwrap();
    let version = store.version_at(&path).await.unwrap();
    store.compact(version).await.unwrap();
    let file = store.local_file(&path).expect("one file after compaction");
    assert_eq!(std::fs::read(&file).unwrap(), parts.concat());
    let after = store.head(&path).await.unwrap();
    assert_eq!(
        after, before,
        "tag, time, size, MD5 and properties are kept"
    );
    assert_eq!(after.md5, Some(written.md5));
    assert_eq!(after.properties, labelled());
    // The version folder went with the compaction; compacting again changes nothing.
    store.compact(version).await.unwrap();
    assert_eq!(store.head(&path).await.unwrap(), before);
    assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 0);
    assert_eq!(read(&store, &path, None).await, parts.concat());
    let records = std::fs::read_dir(dir.path().join(RECORDS_DIR))
        .unwrap()
        .count();
    assert_eq!(records, 1, "one record folder, for the one blob");
}

#[tokio::test]
async fn a_reader_needing_one_file_has_the_extents_compacted_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/to-convert.tif").unwrap();
    let ids = stage(&store, &path, &[b"head", b"tail"]).await;
    let written = store.commit_blocks(&path, &ids, options(10)).await.unwrap();
    assert!(store.local_file(&path).is_none());
    let file = store.local_file_now(&path).await.expect("one file");
    assert_eq!(std::fs::read(file).unwrap(), b"headtail");
    assert_eq!(store.head(&path).await.unwrap(), written.meta);
    let missing = BlobPath::parse("uploads", "t/missing").unwrap();
    assert!(store.local_file_now(&missing).await.is_none());
}

#[tokio::test]
async fn compaction_in_the_background_follows_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalBlobStore::open_with(dir.path(), Duration::ZERO)
        .await
        .unwrap();
    let path = BlobPath::parse("uploads", "t/soon").unwrap();
    let ids = stage(&store, &path, &[b"one", b"two"]).await;
    let written = store.commit_blocks(&path, &ids, options(10)).await.unwrap();
    let mut waited = 0;
    while store.local_file(&path).is_none() {
        assert!(waited < 500, "compacted within 5 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    assert_eq!(read(&store, &path, None).await, b"onetwo");
    assert_eq!(store.head(&path).await.unwrap(), written.meta);
}

#[tokio::test]
async fn a_read_begun_on_extents_ends_whole_when_the_blob_changes() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/busy").unwrap();
    let parts: Vec<Vec<u8>> = (0..4u8).map(|n| vec![n; 700 * 1024]).collect();
    let slices: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let ids = stage(&store, &path, &slices).await;
    store
        .commit_blocks(&path, &ids, options(1 << 30))
        .await
        .unwrap();
    let version = store.version_at(&path).await.unwrap();
    let read_all = |mut reading: ByteStream, mut got: Vec<u8>| async move {
        while let Some(chunk) = reading.next().await {
            got.extend_from_slice(&chunk.unwrap());
        }
        got
    };
    // Compacted while a read goes on: the read ends in the compacted file.
    let mut reading = store.get(&path, None).await.unwrap().body;
    let first = reading.next().await.unwrap().unwrap().to_vec();
    store.compact(version).await.unwrap();
    assert!(!extents::version_dir(dir.path(), version).exists());
    assert_eq!(read_all(reading, first).await, parts.concat());
    // Replaced by another commit, then deleted, while a read goes on: the replaced
    // version's folder outlives the read.
    let ids = stage(&store, &path, &slices).await;
    store
        .commit_blocks(&path, &ids, options(1 << 30))
        .await
        .unwrap();
    let mut reading = store.get(&path, None).await.unwrap().body;
    let first = reading.next().await.unwrap().unwrap().to_vec();
    store.put(&path, body(b"other"), options(10)).await.unwrap();
    store.delete(&path).await.unwrap();
    let week = Duration::from_secs(7 * 24 * 3600);
    assert_eq!(store.sweep(week).await.unwrap(), 0);
    assert_eq!(read_all(reading, first).await, parts.concat());
    // A read of a version compacted and then replaced fails rather than mix versions.
    let ids = stage(&store, &path, &slices).await;
    store
        .commit_blocks(&path, &ids, options(1 << 30))
        .await
        .unwrap();
    let version = store.version_at(&path).await.unwrap();
    let mut reading = store.get(&path, None).await.unwrap().body;
    let _ = reading.next().await.unwrap().unwrap();
    store.compact(version).await.unwrap();
    store.put(&path, body(b"other"), options(10)).await.unwrap();
    let mut failed = false;
    while let Some(chunk) = reading.next().await {
        if chunk.is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "no bytes of another version are served");
}

#[tokio::test]
async fn a_record_names_its_file_so_an_older_one_is_never_taken() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/record").unwrap();
    let first = WriteOptions {
        properties: labelled(),
        ..options(10)
    };
    store.put(&path, body(b"first"), first).await.unwrap();
    let old_meta = store.head(&path).await.unwrap();
    // Another version appears in place without its record (as when a crash came between
    // the two): its readers get no MD5 and no properties, never the old ones.
    let file = store.blob_file(&path);
    let temp = dir.path().join(TMP_DIR).join("replacement");
    std::fs::write(&temp, b"second").unwrap();
    std::fs::rename(&temp, &file).unwrap();
    let meta = store.head(&path).await.unwrap();
    assert_ne!(meta.etag, old_meta.etag);
    assert_eq!(meta.md5, None);
    assert!(meta.properties.is_empty());
    store.put(&path, body(b"third"), options(10)).await.unwrap();
    let meta = store.head(&path).await.unwrap();
    assert_eq!(meta.md5, Some(<[u8; 16]>::from(Md5::digest(b"third"))));
    let records = std::fs::read_dir(store.records.dir_for_tests(&path))
        .unwrap()
        .count();
    assert_eq!(records, 1, "older records are pruned");
    store.delete(&path).await.unwrap();
    assert!(!store.records.dir_for_tests(&path).exists());
}

#[tokio::test]
async fn properties_written_before_records_are_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/legacy").unwrap();
    let file = store.blob_file(&path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, b"bytes").unwrap();
    let legacy = dir
        .path()
        .join(records::LEGACY_PROPS_DIR)
        .join(hashed_name(&path.key()));
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    std::fs::write(&legacy, serde_json::to_vec(&labelled()).unwrap()).unwrap();
    assert_eq!(store.head(&path).await.unwrap().properties, labelled());
    store.put(&path, body(b"new"), options(10)).await.unwrap();
    assert!(!legacy.exists(), "replaced with the blob");
}

#[tokio::test]
async fn a_blob_cannot_be_a_folder_of_blobs_too() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let file = BlobPath::parse("uploads", "a/b").unwrap();
    let nested = BlobPath::parse("uploads", "a/b/c").unwrap();
    store.put(&file, body(b"x"), options(10)).await.unwrap();
    let error = store
        .put(&nested, body(b"y"), options(10))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::PathConflict(_)), "{error:?}");
    assert!(matches!(
        store.head(&BlobPath::parse("uploads", "a").unwrap()).await,
        Err(BlobError::NotFound(_))
    ));
    // The same with a blob kept as extents.
    let linked = BlobPath::parse("uploads", "e/f").unwrap();
    let ids = stage(&store, &linked, &[b"z"]).await;
    store
        .commit_blocks(&linked, &ids, options(10))
        .await
        .unwrap();
    let below = BlobPath::parse("uploads", "e/f/g").unwrap();
    let ids = stage(&store, &below, &[b"w"]).await;
    let error = store
        .commit_blocks(&below, &ids, options(10))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::PathConflict(_)), "{error:?}");
    assert_eq!(read(&store, &linked, None).await, b"z");
}

#[tokio::test]
async fn sweeping_removes_only_old_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/u").unwrap();
    let block = BlockId::parse("YWJj").unwrap();
    store
        .stage_block(&path, &block, body(b"abc"), options(10))
        .await
        .unwrap();
    assert_eq!(store.sweep(Duration::from_secs(3600)).await.unwrap(), 0);
    assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 1);
    let error = store
        .commit_blocks(&path, &[block], options(10))
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::BlockNotFound(_)));
    // A version folder a crashed commit left unpublished goes too; a published one stays.
    let ids = stage(&store, &path, &[b"kept"]).await;
    store.commit_blocks(&path, &ids, options(10)).await.unwrap();
    std::fs::create_dir_all(extents::version_dir(dir.path(), uuid::Uuid::new_v4())).unwrap();
    assert_eq!(store.sweep(Duration::ZERO).await.unwrap(), 1);
    assert_eq!(read(&store, &path, None).await, b"kept");
}

#[tokio::test]
async fn a_failed_commit_keeps_the_blocks_and_leaves_no_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_without_compaction(dir.path()).await;
    let path = BlobPath::parse("uploads", "t/once").unwrap();
    store.put(&path, body(b"there"), options(10)).await.unwrap();
    let ids = stage(&store, &path, &[b"a", b"b"]).await;
    let create_only = WriteOptions {
        create_only: true,
        ..options(10)
    };
    let error = store
        .commit_blocks(&path, &ids, create_only)
        .await
        .unwrap_err();
    assert!(matches!(error, BlobError::AlreadyExists(_)), "{error:?}");
    let versions = std::fs::read_dir(dir.path().join(EXTENTS_DIR))
        .unwrap()
        .count();
    assert_eq!(versions, 0);
    store.commit_blocks(&path, &ids, options(10)).await.unwrap();
    assert_eq!(read(&store, &path, None).await, b"ab");
}
