//! Transfers (spec part 4, wire-contract 4 and 5): for now the upload half, handing out signed
//! URLs that clients PUT file bytes to (see [`crate::blob`]). Conversions and the transfer
//! records that follow an upload build on [`service::TransferService::uploaded_blob`].

mod multipart;
pub(crate) mod routes;
pub(crate) mod service;

pub(crate) use routes::{router, upload_router};
