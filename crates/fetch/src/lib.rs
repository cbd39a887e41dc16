//! Outbound fetches of user-given URLs, made safe against server-side request forgery (SSRF):
//! Basin's imports from http, https and ftp URLs (docs/fetch.md in the repository).
//!
//! A URL from a user is a request to make the server connect somewhere. A [`Fetcher`] decides
//! where it may, and fetches into a local file within bounds of size and time. It knows nothing
//! of HTTP servers, databases or Basin's configuration: the caller builds a [`FetchPolicy`]
//! (the server from its `[fetch]` settings and its upload limit) and hands it over.
//!
//! # What it promises
//!
//! **URLs** ([`Fetcher::check_url`], [`FetchUrl::parse`]): at most [`URL_BYTES_MAX`] bytes, no
//! control characters (tabs and line breaks are refused, not silently dropped), scheme `http`,
//! `https` or `ftp` (no `ftps`, `file`, `data`, ...), a host, a port other than 0 and other
//! than the ports the Fetch standard blocks (`ftp` may use 21). Numeric hosts are normalised
//! as browsers do (`http://2130706433/` is `127.0.0.1`). For ftp, the percent-decoded user
//! name, password and path hold no line break or NUL, and the path names a file; without a
//! user name the login is `anonymous`. The fragment is dropped.
//!
//! **Addresses** ([`AddressClass`]): only public unicast addresses are reached. Refused are
//! unspecified, loopback, private (`10/8`, `172.16/12`, `192.168/16`, `fc00::/7`,
//! `fec0::/10`), link-local (`169.254/16`, the cloud metadata endpoint, and `fe80::/10`),
//! carrier-grade NAT (`100.64/10`), documentation and benchmarking, multicast, broadcast and
//! reserved addresses; IPv6 is an allow-list (`2000::/3` less documentation and `2001::/23`).
//! IPv6 addresses that carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by it.
//! [`FetchPolicy::allow_private`] and [`FetchPolicy::allowed_networks`] open the internal
//! classes, never unspecified, multicast or broadcast. The check holds at every step:
//! - an IP-literal host is checked when the URL is, so a refused one fails before any fetch;
//! - a host name is resolved by the fetch itself, and refused when any of its addresses (at
//!   most [`ADDRESSES_PER_HOST_MAX`]) is; the connection goes to exactly the addresses checked,
//!   with no second lookup for DNS rebinding to race;
//! - every redirect target is checked like the first URL;
//! - an FTP passive data connection goes to the server of the control connection, whatever
//!   address the server names;
//! - proxy settings of the environment (`HTTP_PROXY`) are ignored.
//!
//! **Redirects**: 301, 302, 303, 307 and 308 are followed one at a time, at most
//! [`FetchPolicy::redirects_max`] ([`FETCH_REDIRECTS_MAX`] by default). A redirect from https
//! to http, or to any scheme but http and https, is refused. Credentials in the URL go along
//! only to the same scheme, host and port.
//!
//! **Limits** (defaults in brackets): size [`FetchPolicy::bytes_max`] ([`FETCH_BYTES_MAX`],
//! 5 GiB), refused by an announced `Content-Length` before a byte is read and by the bytes
//! when they pass it; connection, DNS included, [`FetchPolicy::connect_timeout`]
//! ([`FETCH_CONNECT_TIMEOUT_MS`], 30 s); idle, no byte or FTP reply,
//! [`FetchPolicy::idle_timeout`] ([`FETCH_IDLE_TIMEOUT_MS`], 60 s); the whole fetch
//! [`FetchPolicy::total_timeout`] ([`FETCH_TOTAL_TIMEOUT_MS`], 6 hours). Only 2xx answers are
//! success, and a failed fetch leaves no partial file.
//!
//! **Secrets**: URLs carry passwords and signatures. A [`FetchError`] never holds the URL, its
//! credentials, or text the remote server sent (bodies, FTP replies): only the host, a status
//! code, a limit or fixed text, so it may be shown to the user. [`FetchUrl`] shows itself
//! [`redact`]ed, and [`redact`] is how any URL is shown anywhere.
//!
//! # Layout
//! `address.rs` judges addresses, `urls.rs` parses and redacts URLs, `http.rs` and `ftp.rs`
//! speak the protocols, `sink.rs` writes the file, `error.rs` holds [`FetchError`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

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

pub use address::{AddressClass, IpNetwork, IpNetworkError};
pub use error::{FetchError, Timeout};
pub use sink::PROGRESS_STEP_BYTES;
pub use urls::{FetchUrl, Scheme, URL_BYTES_MAX, redact};

use crate::address::AddressRules;
use crate::error::ResolveError;
use crate::sink::FileSink;

/// Default largest file a fetch accepts: 5 GiB, the largest blob of a Basin server (its
/// `limits::UPLOAD_BYTES_MAX`, checked equal at compile time there), since an imported file
/// ends up as one, so a larger download would only be thrown away. The server passes its
/// configured upload limit as [`FetchPolicy::bytes_max`].
pub const FETCH_BYTES_MAX: u64 = 5 * 1024 * 1024 * 1024;
/// Default time to establish a connection (DNS included): a healthy server answers in well
/// under a second, a far one in a few; 30 s is what browsers wait.
pub const FETCH_CONNECT_TIMEOUT_MS: u64 = 30_000;
/// Default time a fetch may wait for the next byte (or FTP reply): as for uploads to a Basin
/// server (its `limits::UPLOAD_IDLE_TIMEOUT_MS`, checked equal at compile time there), long
/// enough for a busy server, short enough that a stalled one frees its worker within a minute.
pub const FETCH_IDLE_TIMEOUT_MS: u64 = 60_000;
/// Default time a whole fetch may take: 6 hours moves the largest file (5 GiB) at 250 KB/s,
/// a slow line; a transfer still running after that is stuck rather than slow.
pub const FETCH_TOTAL_TIMEOUT_MS: u64 = 6 * 3600 * 1000;
/// Default most redirects followed: download links redirect once or twice (a short link, a
/// CDN); 5 leaves room, and fewer hops mean fewer addresses to trust.
pub const FETCH_REDIRECTS_MAX: u8 = 5;
/// Most addresses of one host name that are checked and tried; DNS answers rarely hold more
/// than a few, and the bound keeps a hostile resolver from handing over thousands.
pub const ADDRESSES_PER_HOST_MAX: usize = 32;

/// What a fetch may do. Built from configuration by the server; [`Default`] is the policy of
/// a deployment that set nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPolicy {
    /// Allow every address class except unspecified, multicast and broadcast: for a
    /// deployment inside a trusted network whose imports come from internal servers.
    pub allow_private: bool,
    /// Networks always allowed, even when private (`10.1.0.0/16`, `fd00:1::/64`).
    pub allowed_networks: Vec<IpNetwork>,
    /// Largest file, in bytes.
    pub bytes_max: u64,
    /// Longest wait for a connection, DNS included.
    pub connect_timeout: Duration,
    /// Longest wait for the next byte or reply.
    pub idle_timeout: Duration,
    /// Longest whole fetch.
    pub total_timeout: Duration,
    /// Most redirects followed.
    pub redirects_max: u8,
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
pub struct Fetched {
    /// Bytes written to the destination file.
    pub size_bytes: u64,
    /// A file name for the import: the `Content-Disposition` file name, else the last segment
    /// of the final URL's path, percent-decoded; cleaned of folders and control characters.
    pub file_name: Option<String>,
    /// The `Content-Type` the server sent (HTTP only).
    pub content_type: Option<String>,
}

/// Fetches user-given URLs under a [`FetchPolicy`]. Cheap to clone: clones share one HTTP
/// client and its connection pool.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    policy: Arc<FetchPolicy>,
    rules: Arc<AddressRules>,
}

impl Fetcher {
    /// A fetcher for `policy`. Fails only when the TLS setup of the HTTP client fails.
    pub fn new(policy: FetchPolicy) -> Result<Self, FetchError> {
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
    pub fn check_url(&self, raw: &str) -> Result<FetchUrl, FetchError> {
        let url = FetchUrl::parse(raw)?;
        http::check_literal(&url, &self.rules)?;
        Ok(url)
    }

    /// Fetches `url` into `dest`, which is created or truncated. `progress` is called with the
    /// bytes written so far and the announced total: at the start, every
    /// [`PROGRESS_STEP_BYTES`] and at the end. On any failure, `dest` is removed.
    pub async fn fetch_to_file(
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
