//! The file of a `multipart/form-data` upload, as a byte stream the blob store can take.
//!
//! A form part borrows the request body, while a blob write needs a stream it owns for as long
//! as it runs; so the part is read by a feeder future, through the blob module's idle-timeout
//! reader (a part that sends nothing for `limits.upload_idle_timeout_ms` ends the upload as
//! stalled), into a small channel the write reads. The handler runs the two side by side.

use std::future::Future;
use std::time::Duration;

use axum::extract::multipart::{Field, MultipartError};
use futures::{SinkExt, StreamExt};

use crate::error::ApiError;
use basin_blob::ByteStream;

/// Chunks in flight between the part and the write: enough to keep both busy, small enough
/// that a slow store holds back the client instead of filling memory.
const CHUNKS_IN_FLIGHT: usize = 4;

/// Whether a form part is the file: it has a file name, or is named `file`. Parts before it
/// (text fields) are skipped.
pub(crate) fn is_file_part(field: &Field<'_>) -> bool {
    field.file_name().is_some() || field.name() == Some("file")
}

/// The part's bytes as a stream the write owns, and the future that feeds it; poll both
/// together (`tokio::join!`). The stream ends with the part, or with an error when the part
/// breaks off or stalls for `idle`.
pub(crate) fn part_body(
    field: Field<'_>,
    idle: Duration,
) -> (impl Future<Output = ()> + Send + '_, ByteStream) {
    let (mut sender, receiver) = futures::channel::mpsc::channel(CHUNKS_IN_FLIGHT);
    let feed = async move {
        let mut body = basin_blob::idle_limited(field, idle);
        while let Some(chunk) = body.next().await {
            let failed = chunk.is_err();
            if sender.send(chunk).await.is_err() || failed {
                return;
            }
        }
    };
    (feed, receiver.boxed())
}

/// The problem a broken form is: 413 past `limit_bytes`, 400 otherwise.
pub(crate) fn multipart_error(error: &MultipartError, limit_bytes: u64) -> ApiError {
    if error.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge { limit_bytes }
    } else {
        ApiError::InvalidBody(format!(
            "The multipart body is malformed: {}",
            error.body_text()
        ))
    }
}
