//! The dead letters of platform events (`/api/admin/events/dead-letters`) as
//! `app.dead_letters()`: as the platform's BackOffice (the operators who see them), or as
//! another caller through `app.by(who).dead_letters()`. Sent without an api-version.

use std::fmt::Display;

use reqwest::Method;

use super::{Api, Reply, with_query};
use crate::helpers::{TestApp, routes};

/// The dead letters as one caller sees them.
#[derive(Clone, Copy)]
pub struct DeadLetters<'a>(Api<'a>);

impl<'a> Api<'a> {
    /// The dead letters of platform events.
    pub fn dead_letters(self) -> DeadLetters<'a> {
        DeadLetters(self)
    }
}

impl TestApp {
    /// The dead letters, as the platform's BackOffice.
    pub fn dead_letters(&self) -> DeadLetters<'_> {
        self.as_back_office().dead_letters()
    }
}

impl DeadLetters<'_> {
    /// `GET /api/admin/events/dead-letters`, with `query` (empty for none).
    pub async fn list(&self, query: &str) -> Reply {
        let path = with_query(routes::dead_letters(), query);
        self.0.plain(Method::GET, &path, None).await
    }

    /// `POST /api/admin/events/dead-letters/replay`: replays every dead letter.
    pub async fn replay_all(&self) -> Reply {
        let path = routes::dead_letters_replay();
        self.0.plain(Method::POST, &path, None).await
    }

    /// `POST /api/admin/events/dead-letters/{event}/replay`: replays one dead letter.
    pub async fn replay(&self, event: impl Display) -> Reply {
        let path = routes::dead_letter_replay(event);
        self.0.plain(Method::POST, &path, None).await
    }
}
