//! HTTP and HTTPS fetches with reqwest, made safe for user-given URLs.
//!
//! Three things keep a fetch from reaching internal addresses:
//! - The client resolves names only through [`CheckedResolver`], which refuses the whole name
//!   when any address it resolves to is refused, and hands the connector exactly the checked
//!   addresses. There is no second lookup between check and connect, so DNS rebinding has
//!   nothing to race.
//! - reqwest does not call the resolver for IP-literal hosts, so [`check_literal`] checks them
//!   before each request.
//! - Redirects are off in the client and followed here, one at a time, each target checked
//!   as above; https to http and any other scheme are refused.
//!
//! The client also ignores proxy settings from the environment (`HTTP_PROXY`): through a proxy
//! the resolver would only ever see the proxy's name, and the proxy would connect anywhere.

use std::sync::Arc;

use reqwest::StatusCode;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE, LOCATION};

use crate::address::AddressRules;
use crate::error::{ResolveError, Timeout, describe_chain, find_cause};
use crate::sink::{FileSink, clean_content_type, file_name_from_disposition, file_name_from_path};
use crate::urls::{FetchUrl, Scheme};
use crate::{FetchError, FetchPolicy, Fetched, resolve_checked};

/// Builds the client every HTTP fetch of one [`crate::Fetcher`] uses.
pub(crate) fn client(
    policy: &FetchPolicy,
    rules: Arc<AddressRules>,
) -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(CheckedResolver { rules }))
        .connect_timeout(policy.connect_timeout)
        // Per read, headers included; the body loop has its own per-chunk deadline too.
        .read_timeout(policy.idle_timeout)
        .referer(false)
        .user_agent(concat!("basin/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(FetchError::Client)
}

/// Resolves with the system resolver (tokio's `lookup_host`) and lets a name through only when
/// every address is allowed.
struct CheckedResolver {
    rules: Arc<AddressRules>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let rules = Arc::clone(&self.rules);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addresses = resolve_checked(&rules, &host, 0).await?;
            let addresses: Addrs = Box::new(addresses.into_iter());
            Ok(addresses)
        })
    }
}

/// Refuses an IP-literal host that the rules refuse.
pub(crate) fn check_literal(url: &FetchUrl, rules: &AddressRules) -> Result<(), FetchError> {
    let Some(address) = url.literal_address() else {
        return Ok(());
    };
    rules
        .check(address)
        .map_err(|class| FetchError::AddressRefused {
            host: url.host(),
            class,
        })
}

/// Fetches `url`, following redirects, into `sink`.
pub(crate) async fn fetch(
    client: &reqwest::Client,
    policy: &FetchPolicy,
    rules: &AddressRules,
    url: &FetchUrl,
    mut sink: FileSink<'_>,
) -> Result<Fetched, FetchError> {
    let mut current = url.clone();
    let mut redirects: u8 = 0;
    let response = loop {
        check_literal(&current, rules)?;
        let response = client
            .get(current.url().clone())
            .send()
            .await
            .map_err(|error| map_error(error, policy))?;
        let status = response.status();
        if !is_followed_redirect(status) {
            break response;
        }
        if redirects >= policy.redirects_max {
            return Err(FetchError::TooManyRedirects {
                limit: policy.redirects_max,
            });
        }
        redirects = redirects.saturating_add(1);
        let next = redirect_target(&current, &response)?;
        tracing::debug!(from = %current, to = %next, "following a redirect");
        current = next;
    };
    let status = response.status();
    if !status.is_success() {
        return Err(status_error(status));
    }
    let headers = response.headers();
    let file_name = headers
        .get(CONTENT_DISPOSITION)
        .and_then(|value| value.to_str().ok())
        .and_then(file_name_from_disposition)
        .or_else(|| file_name_from_path(current.url().path()));
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(clean_content_type);
    sink.announce_size(response.content_length())?;
    copy_body(response, &mut sink, policy).await?;
    let size_bytes = sink.finish().await?;
    Ok(Fetched {
        size_bytes,
        file_name,
        content_type,
    })
}

/// Streams the body into `sink`, failing when nothing arrives for the idle timeout.
async fn copy_body(
    mut response: reqwest::Response,
    sink: &mut FileSink<'_>,
    policy: &FetchPolicy,
) -> Result<(), FetchError> {
    loop {
        let chunk = tokio::time::timeout(policy.idle_timeout, response.chunk())
            .await
            .map_err(|_| FetchError::TimedOut(Timeout::Idle(policy.idle_timeout)))?
            .map_err(|error| map_error(error, policy))?;
        let Some(chunk) = chunk else {
            return Ok(());
        };
        sink.write(&chunk).await?;
    }
}

/// The redirect statuses that carry a `Location` to follow with GET; 300, 304 and 305 are not
/// redirects a download can follow.
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

/// The checked target of a redirect from `current`.
fn redirect_target(
    current: &FetchUrl,
    response: &reqwest::Response,
) -> Result<FetchUrl, FetchError> {
    let location = response
        .headers()
        .get(LOCATION)
        .ok_or(FetchError::RedirectRefused {
            reason: "the redirect has no Location",
        })?
        .to_str()
        .map_err(|_| FetchError::RedirectRefused {
            reason: "the Location of the redirect is not ASCII",
        })?;
    next_url(current, location)
}

/// Resolves `location` against `current` and checks it. The user's credentials go along only
/// to the same scheme, host and port, so a redirect cannot collect them elsewhere.
pub(crate) fn next_url(current: &FetchUrl, location: &str) -> Result<FetchUrl, FetchError> {
    if location.chars().any(char::is_control) {
        return Err(FetchError::RedirectRefused {
            reason: "the Location of the redirect contains control characters",
        });
    }
    let mut next = current
        .url()
        .join(location)
        .map_err(|_| FetchError::RedirectRefused {
            reason: "the Location of the redirect is not a URL",
        })?;
    match next.scheme() {
        "http" if current.scheme() == Scheme::Https => {
            return Err(FetchError::RedirectRefused {
                reason: "it leads from https to plain http",
            });
        }
        "http" | "https" => {}
        _ => {
            return Err(FetchError::RedirectRefused {
                reason: "it leads to a scheme other than http or https",
            });
        }
    }
    let next_has_credentials = !next.username().is_empty() || next.password().is_some();
    if current.has_credentials() && !next_has_credentials && current.same_origin(&next) {
        // Both succeed: `next` is http(s) with a host.
        let _ = next.set_username(current.url().username());
        let _ = next.set_password(current.url().password());
    }
    FetchUrl::from_url(next).map_err(|error| match error {
        FetchError::InvalidUrl { reason } => FetchError::RedirectRefused { reason },
        other => other,
    })
}

/// The error of a final status that is not a success. The body is never read into it.
pub(crate) fn status_error(status: StatusCode) -> FetchError {
    let status = status.as_u16();
    match status {
        401 | 403 | 407 => FetchError::AccessDenied { status },
        404 | 410 => FetchError::NotFound { status },
        _ => FetchError::Status { status },
    }
}

/// Maps a reqwest error: a refusal of the resolver comes back as itself, timeouts as the limit
/// that ran out, anything else as a network failure described without the URL.
fn map_error(error: reqwest::Error, policy: &FetchPolicy) -> FetchError {
    if let Some(resolve) = find_cause::<ResolveError>(&error) {
        return resolve.clone().into();
    }
    if error.is_timeout() {
        return FetchError::TimedOut(if error.is_connect() {
            Timeout::Connect(policy.connect_timeout)
        } else {
            Timeout::Idle(policy.idle_timeout)
        });
    }
    let first = error.without_url();
    let detail = describe_chain(first.to_string(), &first);
    FetchError::Network { detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(raw: &str) -> FetchUrl {
        FetchUrl::parse(raw).unwrap()
    }

    #[test]
    fn redirects_resolve_relative_locations() {
        let next = next_url(&url("http://example.com/a/b?x=1"), "../c?y=2").unwrap();
        assert_eq!(next.expose_url(), "http://example.com/c?y=2");
        let next = next_url(&url("http://example.com/a"), "//other.example.com/d").unwrap();
        assert_eq!(next.expose_url(), "http://other.example.com/d");
        let next = next_url(&url("http://example.com/a"), "https://example.com/e").unwrap();
        assert_eq!(next.scheme(), Scheme::Https);
    }

    #[test]
    fn redirects_refuse_downgrades_and_other_schemes() {
        for (from, location) in [
            ("https://example.com/a", "http://example.com/a"),
            ("http://example.com/a", "ftp://example.com/a"),
            ("http://example.com/a", "file:///etc/passwd"),
            ("http://example.com/a", "gopher://example.com/"),
            ("http://example.com/a", "data:text/plain,x"),
            ("http://example.com/a", "http://exa\nmple.com/"),
            ("http://example.com/a", "http://example.com:0/"),
            ("http://example.com/a", "http://[::1/"),
        ] {
            let refused = next_url(&url(from), location);
            assert!(
                matches!(refused, Err(FetchError::RedirectRefused { .. })),
                "{from} -> {location}: {refused:?}"
            );
        }
        // A scheme-relative Location keeps https, so it is no downgrade.
        let kept = next_url(&url("https://example.com/a"), "//example.org:80/a").unwrap();
        assert_eq!(kept.scheme(), Scheme::Https);
    }

    #[test]
    fn credentials_follow_only_same_origin_redirects() {
        let from = url("http://user:secret@example.com/a");
        let same = next_url(&from, "/b").unwrap();
        assert_eq!(same.expose_url(), "http://user:secret@example.com/b");
        let other = next_url(&from, "http://elsewhere.example.com/b").unwrap();
        assert_eq!(other.expose_url(), "http://elsewhere.example.com/b");
        let other_port = next_url(&from, "http://example.com:8080/b").unwrap();
        assert!(!other_port.has_credentials());
        let own = next_url(&from, "http://other:pw@example.com/b").unwrap();
        assert_eq!(own.expose_url(), "http://other:pw@example.com/b");
    }

    #[test]
    fn statuses_map_to_clear_errors() {
        for (status, expected) in [
            (401, "refused access (status 401)"),
            (403, "refused access (status 403)"),
            (404, "no file at this URL (status 404)"),
            (410, "no file at this URL (status 410)"),
            (500, "answered with status 500"),
            (300, "answered with status 300"),
        ] {
            let error = status_error(StatusCode::from_u16(status).unwrap());
            assert!(error.to_string().contains(expected), "{status}: {error}");
        }
    }
}
