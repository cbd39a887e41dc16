//! Basin: an open, self-hostable cloud data platform for water and geospatial data.
//!
//! This crate is the server and the `basin` command. It is glue, not a library for others:
//! the binary in `main.rs` only calls [`run`]. The layout is described in ARCHITECTURE.md at
//! the repository root: one folder per area (`identity`, `transfers`, ...) with `routes.rs`
//! (HTTP only), `service.rs` (rules) and `store.rs` (SQL only), and cross-cutting HTTP
//! conventions in `http`.
//!
//! Every module is private to the crate. What the binary and the HTTP tests use is re-exported
//! below, and nothing else is reachable from outside, so that `unreachable_pub` and the
//! dead-code lint report any item that nothing uses.
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

mod auth;
mod blob;
mod blob_urls;
mod cli;
mod clock;
mod config;
mod console;
mod conversion;
mod convert_command;
mod credits;
mod datasets;
mod db;
mod edr;
mod error;
mod events;
mod features;
mod gis;
mod health;
mod hierarchy;
mod http;
mod identity;
mod ids;
mod inspect_command;
mod leases;
mod limits;
mod lru;
mod names;
mod openapi;
mod periodic;
mod projects;
mod public_base;
mod reactions;
mod recycle_bin;
mod staging;
mod startup;
mod telemetry;
mod tiles;
mod transfers;
mod webhook_signature;

pub use auth::{SigningSecret, TokenRequest, issue_token};
pub use blob_urls::resign_blob_url;
pub use cli::run;
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{
    AuthConfig, BlobConfig, Config, ConsoleConfig, CreditsConfig, DatabaseConfig, EventsConfig,
    FeaturesConfig, KubernetesConfig, LimitsConfig, LogConfig, LogFormat, NatsConfig, NodeSize,
    OidcConfig, TransferExecutor, TransfersConfig, WebhookConfig,
};
pub use db::{Db, SqliteReader};
pub use events::record_sample_events;
pub use identity::bootstrap::BootstrapOutput;
pub use ids::{ApiKeyId, DatasetId, InvitationId, ProjectId, TenantId, TransferId, UserId};
pub use startup::{App, Services};
