//! FTP fetches with suppaftp's tokio client: passive mode, binary type, one `RETR`.
//!
//! The host is resolved and checked like an HTTP host, and the control connection goes to a
//! checked address. The data connection is the dangerous part: in passive mode the server
//! names the address to connect to (`227 Entering Passive Mode (10,0,0,5,...)`), so a
//! malicious server could point it at an internal service. The passive stream builder here
//! ignores that address and connects to the control connection's own peer at the given port,
//! as suppaftp's NAT workaround and `EPSV` (used over IPv6) do.
//!
//! Every command is bounded by the idle timeout and the whole fetch by the total timeout of
//! the caller; replies are bounded in size by suppaftp. Server reply text never reaches an
//! error: only the reply code does, since a reply may echo what was sent.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use suppaftp::tokio::AsyncFtpStream;
use suppaftp::types::FileType;
use suppaftp::{FtpError, Mode};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use crate::address::AddressRules;
use crate::error::Timeout;
use crate::http::check_literal;
use crate::sink::{FileSink, file_name_from_path};
use crate::urls::FetchUrl;
use crate::{FetchError, FetchPolicy, Fetched, resolve_checked};

/// Read buffer of the data connection.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Fetches `url` (an `ftp://` URL) into `sink`.
pub(crate) async fn fetch(
    policy: &FetchPolicy,
    rules: &AddressRules,
    url: &FetchUrl,
    mut sink: FileSink<'_>,
) -> Result<Fetched, FetchError> {
    let (user, password) = url.ftp_login()?;
    let path = url.ftp_path()?;
    let control = connect_control(policy, rules, url).await?;
    let control_ip = control.peer_addr().map_err(|error| network(&error))?.ip();
    let mut ftp = within(policy, AsyncFtpStream::connect_with_stream(control))
        .await?
        .passive_stream_builder(data_stream_builder(control_ip, policy.connect_timeout));
    ftp.set_passive_nat_workaround(true);
    // PASV replies carry IPv4 addresses only; over IPv6 EPSV gives just a port.
    ftp.set_mode(if control_ip.is_ipv6() {
        Mode::ExtendedPassive
    } else {
        Mode::Passive
    });
    within(policy, ftp.login(user.as_str(), password.as_str()))
        .await
        .map_err(|error| match error {
            // 332: the server wants an account (ACCT), which a URL cannot give.
            FetchError::Status { status: 332 } => FetchError::AccessDenied { status: 332 },
            other => other,
        })?;
    within(policy, ftp.transfer_type(FileType::Binary)).await?;
    // SIZE is optional (RFC 3659); a server without it still serves the file.
    let announced = within(policy, ftp.size(path.as_str()))
        .await
        .ok()
        .and_then(|size| u64::try_from(size).ok());
    sink.announce_size(announced)?;
    let mut download = within(policy, ftp.retr_as_stream(path.as_str())).await?;
    let mut buffer = vec![0; READ_BUFFER_BYTES];
    loop {
        let read = tokio::time::timeout(policy.idle_timeout, download.read(&mut buffer))
            .await
            .map_err(|_| FetchError::TimedOut(Timeout::Idle(policy.idle_timeout)))?
            .map_err(|error| network(&error))?;
        let Some(chunk) = buffer.get(..read).filter(|chunk| !chunk.is_empty()) else {
            break;
        };
        sink.write(chunk).await?;
    }
    within(policy, download.finish()).await?;
    let size_bytes = sink.finish().await?;
    // The file is complete; a server that answers QUIT badly changes nothing.
    let _ = within(policy, ftp.quit()).await;
    Ok(Fetched {
        size_bytes,
        file_name: file_name_from_path(&path),
        content_type: None,
    })
}

/// Connects the control connection to the first checked address of the host that answers.
async fn connect_control(
    policy: &FetchPolicy,
    rules: &AddressRules,
    url: &FetchUrl,
) -> Result<TcpStream, FetchError> {
    let port = url.port();
    let addresses = match url.literal_address() {
        Some(address) => {
            check_literal(url, rules)?;
            vec![SocketAddr::new(address, port)]
        }
        None => tokio::time::timeout(
            policy.connect_timeout,
            resolve_checked(rules, &url.host(), port),
        )
        .await
        .map_err(|_| FetchError::TimedOut(Timeout::Connect(policy.connect_timeout)))??,
    };
    let mut last_error = FetchError::HostNotFound { host: url.host() };
    for address in addresses {
        match tokio::time::timeout(policy.connect_timeout, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(error)) => last_error = network(&error),
            Err(_) => last_error = FetchError::TimedOut(Timeout::Connect(policy.connect_timeout)),
        }
    }
    Err(last_error)
}

/// The passive-mode data connection: always to `control_ip`, whatever address the server
/// named, at the port it named.
fn data_stream_builder(
    control_ip: IpAddr,
    connect_timeout: Duration,
) -> impl Fn(
    SocketAddr,
) -> std::pin::Pin<Box<dyn Future<Output = suppaftp::FtpResult<TcpStream>> + Send + Sync>>
+ Send
+ Sync
+ 'static {
    move |named: SocketAddr| {
        let target = SocketAddr::new(control_ip, named.port());
        Box::pin(async move {
            match tokio::time::timeout(connect_timeout, TcpStream::connect(target)).await {
                Ok(result) => result.map_err(FtpError::ConnectionError),
                Err(_) => Err(FtpError::ConnectionError(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the data connection timed out",
                ))),
            }
        })
    }
}

/// Runs one FTP command within the idle timeout, mapping its error.
async fn within<T>(
    policy: &FetchPolicy,
    command: impl Future<Output = suppaftp::FtpResult<T>>,
) -> Result<T, FetchError> {
    tokio::time::timeout(policy.idle_timeout, command)
        .await
        .map_err(|_| FetchError::TimedOut(Timeout::Idle(policy.idle_timeout)))?
        .map_err(map_error)
}

/// Maps a suppaftp error by reply code; reply text is dropped (it may echo a command).
fn map_error(error: FtpError) -> FetchError {
    match error {
        FtpError::ConnectionError(error) => network(&error),
        FtpError::UnexpectedResponse(response) => match response.status.code() {
            0 => FetchError::Protocol {
                detail: "the server sent an unknown reply code",
            },
            code => {
                let status = u16::try_from(code).unwrap_or(u16::MAX);
                match status {
                    530 => FetchError::AccessDenied { status },
                    550 => FetchError::NotFound { status },
                    _ => FetchError::Status { status },
                }
            }
        },
        FtpError::BadResponse => FetchError::Protocol {
            detail: "the server sent a malformed reply",
        },
        FtpError::InvalidAddress(_) => FetchError::Protocol {
            detail: "the server named an invalid data address",
        },
        FtpError::DataConnectionAlreadyOpen => FetchError::Protocol {
            detail: "a data connection was already open",
        },
    }
}

/// A network failure from an I/O error, whose text never holds the URL.
fn network(error: &std::io::Error) -> FetchError {
    FetchError::Network {
        detail: crate::error::describe_chain(error.to_string(), error),
    }
}
