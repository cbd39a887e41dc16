//! The URLs an import may fetch ([`FetchUrl`]) and how any URL is shown ([`redact`]).
//!
//! Parsing is the WHATWG URL standard's (the `url` crate), so a host is normalised the way
//! browsers do it: `http://0x7f.1/`, `http://2130706433/` and `http://0177.0.0.1/` all become
//! the IPv4 literal `127.0.0.1`, which the address rules then see. What that parser forgives
//! silently is refused here instead: tabs and newlines inside the URL (the parser drops them,
//! so `exa\nmple.com` would fetch `example.com`) and other control characters.

use std::net::IpAddr;

use percent_encoding::percent_decode_str;
use url::{Host, Url};

use crate::FetchError;
use crate::error::truncate_on_char;

/// Longest URL accepted, in bytes. Presigned S3 and Azure SAS URLs are 0.5 to 2 KiB; 8 KiB is
/// what common HTTP servers accept in a request line.
pub const URL_BYTES_MAX: usize = 8 * 1024;

/// Longest text [`redact`] returns, in bytes; past it the text is cut and ends with `...`.
const REDACTED_BYTES_MAX: usize = URL_BYTES_MAX;

/// The ports the Fetch standard (WHATWG, "bad port") blocks: other protocols (mail, shells,
/// IRC, ...) whose servers would read an HTTP request as commands. Only ftp may use 21.
const BLOCKED_PORTS: [u16; 82] = [
    1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102,
    103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465,
    512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993,
    995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668,
    6669, 6679, 6697, 10080,
];

/// The protocols a fetch speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http://`
    Http,
    /// `https://`
    Https,
    /// `ftp://`, passive mode, binary transfer.
    Ftp,
}

/// A URL that passed the syntax checks of [`crate::Fetcher::check_url`].
///
/// It may carry credentials: `Debug` and `Display` show it [`redact`]ed, and only
/// [`FetchUrl::expose_url`] gives the full text.
#[derive(Clone, PartialEq, Eq)]
pub struct FetchUrl {
    url: Url,
    scheme: Scheme,
}

impl FetchUrl {
    /// Parses and checks `raw` as the URL a user gave: size, characters, scheme, host, port,
    /// and for ftp the credentials and path. Addresses are judged by the caller.
    pub fn parse(raw: &str) -> Result<Self, FetchError> {
        if raw.len() > URL_BYTES_MAX {
            return Err(FetchError::InvalidUrl {
                reason: "it is longer than 8192 bytes",
            });
        }
        if raw.chars().any(char::is_control) {
            return Err(FetchError::InvalidUrl {
                reason: "it contains control characters such as tabs or line breaks",
            });
        }
        let url = Url::parse(raw.trim()).map_err(|_| FetchError::InvalidUrl {
            reason: "it is not an absolute URL",
        })?;
        Self::from_url(url)
    }

    /// Checks an already parsed URL (a redirect target).
    pub(crate) fn from_url(mut url: Url) -> Result<Self, FetchError> {
        let scheme = match url.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            "ftp" => Scheme::Ftp,
            other => {
                let mut scheme = other.to_owned();
                truncate_on_char(&mut scheme, 32);
                return Err(FetchError::SchemeNotAllowed { scheme });
            }
        };
        if url.as_str().len() > URL_BYTES_MAX {
            return Err(FetchError::InvalidUrl {
                reason: "it is longer than 8192 bytes",
            });
        }
        if matches!(url.host(), None | Some(Host::Domain(""))) {
            return Err(FetchError::InvalidUrl {
                reason: "it has no host",
            });
        }
        if url.port() == Some(0) {
            return Err(FetchError::InvalidUrl {
                reason: "port 0 is not a port",
            });
        }
        if let Some(port) = url.port()
            && BLOCKED_PORTS.contains(&port)
            && !(scheme == Scheme::Ftp && port == 21)
        {
            return Err(FetchError::InvalidUrl {
                reason: "the port belongs to another protocol (such as 25 for mail)",
            });
        }
        // The fragment is never sent; dropping it keeps it out of requests and records.
        url.set_fragment(None);
        let checked = Self { url, scheme };
        if scheme == Scheme::Ftp {
            checked.ftp_login()?;
            checked.ftp_path()?;
        }
        Ok(checked)
    }

    /// The protocol.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host as written (normalised), IPv6 literals without brackets.
    pub fn host(&self) -> String {
        match self.url.host() {
            Some(Host::Ipv6(address)) => address.to_string(),
            Some(host) => host.to_string(),
            None => String::new(),
        }
    }

    /// The address of an IP-literal host (`http://10.0.0.1/`, `http://[::1]/`), which no DNS
    /// lookup and so no resolver check ever sees.
    pub fn literal_address(&self) -> Option<IpAddr> {
        match self.url.host()? {
            Host::Ipv4(address) => Some(IpAddr::V4(address)),
            Host::Ipv6(address) => Some(IpAddr::V6(address)),
            Host::Domain(_) => None,
        }
    }

    /// The port, or the scheme's default.
    pub fn port(&self) -> u16 {
        self.url
            .port_or_known_default()
            .unwrap_or(match self.scheme {
                Scheme::Http => 80,
                Scheme::Https => 443,
                Scheme::Ftp => 21,
            })
    }

    /// The parsed URL, credentials included.
    pub(crate) fn url(&self) -> &Url {
        &self.url
    }

    /// The full URL, credentials included: for storing it where the transfer that fetches it
    /// later can read it. Treat it as a secret; show [`FetchUrl::redacted`] instead.
    pub fn expose_url(&self) -> &str {
        self.url.as_str()
    }

    /// The URL as it may be shown: see [`redact`].
    pub fn redacted(&self) -> String {
        redact(self.url.as_str())
    }

    /// Whether the URL carries a user name or password.
    pub fn has_credentials(&self) -> bool {
        !self.url.username().is_empty() || self.url.password().is_some()
    }

    /// Whether `other` has this URL's scheme, host and port, so credentials may go along.
    pub(crate) fn same_origin(&self, other: &Url) -> bool {
        self.url.scheme() == other.scheme()
            && self.url.host() == other.host()
            && self.url.port_or_known_default() == other.port_or_known_default()
    }

    /// The ftp user name and password, percent-decoded; `anonymous` without a user name, as
    /// RFC 1738 says.
    pub(crate) fn ftp_login(&self) -> Result<(String, String), FetchError> {
        let user = decode_ftp_part(self.url.username(), FtpPart::User)?;
        let password = decode_ftp_part(self.url.password().unwrap_or(""), FtpPart::Password)?;
        if user.is_empty() {
            return Ok(("anonymous".to_owned(), "anonymous@".to_owned()));
        }
        Ok((user, password))
    }

    /// The ftp path to retrieve: the URL path without its first `/`, percent-decoded, so
    /// relative to the login directory as RFC 1738 has it (`ftp://host//abs/file` is absolute).
    pub(crate) fn ftp_path(&self) -> Result<String, FetchError> {
        let path = self.url.path().strip_prefix('/').unwrap_or(self.url.path());
        let path = decode_ftp_part(path, FtpPart::Path)?;
        if path.is_empty() || path.ends_with('/') {
            return Err(FetchError::InvalidUrl {
                reason: "an ftp URL must name a file, not a folder",
            });
        }
        Ok(path)
    }
}

/// A part of an ftp URL that is sent to the server in a command.
#[derive(Clone, Copy)]
enum FtpPart {
    User,
    Password,
    Path,
}

impl FtpPart {
    fn not_utf8(self) -> &'static str {
        match self {
            Self::User => "the user name is not UTF-8 once decoded",
            Self::Password => "the password is not UTF-8 once decoded",
            Self::Path => "the path is not UTF-8 once decoded",
        }
    }

    fn line_break(self) -> &'static str {
        match self {
            Self::User => "the user name contains a line break or NUL",
            Self::Password => "the password contains a line break or NUL",
            Self::Path => "the path contains a line break or NUL",
        }
    }
}

/// Percent-decodes part of an ftp URL. FTP commands are lines, so a decoded CR or LF would let
/// the URL append commands of its own (`%0D%0ADELE x`); NUL ends strings on many servers.
fn decode_ftp_part(raw: &str, part: FtpPart) -> Result<String, FetchError> {
    let decoded = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| FetchError::InvalidUrl {
            reason: part.not_utf8(),
        })?;
    if decoded.chars().any(|c| matches!(c, '\r' | '\n' | '\0')) {
        return Err(FetchError::InvalidUrl {
            reason: part.line_break(),
        });
    }
    Ok(decoded.into_owned())
}

impl std::fmt::Debug for FetchUrl {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_tuple("FetchUrl")
            .field(&self.redacted())
            .finish()
    }
}

impl std::fmt::Display for FetchUrl {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.redacted())
    }
}

/// The mask that replaces secrets.
const MASK: &str = "***";

/// `url` as it may be shown in transfer records, logs, events and errors: a user name and
/// password become `***@`, the values of query parameters that carry secrets
/// ([`is_secret_parameter`]) become `***`, the fragment is dropped, and control characters
/// become `?`.
///
/// It works on the text rather than on a parsed URL, so that malformed input is redacted too:
/// `user:secret@host` parses as a URL with the scheme `user` and no user info, and a password
/// with an unencoded `/` (`ftp://me:pa/ss@host/f`) turns into a port and a path. When an `@`
/// follows a `:` after the scheme, everything up to the last `@` before the query is masked,
/// even if that hides a host: leaking is worse than an unclear record.
pub fn redact(url: &str) -> String {
    let cleaned: String = url
        .trim()
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let without_fragment = cleaned.split('#').next().unwrap_or("");
    let (before_query, query) = match without_fragment.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (without_fragment, None),
    };
    let (prefix, rest) = match before_query.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), before_query),
    };
    let mut text = match userinfo_end(rest) {
        Some(end) => format!("{prefix}{MASK}{}", rest.get(end..).unwrap_or("")),
        None => format!("{prefix}{rest}"),
    };
    if let Some(query) = query {
        text.push('?');
        text.push_str(&mask_query(query));
    }
    if text.len() > REDACTED_BYTES_MAX {
        truncate_on_char(&mut text, REDACTED_BYTES_MAX.saturating_sub(3));
        text.push_str("...");
    }
    text
}

/// Where the user info of `rest` (a URL after `scheme://`, before the query) ends: the index
/// of its last `@`. That is the `@` in the authority (up to the first `/` or backslash), or, when
/// a `:` comes before the first `@`, the last `@` at all (see [`redact`]).
fn userinfo_end(rest: &str) -> Option<usize> {
    let authority_end = rest.find(['/', '\\']).unwrap_or(rest.len());
    let authority = rest.get(..authority_end).unwrap_or(rest);
    if let Some(at) = authority.rfind('@') {
        return Some(at);
    }
    let first_at = rest.find('@')?;
    rest.get(..first_at)?
        .contains(':')
        .then(|| rest.rfind('@'))
        .flatten()
}

/// The query with the value of every secret parameter replaced by [`MASK`]; names, order and
/// other values stay as they were.
fn mask_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if is_secret_parameter(name) => format!("{name}={MASK}"),
            _ => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Query parameter names whose values are secrets, compared case-insensitively: signatures of
/// presigned S3, GCS and Azure SAS URLs, tokens, keys and passwords.
const SECRET_PARAMETERS: [&str; 22] = [
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
    "awsaccesskeyid",
    "googleaccessid",
    "token",
    "access_token",
    "id_token",
    "refresh_token",
    "auth",
    "authorization",
    "code",
    "key",
    "api_key",
    "apikey",
    "password",
    "pass",
    "secret",
];

/// Name fragments that mark a parameter as secret wherever they appear (`client_secret`,
/// `sessionToken`, `db_password`).
const SECRET_FRAGMENTS: [&str; 6] = [
    "token",
    "secret",
    "password",
    "passwd",
    "signature",
    "credential",
];

/// Whether the query parameter `name` (raw, possibly percent-encoded) carries a secret.
fn is_secret_parameter(name: &str) -> bool {
    let decoded = percent_decode_str(&name.replace('+', " "))
        .decode_utf8_lossy()
        .to_ascii_lowercase();
    let decoded = decoded.trim();
    SECRET_PARAMETERS.contains(&decoded)
        || SECRET_FRAGMENTS
            .iter()
            .any(|fragment| decoded.contains(fragment))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_masks_credentials_and_signatures() {
        for (raw, expected) in [
            (
                "https://example.com/a/b.dfsu",
                "https://example.com/a/b.dfsu",
            ),
            (
                "ftp://user:p%40ss%3Aw%2Frd@ftp.example.com:2121/dir/file.dfsu",
                "ftp://***@ftp.example.com:2121/dir/file.dfsu",
            ),
            (
                "ftp://justuser@ftp.example.com/f",
                "ftp://***@ftp.example.com/f",
            ),
            ("ftp://:pw@ftp.example.com/f", "ftp://***@ftp.example.com/f"),
            (
                "https://acct.blob.core.windows.net/c/b.nc?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=abc%2Bdef%3D",
                "https://acct.blob.core.windows.net/c/b.nc?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=***",
            ),
            (
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20240101&X-Amz-Signature=0123abcd&X-Amz-Security-Token=tok",
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Security-Token=***",
            ),
            (
                "https://storage.googleapis.com/b/o?X-Goog-Signature=ff&GoogleAccessId=me&Expires=1",
                "https://storage.googleapis.com/b/o?X-Goog-Signature=***&GoogleAccessId=***&Expires=1",
            ),
            (
                "http://example.com/f?token=t1&access_token=t2&client_secret=s&api_key=k&page=2",
                "http://example.com/f?token=***&access_token=***&client_secret=***&api_key=***&page=2",
            ),
            (
                "http://example.com/f?SIG=x&Sig=y&%73ig=z&sessionToken=q",
                "http://example.com/f?SIG=***&Sig=***&%73ig=***&sessionToken=***",
            ),
            (
                "https://u:pw@example.com/f?sig=s#access_token=frag",
                "https://***@example.com/f?sig=***",
            ),
            (
                "http://example.com/f?flag&sig",
                "http://example.com/f?flag&sig",
            ),
        ] {
            assert_eq!(redact(raw), expected, "{raw}");
        }
    }

    #[test]
    fn redact_handles_text_that_is_not_a_url() {
        assert_eq!(
            redact("ftp://us er:pa ss@host name/f?sig=abc"),
            "ftp://***@host name/f?sig=***"
        );
        assert_eq!(redact("user:secret@host/path"), "***@host/path");
        assert_eq!(redact("not\ta url\n"), "not?a url");
        assert_eq!(redact("http://[::1/x?token=a#b"), "http://[::1/x?token=***");
        assert_eq!(redact("mailto:someone@example.com"), "***@example.com");
        // A password with an unencoded `/` or `@`: still masked, host and all.
        assert_eq!(redact("ftp://me:pa/ss@host/f"), "ftp://***@host/f");
        assert_eq!(
            redact("http://me:1234/ss@host/f?sig=x"),
            "http://***@host/f?sig=***"
        );
        assert_eq!(redact("ftp://me:p@ss@host/f"), "ftp://***@host/f");
        assert_eq!(redact("http://me:p\\ss@host/f"), "http://***@host/f");
        // An `@` in a path without a `:` before it is no user info.
        assert_eq!(
            redact("https://unpkg.com/@scope/pkg@1.0/f"),
            "https://unpkg.com/@scope/pkg@1.0/f"
        );
        let long = format!("http://example.com/{}", "a".repeat(10_000));
        let shown = redact(&long);
        assert!(shown.len() <= REDACTED_BYTES_MAX);
        assert!(shown.ends_with("..."));
    }

    #[test]
    fn redacted_text_never_contains_the_password() {
        for password in ["p%40ss%3Aw%2Frd", "hunter2", "%F0%9F%94%91key", "a%0Ab"] {
            for raw in [
                format!("ftp://user:{password}@example.com/f"),
                format!("https://user:{password}@example.com/f?x=1"),
                format!("ftp://user:{password}@exa mple.com/f"),
            ] {
                let shown = redact(&raw);
                assert!(!shown.contains(password), "{raw} -> {shown}");
                assert!(!shown.contains("user"), "{raw} -> {shown}");
            }
        }
    }

    #[test]
    fn parse_decodes_ftp_credentials_and_path() {
        let url =
            FetchUrl::parse("ftp://us%65r:p%40ss%3Aw%2Frd@ftp.example.com:2121/dir/my%20file.dfsu")
                .unwrap();
        assert_eq!(url.scheme(), Scheme::Ftp);
        assert_eq!(
            url.ftp_login().unwrap(),
            ("user".to_owned(), "p@ss:w/rd".to_owned())
        );
        assert_eq!(url.ftp_path().unwrap(), "dir/my file.dfsu");
        assert_eq!(url.port(), 2121);
        assert_eq!(url.host(), "ftp.example.com");
        assert!(url.has_credentials());
        assert!(url.expose_url().contains("p%40ss"));
        assert!(!format!("{url:?} {url}").contains("p%40ss"));

        let anonymous = FetchUrl::parse("ftp://ftp.example.com//pub/f.nc").unwrap();
        assert_eq!(
            anonymous.ftp_login().unwrap(),
            ("anonymous".to_owned(), "anonymous@".to_owned())
        );
        assert_eq!(anonymous.ftp_path().unwrap(), "/pub/f.nc");
        assert_eq!(anonymous.port(), 21);
        assert_eq!(
            FetchUrl::parse("ftp://h.example.com:21/f").unwrap().port(),
            21
        );
        assert_eq!(
            FetchUrl::parse("http://h.example.com:8080/f")
                .unwrap()
                .port(),
            8080
        );
        assert!(!anonymous.has_credentials());
    }

    #[test]
    fn parse_refuses_what_cannot_be_fetched() {
        let long = format!("http://example.com/{}", "a".repeat(URL_BYTES_MAX));
        for raw in [
            "",
            "example.com/file",
            "/relative/path",
            "http://exa\nmple.com/",
            "http://example.com/\tx",
            "http://example.com/\0",
            "http://example.com:0/",
            "http://example.com:65536/",
            "http://example.com:25/",
            "https://example.com:22/",
            "http://example.com:21/",
            "ftp://ftp.example.com:25/f",
            "ftp://ftp.example.com/",
            "ftp://ftp.example.com/dir/",
            "ftp://ftp.example.com/a%0D%0ADELE%20b",
            "ftp://us%0Aer:pw@ftp.example.com/f",
            "ftp://user:p%0Dw@ftp.example.com/f",
            "ftp://user:p%FFw@ftp.example.com/f",
            "ftp://ftp.example.com/a%00b",
            &long,
        ] {
            assert!(
                matches!(FetchUrl::parse(raw), Err(FetchError::InvalidUrl { .. })),
                "{raw:?}: {:?}",
                FetchUrl::parse(raw)
            );
        }
    }

    #[test]
    fn parse_refuses_other_schemes() {
        for (raw, scheme) in [
            ("file:///etc/passwd", "file"),
            ("gopher://example.com/", "gopher"),
            ("data:text/plain,hello", "data"),
            ("javascript:alert(1)", "javascript"),
            ("ftps://example.com/f", "ftps"),
            ("sftp://example.com/f", "sftp"),
            ("ws://example.com/", "ws"),
            ("HTTPX://example.com/", "httpx"),
        ] {
            match FetchUrl::parse(raw) {
                Err(FetchError::SchemeNotAllowed { scheme: found }) => {
                    assert_eq!(found, scheme, "{raw}");
                }
                other => panic!("{raw}: {other:?}"),
            }
        }
    }

    #[test]
    fn parse_normalises_numeric_hosts_to_literals() {
        for raw in [
            "http://0x7f.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://127.0.0.1./",
        ] {
            let url = FetchUrl::parse(raw).unwrap();
            assert_eq!(
                url.literal_address(),
                Some("127.0.0.1".parse().unwrap()),
                "{raw}"
            );
        }
        let mapped = FetchUrl::parse("http://[::ffff:127.0.0.1]/").unwrap();
        assert_eq!(
            mapped.literal_address(),
            Some("::ffff:127.0.0.1".parse().unwrap())
        );
        assert_eq!(mapped.host(), "::ffff:127.0.0.1");
        assert_eq!(
            FetchUrl::parse("HTTP://Example.COM/").unwrap().host(),
            "example.com"
        );
        assert_eq!(
            FetchUrl::parse("https://example.com/")
                .unwrap()
                .literal_address(),
            None
        );
    }

    #[test]
    fn same_origin_compares_scheme_host_and_port() {
        let url = FetchUrl::parse("http://u:p@example.com/a").unwrap();
        assert!(url.same_origin(&Url::parse("http://example.com:80/b").unwrap()));
        assert!(!url.same_origin(&Url::parse("https://example.com/b").unwrap()));
        assert!(!url.same_origin(&Url::parse("http://example.com:81/b").unwrap()));
        assert!(!url.same_origin(&Url::parse("http://other.example.com/b").unwrap()));
    }
}
