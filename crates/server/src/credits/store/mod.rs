//! SQL of the credit ledger. Writes run inside a transaction through [`LedgerConn`], on sqlx
//! (PostgreSQL) or on the SQLite writer thread, with the same statements; reads outside
//! transactions go through the sqlx pools. What to write is decided in `service.rs`.

mod read;
mod rows;
mod write;

pub(crate) use read::*;
pub(crate) use write::*;
