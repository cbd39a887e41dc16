//! Fetches against real servers on 127.0.0.1: an axum server for HTTP, pyftpdlib for FTP.
//! The positive tests allow 127.0.0.1/32 explicitly; the default policy refuses it, and the
//! refusal tests check with a listener that counts connections that no connection was made.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use futures::StreamExt;

use super::*;
use crate::address::{AddressClass, IpNetworkError};
use crate::urls::redact;

/// Bytes that change under any text-mode conversion (CR, LF, NUL, high bytes).
fn payload(len: usize) -> Vec<u8> {
    (0..len)
        .map(|index| u8::try_from(index % 251).unwrap())
        .collect()
}

/// A policy allowing 127.0.0.1 only, with timeouts short enough for tests.
fn local_policy() -> FetchPolicy {
    FetchPolicy {
        allowed_networks: vec!["127.0.0.1/32".parse().unwrap()],
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        total_timeout: Duration::from_secs(30),
        ..FetchPolicy::default()
    }
}

fn fetcher(policy: FetchPolicy) -> Fetcher {
    Fetcher::new(policy).unwrap()
}

fn no_progress(_: u64, _: Option<u64>) {}

/// Serves `router` on 127.0.0.1 at a free port.
async fn serve(router: Router) -> SocketAddr {
    serve_on("127.0.0.1", router).await
}

/// Serves `router` on `ip` at a free port.
async fn serve_on(ip: &str, router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    address
}

/// A listener on `ip` that accepts and counts connections, and answers nothing.
async fn counting_listener(ip: &str) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (address, count)
}

/// Asserts that `count` stays 0 a little while: a connection attempt would have landed.
async fn assert_no_connection(count: &AtomicUsize) {
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(count.load(Ordering::SeqCst), 0, "a connection was made");
}

struct Dest {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn dest() -> Dest {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("download");
    Dest { _dir: dir, path }
}

async fn fetch(fetcher: &Fetcher, raw: &str, dest: &Path) -> Result<Fetched, FetchError> {
    let url = FetchUrl::parse(raw).unwrap();
    fetcher.fetch_to_file(&url, dest, &no_progress).await
}

fn file_router() -> Router {
    Router::new()
        .route(
            "/files/{name}",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/x-dfsu")],
                    payload(3 * 1024 * 1024 + 17),
                )
            }),
        )
        .route(
            "/download",
            get(|| async {
                (
                    [(
                        header::CONTENT_DISPOSITION,
                        "attachment; filename=\"named.nc\"",
                    )],
                    payload(10),
                )
            }),
        )
        .route("/empty", get(|| async { Vec::<u8>::new() }))
        .route("/big", get(|| async { payload(10_000) }))
        .route("/chunked", get(|| async { chunked(20, 100) }))
        .route("/stall-body", get(|| async { stalling_body() }))
        .route(
            "/stall-headers",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "late"
            }),
        )
        .route("/trickle", get(|| async { trickle() }))
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, "internal detail from the body") }),
        )
        .route("/private", get(basic_auth_only))
        .route("/teapot", get(|| async { StatusCode::IM_A_TEAPOT }))
        .route("/redirect/{hops}", get(redirect_hops))
}

/// A body of `chunks` chunks of `size` bytes without a Content-Length (chunked encoding).
fn chunked(chunks: usize, size: usize) -> Body {
    let stream = futures::stream::iter(0..chunks)
        .map(move |_| Ok::<_, std::io::Error>(Bytes::from(payload(size))));
    Body::from_stream(stream)
}

/// Ten bytes, then nothing, forever.
fn stalling_body() -> Body {
    let first = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"0123456789"))]);
    Body::from_stream(first.chain(futures::stream::pending()))
}

/// One byte every 50 ms, forever.
fn trickle() -> Body {
    Body::from_stream(futures::stream::unfold((), |()| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Some((Ok::<_, std::io::Error>(Bytes::from_static(b"x")), ()))
    }))
}

const USER: &str = "importer";
const PASSWORD: &str = "p@ss:w/rd";

async fn basic_auth_only(headers: HeaderMap) -> Response {
    use base64::Engine;
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
    );
    if headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(&expected)
    {
        payload(5).into_response()
    } else {
        (StatusCode::UNAUTHORIZED, "who are you").into_response()
    }
}

async fn redirect_hops(axum::extract::Path(hops): axum::extract::Path<u32>) -> Response {
    let location = if hops == 0 {
        "/files/end.bin".to_owned()
    } else {
        format!("/redirect/{}", hops - 1)
    };
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

/// A server whose every path redirects to `location`.
fn redirect_router(location: String) -> Router {
    Router::new().fallback(get(move || {
        let location = location.clone();
        async move {
            (
                StatusCode::TEMPORARY_REDIRECT,
                [(header::LOCATION, location)],
            )
        }
    }))
}

fn encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test]
async fn fetch_writes_the_file_and_names_it_from_the_path() {
    let server = serve(file_router()).await;
    let dest = dest();
    std::fs::write(&dest.path, vec![b'x'; 5 * 1024 * 1024]).unwrap();
    let reports = std::sync::Mutex::new(Vec::new());
    let progress = |done: u64, total: Option<u64>| reports.lock().unwrap().push((done, total));
    let url = fetcher(local_policy())
        .check_url(&format!("http://{server}/files/my%20model.dfsu"))
        .unwrap();
    let fetched = fetcher(local_policy())
        .fetch_to_file(&url, &dest.path, &progress)
        .await
        .unwrap();
    let expected = payload(3 * 1024 * 1024 + 17);
    assert_eq!(fetched.size_bytes, expected.len() as u64);
    assert_eq!(fetched.file_name.as_deref(), Some("my model.dfsu"));
    assert_eq!(fetched.content_type.as_deref(), Some("application/x-dfsu"));
    assert_eq!(
        std::fs::read(&dest.path).unwrap(),
        expected,
        "truncated, then written"
    );
    let reports = reports.into_inner().unwrap();
    let total = Some(expected.len() as u64);
    assert_eq!(reports.first(), Some(&(0, total)));
    assert_eq!(reports.last(), Some(&(expected.len() as u64, total)));
    assert!(reports.len() >= 4, "every MiB and the end: {reports:?}");
    assert!(reports.windows(2).all(|pair| pair[0].0 <= pair[1].0));
}

#[tokio::test]
async fn fetch_takes_the_name_from_content_disposition() {
    let server = serve(file_router()).await;
    let dest = dest();
    let fetched = fetch(
        &fetcher(local_policy()),
        &format!("http://{server}/download"),
        &dest.path,
    )
    .await
    .unwrap();
    assert_eq!(fetched.file_name.as_deref(), Some("named.nc"));
    assert_eq!(fetched.size_bytes, 10);
}

#[tokio::test]
async fn fetch_of_an_empty_file_writes_an_empty_file() {
    let server = serve(file_router()).await;
    let dest = dest();
    let fetched = fetch(
        &fetcher(local_policy()),
        &format!("http://{server}/empty"),
        &dest.path,
    )
    .await
    .unwrap();
    assert_eq!(fetched.size_bytes, 0);
    assert_eq!(fetched.file_name.as_deref(), Some("empty"));
    assert_eq!(std::fs::read(&dest.path).unwrap(), b"");
}

#[tokio::test]
async fn fetch_accepts_a_file_at_the_limit() {
    let server = serve(file_router()).await;
    let dest = dest();
    let policy = FetchPolicy {
        bytes_max: 10_000,
        ..local_policy()
    };
    let fetched = fetch(
        &fetcher(policy),
        &format!("http://{server}/big"),
        &dest.path,
    )
    .await
    .unwrap();
    assert_eq!(fetched.size_bytes, 10_000);
}

#[tokio::test]
async fn fetch_refuses_a_content_length_over_the_limit_before_reading() {
    let server = serve(file_router()).await;
    let dest = dest();
    let reports = std::sync::Mutex::new(Vec::new());
    let progress = |done: u64, total: Option<u64>| reports.lock().unwrap().push((done, total));
    let policy = FetchPolicy {
        bytes_max: 9_999,
        ..local_policy()
    };
    let url = FetchUrl::parse(&format!("http://{server}/big")).unwrap();
    let error = fetcher(policy)
        .fetch_to_file(&url, &dest.path, &progress)
        .await
        .unwrap_err();
    assert!(
        matches!(error, FetchError::TooLarge { limit_bytes: 9_999 }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the file is larger than the limit of 9999 bytes"
    );
    assert!(reports.lock().unwrap().is_empty(), "nothing was read");
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn fetch_stops_a_chunked_body_at_the_limit_and_removes_the_file() {
    let server = serve(file_router()).await;
    let dest = dest();
    let policy = FetchPolicy {
        bytes_max: 1_000,
        ..local_policy()
    };
    let error = fetch(
        &fetcher(policy),
        &format!("http://{server}/chunked"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, FetchError::TooLarge { limit_bytes: 1_000 }),
        "{error:?}"
    );
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn fetch_fails_when_the_body_stalls() {
    let server = serve(file_router()).await;
    let dest = dest();
    let policy = FetchPolicy {
        idle_timeout: Duration::from_millis(300),
        ..local_policy()
    };
    let started = std::time::Instant::now();
    let error = fetch(
        &fetcher(policy),
        &format!("http://{server}/stall-body"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, FetchError::TimedOut(Timeout::Idle(_))),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "timed out: the server sent nothing for 300 ms"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn fetch_fails_when_the_headers_never_come() {
    let server = serve(file_router()).await;
    let dest = dest();
    let policy = FetchPolicy {
        idle_timeout: Duration::from_millis(300),
        ..local_policy()
    };
    let error = fetch(
        &fetcher(policy),
        &format!("http://{server}/stall-headers"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, FetchError::TimedOut(Timeout::Idle(_))),
        "{error:?}"
    );
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn fetch_fails_past_the_total_timeout_though_bytes_keep_coming() {
    let server = serve(file_router()).await;
    let dest = dest();
    let policy = FetchPolicy {
        total_timeout: Duration::from_millis(400),
        ..local_policy()
    };
    let error = fetch(
        &fetcher(policy),
        &format!("http://{server}/trickle"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, FetchError::TimedOut(Timeout::Total(_))),
        "{error:?}"
    );
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn fetch_follows_redirects_up_to_the_limit() {
    let server = serve(file_router()).await;
    let dest = dest();
    let policy = FetchPolicy {
        redirects_max: 3,
        ..local_policy()
    };
    let fetched = fetch(
        &fetcher(policy),
        &format!("http://{server}/redirect/2"),
        &dest.path,
    )
    .await
    .unwrap();
    assert_eq!(
        fetched.file_name.as_deref(),
        Some("end.bin"),
        "named by the final URL"
    );
    assert_eq!(fetched.size_bytes, 3 * 1024 * 1024 + 17);
}

#[tokio::test]
async fn fetch_refuses_one_redirect_too_many() {
    let server = serve(file_router()).await;
    let dest = dest();
    let policy = FetchPolicy {
        redirects_max: 3,
        ..local_policy()
    };
    let error = fetch(
        &fetcher(policy),
        &format!("http://{server}/redirect/3"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, FetchError::TooManyRedirects { limit: 3 }),
        "{error:?}"
    );
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn fetch_refuses_a_redirect_to_a_refused_address_before_connecting() {
    let (target, count) = counting_listener("127.0.0.2").await;
    for location in [
        format!("http://{target}/file"),
        format!("http://[::ffff:127.0.0.2]:{}/file", target.port()),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/".to_owned(),
    ] {
        let server = serve(redirect_router(location.clone())).await;
        let dest = dest();
        let error = fetch(
            &fetcher(local_policy()),
            &format!("http://{server}/start"),
            &dest.path,
        )
        .await
        .unwrap_err();
        assert!(
            matches!(error, FetchError::AddressRefused { .. }),
            "{location}: {error:?}"
        );
        assert!(!dest.path.exists());
    }
    assert_no_connection(&count).await;
}

#[tokio::test]
async fn fetch_refuses_a_redirect_to_a_name_resolving_to_a_refused_address() {
    // The server is on 127.0.0.2, the only allowed address; `localhost` is 127.0.0.1.
    let (target, count) = counting_listener("127.0.0.1").await;
    let location = format!("http://localhost:{}/x", target.port());
    let server = serve_on("127.0.0.2", redirect_router(location)).await;
    let policy = FetchPolicy {
        allowed_networks: vec!["127.0.0.2/32".parse().unwrap()],
        ..local_policy()
    };
    let dest = dest();
    let error = fetch(
        &fetcher(policy),
        &format!("http://{server}/start"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            &error,
            FetchError::AddressRefused { host, class: AddressClass::Loopback } if host == "localhost"
        ),
        "{error:?}"
    );
    assert!(!dest.path.exists());
    assert_no_connection(&count).await;
}

#[tokio::test]
async fn fetch_refuses_a_redirect_to_ftp() {
    let server = serve(redirect_router("ftp://127.0.0.1/file".to_owned())).await;
    let dest = dest();
    let error = fetch(
        &fetcher(local_policy()),
        &format!("http://{server}/start"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, FetchError::RedirectRefused { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "refused to follow a redirect: it leads to a scheme other than http or https"
    );
}

#[tokio::test]
async fn the_default_policy_refuses_loopback_before_connecting() {
    let (target, count) = counting_listener("127.0.0.1").await;
    let default = fetcher(FetchPolicy::default());
    for raw in [
        format!("http://{target}/"),
        format!("http://[::ffff:127.0.0.1]:{}/", target.port()),
        format!("http://2130706433:{}/", target.port()),
        format!("http://0x7f.1:{}/", target.port()),
        format!("ftp://127.0.0.1:{}/file", target.port()),
    ] {
        let refused = default.check_url(&raw);
        assert!(
            matches!(
                refused,
                Err(FetchError::AddressRefused {
                    class: AddressClass::Loopback,
                    ..
                })
            ),
            "{raw}: {refused:?}"
        );
        // A URL that skipped `check_url` is refused by the fetch itself.
        let dest = dest();
        let error = fetch(&default, &raw, &dest.path).await.unwrap_err();
        assert!(
            matches!(error, FetchError::AddressRefused { .. }),
            "{raw}: {error:?}"
        );
        assert!(!dest.path.exists());
    }
    assert_no_connection(&count).await;
}

#[tokio::test]
async fn the_default_policy_refuses_a_name_resolving_to_loopback_before_connecting() {
    let (target, count) = counting_listener("127.0.0.1").await;
    let default = fetcher(FetchPolicy::default());
    for raw in [
        format!("http://localhost:{}/file", target.port()),
        format!("ftp://localhost:{}/file", target.port()),
    ] {
        let url = default
            .check_url(&raw)
            .expect("names are judged at fetch time");
        let dest = dest();
        let error = default
            .fetch_to_file(&url, &dest.path, &no_progress)
            .await
            .unwrap_err();
        assert!(
            matches!(
                &error,
                FetchError::AddressRefused { host, class: AddressClass::Loopback } if host == "localhost"
            ),
            "{raw}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            "the host localhost is or resolves to a loopback address, which imports may not reach"
        );
        assert!(!dest.path.exists());
    }
    assert_no_connection(&count).await;
}

#[tokio::test]
async fn allowed_networks_and_allow_private_admit_internal_servers() {
    let server = serve(file_router()).await;
    let by_name = format!("http://localhost:{}/download", server.port());
    let dest = dest();
    fetch(&fetcher(local_policy()), &by_name, &dest.path)
        .await
        .expect("localhost resolves into 127.0.0.1/32");
    let private = FetchPolicy {
        allow_private: true,
        ..FetchPolicy::default()
    };
    fetch(&fetcher(private), &by_name, &dest.path)
        .await
        .unwrap();
    assert_eq!(std::fs::read(&dest.path).unwrap(), payload(10));
}

#[test]
fn check_url_refuses_internal_address_literals() {
    let default = fetcher(FetchPolicy::default());
    for raw in [
        "http://127.0.0.1/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[2002:7f00:1::]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1]/",
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.0.1/",
        "http://[fd00::1]/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://0/",
        "http://[::]/",
        "http://255.255.255.255/",
        "http://224.0.0.1/",
        "http://192.0.2.1/",
        "http://198.18.0.1/",
        "https://user:pw@127.0.0.1/",
        "ftp://u:p@10.1.2.3/file",
    ] {
        let refused = default.check_url(raw);
        assert!(
            matches!(refused, Err(FetchError::AddressRefused { .. })),
            "{raw}: {refused:?}"
        );
        let message = refused.unwrap_err().to_string();
        assert!(
            !message.contains("pw") && !message.contains("u:p"),
            "{message}"
        );
    }
}

#[test]
fn fetches_can_run_on_any_worker_thread() {
    fn assert_send<T: Send>(_: &T) {}
    fn assert_send_sync_clone<T: Send + Sync + Clone>(_: &T) {}
    let fetcher = fetcher(FetchPolicy::default());
    assert_send_sync_clone(&fetcher);
    let url = FetchUrl::parse("http://example.com/f").unwrap();
    // Never polled: nothing is created or fetched.
    let future = fetcher.fetch_to_file(&url, Path::new("unused"), &no_progress);
    assert_send(&future);
}

#[test]
fn the_policy_takes_networks_as_cidr_text() {
    let networks: Result<Vec<IpNetwork>, IpNetworkError> = ["10.1.0.0/16", "::1/128"]
        .iter()
        .map(|raw| raw.parse())
        .collect();
    assert_eq!(networks.unwrap().len(), 2);
    let typo: Result<IpNetwork, IpNetworkError> = "10.1.2.3/16".parse();
    assert_eq!(
        typo.unwrap_err().to_string(),
        "\"10.1.2.3/16\" has bits set past the prefix length; write the network address"
    );
}

#[test]
fn redact_is_how_fetch_urls_are_shown() {
    let raw = "ftp://importer:p%40ss%3Aw%2Frd@ftp.example.com/dir/f.dfsu";
    let url = fetcher(FetchPolicy::default()).check_url(raw).unwrap();
    assert_eq!(redact(raw), "ftp://***@ftp.example.com/dir/f.dfsu");
    assert_eq!(url.redacted(), redact(raw));
    assert_eq!(url.to_string(), redact(raw));
    assert_eq!(format!("{url:?}"), format!("FetchUrl({:?})", redact(raw)));
}

#[test]
fn check_url_accepts_public_hosts_and_allowed_networks() {
    let default = fetcher(FetchPolicy::default());
    for raw in [
        "https://example.com/file.dfsu",
        "http://8.8.8.8/",
        "http://[2606:4700::1111]/",
        "http://[::ffff:8.8.8.8]/",
        "ftp://user:p%40ss@ftp.example.com/dir/file.dfsu",
    ] {
        default.check_url(raw).unwrap();
    }
    let internal = fetcher(FetchPolicy {
        allowed_networks: vec!["10.1.0.0/16".parse().unwrap(), "::1/128".parse().unwrap()],
        ..FetchPolicy::default()
    });
    internal.check_url("http://10.1.2.3/").unwrap();
    internal.check_url("http://[::1]:8080/").unwrap();
    assert!(internal.check_url("http://10.2.0.1/").is_err());
    assert!(internal.check_url("http://0.0.0.0/").is_err());
}

#[tokio::test]
async fn not_found_names_the_status_without_credentials_or_body() {
    let server = serve(file_router()).await;
    let dest = dest();
    let raw = format!(
        "http://{USER}:{}@{server}/missing?sig=s3cr3t",
        encode(PASSWORD)
    );
    let error = fetch(&fetcher(local_policy()), &raw, &dest.path)
        .await
        .unwrap_err();
    assert!(
        matches!(error, FetchError::NotFound { status: 404 }),
        "{error:?}"
    );
    let message = error.to_string();
    assert_eq!(message, "the server has no file at this URL (status 404)");
    for secret in [PASSWORD, &encode(PASSWORD), "s3cr3t", "internal detail"] {
        assert!(!message.contains(secret));
        assert!(!format!("{error:?}").contains(secret));
    }
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn credentials_in_the_url_are_sent_and_refusals_are_access_denied() {
    let server = serve(file_router()).await;
    let dest = dest();
    let good = format!("http://{USER}:{}@{server}/private", encode(PASSWORD));
    let fetched = fetch(&fetcher(local_policy()), &good, &dest.path)
        .await
        .unwrap();
    assert_eq!(fetched.size_bytes, 5);

    let bad = format!("http://{USER}:wr0ng-s3cret@{server}/private");
    let error = fetch(&fetcher(local_policy()), &bad, &dest.path)
        .await
        .unwrap_err();
    assert!(
        matches!(error, FetchError::AccessDenied { status: 401 }),
        "{error:?}"
    );
    assert!(!error.to_string().contains("wr0ng-s3cret"));
    assert!(!dest.path.exists());

    let other = fetch(
        &fetcher(local_policy()),
        &format!("http://{server}/teapot"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert_eq!(other.to_string(), "the server answered with status 418");
}

#[tokio::test]
async fn a_refused_connection_is_a_network_failure_without_the_url() {
    let (target, _count) = counting_listener("127.0.0.1").await;
    // Bind, note the port, close: nothing listens there any more.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    assert_ne!(target, closed);
    let dest = dest();
    let raw = format!("http://user:hunter22@{closed}/f");
    let error = fetch(&fetcher(local_policy()), &raw, &dest.path)
        .await
        .unwrap_err();
    assert!(matches!(error, FetchError::Network { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        !message.contains("hunter22") && !message.contains("127.0.0.1"),
        "{message}"
    );
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn an_unresolvable_host_is_host_not_found() {
    let dest = dest();
    let error = fetch(
        &fetcher(FetchPolicy::default()),
        "http://no-such-host.invalid/f",
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, FetchError::HostNotFound { host } if host == "no-such-host.invalid"),
        "{error:?}"
    );
}

mod ftp_server {
    //! pyftpdlib, run with `$TEST_BASIN_PYTHON`, else the virtualenv of scripts/python-tests
    //! (`target/py-venv`, which installs tests/python/requirements.txt), else `python3`.
    //! Missing, the FTP tests fail when `CI` is set and are skipped with a note otherwise.

    use std::path::{Path, PathBuf};
    use std::process::Stdio;

    use tokio::io::AsyncBufReadExt;

    const SCRIPT: &str = r#"
import logging, sys
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer
logging.basicConfig(level=logging.CRITICAL)
root, user, password, masquerade = sys.argv[1:5]
authorizer = DummyAuthorizer()
authorizer.add_user(user, password, root, perm="elr")
class Handler(FTPHandler):
    pass
Handler.authorizer = authorizer
Handler.auth_failed_timeout = 0.1
if masquerade:
    Handler.masquerade_address = masquerade
server = FTPServer(("127.0.0.1", 0), Handler)
print(server.socket.getsockname()[1], flush=True)
server.serve_forever()
"#;

    fn python() -> PathBuf {
        if let Some(explicit) = std::env::var_os("TEST_BASIN_PYTHON") {
            return PathBuf::from(explicit);
        }
        let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/py-venv/bin/python");
        if venv.is_file() {
            return venv;
        }
        PathBuf::from("python3")
    }

    /// A running server; dropping it kills the process.
    pub(super) struct FtpServer {
        pub(super) port: u16,
        _child: tokio::process::Child,
    }

    /// Starts pyftpdlib serving `root` to `user`/`password`. With `masquerade`, passive
    /// replies name that address instead of the server's own.
    pub(super) async fn start(
        root: &Path,
        user: &str,
        password: &str,
        masquerade: &str,
    ) -> Option<FtpServer> {
        let log = root.with_extension("stderr");
        let stderr = std::fs::File::create(&log).unwrap();
        let python = python();
        let spawned = tokio::process::Command::new(&python)
            .args(["-c", SCRIPT])
            .arg(root)
            .args([user, password, masquerade])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(error) => {
                return unavailable(&format!(
                    "{} could not be started: {error}",
                    python.display()
                ));
            }
        };
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let first = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line())
            .await
            .expect("pyftpdlib did not start within 20 s");
        if let Ok(Some(line)) = first
            && let Ok(port) = line.trim().parse()
        {
            return Some(FtpServer {
                port,
                _child: child,
            });
        }
        let _ = child.wait().await;
        let errors = std::fs::read_to_string(&log).unwrap_or_default();
        if errors.contains("No module named 'pyftpdlib'") {
            return unavailable(&format!(
                "pyftpdlib is not installed for {} (python3 -m pip install pyftpdlib, or set \
                 TEST_BASIN_PYTHON)",
                python.display()
            ));
        }
        panic!("pyftpdlib failed to start: {errors}");
    }

    fn unavailable(why: &str) -> Option<FtpServer> {
        assert!(
            std::env::var_os("CI").is_none(),
            "the FTP tests need pyftpdlib under CI: {why}"
        );
        eprintln!("SKIPPED: FTP fetch test: {why}");
        None
    }
}

/// A folder with `dir/model.dfsu` for the FTP tests, returned with the file's bytes.
fn ftp_root() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("dir")).unwrap();
    let bytes = payload(300_000);
    std::fs::write(root.join("dir").join("model.dfsu"), &bytes).unwrap();
    (dir, root, bytes)
}

#[tokio::test]
async fn ftp_fetch_decodes_credentials_and_keeps_data_on_the_control_address() {
    let (_dir, root, bytes) = ftp_root();
    // The server names 169.254.169.254 for data connections: the fetch must ignore that.
    let Some(server) = ftp_server::start(&root, USER, PASSWORD, "169.254.169.254").await else {
        return;
    };
    let raw = format!(
        "ftp://{USER}:{}@127.0.0.1:{}/dir/model.dfsu",
        encode(PASSWORD),
        server.port
    );
    assert!(raw.contains("p%40ss%3Aw%2Frd"));
    let fetcher = fetcher(local_policy());
    let url = fetcher.check_url(&raw).unwrap();
    assert_eq!(
        url.redacted(),
        format!("ftp://***@127.0.0.1:{}/dir/model.dfsu", server.port)
    );
    let dest = dest();
    let reports = std::sync::Mutex::new(Vec::new());
    let progress = |done: u64, total: Option<u64>| reports.lock().unwrap().push((done, total));
    let fetched = fetcher
        .fetch_to_file(&url, &dest.path, &progress)
        .await
        .unwrap();
    assert_eq!(fetched.size_bytes, 300_000);
    assert_eq!(fetched.file_name.as_deref(), Some("model.dfsu"));
    assert_eq!(fetched.content_type, None);
    assert_eq!(
        std::fs::read(&dest.path).unwrap(),
        bytes,
        "binary, not ASCII, mode"
    );
    let reports = reports.into_inner().unwrap();
    assert_eq!(
        reports.first(),
        Some(&(0, Some(300_000))),
        "SIZE announced the total"
    );
    assert_eq!(reports.last(), Some(&(300_000, Some(300_000))));
}

#[tokio::test]
async fn ftp_wrong_password_is_access_denied_without_the_password() {
    let (_dir, root, _) = ftp_root();
    let Some(server) = ftp_server::start(&root, USER, PASSWORD, "").await else {
        return;
    };
    let wrong = "wr0ng:p@ss/w0rd";
    let raw = format!(
        "ftp://{USER}:{}@127.0.0.1:{}/dir/model.dfsu",
        encode(wrong),
        server.port
    );
    let dest = dest();
    let error = fetch(&fetcher(local_policy()), &raw, &dest.path)
        .await
        .unwrap_err();
    assert!(
        matches!(error, FetchError::AccessDenied { status: 530 }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("refused access"), "{message}");
    for secret in [wrong, &encode(wrong), "wr0ng"] {
        assert!(!message.contains(secret), "{message}");
        assert!(!format!("{error:?}").contains(secret));
    }
    assert!(!dest.path.exists());
}

#[tokio::test]
async fn ftp_missing_file_and_oversized_file_fail_cleanly() {
    let (_dir, root, _) = ftp_root();
    let Some(server) = ftp_server::start(&root, USER, PASSWORD, "").await else {
        return;
    };
    let base = format!(
        "ftp://{USER}:{}@127.0.0.1:{}",
        encode(PASSWORD),
        server.port
    );
    let dest = dest();
    let missing = fetch(
        &fetcher(local_policy()),
        &format!("{base}/dir/none.dfsu"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(missing, FetchError::NotFound { status: 550 }),
        "{missing:?}"
    );
    assert!(!dest.path.exists());

    let small = FetchPolicy {
        bytes_max: 299_999,
        ..local_policy()
    };
    let too_large = fetch(
        &fetcher(small),
        &format!("{base}/dir/model.dfsu"),
        &dest.path,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            too_large,
            FetchError::TooLarge {
                limit_bytes: 299_999
            }
        ),
        "{too_large:?}"
    );
    assert!(!dest.path.exists());

    let exact = FetchPolicy {
        bytes_max: 300_000,
        ..local_policy()
    };
    let fetched = fetch(
        &fetcher(exact),
        &format!("{base}/dir/model.dfsu"),
        &dest.path,
    )
    .await
    .unwrap();
    assert_eq!(fetched.size_bytes, 300_000);
}
