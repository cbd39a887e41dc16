//! The HS256 signing secret. With no `auth.jwt_secret` configured, Basin generates one on first
//! start and keeps it in the data dir, so the embedded default needs no set-up and tokens stay
//! valid across restarts.

use std::io::Write;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use secrecy::{ExposeSecret, SecretString};

/// File in the data dir holding the generated secret.
pub(super) const SECRET_FILE: &str = "jwt-secret";
/// Shorter configured secrets are refused: HS256 wants at least 256 bits of key.
pub(super) const SECRET_BYTES_MIN: usize = 32;

/// The secret bytes, never printed.
#[derive(Clone)]
pub struct SigningSecret(SecretString);

impl std::fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningSecret(***)")
    }
}

impl SigningSecret {
    /// Wraps a secret.
    #[cfg(test)]
    pub(crate) fn new(secret: SecretString) -> Self {
        Self(secret)
    }

    /// The raw bytes, for signing.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.0.expose_secret().as_bytes()
    }
}

/// Why no secret could be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SecretError {
    /// The configured secret is too short.
    #[error("auth.jwt_secret must be at least {SECRET_BYTES_MIN} bytes long")]
    TooShort,
    /// Reading or writing the secret file failed.
    #[error("cannot read or write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The configured secret, or the one kept in `data_dir` (created on first use). Processes
/// starting together on a new folder all end with the one secret that was published first:
/// the secret is written whole to a file of its own and then hard-linked into place, which
/// fails if another process got there first (a file created in place would be seen empty by
/// a process reading it between its creation and its write).
pub(crate) fn load_or_create_secret(
    configured: Option<&SecretString>,
    data_dir: &Path,
) -> Result<SigningSecret, SecretError> {
    if let Some(secret) = configured {
        if secret.expose_secret().len() < SECRET_BYTES_MIN {
            return Err(SecretError::TooShort);
        }
        return Ok(SigningSecret(secret.clone()));
    }
    let path = data_dir.join(SECRET_FILE);
    let io_error = |source| SecretError::Io {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(data_dir).map_err(io_error)?;
    if path.exists() {
        return read_stored(&path);
    }
    let mut random = [0u8; 48];
    aws_lc_rs::rand::fill(&mut random)
        .map_err(|_| io_error(std::io::Error::other("no randomness")))?;
    let fresh = STANDARD.encode(random);
    let staged = data_dir.join(format!(".{SECRET_FILE}.{}", uuid::Uuid::new_v4().simple()));
    let published = create_private_file(&staged)
        .and_then(|mut file| {
            file.write_all(fresh.as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| std::fs::hard_link(&staged, &path));
    let _ = std::fs::remove_file(&staged);
    match published {
        Ok(()) => Ok(SigningSecret(SecretString::from(fresh))),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => read_stored(&path),
        Err(error) => Err(io_error(error)),
    }
}

/// The secret kept in the file at `path`.
fn read_stored(path: &Path) -> Result<SigningSecret, SecretError> {
    let stored = std::fs::read_to_string(path).map_err(|source| SecretError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let stored = stored.trim().to_owned();
    if stored.len() < SECRET_BYTES_MIN {
        return Err(SecretError::TooShort);
    }
    Ok(SigningSecret(SecretString::from(stored)))
}

fn create_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_secret_is_kept_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create_secret(None, dir.path()).unwrap();
        let second = load_or_create_secret(None, dir.path()).unwrap();
        assert_eq!(first.bytes(), second.bytes());
        assert!(first.bytes().len() >= SECRET_BYTES_MIN);
    }

    #[test]
    fn a_short_configured_secret_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let short = SecretString::from("short");
        assert!(matches!(
            load_or_create_secret(Some(&short), dir.path()),
            Err(SecretError::TooShort)
        ));
    }
}
