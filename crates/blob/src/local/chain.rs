//! The running MD5 of an upload's blocks in the order their uploads began, so that a commit
//! that names them in that order knows the whole blob's MD5 without reading the blob again.
//!
//! Clients stage blocks in list order, several at once: the Azure SDKs hand block 1 to a
//! second worker while block 0 is still on its way, so blocks *finish* in any order but *begin*
//! in list order. Each block takes a place in its upload's chain when it begins; when it is
//! stored, it and every stored block after it whose turn has come are hashed into the chain,
//! from the page cache, while later blocks still arrive. A commit whose list is exactly the
//! hashed blocks (the same ids, the same files, in the same order, none pending) takes the
//! chain's MD5; any other commit reads its blocks once more to hash them. Chains live in
//! memory: after a restart, or for an upload that staged a block twice, the commit hashes.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use md5::{Digest, Md5};

use crate::blocks::BlockId;

/// Uploads with a chain at once; past this, new uploads go without one (and hash on commit),
/// so that staging blocks for many paths cannot grow memory without bound.
const CHAINS_MAX: usize = 10_000;

/// A block that began, waiting for its turn to be hashed.
struct Pending {
    ticket: u64,
    block: BlockId,
    /// `None` while it is being received; then its file, or the error that ended it.
    outcome: Option<Result<PathBuf, ()>>,
}

/// The chain of one upload.
struct Chain {
    md5: Md5,
    /// Each block hashed, with the inode of the file that was hashed.
    hashed: Vec<(BlockId, u64)>,
    pending: VecDeque<Pending>,
    named: HashSet<BlockId>,
    next_ticket: u64,
    /// A block was staged twice or could not be hashed: the chain no longer describes a
    /// possible blob.
    broken: bool,
    touched: Instant,
}

impl Chain {
    fn new() -> Self {
        Self {
            md5: Md5::new(),
            hashed: Vec::new(),
            pending: VecDeque::new(),
            named: HashSet::new(),
            next_ticket: 0,
            broken: false,
            touched: Instant::now(),
        }
    }

    /// Hashes the blocks at the front that are stored; drops those that failed.
    async fn advance(&mut self) {
        while let Some(front) = self.pending.front() {
            let Some(outcome) = &front.outcome else {
                return;
            };
            let file = outcome.clone();
            let block = front.block.clone();
            self.pending.pop_front();
            let Ok(file) = file else {
                // A failed attempt takes no place; the client sends the block again, later.
                self.named.remove(&block);
                continue;
            };
            if self.broken {
                continue;
            }
            let md5 = self.md5.clone();
            match tokio::task::spawn_blocking(move || hash_into(md5, &file)).await {
                Ok(Ok((md5, inode))) => {
                    self.md5 = md5;
                    self.hashed.push((block, inode));
                }
                _ => self.broken = true,
            }
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

/// A block's place in its upload's chain, taken when it begins. Dropped without
/// [`Place::stored`] (the upload failed, or its request went away), it gives its place up.
pub(super) struct Place {
    chain: Arc<tokio::sync::Mutex<Chain>>,
    ticket: u64,
    settled: bool,
}

impl Place {
    /// The block is stored at `file`: it is hashed when its turn comes, with the stored blocks
    /// after it.
    pub(super) async fn stored(mut self, file: &Path) {
        self.settled = true;
        settle(&self.chain, self.ticket, Ok(file.to_owned())).await;
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let chain = self.chain.clone();
        let ticket = self.ticket;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { settle(&chain, ticket, Err(())).await });
        }
    }
}

async fn settle(chain: &tokio::sync::Mutex<Chain>, ticket: u64, outcome: Result<PathBuf, ()>) {
    let mut chain = chain.lock().await;
    chain.touched = Instant::now();
    if let Some(pending) = chain
        .pending
        .iter_mut()
        .find(|pending| pending.ticket == ticket)
    {
        pending.outcome = Some(outcome);
    }
    chain.advance().await;
}

impl Chains {
    /// Takes the next place in the chain of upload `key` for `block`, which begins now.
    pub(super) async fn begin(&self, key: &str, block: &BlockId) -> Option<Place> {
        let chain = {
            let mut uploads = self.uploads.lock().unwrap_or_else(PoisonError::into_inner);
            match uploads.get(key) {
                Some(chain) => chain.clone(),
                None if uploads.len() >= CHAINS_MAX => return None,
                None => uploads
                    .entry(key.to_owned())
                    .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Chain::new())))
                    .clone(),
            }
        };
        let ticket = {
            let mut locked = chain.lock().await;
            locked.touched = Instant::now();
            if !locked.named.insert(block.clone()) {
                locked.broken = true;
            }
            let ticket = locked.next_ticket;
            locked.next_ticket = ticket.saturating_add(1);
            locked.pending.push_back(Pending {
                ticket,
                block: block.clone(),
                outcome: None,
            });
            ticket
        };
        Some(Place {
            chain,
            ticket,
            settled: false,
        })
    }

    /// Takes the chain of upload `key` and answers its MD5 if it is exactly `list` (block ids
    /// with the inode of each file committed), with no block pending.
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
        (!chain.broken && chain.pending.is_empty() && chain.hashed == list)
            .then(|| chain.md5.clone().finalize().into())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> BlockId {
        BlockId::parse(&base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            [n],
        ))
        .unwrap()
    }

    fn inode(file: &Path) -> u64 {
        inode_of(&std::fs::metadata(file).unwrap())
    }

    #[tokio::test]
    async fn blocks_finishing_out_of_order_are_hashed_in_the_order_they_began() {
        let dir = tempfile::tempdir().unwrap();
        let chains = Chains::default();
        let files: Vec<PathBuf> = (0..3u8)
            .map(|n| {
                let file = dir.path().join(n.to_string());
                std::fs::write(&file, [n; 100]).unwrap();
                file
            })
            .collect();
        let places = [
            chains.begin("u", &id(0)).await.unwrap(),
            chains.begin("u", &id(1)).await.unwrap(),
            chains.begin("u", &id(2)).await.unwrap(),
        ];
        let [first, second, third] = places;
        third.stored(&files[2]).await;
        second.stored(&files[1]).await;
        first.stored(&files[0]).await;
        let list: Vec<(BlockId, u64)> = (0..3u8)
            .map(|n| (id(n), inode(&files[usize::from(n)])))
            .collect();
        let expected: [u8; 16] = Md5::digest([[0u8; 100], [1; 100], [2; 100]].concat()).into();
        assert_eq!(chains.take_if_exactly("u", &list).await, Some(expected));
        assert_eq!(chains.take_if_exactly("u", &list).await, None, "taken once");
    }

    #[tokio::test]
    async fn another_order_a_pending_block_or_a_block_staged_twice_gives_no_md5() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("block");
        std::fs::write(&file, b"bytes").unwrap();
        let chains = Chains::default();
        for (n, block) in [id(0), id(1)].iter().enumerate() {
            chains
                .begin("order", block)
                .await
                .unwrap()
                .stored(&file)
                .await;
            let _ = n;
        }
        let reversed = [(id(1), inode(&file)), (id(0), inode(&file))];
        assert_eq!(chains.take_if_exactly("order", &reversed).await, None);

        chains
            .begin("pending", &id(0))
            .await
            .unwrap()
            .stored(&file)
            .await;
        let _running = chains.begin("pending", &id(1)).await.unwrap();
        let first = [(id(0), inode(&file))];
        assert_eq!(chains.take_if_exactly("pending", &first).await, None);

        chains
            .begin("twice", &id(0))
            .await
            .unwrap()
            .stored(&file)
            .await;
        chains
            .begin("twice", &id(0))
            .await
            .unwrap()
            .stored(&file)
            .await;
        assert_eq!(chains.take_if_exactly("twice", &first).await, None);
    }

    #[tokio::test]
    async fn a_failed_block_gives_its_place_up_and_may_be_sent_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("block");
        std::fs::write(&file, b"bytes").unwrap();
        let chains = Chains::default();
        let failed = chains.begin("u", &id(0)).await.unwrap();
        drop(failed);
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        chains.begin("u", &id(0)).await.unwrap().stored(&file).await;
        let expected: [u8; 16] = Md5::digest(b"bytes").into();
        let list = [(id(0), inode(&file))];
        assert_eq!(chains.take_if_exactly("u", &list).await, Some(expected));
    }
}
