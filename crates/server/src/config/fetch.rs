//! `[fetch]`: imports from URLs (docs/fetch.md). By default they reach public addresses
//! only.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::values::{AtLeast, as_millis};
use basin_fetch::{FetchPolicy, IpNetwork};

/// Imports from URLs (docs/fetch.md). By default they reach public addresses only.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FetchConfig {
    /// Allow private, loopback and link-local addresses too (every class but multicast,
    /// broadcast and unspecified): only where no user can be an attacker.
    pub allow_private: bool,
    /// Networks always allowed, even when private: `["10.1.0.0/16", "fd00:1::/64"]`.
    pub allowed_networks: Vec<String>,
    /// Longest wait for a connection, DNS included (`connect_timeout_ms`, at least 1 ms).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<1>::millis"
    )]
    pub connect_timeout_ms: Duration,
    /// Longest wait for the next byte or FTP reply (`idle_timeout_ms`, at least 1 ms).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<1>::millis"
    )]
    pub idle_timeout_ms: Duration,
    /// Longest whole fetch (`total_timeout_ms`, at least 1 ms).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<1>::millis"
    )]
    pub total_timeout_ms: Duration,
    /// Most redirects followed.
    pub redirects_max: u8,
}

impl Default for FetchConfig {
    fn default() -> Self {
        let policy = FetchPolicy::default();
        Self {
            allow_private: policy.allow_private,
            allowed_networks: Vec::new(),
            connect_timeout_ms: Duration::from_millis(basin_fetch::FETCH_CONNECT_TIMEOUT_MS),
            idle_timeout_ms: Duration::from_millis(basin_fetch::FETCH_IDLE_TIMEOUT_MS),
            total_timeout_ms: Duration::from_millis(basin_fetch::FETCH_TOTAL_TIMEOUT_MS),
            redirects_max: policy.redirects_max,
        }
    }
}

impl FetchConfig {
    /// The fetch policy these settings give; files are at most `bytes_max` (the upload limit,
    /// since an imported file becomes a blob). Fails naming a malformed network.
    pub(crate) fn policy(&self, bytes_max: u64) -> Result<FetchPolicy, String> {
        let allowed_networks = self
            .allowed_networks
            .iter()
            .map(|raw| {
                raw.trim()
                    .parse::<IpNetwork>()
                    .map_err(|error| format!("fetch.allowed_networks: {error}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FetchPolicy {
            allow_private: self.allow_private,
            allowed_networks,
            bytes_max,
            connect_timeout: self.connect_timeout_ms,
            idle_timeout: self.idle_timeout_ms,
            total_timeout: self.total_timeout_ms,
            redirects_max: self.redirects_max,
        })
    }

    /// Every allowed network must parse.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        self.policy(0).map(drop).map_err(ConfigError::Inconsistent)
    }
}
