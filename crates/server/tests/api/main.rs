//! HTTP-level tests. One binary (see `autotests = false`), one module per area, every test run
//! on SQLite and PostgreSQL through `api_test!`.

#[macro_use]
mod helpers;

mod admin;
mod auth;
mod conventions;
mod identity;
mod lifecycle;
mod paging;
