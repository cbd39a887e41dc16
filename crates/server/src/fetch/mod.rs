//! Outbound fetches of user-given URLs, for imports (docs/fetch.md).
//!
//! The conversion service imports files from URLs a user gives: http, https, or ftp with a
//! percent-encoded user name and password. A URL from a user is a request to make the server
//! connect somewhere, so this module decides where it may (server-side request forgery):
//! - [`Fetcher::check_url`] checks a URL when a request names it, so a bad one is a 400
//!   before any transfer exists: scheme, syntax, and IP-literal hosts.
//! - [`Fetcher::fetch_to_file`] checks again at every step: each name after DNS resolution,
//!   connecting only to the addresses checked, and each redirect target. Private, loopback,
//!   link-local (cloud metadata) and other non-public addresses are refused unless the
//!   operator allows them ([`FetchPolicy`]).
//! - Size, time and redirects are bounded, and a failed fetch leaves no partial file.
//! - URLs carry secrets (passwords, signatures); [`redact`] is how one is shown anywhere.
//!
//! `address.rs` judges addresses, `urls.rs` parses and redacts URLs, `http.rs` and `ftp.rs`
//! speak the protocols, `sink.rs` writes the file.

mod address;
mod error;
mod ftp;
mod http;
mod sink;
#[cfg(test)]
mod tests;
mod urls;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub(crate) use address::IpNetwork;
pub(crate) use error::FetchError;
pub(crate) use urls::FetchUrl;

use crate::fetch::error::Timeout;
use crate::fetch::urls::Scheme;

use crate::fetch::address::AddressRules;
use crate::fetch::error::ResolveError;
use crate::fetch::sink::FileSink;
use crate::limits;

/// Default largest file a fetch accepts: the largest blob (`limits::UPLOAD_BYTES_MAX`), since
/// an imported file ends up as one, so a larger download would only be thrown away.
pub(crate) const FETCH_BYTES_MAX: u64 = limits::UPLOAD_BYTES_MAX;
/// Default time to establish a connection (DNS included): a healthy server answers in well
/// under a second, a far one in a few; 30 s is what browsers wait.
pub(crate) const FETCH_CONNECT_TIMEOUT_MS: u64 = 30_000;
/// Default time a fetch may wait for the next byte (or FTP reply): as for uploads
/// (`limits::UPLOAD_IDLE_TIMEOUT_MS`), long enough for a busy server, short enough that a
/// stalled one frees its worker within a minute.
pub(crate) const FETCH_IDLE_TIMEOUT_MS: u64 = limits::UPLOAD_IDLE_TIMEOUT_MS;
/// Default time a whole fetch may take: 6 hours moves the largest file (5 GiB) at 250 KB/s,
/// a slow line; a transfer still running after that is stuck rather than slow.
pub(crate) const FETCH_TOTAL_TIMEOUT_MS: u64 = 6 * 3600 * 1000;
/// Default most redirects followed: download links redirect once or twice (a short link, a
/// CDN); 5 leaves room, and fewer hops mean fewer addresses to trust.
pub(crate) const FETCH_REDIRECTS_MAX: u8 = 5;
/// Most addresses of one host name that are checked and tried; DNS answers rarely hold more
/// than a few, and the bound keeps a hostile resolver from handing over thousands.
pub(crate) const ADDRESSES_PER_HOST_MAX: usize = 32;

/// What a fetch may do. Built from configuration by the server; [`Default`] is the policy of
/// a deployment that set nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FetchPolicy {
    /// Allow every address class except unspecified, multicast and broadcast: for a
    /// deployment inside a trusted network whose imports come from internal servers.
    pub(crate) allow_private: bool,
    /// Networks always allowed, even when private (`10.1.0.0/16`, `fd00:1::/64`).
    pub(crate) allowed_networks: Vec<IpNetwork>,
    /// Largest file, in bytes.
    pub(crate) bytes_max: u64,
    /// Longest wait for a connection, DNS included.
    pub(crate) connect_timeout: Duration,
    /// Longest wait for the next byte or reply.
    pub(crate) idle_timeout: Duration,
    /// Longest whole fetch.
    pub(crate) total_timeout: Duration,
    /// Most redirects followed.
    pub(crate) redirects_max: u8,
}

impl Default for FetchPolicy {
    fn default() -> Self {
        Self {
            allow_private: false,
            allowed_networks: Vec::new(),
            bytes_max: FETCH_BYTES_MAX,
            connect_timeout: Duration::from_millis(FETCH_CONNECT_TIMEOUT_MS),
            idle_timeout: Duration::from_millis(FETCH_IDLE_TIMEOUT_MS),
            total_timeout: Duration::from_millis(FETCH_TOTAL_TIMEOUT_MS),
            redirects_max: FETCH_REDIRECTS_MAX,
        }
    }
}

/// What a successful fetch produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fetched {
    /// Bytes written to the destination file.
    pub(crate) size_bytes: u64,
    /// A file name for the import: the `Content-Disposition` file name, else the last segment
    /// of the final URL's path, percent-decoded; cleaned of folders and control characters.
    pub(crate) file_name: Option<String>,
    /// The `Content-Type` the server sent (HTTP only).
    pub(crate) content_type: Option<String>,
}

/// Fetches user-given URLs under a [`FetchPolicy`]. Cheap to clone: clones share one HTTP
/// client and its connection pool.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
    policy: Arc<FetchPolicy>,
    rules: Arc<AddressRules>,
}

impl Fetcher {
    /// A fetcher for `policy`. Fails only when the TLS setup of the HTTP client fails.
    pub(crate) fn new(policy: FetchPolicy) -> Result<Self, FetchError> {
        let rules = Arc::new(AddressRules {
            allow_private: policy.allow_private,
            allowed_networks: policy.allowed_networks.clone(),
        });
        let client = http::client(&policy, Arc::clone(&rules))?;
        Ok(Self {
            client,
            policy: Arc::new(policy),
            rules,
        })
    }

    /// Checks a URL without fetching it: at most 8 KiB, no control characters, scheme http,
    /// https or ftp, a host, a port other than 0, for ftp a file path and credentials without
    /// line breaks, and an IP-literal host allowed by the policy. Host names are judged when
    /// the fetch resolves them: their addresses may change until then.
    pub(crate) fn check_url(&self, raw: &str) -> Result<FetchUrl, FetchError> {
        let url = FetchUrl::parse(raw)?;
        http::check_literal(&url, &self.rules)?;
        Ok(url)
    }

    /// Fetches `url` into `dest`, which is created or truncated. `progress` is called with the
    /// bytes written so far and the announced total: at the start, every
    /// [`sink::PROGRESS_STEP_BYTES`] and at the end. On any failure, `dest` is removed.
    pub(crate) async fn fetch_to_file(
        &self,
        url: &FetchUrl,
        dest: &Path,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<Fetched, FetchError> {
        // Created before the clock starts, so that a timeout cannot cancel a creation that
        // would then finish after the clean-up below.
        let file = tokio::fs::File::create(dest)
            .await
            .map_err(FetchError::File)?;
        let sink = FileSink::new(file, self.policy.bytes_max, progress);
        let total_timeout = self.policy.total_timeout;
        let outcome = tokio::time::timeout(total_timeout, self.fetch_into(url, sink))
            .await
            .unwrap_or(Err(FetchError::TimedOut(Timeout::Total(total_timeout))));
        match &outcome {
            Ok(fetched) => {
                tracing::debug!(url = %url, size_bytes = fetched.size_bytes, "fetched");
            }
            Err(error) => {
                tracing::debug!(url = %url, %error, "fetch failed");
                remove_partial(dest).await;
            }
        }
        outcome
    }

    async fn fetch_into(&self, url: &FetchUrl, sink: FileSink<'_>) -> Result<Fetched, FetchError> {
        match url.scheme() {
            Scheme::Http | Scheme::Https => {
                http::fetch(&self.client, &self.policy, &self.rules, url, sink).await
            }
            Scheme::Ftp => ftp::fetch(&self.policy, &self.rules, url, sink).await,
        }
    }
}

/// Removes what a failed fetch wrote. A file already gone is fine; another failure is logged,
/// as the caller's clean-up of its own folder is the remaining safety net.
async fn remove_partial(dest: &Path) {
    match tokio::fs::remove_file(dest).await {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            tracing::warn!(path = %dest.display(), %error, "could not remove a partial fetch");
        }
    }
}

/// Resolves `host` and returns its addresses (at most [`ADDRESSES_PER_HOST_MAX`]) when every
/// one is allowed. One refused address refuses the name: a name that resolves to a public and
/// a private address is an attempt to get the private one tried.
pub(crate) async fn resolve_checked(
    rules: &AddressRules,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, ResolveError> {
    let not_found = || ResolveError::NotFound {
        host: host.to_owned(),
    };
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|_| not_found())?
        .take(ADDRESSES_PER_HOST_MAX)
        .collect();
    if addresses.is_empty() {
        return Err(not_found());
    }
    for address in &addresses {
        rules
            .check(address.ip())
            .map_err(|class| ResolveError::Refused {
                host: host.to_owned(),
                class,
            })?;
    }
    Ok(addresses)
}
