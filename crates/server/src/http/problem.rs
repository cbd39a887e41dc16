//! Renders every error response as RFC 9457 problem+json and logs the causes of 5xx errors.
//!
//! Handlers leave a [`Problem`] in the response extensions (see [`crate::error`]); responses
//! made outside our handlers (axum's 405, tower's 408 and 413) arrive as a bare status. Both
//! leave here with the same body shape, the request path as `instance` and the request id.
//! Error bodies that are already structured pass through: JSON, and the XML errors of the
//! Azure-compatible blob endpoint, whose clients read Azure's error format.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::{ErrorCause, Problem};

/// Header carrying the request id, set by the request-id layer.
pub(crate) const REQUEST_ID_HEADER: &str = "x-request-id";

/// Content type of problem bodies.
pub(crate) const PROBLEM_CONTENT_TYPE: &str = "application/problem+json";

/// Middleware: turns problems and bare error statuses into problem+json bodies.
pub(crate) async fn render_problems(request: Request, next: Next) -> Response {
    let instance = request.uri().path().to_owned();
    let request_id = request
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut response = next.run(request).await;
    if let Some(ErrorCause(cause)) = response.extensions().get::<ErrorCause>() {
        tracing::error!(
            request_id = request_id.as_deref().unwrap_or("-"),
            status = response.status().as_u16(),
            error = format!("{cause:#}"),
            "request failed"
        );
    }
    let problem = match response.extensions_mut().remove::<Problem>() {
        Some(problem) => problem,
        None if is_bare_error(&response) => Problem::for_status(response.status()),
        None => return response,
    };
    let body = problem_body(&problem, &instance, request_id.as_deref());
    let (mut parts, _) = response.into_parts();
    parts.status = problem.status;
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(PROBLEM_CONTENT_TYPE),
    );
    Response::from_parts(parts, Body::from(body))
}

/// An error status whose body is not already structured (JSON, or XML).
fn is_bare_error(response: &Response) -> bool {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return false;
    }
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    !content_type.contains("json") && !content_type.contains("xml")
}

fn problem_body(problem: &Problem, instance: &str, request_id: Option<&str>) -> String {
    let mut body = serde_json::Map::new();
    body.insert("type".into(), problem.type_uri().into());
    body.insert("title".into(), problem.title.into());
    body.insert("status".into(), problem.status.as_u16().into());
    let mut detail = problem
        .detail
        .clone()
        .unwrap_or_else(|| problem.title.to_owned());
    if problem.status.is_server_error()
        && let Some(request_id) = request_id
    {
        detail = format!("{detail} Request id: {request_id}.");
    }
    body.insert("detail".into(), detail.into());
    body.insert("instance".into(), instance.into());
    if let Some(request_id) = request_id {
        body.insert("requestId".into(), request_id.into());
    }
    if let Some(errors) = &problem.errors {
        let errors = serde_json::to_value(errors).unwrap_or_default();
        body.insert("errors".into(), errors);
    }
    for (key, value) in &problem.extensions {
        body.insert(key.clone(), value.clone());
    }
    serde_json::Value::Object(body).to_string()
}

/// Fallback for paths no router matches.
pub(crate) async fn route_not_found() -> Response {
    let mut response = axum::http::StatusCode::NOT_FOUND.into_response();
    response
        .extensions_mut()
        .insert(Problem::for_status(axum::http::StatusCode::NOT_FOUND));
    response
}
