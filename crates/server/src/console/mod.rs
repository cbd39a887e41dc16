//! The Basin console: a browser front end served at `/` by the same binary (docs/console.md).
//!
//! The console is plain HTML, CSS and JavaScript modules in `crates/server/console`, embedded at
//! build time (build.rs) so `basin serve` needs nothing else, and talks to Basin only through
//! the public API. The server's part is small and strict: hashed names with year-long caching
//! (assets.rs), a Content-Security-Policy that allows scripts, styles and connections from this
//! origin only (no inline script, no eval, Trusted Types for the one place that renders HTML:
//! the sanitized banner), compression, and the deployment's settings (an optional basemap) as
//! `<meta>` elements of the page.
//!
//! `console.dir` serves the files from a folder instead, rebuilt whenever the page is asked
//! for: for working on the console without rebuilding the binary.

mod assets;
mod routes;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use anyhow::Context;
use axum::http::HeaderValue;

pub(crate) use routes::router;

use crate::config::ConsoleConfig;
use crate::public_base::PublicBase;
use assets::{AssetError, AssetSet};

include!(concat!(env!("OUT_DIR"), "/console_files.rs"));

/// The console's files and the headers they are served with.
pub(crate) struct Console {
    assets: RwLock<Arc<AssetSet>>,
    /// Serve from this folder instead of the embedded files (`console.dir`).
    dir: Option<PathBuf>,
    settings: BTreeMap<&'static str, String>,
    content_security_policy: HeaderValue,
}

impl Console {
    /// The console as configured, or `None` when `console.enabled` is off.
    pub(crate) fn new(
        config: &ConsoleConfig,
        public_url: Option<&PublicBase>,
    ) -> anyhow::Result<Option<Arc<Self>>> {
        if !config.enabled {
            return Ok(None);
        }
        let mut settings = BTreeMap::new();
        settings.insert("feature", config.feature_id.clone());
        if let Some(basemap) = &config.basemap_url {
            settings.insert("basemap", basemap.clone());
            settings.insert(
                "basemap-attribution",
                config.basemap_attribution.clone().unwrap_or_default(),
            );
        }
        let assets = match &config.dir {
            Some(dir) => read_dir(dir, &settings)?,
            None => embedded(&settings)?,
        };
        let policy = content_security_policy(
            config.basemap_url.as_deref().and_then(origin_of),
            public_url.and_then(|base| origin_of(base.as_str())),
        );
        Ok(Some(Arc::new(Self {
            assets: RwLock::new(Arc::new(assets)),
            dir: config.dir.clone(),
            settings,
            content_security_policy: HeaderValue::from_str(&policy)
                .context("the console's Content-Security-Policy is not a header value")?,
        })))
    }

    /// The files now served.
    fn assets(&self) -> Arc<AssetSet> {
        match self.assets.read() {
            Ok(assets) => assets.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// With `console.dir`, reads the folder again (a failure keeps the previous files and is
    /// logged).
    fn reload(&self) {
        let Some(dir) = &self.dir else { return };
        match read_dir(dir, &self.settings) {
            Ok(fresh) => match self.assets.write() {
                Ok(mut assets) => *assets = Arc::new(fresh),
                Err(poisoned) => *poisoned.into_inner() = Arc::new(fresh),
            },
            Err(error) => tracing::warn!(error = %format!("{error:#}"), "console.dir not reloaded"),
        }
    }
}

fn embedded(settings: &BTreeMap<&str, String>) -> Result<AssetSet, AssetError> {
    AssetSet::build(
        CONSOLE_FILES.iter().map(|(name, bytes)| (*name, *bytes)),
        settings,
    )
}

fn read_dir(dir: &std::path::Path, settings: &BTreeMap<&str, String>) -> anyhow::Result<AssetSet> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if entry.file_type()?.is_file() && !name.starts_with('.') {
            files.push((name, std::fs::read(entry.path())?));
        }
    }
    Ok(AssetSet::build(
        files
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.as_slice())),
        settings,
    )?)
}

/// `scheme://host[:port]` of a URL or URL template (`{z}` and the like are not part of an
/// origin).
fn origin_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(&url.replace(['{', '}'], "")).ok()?;
    matches!(parsed.scheme(), "http" | "https")
        .then(|| parsed.origin().ascii_serialization())
        .filter(|origin| origin != "null")
}

/// Scripts, styles, fonts and connections from this origin only; images also from the
/// basemap's origin (and `data:`/`blob:`, which canvases and downloads make); connections
/// also to `public_url` when it names another origin (signed blob URLs are built on it).
/// Trusted Types leave one way to put HTML into the page: the `basin-banner` policy, which
/// only takes bodies the console has sanitized.
fn content_security_policy(
    basemap_origin: Option<String>,
    public_origin: Option<String>,
) -> String {
    let images = basemap_origin.map_or_else(String::new, |origin| format!(" {origin}"));
    let connections = public_origin.map_or_else(String::new, |origin| format!(" {origin}"));
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:{images}; \
         connect-src 'self'{connections}; font-src 'self'; manifest-src 'self'; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; \
         trusted-types basin-banner"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_of_templates_and_bases() {
        assert_eq!(
            origin_of("https://tile.example.org/{z}/{x}/{y}.png").as_deref(),
            Some("https://tile.example.org")
        );
        assert_eq!(
            origin_of("http://10.0.0.5:8081/wmts/{z}/{y}/{x}").as_deref(),
            Some("http://10.0.0.5:8081")
        );
        assert_eq!(origin_of("javascript:alert(1)"), None);
        assert_eq!(origin_of("not a url"), None);
    }

    #[test]
    fn the_policy_allows_nothing_inline() {
        let policy = content_security_policy(Some("https://t.example".into()), None);
        assert!(policy.contains("script-src 'self';"));
        assert!(policy.contains("img-src 'self' data: blob: https://t.example;"));
        assert!(!policy.contains("unsafe"));
    }
}
