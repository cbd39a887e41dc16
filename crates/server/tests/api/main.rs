//! HTTP-level tests. One binary (see `autotests = false`), one module per area, every test run
//! on SQLite and PostgreSQL through `api_test!`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::field_reassign_with_default,
    reason = "test code: a failed assumption should abort the test loudly"
)]
#[macro_use]
mod helpers;

mod access_cache;
mod admin;
mod auth;
mod authorization_first;
mod blobs;
mod connections;
mod console;
mod conventions;
mod convert_cli;
mod credits;
mod credits_add;
mod credits_auth;
mod credits_crash;
mod credits_expiry;
mod credits_journal;
mod credits_load;
mod credits_model;
mod credits_model_regressions;
mod credits_move;
mod credits_operations;
mod credits_queries;
mod credits_spend;
mod datasets;
mod dfs;
mod events;
mod features_auth;
mod features_banner;
mod features_listing;
mod features_messages;
mod features_retention;
mod features_tenant;
mod gis;
mod hierarchy;
mod identity;
mod inspect_cli;
mod lifecycle;
mod paging;
mod permissions;
mod projects;
mod recycle_bin;
mod retention_crash;
mod tiles;
mod tiles_pyramids;
mod transfers;
mod tree_concurrency;
mod uploads;
mod workers;
