//! Feature messages, the banner, retention and tenant feature availability (docs/features.md).
//! The request helpers every suite here shares are in `messages.rs`.

mod auth;
mod banner;
mod listing;
mod messages;
mod retention;
mod tenant;
