//! Configuration: defaults <- `basin.toml` <- `BASIN_*` environment <- command-line flags,
//! parsed once into a typed [`Config`]. Unknown keys are an error so typos do not pass
//! silently. docs/configuration.md lists every key; keep the two in step.
//!
//! Each section has a file of its own that holds its keys, their one `Default` (serde fills
//! missing keys from it) and the checks that concern it alone. A value's range is part of its
//! type where it can be: durations are [`std::time::Duration`]s and counts that must not be
//! zero are `NonZero*`, refused while parsing with a message that names the setting
//! (`values.rs`), so the code that uses them clamps nothing. What relates settings of one or
//! several sections to each other is checked once, in [`Config::validate`]. `env.rs` reads
//! the environment and words figment's errors; `secrets.rs` masks what is printed.

mod auth;
mod blob;
mod console;
mod credits;
mod database;
mod edr;
mod env;
mod events;
mod features;
mod fetch;
mod kubernetes;
mod limits;
mod log;
mod recycle_bin;
mod secrets;
mod tiles;
mod transfers;
mod values;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

pub use auth::{AuthConfig, OidcConfig};
pub use blob::BlobConfig;
pub use console::ConsoleConfig;
pub use credits::CreditsConfig;
pub use database::DatabaseConfig;
pub(crate) use edr::EdrConfig;
pub use events::{EventsConfig, NatsConfig, WebhookConfig};
pub use features::FeaturesConfig;
pub(crate) use fetch::FetchConfig;
pub use kubernetes::KubernetesConfig;
pub(crate) use limits::BlobLimits;
pub use limits::LimitsConfig;
pub use log::{LogConfig, LogFormat};
pub(crate) use recycle_bin::RecycleBinConfig;
pub(crate) use secrets::mask_url_password;
pub(crate) use tiles::TilesConfig;
pub use transfers::{NodeSize, TransferExecutor, TransfersConfig};

/// Config file read from the working directory when `--config` is not given.
pub(crate) const DEFAULT_CONFIG_FILE: &str = "basin.toml";

/// Seconds in a day, for the retention settings counted in days.
const SECONDS_PER_DAY: u64 = 24 * 3600;

/// The effective configuration.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address the HTTP server listens on.
    pub listen: SocketAddr,
    /// Folder for the SQLite database, the generated secret and local blobs.
    pub data_dir: PathBuf,
    /// Where clients reach Basin (`https://data.example.com`), used in signed blob URLs.
    /// When absent, URLs use `http://` and the `Host` header of the request asking for them.
    pub public_url: Option<String>,
    /// `sqlite://...` or `postgres://...`; SQLite in `data_dir` when absent.
    #[serde(serialize_with = "secrets::mask_database_url")]
    pub database_url: Option<String>,
    /// Database pool settings.
    pub database: DatabaseConfig,
    /// Authentication settings.
    pub auth: AuthConfig,
    /// Blob storage and signed blob URLs.
    pub blob: BlobConfig,
    /// Limits that deployments may tune.
    pub limits: LimitsConfig,
    /// Transfers: where they run, how workers claim them, what a request may ask for.
    pub transfers: TransfersConfig,
    /// Imports from URLs: which addresses they may reach, and their time limits.
    pub fetch: FetchConfig,
    /// The recycle bin: how long items stay, how the purge works.
    pub recycle_bin: RecycleBinConfig,
    /// Credits: reservation timeouts and the settle job (docs/credits.md).
    pub credits: CreditsConfig,
    /// Feature status messages: retention and the banner (docs/features.md).
    pub features: FeaturesConfig,
    /// Tiles: memory caches and client caching (docs/tiles.md).
    pub tiles: TilesConfig,
    /// EDR queries: their limits and cache (docs/edr.md).
    pub edr: EdrConfig,
    /// Logging.
    pub log: LogConfig,
    /// Platform events: the outbox relay and its sinks (docs/events.md).
    pub events: EventsConfig,
    /// The browser console served at `/` (docs/console.md).
    pub console: ConsoleConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("basin-data"),
            public_url: None,
            database_url: None,
            database: DatabaseConfig::default(),
            auth: AuthConfig::default(),
            blob: BlobConfig::default(),
            limits: LimitsConfig::default(),
            transfers: TransfersConfig::default(),
            fetch: FetchConfig::default(),
            recycle_bin: RecycleBinConfig::default(),
            credits: CreditsConfig::default(),
            features: FeaturesConfig::default(),
            tiles: TilesConfig::default(),
            edr: EdrConfig::default(),
            log: LogConfig::default(),
            events: EventsConfig::default(),
            console: ConsoleConfig::default(),
        }
    }
}

/// Values given on the command line; they win over everything else.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ConfigOverrides {
    /// `--listen`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) listen: Option<SocketAddr>,
    /// `--data-dir`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) data_dir: Option<PathBuf>,
    /// `--database-url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) database_url: Option<String>,
}

/// Why configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ConfigError {
    /// The named config file does not exist.
    #[error("config file {0} does not exist")]
    MissingFile(PathBuf),
    /// A value is malformed, out of its range or a key unknown: one line per problem, each
    /// naming where it is (the environment variable, or the key and the file).
    #[error("invalid configuration: {0}")]
    Invalid(String),
    /// Values parse but make no sense, alone or together.
    #[error("invalid configuration: {0}")]
    Inconsistent(String),
}

impl Config {
    /// Loads the configuration from an optional file, environment pairs and flags. `file`
    /// `None` reads `basin.toml` if it exists. `env` is usually `std::env::vars()`; tests pass
    /// their own pairs.
    pub(crate) fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &ConfigOverrides,
    ) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) if !path.exists() => return Err(ConfigError::MissingFile(path.into())),
            Some(path) => figment = figment.merge(Toml::file_exact(path)),
            None => figment = figment.merge(Toml::file(DEFAULT_CONFIG_FILE)),
        }
        figment = figment
            .merge(env::Environment::from_pairs(env))
            .merge(Serialized::defaults(overrides));
        let config: Config = figment
            .extract()
            .map_err(|error| ConfigError::Invalid(env::describe(error)))?;
        config.validate()?;
        Ok(config)
    }

    /// The rules a value's type cannot carry: each section's own checks, then the relations
    /// between settings. The first rule broken is the error.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.public_url
            && crate::public_base::PublicBase::parse(url).is_none()
        {
            return Err(ConfigError::Inconsistent(
                "public_url must be an http or https URL without query or fragment".into(),
            ));
        }
        self.auth.validate()?;
        self.blob.validate()?;
        self.console.validate()?;
        self.fetch.validate()?;
        self.events.validate()?;
        self.transfers
            .kubernetes
            .validate(self.transfers.executor)?;
        self.validate_relations()
    }

    /// Settings that bound each other.
    fn validate_relations(&self) -> Result<(), ConfigError> {
        let limits = &self.limits;
        if limits.page_size_default > limits.page_size_max {
            return refuse(format!(
                "limits.page_size_default ({}) must not exceed limits.page_size_max ({})",
                limits.page_size_default, limits.page_size_max
            ));
        }
        let transfers = &self.transfers;
        if transfers.heartbeat_seconds >= transfers.lease_seconds {
            return refuse(format!(
                "transfers.heartbeat_seconds ({}) must be shorter than transfers.lease_seconds \
                 ({}): a lease that lapses between two heartbeats lets a second worker claim a \
                 running transfer",
                transfers.heartbeat_seconds.as_secs(),
                transfers.lease_seconds.as_secs()
            ));
        }
        let credits = &self.credits;
        if credits.reservation_timeout_default_seconds > credits.reservation_timeout_max_seconds {
            return refuse(format!(
                "credits.reservation_timeout_default_seconds ({}) must not exceed \
                 credits.reservation_timeout_max_seconds ({})",
                credits.reservation_timeout_default_seconds,
                credits.reservation_timeout_max_seconds
            ));
        }
        self.validate_event_timing()?;
        validate_sweep(
            "recycle_bin.retention_check_seconds",
            self.recycle_bin.retention_check_seconds,
            "recycle_bin.retention_days",
            self.recycle_bin.retention_days,
        )?;
        validate_sweep(
            "features.retention_interval_seconds",
            self.features.retention_interval_seconds,
            "features.message_retention_days",
            self.features.message_retention_days,
        )
    }

    /// A delivery's lease outlasts the POST it covers, and retries never wait longer at
    /// first than at most.
    fn validate_event_timing(&self) -> Result<(), ConfigError> {
        let events = &self.events;
        if events.backoff_initial_ms > events.backoff_max_ms {
            return refuse(format!(
                "events.backoff_initial_ms ({}) must not exceed events.backoff_max_ms ({})",
                events.backoff_initial_ms.as_millis(),
                events.backoff_max_ms.as_millis()
            ));
        }
        if let Some(webhook) = events
            .webhooks
            .iter()
            .find(|webhook| webhook.timeout_ms >= events.lease_ms)
        {
            return refuse(format!(
                "events.lease_ms ({}) must be longer than timeout_ms ({}) of the webhook '{}': \
                 a lease that ends during a POST lets a second relay deliver the same event",
                events.lease_ms.as_millis(),
                webhook.timeout_ms.as_millis(),
                webhook.name
            ));
        }
        Ok(())
    }

    /// The database URL in effect: the configured one, or SQLite in the data dir.
    pub fn effective_database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("basin.db").display()
            ),
        }
    }

    /// The configuration as JSON with secrets masked, for `basin config`.
    pub(crate) fn to_masked_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "effective_database_url".into(),
                serde_json::Value::String(mask_url_password(&self.effective_database_url())),
            );
        }
        value
    }
}

/// A periodic job that removes what is older than a retention counted in days runs at least
/// once within that retention, else items outlive it by up to the interval. A retention of
/// zero days (remove at the next run) bounds nothing.
fn validate_sweep(
    interval_key: &str,
    interval: Duration,
    retention_key: &str,
    retention_days: u32,
) -> Result<(), ConfigError> {
    let retention = Duration::from_secs(u64::from(retention_days) * SECONDS_PER_DAY);
    if retention_days > 0 && interval > retention {
        return refuse(format!(
            "{interval_key} ({}) must not exceed {retention_key} ({retention_days}, {} seconds): \
             items would stay past their retention",
            interval.as_secs(),
            retention.as_secs()
        ));
    }
    Ok(())
}

/// Refuses the configuration with `message`, which names the settings and what they must be.
fn refuse(message: String) -> Result<(), ConfigError> {
    Err(ConfigError::Inconsistent(message))
}
