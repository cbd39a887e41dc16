//! Local copies of blobs for readers that need a file: the tiles area and EDR queries read
//! datasets with basin-formats, which reads paths. A local blob is hard-linked (so a content
//! replacement during the read cannot change what is read, and nothing is copied); a blob of
//! an object store is downloaded. Each read gets its own folder, removed when the read ends;
//! folders left by a process that stopped mid-read are swept when the next one starts.

use std::path::{Path, PathBuf};

use basin_blob::{BlobPath, BlobStore};

/// Staged folders older than this at startup were left by a process that stopped mid-read.
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// A folder under the work folder where one area stages the files it reads.
#[derive(Debug, Clone)]
pub(crate) struct Staging {
    folder: PathBuf,
}

impl Staging {
    /// The staging folder `name` under `work_dir`. Its leftovers are swept in the background
    /// when a runtime is running.
    pub(crate) fn new(work_dir: &Path, name: &str) -> Self {
        let folder = work_dir.join(name);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let swept = folder.clone();
            runtime.spawn_blocking(move || {
                let removed = sweep(&swept, LEFTOVER_AGE);
                if removed > 0 {
                    tracing::info!(removed, folder = %swept.display(), "removed files left by interrupted reads");
                }
            });
        }
        Self { folder }
    }

    /// Runs `read` on the blocking pool with the blob at `data_path` as a local file named
    /// `source{suffix}`; the file is removed afterwards.
    pub(crate) async fn with_file<T: Send + 'static>(
        &self,
        blobs: &dyn BlobStore,
        data_path: &str,
        suffix: &str,
        read: impl FnOnce(&Path) -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        let path = BlobPath::parse_key(data_path)
            .map_err(|error| anyhow::anyhow!("the dataset has a bad data path: {error}"))?;
        let folder = self.folder.join(uuid::Uuid::new_v4().to_string());
        tokio::fs::create_dir_all(&folder).await?;
        let target = folder.join(format!("source{suffix}"));
        let staged = stage(blobs, &path, &target).await;
        let result = match staged {
            Ok(()) => tokio::task::spawn_blocking({
                let target = target.clone();
                move || read(&target)
            })
            .await
            .map_err(anyhow::Error::from),
            Err(error) => Err(error),
        };
        let _ = tokio::fs::remove_dir_all(&folder).await;
        result
    }
}

/// Puts the blob at `path` at `target`: a hard link for local blobs, else a download.
async fn stage(blobs: &dyn BlobStore, path: &BlobPath, target: &Path) -> anyhow::Result<()> {
    if let Some(file) = blobs.local_file_now(path).await
        && tokio::fs::hard_link(&file, target).await.is_ok()
        && basin_blob::linked_a_file(target).await
    {
        return Ok(());
    }
    let read = blobs.get(path, None).await?;
    let mut file = tokio::fs::File::create(target).await?;
    let mut body = read.body;
    while let Some(chunk) = futures::StreamExt::next(&mut body).await {
        let chunk = chunk?;
        tokio::io::AsyncWriteExt::write_all(&mut file, &chunk).await?;
    }
    tokio::io::AsyncWriteExt::flush(&mut file).await?;
    Ok(())
}

/// Removes the folders in `staging` last changed more than `age` ago; returns how many.
/// Errors (a folder gone meanwhile, no permission) skip that folder.
fn sweep(staging: &Path, age: std::time::Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(staging) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok())
                .is_some_and(|elapsed| elapsed > age)
        })
        .filter(|entry| std::fs::remove_dir_all(entry.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_are_swept_by_age() {
        let work = tempfile::tempdir().unwrap();
        let old = work.path().join("old");
        let fresh = work.path().join("fresh");
        for folder in [&old, &fresh] {
            std::fs::create_dir_all(folder).unwrap();
            std::fs::write(folder.join("source.tif"), b"x").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        assert_eq!(sweep(work.path(), LEFTOVER_AGE), 1);
        assert!(!old.exists());
        assert!(fresh.join("source.tif").exists());
        assert_eq!(sweep(&work.path().join("missing"), LEFTOVER_AGE), 0);
    }
}
