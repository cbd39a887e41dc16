//! HTTP conventions shared by every area (wire-contract parts 1 and 2): problem+json errors,
//! `api-version`, case-insensitive query and JSON binding, paging and wire timestamps.

pub mod api_version;
pub mod case_insensitive;
pub mod extract;
pub mod paging;
pub mod problem;
pub mod time;
pub mod wire_enum;
