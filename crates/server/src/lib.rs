//! Basin: an open, self-hostable cloud data platform for water and geospatial data.
//!
//! This crate is the server and the `basin` command. It is glue, not a library for others:
//! the binary in `main.rs` only calls [`cli::run`]. The layout follows `ARCHITECTURE.md`: one
//! folder per area (`identity`, `transfers`, ...) with `routes.rs` (HTTP only), `service.rs` (rules) and
//! `store.rs` (SQL only), and cross-cutting HTTP conventions in [`http`].
#![forbid(unsafe_code)]

pub mod auth;
pub mod blob;
pub mod cli;
pub mod clock;
pub mod config;
pub mod convert_command;
pub mod datasets;
pub mod db;
pub mod error;
pub mod health;
pub mod hierarchy;
pub mod http;
pub mod identity;
pub mod ids;
pub mod limits;
pub mod names;
pub mod openapi;
pub mod projects;
pub mod startup;
pub mod telemetry;
pub mod transfers;
