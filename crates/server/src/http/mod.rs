//! HTTP conventions shared by every area (docs/api-conventions.md): problem+json errors,
//! `api-version`, case-insensitive query and JSON binding, paging and wire timestamps.

pub(crate) mod api_version;
pub(crate) mod case_insensitive;
pub(crate) mod etag;
pub(crate) mod extract;
pub(crate) mod paging;
pub(crate) mod problem;
pub(crate) mod time;
pub(crate) mod unread_body;
pub(crate) mod wire_enum;
