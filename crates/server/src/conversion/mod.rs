//! The conversion catalogue (docs/conversion.md#readers-and-writers): the reader and writer
//! lists, straight from the format library's registry, so a format added there appears here
//! with no change.
//! The operations that use readers and writers are transfers ([`crate::transfers`]).

pub(crate) mod routes;

pub(crate) use routes::router;
