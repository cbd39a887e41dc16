//! [`FetchError`]: why an outbound fetch failed.
//!
//! Every message may be shown to the user who gave the URL (a 400 at validation, the error of a
//! transfer), so none carries the URL itself, its credentials or signature, or anything the
//! remote server sent in a body or reply text: only the host, a status code, a limit or fixed
//! text. Lower-level errors are reduced to their description without the URL
//! (`reqwest::Error::without_url`).

use std::fmt;
use std::time::Duration;

use crate::address::AddressClass;

/// Why a fetch, or the check of its URL, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL is malformed or cannot be fetched; `reason` is fixed text, never URL content.
    #[error("the URL is not valid: {reason}")]
    InvalidUrl {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A scheme other than http, https or ftp (`file:`, `gopher:`, `data:`, `ftps:` ...).
    #[error("the URL scheme {scheme:?} is not supported; use http, https or ftp")]
    SchemeNotAllowed {
        /// The scheme, lower case, shortened to 32 characters.
        scheme: String,
    },
    /// The host is, or resolves to, an address imports may not reach (loopback, private,
    /// link-local, ...). The user's fault: a 400 at validation, a failed transfer later.
    #[error("the host {host} is or resolves to a {class} address, which imports may not reach")]
    AddressRefused {
        /// The host as written in the URL.
        host: String,
        /// Why its address is refused.
        class: AddressClass,
    },
    /// DNS knows no address for the host.
    #[error("the host {host} could not be resolved")]
    HostNotFound {
        /// The host as written in the URL.
        host: String,
    },
    /// The server refused the credentials or the signature (HTTP 401, 403, 407; FTP 530).
    #[error(
        "the server refused access (status {status}); check the user name and password, or the signature, in the URL"
    )]
    AccessDenied {
        /// HTTP status or FTP reply code.
        status: u16,
    },
    /// The server has no such file (HTTP 404, 410; FTP 550).
    #[error("the server has no file at this URL (status {status})")]
    NotFound {
        /// HTTP status or FTP reply code.
        status: u16,
    },
    /// Any other status that is not a success.
    #[error("the server answered with status {status}")]
    Status {
        /// HTTP status or FTP reply code.
        status: u16,
    },
    /// The file is larger than `FetchPolicy::bytes_max`, by its announced size or its bytes.
    #[error("the file is larger than the limit of {limit_bytes} bytes")]
    TooLarge {
        /// The limit.
        limit_bytes: u64,
    },
    /// A time limit ran out.
    #[error("{0}")]
    TimedOut(Timeout),
    /// The server redirected more often than `FetchPolicy::redirects_max`.
    #[error("the server redirected more than {limit} times")]
    TooManyRedirects {
        /// The limit.
        limit: u8,
    },
    /// A redirect that is not followed: to another scheme, from https to http, malformed.
    #[error("refused to follow a redirect: {reason}")]
    RedirectRefused {
        /// Why, as fixed text.
        reason: &'static str,
    },
    /// The connection failed or broke.
    #[error("network failure: {detail}")]
    Network {
        /// The failure, without the URL.
        detail: String,
    },
    /// The server does not speak the protocol as expected (a malformed FTP reply, ...).
    #[error("the server broke the protocol: {detail}")]
    Protocol {
        /// What went wrong, as fixed text.
        detail: &'static str,
    },
    /// Writing the destination file failed (a server-side fault, not the user's).
    #[error("could not write the fetched file")]
    File(#[source] std::io::Error),
    /// The HTTP client could not be built (a server-side fault).
    #[error("the HTTP client could not be built")]
    Client(#[source] reqwest::Error),
}

/// Which time limit ran out, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// No connection within `FetchPolicy::connect_timeout`.
    Connect(Duration),
    /// Nothing arrived for `FetchPolicy::idle_timeout`.
    Idle(Duration),
    /// The whole fetch took longer than `FetchPolicy::total_timeout`.
    Total(Duration),
}

impl fmt::Display for Timeout {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect(limit) => write!(
                formatter,
                "timed out: no connection to the server within {}",
                Seconds(*limit)
            ),
            Self::Idle(limit) => write!(
                formatter,
                "timed out: the server sent nothing for {}",
                Seconds(*limit)
            ),
            Self::Total(limit) => write!(
                formatter,
                "timed out: the transfer took longer than {}",
                Seconds(*limit)
            ),
        }
    }
}

/// A duration as `60 s`, or `250 ms` when it is not whole seconds.
struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.subsec_millis() == 0 {
            write!(formatter, "{} s", self.0.as_secs())
        } else {
            write!(formatter, "{} ms", self.0.as_millis())
        }
    }
}

/// A resolver failure, carried through reqwest's error chain from the resolver back to
/// [`FetchError`] (a `reqwest::Error` cannot hold a `FetchError` by value).
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ResolveError {
    /// See [`FetchError::AddressRefused`].
    #[error("the host {host} resolves to a {class} address")]
    Refused {
        /// The host.
        host: String,
        /// Why.
        class: AddressClass,
    },
    /// See [`FetchError::HostNotFound`].
    #[error("the host {host} could not be resolved")]
    NotFound {
        /// The host.
        host: String,
    },
}

impl From<ResolveError> for FetchError {
    fn from(error: ResolveError) -> Self {
        match error {
            ResolveError::Refused { host, class } => Self::AddressRefused { host, class },
            ResolveError::NotFound { host } => Self::HostNotFound { host },
        }
    }
}

/// Most causes followed down an error chain: chains are a handful deep, and a cycle must not
/// loop forever.
const ERROR_CHAIN_DEPTH_MAX: usize = 16;

/// Longest network failure detail kept, in bytes.
const NETWORK_DETAIL_BYTES_MAX: usize = 500;

/// The first error of type `T` in the chain of `error`, `error` included.
pub(crate) fn find_cause<'a, T: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut current = Some(error);
    for _ in 0..ERROR_CHAIN_DEPTH_MAX {
        let cause = current?;
        if let Some(found) = cause.downcast_ref::<T>() {
            return Some(found);
        }
        current = cause.source();
    }
    None
}

/// `first` and the messages of the causes of `error`, joined by `: `, repeats dropped, at most
/// [`NETWORK_DETAIL_BYTES_MAX`] bytes. For reqwest errors `first` is the message of
/// `without_url()`, so the URL is never part of it.
pub(crate) fn describe_chain(first: String, error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = first;
    let mut current = error.source();
    for _ in 0..ERROR_CHAIN_DEPTH_MAX {
        let Some(cause) = current else { break };
        let message = cause.to_string();
        if !message.is_empty() && !text.ends_with(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        current = cause.source();
    }
    truncate_on_char(&mut text, NETWORK_DETAIL_BYTES_MAX);
    text
}

/// Shortens `text` to at most `bytes_max` bytes on a character boundary.
pub(crate) fn truncate_on_char(text: &mut String, bytes_max: usize) {
    if text.len() <= bytes_max {
        return;
    }
    let end = text
        .char_indices()
        .map(|(index, _)| index)
        .take_while(|index| *index <= bytes_max)
        .last()
        .unwrap_or(0);
    text.truncate(end);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_say_which_limit_ran_out() {
        assert_eq!(
            FetchError::TimedOut(Timeout::Idle(Duration::from_secs(60))).to_string(),
            "timed out: the server sent nothing for 60 s"
        );
        assert_eq!(
            FetchError::TimedOut(Timeout::Total(Duration::from_millis(250))).to_string(),
            "timed out: the transfer took longer than 250 ms"
        );
        assert_eq!(
            FetchError::TimedOut(Timeout::Connect(Duration::from_secs(30))).to_string(),
            "timed out: no connection to the server within 30 s"
        );
    }

    #[test]
    fn truncation_keeps_characters_whole() {
        let mut text = "aé".repeat(10);
        truncate_on_char(&mut text, 4);
        assert_eq!(text, "aéa");
        let mut short = String::from("abc");
        truncate_on_char(&mut short, 10);
        assert_eq!(short, "abc");
    }
}
