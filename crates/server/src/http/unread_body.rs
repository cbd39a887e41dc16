//! Answers sent before the request body was read still arrive, over connections kept alive.
//!
//! Many answers come before the body is read: an unknown route, a wrong method or
//! api-version, a malformed path, missing credentials, a caller without the right. hyper
//! then reads on only what has already arrived of the body; if more is to come it stops
//! reading and closes the connection after the answer, whose head may already be out without
//! `Connection: close`. A keep-alive client then sends its next request into a closed
//! connection, and a client still sending the body when the socket closes gets a reset,
//! because a socket closed with unread data is reset, not closed, and may lose the answer it
//! was sent (in a sweep of hostile requests about 1 in 500 early answers to POST, PUT and
//! PATCH requests were lost so).
//!
//! Two parts fix it:
//! - [`finish_unread_body`], the outermost middleware, watches the body: when the answer is
//!   ready and the body was left unread, it reads the rest before the answer goes out if that
//!   is small ([`limits::UNREAD_BODY_DRAIN_BYTES_MAX`]) and comes quickly
//!   ([`limits::UNREAD_BODY_DRAIN_MS`]), so the connection stays open; otherwise the answer
//!   says `Connection: close`. A request sent with `Expect: 100-continue` whose body was never
//!   asked for is not drained: its client has not sent the body and, told the connection
//!   closes, never will.
//! - [`LingeringListener`] closes connections the way HTTP/1.1 servers must (RFC 9112, 9.6):
//!   it shuts down its sending side after the answer and then reads and discards what the
//!   client still sends, for at most [`limits::LINGER_MS`] and
//!   [`limits::LINGER_BYTES_MAX`], before it closes the socket.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::{CONNECTION, EXPECT};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::limits;

/// A body dropped before its end, handed back to [`finish_unread_body`].
#[derive(Default)]
struct Leftover {
    body: Option<Body>,
    /// Whether the handler read any of it (hyper then sent `100 Continue`, if asked for).
    polled: bool,
}

/// The request body as handlers see it: when dropped before its end it is handed back
/// rather than dropped, which would make hyper stop reading the connection.
struct WatchedBody {
    inner: Option<Body>,
    leftover: Arc<Mutex<Leftover>>,
    polled: bool,
}

impl HttpBody for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        self.polled = true;
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let frame = ready!(Pin::new(inner).poll_frame(cx));
        if frame.is_none() {
            self.inner = None;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| http_body::SizeHint::with_exact(0), Body::size_hint)
    }
}

impl Drop for WatchedBody {
    fn drop(&mut self) {
        if let Some(body) = self.inner.take()
            && !body.is_end_stream()
        {
            let mut leftover = self.leftover.lock().unwrap_or_else(PoisonError::into_inner);
            leftover.body = Some(body);
            leftover.polled = self.polled;
        }
    }
}

/// Middleware: after the answer is made, reads what is left of a body the handler did not
/// read, or marks the answer `Connection: close` (see the module documentation).
pub(crate) async fn finish_unread_body(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    // HTTP/2 ends an unread body with its stream, not with the connection (and has no
    // `Connection` header).
    if body.is_end_stream() || parts.version >= axum::http::Version::HTTP_2 {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let expects_continue = parts
        .headers
        .get(EXPECT)
        .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let leftover = Arc::new(Mutex::new(Leftover::default()));
    let watched = WatchedBody {
        inner: Some(body),
        leftover: leftover.clone(),
        polled: false,
    };
    let mut response = next
        .run(Request::from_parts(parts, Body::new(watched)))
        .await;
    let Leftover { body, polled } =
        std::mem::take(&mut *leftover.lock().unwrap_or_else(PoisonError::into_inner));
    let Some(body) = body else {
        return response;
    };
    // A client waiting for `100 Continue` has sent nothing that needs draining.
    let body_sent = polled || !expects_continue;
    let drained = body_sent && drain(body).await;
    if !drained {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Reads `body` to its end within the drain limits; whether it got there.
async fn drain(body: Body) -> bool {
    let bytes_max = limits::UNREAD_BODY_DRAIN_BYTES_MAX;
    if body.size_hint().lower() > bytes_max {
        return false;
    }
    let read = async move {
        let mut stream = body.into_data_stream();
        let mut drained: u64 = 0;
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else {
                return false;
            };
            drained = drained.saturating_add(u64::try_from(chunk.len()).unwrap_or(u64::MAX));
            if drained > bytes_max {
                return false;
            }
        }
        true
    };
    let within = Duration::from_millis(limits::UNREAD_BODY_DRAIN_MS);
    tokio::time::timeout(within, read).await.unwrap_or(false)
}

/// A TCP listener whose connections close with a lingering close (see the module
/// documentation).
#[derive(Debug)]
pub(crate) struct LingeringListener(pub(crate) TcpListener);

impl axum::serve::Listener for LingeringListener {
    type Io = LingeringStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (stream, address) = axum::serve::Listener::accept(&mut self.0).await;
        (
            LingeringStream {
                stream,
                closing: None,
            },
            address,
        )
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// A connection of [`LingeringListener`].
#[derive(Debug)]
pub(crate) struct LingeringStream {
    stream: TcpStream,
    /// Set once the sending side is shut down: what is left of the lingering.
    closing: Option<Lingering>,
}

#[derive(Debug)]
struct Lingering {
    deadline: Pin<Box<tokio::time::Sleep>>,
    discarded: u64,
}

impl AsyncRead for LingeringStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for LingeringStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    /// Shuts the sending side down, then reads and discards until the client closes its
    /// side, the lingering limits are reached, or reading fails. Only the shutdown's own
    /// failure is an error: after it, the answer is out whatever happens.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.closing.is_none() {
            ready!(Pin::new(&mut this.stream).poll_shutdown(cx))?;
            this.closing = Some(Lingering {
                deadline: Box::pin(tokio::time::sleep(Duration::from_millis(limits::LINGER_MS))),
                discarded: 0,
            });
        }
        let Some(lingering) = this.closing.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let mut scratch = [0_u8; 8 * 1024];
        loop {
            if lingering.discarded > limits::LINGER_BYTES_MAX {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.stream).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {
                    let read = u64::try_from(buf.filled().len()).unwrap_or(u64::MAX);
                    lingering.discarded = lingering.discarded.saturating_add(read);
                }
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => {
                    return match lingering.deadline.as_mut().poll(cx) {
                        Poll::Ready(()) => Poll::Ready(Ok(())),
                        Poll::Pending => Poll::Pending,
                    };
                }
            }
        }
    }
}
