//! `[console]`: the browser console served at `/` (docs/console.md).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// The browser console served at `/` (docs/console.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsoleConfig {
    /// Serve the console at `/` (off leaves `/` a 404, for API-only deployments).
    pub enabled: bool,
    /// Tiles drawn under previews: an `http(s)` URL template with `{z}`, `{x}` and `{y}`
    /// (e.g. `https://tile.openstreetmap.org/{z}/{x}/{y}.png`). None: no basemap, and no
    /// request leaves Basin's origin.
    pub basemap_url: Option<String>,
    /// Attribution shown under the map when a basemap is set (text, not HTML).
    pub basemap_attribution: Option<String>,
    /// Serve the console from this folder instead of the embedded files, reading it again
    /// whenever the page loads: for working on the console without rebuilding.
    pub dir: Option<PathBuf>,
    /// The feature whose status messages the console shows as its banner (with the global
    /// ones).
    pub feature_id: String,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        Self {
            feature_id: "Console".to_owned(),
            enabled: true,
            basemap_url: None,
            basemap_attribution: None,
            dir: None,
        }
    }
}

impl ConsoleConfig {
    /// A basemap must be a tile URL template the browser can fill in and fetch.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(template) = &self.basemap_url {
            let usable = ["{z}", "{x}", "{y}"]
                .iter()
                .all(|part| template.contains(part))
                && url::Url::parse(&template.replace(['{', '}'], ""))
                    .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host());
            if !usable {
                return Err(ConfigError::Inconsistent(
                    "console.basemap_url must be an http or https URL template with {z}, {x} and {y}"
                        .into(),
                ));
            }
        }
        Ok(())
    }
}
