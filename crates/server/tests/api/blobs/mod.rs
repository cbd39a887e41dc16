//! Blob transfer (docs/blobs.md): upload URLs, the Azure-compatible blob endpoint
//! (PUT, staged blocks, GET with ranges, HEAD), signatures, limits and all-or-nothing writes.

mod uploads;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use basin::Clock;
use chrono::TimeDelta;
use md5::{Digest, Md5};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::*;

/// Deterministic bytes: `length` bytes that differ from position to position.
fn data(length: usize) -> Vec<u8> {
    (0..length).map(|i| (i * 7 % 251) as u8).collect()
}

async fn upload_url(app: &TestApp, file_name: Option<&str>) -> String {
    let request = app.with_key(Method::GET, &upload_url_path(file_name));
    let body = expect_status(request.send().await.unwrap(), StatusCode::OK).await;
    body["data"].as_str().unwrap().to_owned()
}

fn upload_url_path(file_name: Option<&str>) -> String {
    let path = &routes::upload_url();
    match file_name {
        None => path.to_owned(),
        Some(name) => {
            let query = form_urlencoded::Serializer::new(String::new())
                .append_pair("fileName", name)
                .finish();
            format!("{path}?{query}")
        }
    }
}

fn with_query(url: &str, extra: &str) -> String {
    format!("{url}&{extra}")
}

async fn put_blob(app: &TestApp, url: &str, bytes: Vec<u8>) -> reqwest::Response {
    app.client
        .put(url)
        .header("x-ms-blob-type", "BlockBlob")
        .body(bytes)
        .send()
        .await
        .unwrap()
}

async fn get_blob(app: &TestApp, url: &str, range: Option<(&str, &str)>) -> reqwest::Response {
    let mut request = app.client.get(url);
    if let Some((name, value)) = range {
        request = request.header(name, value);
    }
    request.send().await.unwrap()
}

async fn head_status(app: &TestApp, url: &str) -> StatusCode {
    app.client.head(url).send().await.unwrap().status()
}

/// Asserts an Azure XML error with `status` and `code`.
async fn expect_azure_error(response: reqwest::Response, status: StatusCode, code: &str) {
    assert_eq!(response.status(), status);
    assert_eq!(response.headers()["x-ms-error-code"], code);
    assert_eq!(response.headers()["content-type"], "application/xml");
    let body = response.text().await.unwrap();
    assert!(body.contains(&format!("<Code>{code}</Code>")), "{body}");
}

/// `url` signed anew with `permissions` for an hour, as the app signs: for URLs no endpoint
/// hands out yet.
/// Sends raw bytes and returns what the server answered (empty if it closed without one).
async fn raw_http(app: &TestApp, request: &[u8], half_close: bool) -> String {
    let address = app.address.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    stream.write_all(request).await.unwrap();
    if half_close {
        stream.shutdown().await.unwrap();
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    String::from_utf8_lossy(&response).into_owned()
}

fn request_target(url: &str) -> String {
    let url = reqwest::Url::parse(url).unwrap();
    format!("{}?{}", url.path(), url.query().unwrap_or(""))
}

/// Waits until no write is in progress in the local blob folder.
async fn assert_no_temporary_files(app: &TestApp) {
    let tmp = app.config.data_dir.join("blobs").join(".tmp");
    for _ in 0..50 {
        if std::fs::read_dir(&tmp).unwrap().count() == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("temporary files remain in {}", tmp.display());
}

api_test!(an_upload_url_requires_credentials, |app| {
    let response = app
        .anonymous(Method::GET, &routes::upload_url())
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-missing").await;
});

api_test!(
    an_upload_url_points_at_a_fresh_path_of_the_callers_tenant,
    |app| {
        let response = app
            .with_key(Method::GET, &upload_url_path(Some("model result.dfsu")))
            .header("api-version", "2")
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.headers()["api-supported-versions"],
            "1.0, 2.0, 3.0"
        );
        let body = expect_status(response, StatusCode::OK).await;
        let url = body["data"].as_str().unwrap();
        let prefix = format!("{}/basin/uploads/{}/", app.address, app.tenant_id());
        assert!(url.starts_with(&prefix), "{url}");
        assert!(url.contains("/model%20result.dfsu?"), "{url}");
        for parameter in ["sv=", "se=", "sr=b", "sp=rcw", "sig="] {
            assert!(url.contains(parameter), "{parameter} missing in {url}");
        }
        assert_ne!(upload_url(&app, None).await, upload_url(&app, None).await);
        for bad in ["a/b", "..", "a\\b"] {
            let response = app
                .with_key(Method::GET, &upload_url_path(Some(bad)))
                .send()
                .await
                .unwrap();
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
    }
);

api_test!(a_caller_outside_any_tenant_gets_no_upload_url, |app| {
    let loner = app.create_user("Loner", None, "User").await;
    let token = app.user_token(loner, None);
    let response = app
        .with_token(Method::GET, &upload_url_path(None), &token)
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
});

api_test_with!(
    upload_urls_use_the_configured_public_url,
    |config: &mut basin::Config| {
        config.public_url = Some("https://files.example.com/platform/".into());
    },
    |app| {
        let url = upload_url(&app, None).await;
        assert!(
            url.starts_with("https://files.example.com/platform/basin/uploads/"),
            "{url}"
        );
    }
);

api_test!(a_signed_put_then_get_returns_the_same_bytes, |app| {
    let url = upload_url(&app, Some("data.bin")).await;
    let bytes = data(100_000);
    // No API key: the signature is the credential.
    let response = put_blob(&app, &url, bytes.clone()).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let md5: [u8; 16] = Md5::digest(&bytes).into();
    assert_eq!(response.headers()["content-md5"], STANDARD.encode(md5));
    assert_eq!(response.headers()["x-ms-request-server-encrypted"], "false");
    assert!(response.headers().contains_key("x-ms-version"));
    assert!(response.headers().contains_key("x-ms-request-id"));
    assert!(response.headers().contains_key("last-modified"));
    let etag = response.headers()["etag"].clone();

    let response = get_blob(&app, &url, None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert_eq!(headers["content-length"], "100000");
    assert_eq!(headers["accept-ranges"], "bytes");
    assert_eq!(headers["x-ms-blob-type"], "BlockBlob");
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert_eq!(headers["etag"], etag);
    assert_eq!(response.bytes().await.unwrap().as_ref(), bytes.as_slice());

    let response = app.client.head(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-length"], "100000");
    assert_eq!(response.headers()["etag"], etag);
    assert!(response.bytes().await.unwrap().is_empty());
});

api_test!(
    a_blob_can_be_replaced_but_not_under_if_none_match_star,
    |app| {
        let url = upload_url(&app, None).await;
        assert_eq!(
            put_blob(&app, &url, data(10)).await.status(),
            StatusCode::CREATED
        );
        let response = app
            .client
            .put(&url)
            .header("x-ms-blob-type", "BlockBlob")
            .header("if-none-match", "*")
            .body(b"replacement".to_vec())
            .send()
            .await
            .unwrap();
        expect_azure_error(response, StatusCode::CONFLICT, "BlobAlreadyExists").await;
        let kept = get_blob(&app, &url, None).await.bytes().await.unwrap();
        assert_eq!(kept.as_ref(), data(10).as_slice());
        assert_eq!(
            put_blob(&app, &url, b"new".to_vec()).await.status(),
            StatusCode::CREATED
        );
        let replaced = get_blob(&app, &url, None).await.bytes().await.unwrap();
        assert_eq!(replaced.as_ref(), b"new");
    }
);

api_test!(a_put_needs_the_block_blob_type_and_a_matching_md5, |app| {
    let url = upload_url(&app, None).await;
    let response = app
        .client
        .put(&url)
        .body(b"x".to_vec())
        .send()
        .await
        .unwrap();
    expect_azure_error(response, StatusCode::BAD_REQUEST, "MissingRequiredHeader").await;
    let response = app
        .client
        .put(&url)
        .header("x-ms-blob-type", "AppendBlob")
        .body(b"x".to_vec())
        .send()
        .await
        .unwrap();
    expect_azure_error(response, StatusCode::BAD_REQUEST, "InvalidHeaderValue").await;
    let response = app
        .client
        .put(&url)
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", STANDARD.encode([0u8; 16]))
        .body(b"abc".to_vec())
        .send()
        .await
        .unwrap();
    expect_azure_error(response, StatusCode::BAD_REQUEST, "Md5Mismatch").await;
    assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
    let md5: [u8; 16] = Md5::digest(b"abc").into();
    let response = app
        .client
        .put(&url)
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", STANDARD.encode(md5))
        .body(b"abc".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
});

fn block_id(n: u32) -> String {
    STANDARD.encode(format!("{n:08}"))
}

async fn stage(app: &TestApp, url: &str, id: &str, bytes: Vec<u8>) -> reqwest::Response {
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("comp", "block")
        .append_pair("blockid", id)
        .finish();
    app.client
        .put(with_query(url, &query))
        .body(bytes)
        .send()
        .await
        .unwrap()
}

async fn commit(app: &TestApp, url: &str, xml: String) -> reqwest::Response {
    app.client
        .put(with_query(url, "comp=blocklist"))
        .body(xml)
        .send()
        .await
        .unwrap()
}

api_test!(staged_blocks_become_a_blob_only_when_committed, |app| {
    let url = upload_url(&app, Some("big.bin")).await;
    let parts = [data(5000), data(3000), data(7)];
    for (n, part) in parts.iter().enumerate() {
        let response = stage(&app, &url, &block_id(n as u32), part.clone()).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        // As Azure since 2019-02-02: a block's MD5 only when the client sent one to check.
        assert!(!response.headers().contains_key("content-md5"));
    }
    let response = app.client.head(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(response.headers()["x-ms-error-code"], "BlobNotFound");
    expect_azure_error(
        get_blob(&app, &url, None).await,
        StatusCode::NOT_FOUND,
        "BlobNotFound",
    )
    .await;

    let unknown = format!("<BlockList><Latest>{}</Latest></BlockList>", block_id(9));
    expect_azure_error(
        commit(&app, &url, unknown).await,
        StatusCode::BAD_REQUEST,
        "InvalidBlockList",
    )
    .await;
    expect_azure_error(
        commit(&app, &url, "<BlockList><Latest>".into()).await,
        StatusCode::BAD_REQUEST,
        "InvalidXmlDocument",
    )
    .await;

    let xml = format!(
        "<?xml version='1.0' encoding='utf-8'?>\n<BlockList><Latest>{}</Latest><Uncommitted>{}</Uncommitted><Committed>{}</Committed></BlockList>",
        block_id(0),
        block_id(1),
        block_id(2)
    );
    let response = commit(&app, &url, xml).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert!(response.headers().contains_key("etag"));
    let body = get_blob(&app, &url, None).await.bytes().await.unwrap();
    assert_eq!(body.as_ref(), parts.concat().as_slice());
});

api_test!(a_block_needs_a_valid_block_id, |app| {
    let url = upload_url(&app, None).await;
    for bad in ["not base64!", "", &STANDARD.encode([1u8; 65])] {
        let response = stage(&app, &url, bad, b"x".to_vec()).await;
        expect_azure_error(response, StatusCode::BAD_REQUEST, "InvalidBlockId").await;
    }
    let response = app
        .client
        .put(with_query(&url, "comp=block"))
        .body(b"x".to_vec())
        .send()
        .await
        .unwrap();
    expect_azure_error(
        response,
        StatusCode::BAD_REQUEST,
        "InvalidQueryParameterValue",
    )
    .await;
    let response = app
        .client
        .put(with_query(&url, "comp=appendblock"))
        .body(b"x".to_vec())
        .send()
        .await
        .unwrap();
    expect_azure_error(
        response,
        StatusCode::BAD_REQUEST,
        "InvalidQueryParameterValue",
    )
    .await;
});

api_test!(ranges_answer_206_with_the_selected_bytes, |app| {
    let url = upload_url(&app, None).await;
    let bytes = data(1000);
    assert_eq!(
        put_blob(&app, &url, bytes.clone()).await.status(),
        StatusCode::CREATED
    );
    let cases: [(&str, &str, usize, usize); 6] = [
        ("range", "bytes=10-19", 10, 20),
        ("x-ms-range", "bytes=0-33554431", 0, 1000),
        ("x-ms-range", "bytes=990-999", 990, 1000),
        ("range", "bytes=-100", 900, 1000),
        ("range", "bytes=100-", 100, 1000),
        ("range", "bytes=999-999", 999, 1000),
    ];
    for (header, value, start, end) in cases {
        let response = get_blob(&app, &url, Some((header, value))).await;
        assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT, "{value}");
        let expected_range = format!("bytes {start}-{}/1000", end - 1);
        assert_eq!(response.headers()["content-range"], expected_range.as_str());
        assert_eq!(
            response.headers()["content-length"],
            (end - start).to_string().as_str()
        );
        let body = response.bytes().await.unwrap();
        assert_eq!(body.as_ref(), &bytes[start..end], "{value}");
    }
    // x-ms-range wins over Range.
    let response = app
        .client
        .get(&url)
        .header("range", "bytes=0-0")
        .header("x-ms-range", "bytes=5-6")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-range"], "bytes 5-6/1000");
});

api_test!(unsatisfiable_ranges_are_416_and_malformed_ones_400, |app| {
    let url = upload_url(&app, None).await;
    assert_eq!(
        put_blob(&app, &url, data(1000)).await.status(),
        StatusCode::CREATED
    );
    for value in ["bytes=1000-", "bytes=1000-2000", "bytes=-0"] {
        let response = get_blob(&app, &url, Some(("range", value))).await;
        assert_eq!(
            response.headers()["content-range"],
            "bytes */1000",
            "{value}"
        );
        expect_azure_error(response, StatusCode::RANGE_NOT_SATISFIABLE, "InvalidRange").await;
    }
    for value in ["bytes=5-1", "bytes=0-1,5-6", "lines=1-2"] {
        let response = get_blob(&app, &url, Some(("x-ms-range", value))).await;
        expect_azure_error(response, StatusCode::BAD_REQUEST, "InvalidHeaderValue").await;
    }
});

api_test!(if_match_must_name_the_current_etag, |app| {
    let url = upload_url(&app, None).await;
    let response = put_blob(&app, &url, data(10)).await;
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    let response = app
        .client
        .get(&url)
        .header("if-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let response = app
        .client
        .get(&url)
        .header("if-match", "\"other\"")
        .send()
        .await
        .unwrap();
    expect_azure_error(response, StatusCode::PRECONDITION_FAILED, "ConditionNotMet").await;
});

api_test!(an_expired_url_is_refused_and_writes_nothing, |app| {
    let url = upload_url(&app, None).await;
    let ttl = TimeDelta::seconds(app.config.blob.upload_url_ttl_seconds);
    app.clock.advance(ttl);
    let response = put_blob(&app, &url, data(10)).await;
    expect_azure_error(response, StatusCode::FORBIDDEN, "AuthenticationFailed").await;
    let response = stage(&app, &url, &block_id(1), data(10)).await;
    expect_azure_error(response, StatusCode::FORBIDDEN, "AuthenticationFailed").await;
    assert_eq!(head_status(&app, &url).await, StatusCode::FORBIDDEN);
    app.clock.advance(-TimeDelta::seconds(1));
    assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
    let xml = format!("<BlockList><Latest>{}</Latest></BlockList>", block_id(1));
    expect_azure_error(
        commit(&app, &url, xml).await,
        StatusCode::BAD_REQUEST,
        "InvalidBlockList",
    )
    .await;
});

api_test!(a_tampered_url_is_refused_and_writes_nothing, |app| {
    let url = upload_url(&app, None).await;
    let (blob_url, query) = url.split_once('?').unwrap();
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let rebuild = |key: &str, value: &str| {
        let mut out = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &pairs {
            out.append_pair(k, if k == key { value } else { v });
        }
        format!("{blob_url}?{}", out.finish())
    };
    let later = (app.clock.now() + TimeDelta::days(300))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let tampered = [
        rebuild("sig", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
        rebuild("se", &later),
        rebuild("sp", "racw"),
        format!("{blob_url}-other?{query}"),
        blob_url.to_owned(),
    ];
    for url in &tampered {
        let response = put_blob(&app, url, data(10)).await;
        expect_azure_error(response, StatusCode::FORBIDDEN, "AuthenticationFailed").await;
    }
    assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
    assert_eq!(
        head_status(&app, &tampered[3].replace("-other", "")).await,
        StatusCode::NOT_FOUND
    );
});

api_test!(a_read_only_url_cannot_write, |app| {
    let url = upload_url(&app, None).await;
    assert_eq!(
        put_blob(&app, &url, data(10)).await.status(),
        StatusCode::CREATED
    );
    let read = resigned(&app, &url, "r");
    assert!(read.contains("sp=r&"), "{read}");
    let response = put_blob(&app, &read, data(20)).await;
    expect_azure_error(
        response,
        StatusCode::FORBIDDEN,
        "AuthorizationPermissionMismatch",
    )
    .await;
    let response = stage(&app, &read, &block_id(0), data(20)).await;
    expect_azure_error(
        response,
        StatusCode::FORBIDDEN,
        "AuthorizationPermissionMismatch",
    )
    .await;
    let body = get_blob(&app, &read, None).await.bytes().await.unwrap();
    assert_eq!(body.as_ref(), data(10).as_slice());
    // A create-only URL creates, but never replaces.
    let create = resigned(&app, &url, "c");
    let response = put_blob(&app, &create, data(20)).await;
    expect_azure_error(response, StatusCode::CONFLICT, "BlobAlreadyExists").await;
    // A write-only URL cannot read.
    let write = resigned(&app, &url, "w");
    let response = get_blob(&app, &write, None).await;
    expect_azure_error(
        response,
        StatusCode::FORBIDDEN,
        "AuthorizationPermissionMismatch",
    )
    .await;
});

api_test!(an_upload_cut_off_midway_leaves_no_blob, |app| {
    let url = upload_url(&app, None).await;
    let address = app.address.trim_start_matches("http://");
    let head = format!(
        "PUT {} HTTP/1.1\r\nHost: {address}\r\nx-ms-blob-type: BlockBlob\r\nContent-Length: 100000\r\n\r\n",
        request_target(&url)
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(&data(1000));
    let response = raw_http(&app, &request, true).await;
    assert!(
        response.is_empty() || response.starts_with("HTTP/1.1 400"),
        "{response}"
    );
    assert_no_temporary_files(&app).await;
    assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
});

fn small_upload_limit(config: &mut basin::Config) {
    config.limits.upload_bytes_max = std::num::NonZeroU64::new(1000).unwrap();
}

api_test_with!(
    an_upload_over_the_limit_is_413_and_leaves_no_blob,
    small_upload_limit,
    |app| {
        let url = upload_url(&app, None).await;
        let response = put_blob(&app, &url, data(1001)).await;
        expect_azure_error(
            response,
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestBodyTooLarge",
        )
        .await;
        // A chunked body announces no length; it is cut off when it passes the limit.
        let address = app.address.trim_start_matches("http://");
        let mut request = format!(
            "PUT {} HTTP/1.1\r\nHost: {address}\r\nx-ms-blob-type: BlockBlob\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
            request_target(&url)
        )
        .into_bytes();
        for _ in 0..3 {
            request.extend_from_slice(b"258\r\n");
            request.extend_from_slice(&data(600));
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
        let response = raw_http(&app, &request, false).await;
        assert!(response.starts_with("HTTP/1.1 413"), "{response}");
        assert!(response.contains("RequestBodyTooLarge"), "{response}");
        let response = stage(&app, &url, &block_id(0), data(1001)).await;
        expect_azure_error(
            response,
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestBodyTooLarge",
        )
        .await;
        // Blocks within the limit that add up past it cannot be committed.
        for n in 0..2 {
            let response = stage(&app, &url, &block_id(n), data(600)).await;
            assert_eq!(response.status(), StatusCode::CREATED);
        }
        let xml = format!(
            "<BlockList><Latest>{}</Latest><Latest>{}</Latest></BlockList>",
            block_id(0),
            block_id(1)
        );
        expect_azure_error(
            commit(&app, &url, xml).await,
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestBodyTooLarge",
        )
        .await;
        assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
        assert_no_temporary_files(&app).await;
        assert_eq!(
            put_blob(&app, &url, data(1000)).await.status(),
            StatusCode::CREATED
        );
    }
);

api_test!(blob_paths_cannot_escape_the_blob_folder, |app| {
    let url = upload_url(&app, None).await;
    let query = url.split_once('?').unwrap().1;
    let address = app.address.trim_start_matches("http://");
    for target in [
        "/basin/uploads/../../outside",
        "/basin/uploads/%2e%2e/%2e%2e/outside",
        "/basin/uploads/a/..%2F..%2F..%2Foutside",
        "/basin/..%2F..%2Fetc/passwd",
        "/basin/uploads/a%5C..%5Cb",
        "/basin/uploads/a//b",
    ] {
        let request = format!(
            "PUT {target}?{query} HTTP/1.1\r\nHost: {address}\r\nx-ms-blob-type: BlockBlob\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx"
        );
        let response = raw_http(&app, request.as_bytes(), false).await;
        assert!(response.starts_with("HTTP/1.1 400"), "{target}: {response}");
        assert!(
            response.contains("InvalidResourceName"),
            "{target}: {response}"
        );
    }
    assert!(!app.config.data_dir.join("outside").exists());
    assert!(!app.config.data_dir.join("blobs").join("outside").exists());
});

api_test!(blob_errors_are_azure_xml_not_problem_json, |app| {
    let url = upload_url(&app, None).await;
    let response = get_blob(&app, &url, None).await;
    assert!(response.headers().contains_key("x-ms-request-id"));
    expect_azure_error(response, StatusCode::NOT_FOUND, "BlobNotFound").await;
    // Outside the blob routes the API still answers problem+json.
    let response = app
        .with_key(Method::GET, "/basin/uploads")
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "route-not-found").await;
});

fn memory_backend(config: &mut basin::Config) {
    config.blob.url = Some("memory://".into());
}

api_test_with!(
    the_object_store_backend_serves_the_same_protocol,
    memory_backend,
    |app| {
        let url = upload_url(&app, Some("object.bin")).await;
        let bytes = data(20_000);
        assert_eq!(
            put_blob(&app, &url, bytes.clone()).await.status(),
            StatusCode::CREATED
        );
        let response = get_blob(&app, &url, Some(("x-ms-range", "bytes=100-199"))).await;
        assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(response.headers()["content-range"], "bytes 100-199/20000");
        assert_eq!(response.bytes().await.unwrap().as_ref(), &bytes[100..200]);

        let blocks_url = upload_url(&app, None).await;
        for n in 0..3 {
            let response = stage(&app, &blocks_url, &block_id(n), data(1000)).await;
            assert_eq!(response.status(), StatusCode::CREATED);
        }
        assert_eq!(head_status(&app, &blocks_url).await, StatusCode::NOT_FOUND);
        let xml = format!(
            "<BlockList><Latest>{}</Latest><Latest>{}</Latest><Latest>{}</Latest></BlockList>",
            block_id(2),
            block_id(0),
            block_id(1)
        );
        assert_eq!(
            commit(&app, &blocks_url, xml).await.status(),
            StatusCode::CREATED
        );
        let body = get_blob(&app, &blocks_url, None)
            .await
            .bytes()
            .await
            .unwrap();
        assert_eq!(body.as_ref(), data(1000).repeat(3).as_slice());
        let response = app
            .client
            .put(&blocks_url)
            .header("x-ms-blob-type", "BlockBlob")
            .header("if-none-match", "*")
            .body(b"x".to_vec())
            .send()
            .await
            .unwrap();
        expect_azure_error(response, StatusCode::CONFLICT, "BlobAlreadyExists").await;
        assert!(
            !app.config.data_dir.join("blobs").exists(),
            "nothing went to the folder"
        );
    }
);

api_test_with!(
    a_stalled_blob_upload_is_408_and_leaves_no_blob,
    short_idle_timeout,
    |app| {
        let url = upload_url(&app, None).await;
        let address = app.address.trim_start_matches("http://");
        let head = format!(
            "PUT {} HTTP/1.1\r\nHost: {address}\r\nx-ms-blob-type: BlockBlob\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n",
            request_target(&url)
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(&data(1000));
        // The connection stays open and silent: the idle limit, not the client, ends it.
        let response = raw_http(&app, &request, false).await;
        assert!(response.starts_with("HTTP/1.1 408"), "{response}");
        assert!(response.contains("OperationTimedOut"), "{response}");
        assert_no_temporary_files(&app).await;
        assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
    }
);

api_test_with!(
    a_slow_but_steady_blob_upload_outlasts_the_request_timeout,
    short_idle_timeout,
    |app| {
        let url = upload_url(&app, None).await;
        let bytes = data(5000);
        let response = app
            .client
            .put(&url)
            .header("x-ms-blob-type", "BlockBlob")
            .body(slow_body(&bytes))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        let read = get_blob(&app, &url, None).await;
        assert_eq!(read.bytes().await.unwrap().as_ref(), bytes.as_slice());
    }
);

api_test!(
    content_headers_and_metadata_are_stored_with_the_blob_and_returned,
    |app| {
        let url = upload_url(&app, Some("grid.tif")).await;
        let response = app
            .client
            .put(&url)
            .header("x-ms-blob-type", "BlockBlob")
            .header("content-type", "application/octet-stream")
            .header("x-ms-blob-content-type", "image/tiff")
            .header("cache-control", "no-cache")
            .header("x-ms-meta-Source", "model run 7")
            .body(data(100))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        for response in [
            get_blob(&app, &url, None).await,
            get_blob(&app, &url, Some(("x-ms-range", "bytes=0-9"))).await,
            app.client.head(&url).send().await.unwrap(),
        ] {
            let headers = response.headers();
            assert_eq!(headers["content-type"], "image/tiff");
            assert_eq!(headers["cache-control"], "no-cache");
            assert_eq!(headers["x-ms-meta-source"], "model run 7");
        }

        // A block list takes only the x-ms-blob-* headers: its Content-Type is the XML's.
        let url = upload_url(&app, Some("mesh.vtu")).await;
        let id = block_id(1);
        assert_eq!(
            stage(&app, &url, &id, data(10)).await.status(),
            StatusCode::CREATED
        );
        let response = app
            .client
            .put(with_query(&url, "comp=blocklist"))
            .header("content-type", "application/xml")
            .header("x-ms-blob-content-disposition", "attachment")
            .body(format!("<BlockList><Latest>{id}</Latest></BlockList>"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        let response = app.client.head(&url).send().await.unwrap();
        assert_eq!(
            response.headers()["content-type"],
            "application/octet-stream"
        );
        assert_eq!(response.headers()["content-disposition"], "attachment");
    }
);

api_test!(bad_metadata_is_400_and_stores_nothing, |app| {
    let url = upload_url(&app, None).await;
    let put = |name: &'static str, value: String| {
        app.client
            .put(&url)
            .header("x-ms-blob-type", "BlockBlob")
            .header(name, value)
            .body(data(10))
            .send()
    };
    expect_azure_error(
        put("x-ms-meta-1st", "v".into()).await.unwrap(),
        StatusCode::BAD_REQUEST,
        "InvalidMetadata",
    )
    .await;
    expect_azure_error(
        put("x-ms-meta-big", "v".repeat(8 * 1024)).await.unwrap(),
        StatusCode::BAD_REQUEST,
        "MetadataTooLarge",
    )
    .await;
    assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
});

// Issue 9, fault 10: a signature with a trailing `=` was accepted.
api_test!(
    a_signature_in_any_form_but_the_issued_one_is_refused,
    |app| {
        let url = upload_url(&app, Some("a.bin")).await;
        assert!(url.contains("&sig="), "{url}");
        let padded = format!("{url}%3D");
        expect_azure_error(
            put_blob(&app, &padded, data(10)).await,
            StatusCode::FORBIDDEN,
            "AuthenticationFailed",
        )
        .await;
        assert_eq!(
            put_blob(&app, &url, data(10)).await.status(),
            StatusCode::CREATED
        );
    }
);

// Issue 9, fault 8: a block list naming one small block 50,000 times turned 100 KB of upload
// into gigabytes of writes.
api_test!(a_block_list_naming_a_block_twice_is_refused, |app| {
    let url = upload_url(&app, Some("twice.bin")).await;
    assert_eq!(
        stage(&app, &url, &block_id(1), data(100)).await.status(),
        StatusCode::CREATED
    );
    let xml = format!(
        "<BlockList><Latest>{0}</Latest><Latest>{0}</Latest></BlockList>",
        block_id(1)
    );
    expect_azure_error(
        commit(&app, &url, xml).await,
        StatusCode::BAD_REQUEST,
        "InvalidBlockList",
    )
    .await;
    assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
    let xml = format!("<BlockList><Latest>{}</Latest></BlockList>", block_id(1));
    assert_eq!(commit(&app, &url, xml).await.status(), StatusCode::CREATED);
});

// Issue 9, fault 7: content uploaded as text/html was served inline from the API's origin.
api_test!(blobs_are_served_so_that_browsers_run_nothing, |app| {
    let url = upload_url(&app, Some("page.html")).await;
    let response = app
        .client
        .put(&url)
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "text/html")
        .header("x-ms-blob-content-disposition", "inline")
        .body("<script>alert(1)</script>")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let read = resigned(&app, &url, "r");
    for response in [
        app.client.get(&read).send().await.unwrap(),
        app.client.head(&read).send().await.unwrap(),
    ] {
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers();
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(
            headers["content-security-policy"],
            "default-src 'none'; sandbox"
        );
        assert_eq!(
            headers["content-disposition"],
            "attachment; filename=\"page.html\""
        );
        assert_eq!(headers["content-type"], "text/html");
    }
});

// Issue 33, item 3: a stored list of types (`text/plain, text/html`, which a browser reads by
// its last member) and XML dialects that run script were served inline. Only one known passive
// type is served inline; everything else is an attachment.
api_test!(only_a_single_passive_media_type_is_served_inline, |app| {
    for (content_type, inline) in [
        ("text/plain, text/html", false),
        ("application/atom+xml", false),
        ("application/rss+xml", false),
        ("application/mathml+xml", false),
        ("application/x-never-heard-of", false),
        ("text/plain; charset=utf-8", true),
        ("image/png", true),
    ] {
        let url = upload_url(&app, Some("feed.xml")).await;
        let response = app
            .client
            .put(&url)
            .header("x-ms-blob-type", "BlockBlob")
            .header("x-ms-blob-content-type", content_type)
            .header("x-ms-blob-content-disposition", "inline")
            .body("<feed/>")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        let read = resigned(&app, &url, "r");
        for response in [
            app.client.get(&read).send().await.unwrap(),
            app.client.head(&read).send().await.unwrap(),
        ] {
            let disposition = response.headers()["content-disposition"].to_str().unwrap();
            let expected = if inline {
                "inline"
            } else {
                "attachment; filename=\"feed.xml\""
            };
            assert_eq!(disposition, expected, "{content_type}");
            assert_eq!(response.headers()["content-type"], content_type);
        }
    }
});

// Issue 9, fault 6: a signed upload URL kept writing after its dataset or project was deleted,
// changing content in the recycle bin.
api_test!(
    upload_urls_of_deleted_datasets_and_projects_write_nothing,
    |app| {
        let project = app.create_project(As::Key, "P", json!({})).await;
        let folder = app
            .create_subproject(As::Key, &project, "F", json!({}))
            .await;
        let bulk = |parent: String| {
            let app = &app;
            async move {
                let body = json!({"actions": [
                    {"type": "PathActionCreate", "path": "a.bin", "isFolder": false},
                    {"type": "PathActionCreate", "path": "b.bin", "isFolder": false},
                ]});
                let response = app
                    .send_as(
                        As::Key,
                        Method::POST,
                        &routes::hierarchy(&parent),
                        Some(body),
                    )
                    .await;
                expect_status(response, StatusCode::OK).await
            }
        };
        let in_folder = bulk(id_str(&folder).to_owned()).await;
        let in_project = bulk(id_str(&project).to_owned()).await;
        let sas = |answer: &Value, index: usize| {
            answer["results"][index]["sasToken"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let (a, b) = (sas(&in_project, 0), sas(&in_project, 1));
        assert_eq!(
            put_blob(&app, &a, data(10)).await.status(),
            StatusCode::CREATED
        );
        // The dataset itself deleted: whole blobs, blocks and block lists are refused.
        let dataset = in_project["results"][0]["datasetId"].as_str().unwrap();
        let deleted = app
            .send_as(As::Key, Method::DELETE, &routes::dataset(dataset), None)
            .await;
        expect_status(deleted, StatusCode::NO_CONTENT).await;
        for response in [
            put_blob(&app, &a, data(20)).await,
            stage(&app, &a, &block_id(1), data(5)).await,
            commit(
                &app,
                &a,
                format!("<BlockList><Latest>{}</Latest></BlockList>", block_id(1)),
            )
            .await,
        ] {
            expect_azure_error(response, StatusCode::FORBIDDEN, "AuthorizationFailure").await;
        }
        // Reads are refused too while it is in the bin; a restore shows the content unchanged.
        let read = resigned(&app, &a, "r");
        expect_azure_error(
            app.client.get(&read).send().await.unwrap(),
            StatusCode::FORBIDDEN,
            "AuthorizationFailure",
        )
        .await;
        let restored = app.recycle_bin().dataset(dataset).restore().await;
        expect_status(restored, StatusCode::NO_CONTENT).await;
        let content = app
            .client
            .get(&read)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(content.to_vec(), data(10), "content in the bin changed");
        let deleted = app
            .send_as(As::Key, Method::DELETE, &routes::dataset(dataset), None)
            .await;
        expect_status(deleted, StatusCode::NO_CONTENT).await;
        // A live dataset of the same project is still writable.
        assert_eq!(
            put_blob(&app, &b, data(10)).await.status(),
            StatusCode::CREATED
        );
        // A dataset below a deleted project is refused too.
        let deleted = app.project(id_str(&folder)).delete().await;
        expect_status(deleted, StatusCode::NO_CONTENT).await;
        expect_azure_error(
            put_blob(&app, &sas(&in_folder, 0), data(10)).await,
            StatusCode::FORBIDDEN,
            "AuthorizationFailure",
        )
        .await;
        // Removed for good: the URL cannot write a blob that nothing would reach.
        let purged = app.recycle_bin().dataset(dataset).purge().await;
        expect_status(purged, StatusCode::NO_CONTENT).await;
        let gone = app.client.get(&read).send().await.unwrap();
        assert_eq!(
            gone.status(),
            StatusCode::NOT_FOUND,
            "the purged content is gone"
        );
        expect_azure_error(
            put_blob(&app, &a, data(30)).await,
            StatusCode::FORBIDDEN,
            "AuthorizationFailure",
        )
        .await;
        let still_gone = app.client.get(&read).send().await.unwrap();
        assert_eq!(
            still_gone.status(),
            StatusCode::NOT_FOUND,
            "nothing was written"
        );
    }
);

// Issue 33, item 1: a read URL handed out before a delete kept answering 200, HEAD 200 and
// ranges 206 until it expired. Content in the recycle bin is not served, whether the dataset or
// a project above it was deleted, and a restore makes the same URL work again.
api_test!(
    read_urls_of_content_in_the_recycle_bin_are_refused_until_a_restore,
    |app| {
        let project = app.create_project(As::Key, "P", json!({})).await;
        let folder = app
            .create_subproject(As::Key, &project, "F", json!({}))
            .await;
        let uploaded = app.upload_file(id_str(&folder), "d.bin", data(100)).await;
        let dataset = expect_status(uploaded, StatusCode::CREATED).await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let url = read_url(&app, &dataset).await;
        let served = |expected: StatusCode| {
            let (app, url) = (&app, url.clone());
            async move {
                assert_eq!(get_blob(app, &url, None).await.status(), expected, "GET");
                assert_eq!(head_status(app, &url).await, expected, "HEAD");
                let ranged = get_blob(app, &url, Some(("Range", "bytes=0-9")))
                    .await
                    .status();
                let expected_range = if expected == StatusCode::OK {
                    StatusCode::PARTIAL_CONTENT
                } else {
                    expected
                };
                assert_eq!(ranged, expected_range, "range");
            }
        };
        served(StatusCode::OK).await;
        let cases = [
            (
                routes::dataset(&dataset),
                routes::bin_dataset_restore(&dataset),
            ),
            (
                routes::project(id_str(&folder)),
                routes::bin_project_restore(id_str(&folder)),
            ),
            (
                routes::project(id_str(&project)),
                routes::bin_project_restore(id_str(&project)),
            ),
        ];
        for (delete, restore) in cases {
            let deleted = app.send_as(As::Key, Method::DELETE, &delete, None).await;
            expect_status(deleted, StatusCode::NO_CONTENT).await;
            expect_azure_error(
                get_blob(&app, &url, None).await,
                StatusCode::FORBIDDEN,
                "AuthorizationFailure",
            )
            .await;
            served(StatusCode::FORBIDDEN).await;
            let restored = app.send_as(As::Key, Method::PUT, &restore, None).await;
            expect_status(restored, StatusCode::NO_CONTENT).await;
            served(StatusCode::OK).await;
        }
        let body = get_blob(&app, &url, None).await.bytes().await.unwrap();
        assert_eq!(body.to_vec(), data(100));
    }
);

fn md5_base64(bytes: &[u8]) -> String {
    STANDARD.encode(<[u8; 16]>::from(Md5::digest(bytes)))
}

fn block_list(ids: &[String]) -> String {
    let entries: String = ids
        .iter()
        .map(|id| format!("<Latest>{id}</Latest>"))
        .collect();
    format!("<BlockList>{entries}</BlockList>")
}

/// The whole blob's MD5 comes back with a full read and a HEAD as `Content-MD5`, and with a
/// range as `x-ms-blob-content-md5` (its `Content-MD5` would describe the range).
async fn assert_whole_md5(app: &TestApp, url: &str, expected: &[u8]) {
    let md5 = md5_base64(expected);
    let response = get_blob(app, url, None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-md5"], md5.as_str());
    assert_eq!(response.bytes().await.unwrap().as_ref(), expected);
    let response = app.client.head(url).send().await.unwrap();
    assert_eq!(response.headers()["content-md5"], md5.as_str());
    if !expected.is_empty() {
        let response = get_blob(app, url, Some(("x-ms-range", "bytes=0-0"))).await;
        assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(response.headers()["x-ms-blob-content-md5"], md5.as_str());
        assert!(!response.headers().contains_key("content-md5"));
    }
}

api_test!(
    a_block_is_checked_against_its_content_md5_and_answers_it,
    |app| {
        let url = upload_url(&app, None).await;
        let part = data(4000);
        let response = app
            .client
            .put(with_query(
                &url,
                &format!("comp=block&blockid={}", block_id(0)),
            ))
            .header("content-md5", md5_base64(&part))
            .body(part.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        assert_eq!(
            response.headers()["content-md5"],
            md5_base64(&part).as_str()
        );
        let response = app
            .client
            .put(with_query(
                &url,
                &format!("comp=block&blockid={}", block_id(1)),
            ))
            .header("content-md5", md5_base64(b"other bytes"))
            .body(part.clone())
            .send()
            .await
            .unwrap();
        expect_azure_error(response, StatusCode::BAD_REQUEST, "Md5Mismatch").await;
        // The refused block was not staged.
        let response = commit(&app, &url, block_list(&[block_id(0), block_id(1)])).await;
        expect_azure_error(response, StatusCode::BAD_REQUEST, "InvalidBlockList").await;
        assert_eq!(
            commit(&app, &url, block_list(&[block_id(0)]))
                .await
                .status(),
            StatusCode::CREATED
        );
        assert_whole_md5(&app, &url, &part).await;
    }
);

api_test!(
    blocks_commit_in_any_order_with_the_md5_of_the_whole_blob,
    |app| {
        let parts = [data(70_000), data(1), Vec::new(), data(33_333)];
        let ids: Vec<String> = (0..4).map(block_id).collect();
        // In the order staged, in another order, a subset, and after a block was staged again.
        let orders: [&[usize]; 4] = [&[0, 1, 2, 3], &[3, 0, 2, 1], &[3, 1], &[1, 0]];
        for (round, order) in orders.iter().enumerate() {
            let url = upload_url(&app, Some("model.dfsu")).await;
            let mut staged = parts.clone();
            for (n, part) in parts.iter().enumerate() {
                let response = stage(&app, &url, &ids[n], part.clone()).await;
                assert_eq!(response.status(), StatusCode::CREATED);
            }
            if round == 3 {
                staged[0] = data(5);
                let response = stage(&app, &url, &ids[0], staged[0].clone()).await;
                assert_eq!(response.status(), StatusCode::CREATED);
            }
            let list: Vec<String> = order.iter().map(|&n| ids[n].clone()).collect();
            let response = commit(&app, &url, block_list(&list)).await;
            assert_eq!(response.status(), StatusCode::CREATED, "round {round}");
            let expected: Vec<u8> = order.iter().flat_map(|&n| staged[n].clone()).collect();
            assert_whole_md5(&app, &url, &expected).await;
            // Ranges across block boundaries.
            let response = get_blob(&app, &url, Some(("range", "bytes=69990-70010"))).await;
            let end = expected.len().min(70_011);
            if expected.len() > 69_990 {
                assert_eq!(
                    response.bytes().await.unwrap().as_ref(),
                    &expected[69_990..end]
                );
            }
        }
    }
);

api_test!(
    a_list_naming_a_block_twice_or_an_unknown_block_commits_nothing,
    |app| {
        let url = upload_url(&app, None).await;
        for n in 0..2 {
            let response = stage(&app, &url, &block_id(n), data(100)).await;
            assert_eq!(response.status(), StatusCode::CREATED);
        }
        let twice = block_list(&[block_id(0), block_id(1), block_id(0)]);
        expect_azure_error(
            commit(&app, &url, twice).await,
            StatusCode::BAD_REQUEST,
            "InvalidBlockList",
        )
        .await;
        let unknown = block_list(&[block_id(0), block_id(7)]);
        expect_azure_error(
            commit(&app, &url, unknown).await,
            StatusCode::BAD_REQUEST,
            "InvalidBlockList",
        )
        .await;
        assert_eq!(head_status(&app, &url).await, StatusCode::NOT_FOUND);
        // The blocks are still staged.
        let both = block_list(&[block_id(1), block_id(0)]);
        assert_eq!(commit(&app, &url, both).await.status(), StatusCode::CREATED);
        assert_whole_md5(&app, &url, &data(100).repeat(2)).await;
        let versions = app.config.data_dir.join("blobs").join(".extents");
        assert_eq!(
            std::fs::read_dir(versions).unwrap().count(),
            1,
            "refused commits leave no version behind"
        );
    }
);

api_test!(
    a_range_of_at_most_4_mib_comes_with_its_own_md5_on_request,
    |app| {
        let url = upload_url(&app, None).await;
        let bytes = data(4 * 1024 * 1024 + 10);
        assert_eq!(
            put_blob(&app, &url, bytes.clone()).await.status(),
            StatusCode::CREATED
        );
        let ask = |range: &'static str, value: &'static str| {
            app.client
                .get(&url)
                .header("x-ms-range", range)
                .header("x-ms-range-get-content-md5", value)
                .send()
        };
        let response = ask("bytes=5-4194308", "true").await.unwrap();
        assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(
            response.headers()["content-md5"],
            md5_base64(&bytes[5..4_194_309]).as_str()
        );
        assert_eq!(
            response.headers()["x-ms-blob-content-md5"],
            md5_base64(&bytes).as_str()
        );
        assert_eq!(
            response.bytes().await.unwrap().as_ref(),
            &bytes[5..4_194_309]
        );
        // A range running past the end is clamped first: the MD5 is of the bytes sent.
        let response = ask("bytes=4194300-4194399", "TRUE").await.unwrap();
        assert_eq!(
            response.headers()["content-md5"],
            md5_base64(&bytes[4_194_300..]).as_str()
        );
        let response = ask("bytes=0-10", "false").await.unwrap();
        assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT);
        assert!(!response.headers().contains_key("content-md5"));
        for (range, value) in [("bytes=0-4194304", "true"), ("bytes=0-10", "yes")] {
            let response = ask(range, value).await.unwrap();
            expect_azure_error(response, StatusCode::BAD_REQUEST, "InvalidHeaderValue").await;
        }
        let response = app
            .client
            .get(&url)
            .header("x-ms-range-get-content-md5", "true")
            .send()
            .await
            .unwrap();
        expect_azure_error(response, StatusCode::BAD_REQUEST, "InvalidHeaderValue").await;
    }
);

fn compact_at_once(config: &mut basin::Config) {
    config.blob.compaction_delay_seconds = std::time::Duration::from_secs(0);
}

api_test_with!(
    a_compacted_blob_keeps_its_etag_time_and_md5,
    compact_at_once,
    |app| {
        let url = upload_url(&app, Some("result.dfs2")).await;
        let parts = [data(100_000), data(50_001)];
        for (n, part) in parts.iter().enumerate() {
            let response = stage(&app, &url, &block_id(n as u32), part.clone()).await;
            assert_eq!(response.status(), StatusCode::CREATED);
        }
        let response = commit(&app, &url, block_list(&[block_id(0), block_id(1)])).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let etag = response.headers()["etag"].clone();
        let modified = response.headers()["last-modified"].clone();
        let path = reqwest::Url::parse(&url).unwrap();
        let segments: Vec<&str> = path.path().split('/').skip(2).collect();
        let mut file = app.config.data_dir.join("blobs");
        for segment in segments {
            file.push(segment);
        }
        let mut waited = 0;
        while !std::fs::symlink_metadata(&file).unwrap().is_file() {
            assert!(waited < 500, "compacted within 5 s");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            waited += 1;
        }
        let response = app
            .client
            .get(&url)
            .header("if-match", etag.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["etag"], etag);
        assert_eq!(response.headers()["last-modified"], modified);
        assert_whole_md5(&app, &url, &parts.concat()).await;
    }
);

api_test_with!(
    the_object_store_backend_keeps_the_md5_of_every_blob,
    memory_backend,
    |app| {
        let url = upload_url(&app, None).await;
        let small = data(1000);
        assert_eq!(
            put_blob(&app, &url, small.clone()).await.status(),
            StatusCode::CREATED
        );
        assert_whole_md5(&app, &url, &small).await;
        // Over one multipart part (8 MiB): the MD5 is recorded beside the object.
        let url = upload_url(&app, None).await;
        let parts = [data(5 * 1024 * 1024), data(4 * 1024 * 1024)];
        for (n, part) in parts.iter().enumerate() {
            let response = stage(&app, &url, &block_id(n as u32), part.clone()).await;
            assert_eq!(response.status(), StatusCode::CREATED);
        }
        let response = commit(&app, &url, block_list(&[block_id(1), block_id(0)])).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        assert_whole_md5(&app, &url, &[parts[1].clone(), parts[0].clone()].concat()).await;
    }
);
