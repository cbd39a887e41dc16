//! The running MD5 of an upload's blocks in the order they were staged, so that a commit that
//! names them in that order knows the whole blob's MD5 without reading the blob again.
//!
//! Each staged block is hashed into its upload's chain as soon as it is stored, while its
//! bytes are still in the page cache; blocks staged in parallel join in the order they finish.
//! A commit whose list is exactly the chain (the same ids, the same files, in the same order)
//! takes the chain's MD5; any other commit reads its blocks once more to hash them. Chains
//! live in memory: after a restart, or for an upload that re-staged a block, the commit hashes.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use md5::{Digest, Md5};

use crate::blob::blocks::BlockId;

/// Uploads with a chain at once; past this, new uploads go without one (and hash on commit),
/// so that staging blocks for many paths cannot grow memory without bound.
const CHAINS_MAX: usize = 10_000;

/// The chain of one upload.
struct Chain {
    md5: Md5,
    /// Each block hashed, with the inode of the file that was hashed.
    blocks: Vec<(BlockId, u64)>,
    named: HashSet<BlockId>,
    /// A block was staged twice or could not be hashed: the chain no longer describes a
    /// possible blob.
    broken: bool,
    touched: Instant,
}

impl Chain {
    fn new() -> Self {
        Self {
            md5: Md5::new(),
            blocks: Vec::new(),
            named: HashSet::new(),
            broken: false,
            touched: Instant::now(),
        }
    }
}

/// The chains of a store, by the hashed name of the blob path.
#[derive(Default)]
pub(super) struct Chains {
    uploads: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<Chain>>>>,
}

impl std::fmt::Debug for Chains {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self
            .uploads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Chains").field("uploads", &count).finish()
    }
}

impl Chains {
    /// Adds the block just stored at `file` to the chain of upload `key`.
    pub(super) async fn extend(&self, key: &str, block: &BlockId, file: &Path) {
        let chain = {
            let mut uploads = self.uploads.lock().unwrap_or_else(PoisonError::into_inner);
            match uploads.get(key) {
                Some(chain) => chain.clone(),
                None if uploads.len() >= CHAINS_MAX => return,
                None => uploads
                    .entry(key.to_owned())
                    .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Chain::new())))
                    .clone(),
            }
        };
        let mut chain = chain.lock().await;
        chain.touched = Instant::now();
        if chain.broken {
            return;
        }
        if chain.named.contains(block) {
            chain.broken = true;
            return;
        }
        let md5 = chain.md5.clone();
        let file = file.to_owned();
        match tokio::task::spawn_blocking(move || hash_into(md5, &file)).await {
            Ok(Ok((md5, inode))) => {
                chain.md5 = md5;
                chain.blocks.push((block.clone(), inode));
                chain.named.insert(block.clone());
            }
            _ => chain.broken = true,
        }
    }

    /// Takes the chain of upload `key` and answers its MD5 if it is exactly `list` (block ids
    /// with the inode of each file committed).
    pub(super) async fn take_if_exactly(
        &self,
        key: &str,
        list: &[(BlockId, u64)],
    ) -> Option<[u8; 16]> {
        let chain = self
            .uploads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key)?;
        let chain = chain.lock().await;
        (!chain.broken && chain.blocks == list).then(|| chain.md5.clone().finalize().into())
    }

    /// Forgets the chain of upload `key` (its blocks are gone).
    pub(super) fn forget(&self, key: &str) {
        self.uploads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// Forgets chains untouched for `age`, as their blocks are swept.
    pub(super) fn forget_older(&self, age: Duration) {
        let now = Instant::now();
        self.uploads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, chain| {
                chain
                    .try_lock()
                    .map_or(true, |chain| now.duration_since(chain.touched) < age)
            });
    }
}

/// Feeds the file at `path` into `md5`; answers it with the file's inode. Blocking.
fn hash_into(mut md5: Md5, path: &PathBuf) -> std::io::Result<(Md5, u64)> {
    let mut file = std::fs::File::open(path)?;
    let inode = inode_of(&file.metadata()?);
    let mut buffer = vec![0_u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer)?;
        match buffer.get(..read) {
            Some(chunk) if !chunk.is_empty() => md5.update(chunk),
            _ => return Ok((md5, inode)),
        }
    }
}

/// The inode of a file (0 where there are none).
pub(super) fn inode_of(metadata: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    return std::os::unix::fs::MetadataExt::ino(metadata);
    #[cfg(not(unix))]
    {
        let _ = metadata;
        0
    }
}
