//! Exclusive file locks (`flock`) that serialise work between processes sharing a folder: the
//! publishing of a blob path in the local blob store, and the migration of a SQLite store.
//! A lock is held for as long as the returned file is open; closing it, or the process ending
//! in any way, releases it, so a crashed holder never leaves a stale lock behind.
//!
//! Two opens of the same file in one process exclude each other as two processes do (an
//! `flock` belongs to the open file, not to the process), so tasks of one process may take it
//! too.

use std::io;
use std::path::PathBuf;

/// Opens (creating it when missing) the lock file at `path` and waits until this open holds
/// its exclusive lock. The wait runs on a blocking thread.
pub async fn lock_exclusive(path: PathBuf) -> io::Result<std::fs::File> {
    tokio::task::spawn_blocking(move || {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        file.lock()?;
        Ok(file)
    })
    .await
    .map_err(io::Error::other)?
}
