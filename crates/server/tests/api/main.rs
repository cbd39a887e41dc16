//! HTTP-level tests. One binary (see `autotests = false`), one folder per area of the API, every
//! test run on SQLite and PostgreSQL through `api_test!`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::field_reassign_with_default,
    reason = "test code: a failed assumption should abort the test loudly"
)]
#[macro_use]
mod helpers;

mod blobs;
mod cli;
mod console;
mod conventions;
mod credits;
mod datasets;
mod edr;
mod events;
mod features;
mod gis;
mod hierarchy;
mod identity;
mod projects;
mod recycle_bin;
mod tiles;
mod transfers;
