//! Write transactions on either database: SQLite's begin `IMMEDIATE` (writers queue for the one
//! write lock instead of failing), PostgreSQL's are plain; [`on_tx!`] runs the same statement on
//! whichever connection a [`Tx`] holds.

use sqlx::{Postgres, Sqlite, Transaction};

use crate::db::StoreResult;

/// Runs `$body` with `$conn` bound to the connection of the transaction `$tx`.
#[macro_export]
macro_rules! on_tx {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(transaction) => {
                let $conn = &mut **transaction;
                $body
            }
            $crate::db::Tx::Postgres(transaction) => {
                let $conn = &mut **transaction;
                $body
            }
        }
    };
}

/// An open transaction on either database.
#[derive(Debug)]
pub(crate) enum Tx {
    /// SQLite transaction, begun `IMMEDIATE` so writers queue instead of failing.
    Sqlite(Transaction<'static, Sqlite>),
    /// PostgreSQL transaction.
    Postgres(Transaction<'static, Postgres>),
}

impl Tx {
    /// Commits the transaction.
    pub(crate) async fn commit(self) -> StoreResult<()> {
        match self {
            Self::Sqlite(tx) => tx.commit().await?,
            Self::Postgres(tx) => tx.commit().await?,
        }
        crate::db::changes::note_commit();
        Ok(())
    }

    /// Commits when the transaction `changed` something, rolls back otherwise (see
    /// [`Self::rollback`]).
    pub(crate) async fn finish(self, changed: bool) -> StoreResult<()> {
        if changed {
            self.commit().await
        } else {
            self.rollback().await
        }
    }

    /// Ends a transaction that changed nothing. Unlike a commit, it tells no cache that the
    /// store may have changed (`db::changes`), so pollers that usually find nothing to do end
    /// their rounds with it.
    pub(crate) async fn rollback(self) -> StoreResult<()> {
        match self {
            Self::Sqlite(tx) => tx.rollback().await?,
            Self::Postgres(tx) => tx.rollback().await?,
        }
        Ok(())
    }
}
