//! Request bodies as the store reads them: a [`ByteStream`](crate::ByteStream) that gives up
//! on a client that stops sending.
//!
//! Uploads are exempt from request time limits, since a large file over a slow line takes
//! minutes; an idle limit on every chunk bounds a stalled client instead.

use futures::StreamExt;

/// The error a body that sent nothing for the idle limit ends with. A write that reads it
/// fails with [`BlobError::Body`](crate::BlobError::Body) of kind
/// [`std::io::ErrorKind::TimedOut`], which an endpoint answers as stalled (408), not as broken
/// off.
pub fn stalled() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "the body stalled")
}

/// `body` with a deadline on every chunk: a body that sends nothing for `idle` ends with
/// [`stalled`], which abandons the write that reads it.
pub fn idle_limited<'a, S, E>(
    body: S,
    idle: std::time::Duration,
) -> futures::stream::BoxStream<'a, std::io::Result<bytes::Bytes>>
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>> + Send + Unpin + 'a,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    futures::stream::unfold(Some(body), move |state| async move {
        let mut body = state?;
        match tokio::time::timeout(idle, body.next()).await {
            Ok(Some(Ok(bytes))) => Some((Ok(bytes), Some(body))),
            Ok(Some(Err(error))) => Some((Err(std::io::Error::other(error)), None)),
            Ok(None) => None,
            Err(_) => Some((Err(stalled()), None)),
        }
    })
    .boxed()
}
