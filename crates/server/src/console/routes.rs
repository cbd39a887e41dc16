//! `GET /` (the page, revalidated on every load) and `GET /console/{file}` (hashed files, kept
//! by browsers for a year), compressed for clients that accept gzip.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, IF_NONE_MATCH, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::compression::CompressionLayer;

use super::Console;
use super::assets::Asset;
use crate::error::ApiError;
use crate::http::etag::matches_etag;

const PAGE_CACHE: HeaderValue = HeaderValue::from_static("no-cache");
const ASSET_CACHE: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");
const CROSS_ORIGIN_OPENER_POLICY: HeaderName =
    HeaderName::from_static("cross-origin-opener-policy");

/// The console's routes, with their own state; merged into the application's router.
pub(crate) fn router<S>(console: Arc<Console>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route("/", get(page))
        .route("/console/{file}", get(file))
        .layer(CompressionLayer::new())
        .with_state(console)
}

async fn page(State(console): State<Arc<Console>>, headers: HeaderMap) -> Response {
    console.reload();
    let assets = console.assets();
    respond(&console, assets.page(), &headers, PAGE_CACHE)
}

async fn file(
    State(console): State<Arc<Console>>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let assets = console.assets();
    let asset = assets
        .get(&file)
        .ok_or_else(|| ApiError::NotFound(format!("the console has no file {file}")))?;
    Ok(respond(&console, asset, &headers, ASSET_CACHE))
}

fn respond(console: &Console, asset: &Asset, request: &HeaderMap, cache: HeaderValue) -> Response {
    let not_modified = request
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| matches_etag(value, &asset.etag));
    let mut response = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(CONTENT_TYPE, HeaderValue::from_static(asset.content_type))],
            asset.bytes.clone(),
        )
            .into_response()
    };
    let headers = response.headers_mut();
    if let Ok(etag) = HeaderValue::from_str(&asset.etag) {
        headers.insert(ETAG, etag);
    }
    headers.insert(CACHE_CONTROL, cache);
    headers.insert(
        CONTENT_SECURITY_POLICY,
        console.content_security_policy.clone(),
    );
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(
        CROSS_ORIGIN_OPENER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}
