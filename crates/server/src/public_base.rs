//! Where clients reach Basin, `scheme://host[:port][/prefix]`: the configured `public_url`, or
//! the `Host` a request came in on. Signed blob URLs are built on it. It sits below every other
//! module (ARCHITECTURE.md), so that the configuration can check `public_url` and the areas
//! and the blob endpoint can build on it without depending on one another.

/// Where clients reach Basin: `scheme://host[:port][/prefix]`, without a trailing slash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublicBase(String);

impl PublicBase {
    /// A configured `public_url`: http or https, a host, no query or fragment.
    pub(crate) fn parse(raw: &str) -> Option<Self> {
        let url = url::Url::parse(raw).ok()?;
        let usable = matches!(url.scheme(), "http" | "https")
            && url.host_str().is_some()
            && url.query().is_none()
            && url.fragment().is_none()
            && url.username().is_empty()
            && url.password().is_none();
        usable.then(|| Self(url.as_str().trim_end_matches('/').to_owned()))
    }

    /// `http://<host>` from a request's `Host` header, if it is a plain authority.
    pub(crate) fn from_host(host: &str) -> Option<Self> {
        let base = Self::parse(&format!("http://{host}"))?;
        let url = url::Url::parse(&base.0).ok()?;
        (url.path() == "/" && !host.contains(['/', '@', '?', '#'])).then_some(base)
    }

    /// The base as text.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn path_prefix(&self) -> String {
        url::Url::parse(&self.0)
            .map(|url| url.path().trim_end_matches('/').to_owned())
            .unwrap_or_default()
    }
}
