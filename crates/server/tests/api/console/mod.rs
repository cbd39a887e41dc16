//! The console's serving (docs/console.md): the page at `/` with its policy, every file it
//! reaches under a hashed name cached for a year, 304s, gzip, the switch, the basemap setting
//! and a development folder read again on each page load. What the console does in a browser
//! is tested in tests/python/test_console_e2e.py (headless Chromium).

use std::collections::{BTreeSet, VecDeque};
use std::io::Read;

use reqwest::{Method, StatusCode};

use crate::helpers::*;

/// Names referenced as `console/<name>` or `./<name>` inside quotes or `url(...)`.
fn references(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for prefix in ["\"console/", "'./", "\"./", "(./"] {
        for (at, _) in text.match_indices(prefix) {
            let name: String = text[at + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// `app.0123456789ab.js`: a stem, twelve hex digits, an extension.
fn is_hashed(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() >= 3
        && parts[parts.len() - 2].len() == 12
        && parts[parts.len() - 2]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

/// The body of `GET path`, as text.
async fn page_text(app: &TestApp, path: &str) -> String {
    app.anonymous(Method::GET, path)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

api_test!(
    the_page_is_served_at_the_root_under_a_strict_policy,
    |app| {
        let response = app.anonymous(Method::GET, "/").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            header(&response, "content-type"),
            "text/html; charset=utf-8"
        );
        assert_eq!(header(&response, "cache-control"), "no-cache");
        assert_eq!(header(&response, "x-content-type-options"), "nosniff");
        assert_eq!(header(&response, "referrer-policy"), "no-referrer");
        let policy = header(&response, "content-security-policy");
        for directive in [
            "default-src 'none'",
            "script-src 'self';",
            "style-src 'self';",
            "connect-src 'self';",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "require-trusted-types-for 'script'",
            "trusted-types basin-banner",
        ] {
            assert!(policy.contains(directive), "{directive} missing: {policy}");
        }
        assert!(!policy.contains("unsafe"), "{policy}");
        let page = response.text().await.unwrap();
        assert!(
            !page.contains("<script>") && !page.contains(" style="),
            "nothing inline: {page}"
        );
        assert!(page.contains("<meta name=\"basin-feature\" content=\"Console\">"));
        let scripts = references(&page);
        assert!(
            scripts
                .iter()
                .any(|name| name.starts_with("app.") && name.ends_with(".js") && is_hashed(name)),
            "{scripts:?}"
        );
    }
);

api_test!(
    every_file_the_page_reaches_is_hashed_and_cached_for_a_year,
    |app| {
        let page = page_text(&app, "/").await;
        let mut queue: VecDeque<String> = references(&page).into_iter().collect();
        let mut seen = BTreeSet::new();
        while let Some(name) = queue.pop_front() {
            if !seen.insert(name.clone()) {
                continue;
            }
            assert!(is_hashed(&name), "{name} is referenced without its hash");
            let response = app
                .anonymous(Method::GET, &format!("/console/{name}"))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{name}");
            assert_eq!(
                header(&response, "cache-control"),
                "public, max-age=31536000, immutable"
            );
            assert!(header(&response, "etag").starts_with('"'));
            let content_type = header(&response, "content-type");
            let expected = match name.rsplit('.').next() {
                Some("js") => "text/javascript; charset=utf-8",
                Some("css") => "text/css; charset=utf-8",
                Some("svg") => "image/svg+xml",
                other => panic!("unexpected file type {other:?}"),
            };
            assert_eq!(content_type, expected, "{name}");
            let text = response.text().await.unwrap();
            queue.extend(references(&text));
        }
        // The entry module, its style sheet and the icon at least; in practice every module.
        for stem in ["app.", "api.", "dom.", "router.", "app.", "icon."] {
            assert!(
                seen.iter().any(|name| name.starts_with(stem)),
                "{stem} not reached: {seen:?}"
            );
        }
    }
);

api_test!(files_not_in_the_console_are_404_problems, |app| {
    for path in [
        "/console/app.js",
        "/console/app.000000000000.js",
        "/console/..%2F..%2FCargo.toml",
        "/console/index.html",
        "/console/%00",
    ] {
        let response = app.anonymous(Method::GET, path).send().await.unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
    let response = app
        .anonymous(Method::GET, "/index.html")
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "route-not-found").await;
    // Writing is not a thing the console's routes do.
    let response = app.anonymous(Method::POST, "/").send().await.unwrap();
    expect_problem(
        response,
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
    )
    .await;
});

api_test!(a_known_entity_tag_answers_304_and_head_has_no_body, |app| {
    let page = app.anonymous(Method::GET, "/").send().await.unwrap();
    let etag = header(&page, "etag");
    let response = app
        .anonymous(Method::GET, "/")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(&response, "etag"), etag);
    assert!(response.bytes().await.unwrap().is_empty());

    let page = page.text().await.unwrap();
    let app_js = references(&page)
        .into_iter()
        .find(|name| name.starts_with("app.") && name.ends_with(".js"))
        .unwrap();
    let path = format!("/console/{app_js}");
    let first = app.anonymous(Method::GET, &path).send().await.unwrap();
    let etag = header(&first, "etag");
    let response = app
        .anonymous(Method::GET, &path)
        .header("if-none-match", format!("\"other\", {etag}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);

    let head = app.anonymous(Method::HEAD, &path).send().await.unwrap();
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(header(&head, "etag"), etag);
    assert!(head.bytes().await.unwrap().is_empty());
});

api_test!(files_are_gzipped_for_clients_that_accept_it, |app| {
    let page = page_text(&app, "/").await;
    let app_js = references(&page)
        .into_iter()
        .find(|name| name.starts_with("app.") && name.ends_with(".js"))
        .unwrap();
    let path = format!("/console/{app_js}");
    let plain = app
        .anonymous(Method::GET, &path)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let response = app
        .anonymous(Method::GET, &path)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "content-encoding"), "gzip");
    assert!(header(&response, "vary").contains("accept-encoding"));
    let compressed = response.bytes().await.unwrap();
    assert!(compressed.len() < plain.len());
    let mut unpacked = Vec::new();
    flate2::read::GzDecoder::new(compressed.as_ref())
        .read_to_end(&mut unpacked)
        .unwrap();
    assert!(unpacked == plain.as_ref(), "gzip round trip differs");
});

api_test_with!(
    the_console_can_be_switched_off,
    |config| config.console.enabled = false,
    |app| {
        let response = app.anonymous(Method::GET, "/").send().await.unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "route-not-found").await;
        // The API is unaffected.
        let response = app
            .with_key(Method::GET, &routes::principal_me())
            .send()
            .await
            .unwrap();
        expect_status(response, StatusCode::OK).await;
    }
);

api_test_with!(
    the_basemap_reaches_the_page_escaped_and_the_policy_by_origin,
    |config| {
        config.console.basemap_url =
            Some("https://tiles.example.org:8443/{z}/{x}/{y}.png?style=\"a\"&k=1".into());
        config.console.basemap_attribution = Some("© <Example> contributors".into());
        config.console.feature_id = "Water Portal".into();
        config.public_url = Some("https://basin.example.com/data".into());
    },
    |app| {
        let response = app.anonymous(Method::GET, "/").send().await.unwrap();
        let policy = header(&response, "content-security-policy");
        assert!(
            policy.contains("img-src 'self' data: blob: https://tiles.example.org:8443;"),
            "{policy}"
        );
        assert!(
            policy.contains("connect-src 'self' https://basin.example.com;"),
            "{policy}"
        );
        let page = response.text().await.unwrap();
        assert!(page.contains(
            "<meta name=\"basin-basemap\" content=\"https://tiles.example.org:8443/{z}/{x}/{y}.png?style=&quot;a&quot;&amp;k=1\">"
        ), "{page}");
        assert!(page.contains(
            "<meta name=\"basin-basemap-attribution\" content=\"© &lt;Example&gt; contributors\">"
        ));
        assert!(page.contains("<meta name=\"basin-feature\" content=\"Water Portal\">"));
    }
);

mod development_folder {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn is_read_again_on_each_page_load() {
        let folder = tempfile::tempdir().unwrap();
        let write =
            |name: &str, text: &str| std::fs::write(folder.path().join(name), text).unwrap();
        write(
            "index.html",
            "<script type=\"module\" src=\"console/app.js\"></script>",
        );
        write("app.js", "import './util.js';");
        write("util.js", "export const version = 1;");
        let dir = folder.path().to_path_buf();
        let app = spawn_app_on(Backend::Sqlite, move |config| {
            config.console.dir = Some(dir);
        })
        .await
        .unwrap();
        let first = page_text(&app, "/").await;
        write("util.js", "export const version = 2;");
        let second = page_text(&app, "/").await;
        assert_ne!(
            first, second,
            "a change to an imported module renames app.js"
        );
        let app_js = references(&second).into_iter().next().unwrap();
        let module = page_text(&app, &format!("/console/{app_js}")).await;
        let util = references(&module).into_iter().next().unwrap();
        let util = page_text(&app, &format!("/console/{util}")).await;
        assert_eq!(util, "export const version = 2;");

        // A broken folder (an import cycle) keeps the files served before.
        write("util.js", "import './app.js';");
        let third = page_text(&app, "/").await;
        assert_eq!(third, second);
    }
}
