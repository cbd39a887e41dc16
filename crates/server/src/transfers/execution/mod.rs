//! Running queued transfers: the worker loop that claims transfers from the database queue
//! ([`worker`]), and what running one means ([`run`]): stage the input, convert it with the
//! format library on a blocking thread, and publish the result in the same transaction that
//! ends the transfer.
//!
//! The same loop runs inside `basin serve` (the in-process executor) and in `basin worker`
//! processes on other machines; `basin worker --transfer <id>` runs one transfer and exits
//! (one Kubernetes Job per transfer, created by the dispatcher of [`kubernetes`]).

pub(crate) mod kubernetes;
pub(crate) mod run;
pub(crate) mod worker;

pub(crate) use worker::{WorkerPool, run_one};
