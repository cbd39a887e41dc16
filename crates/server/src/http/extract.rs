//! Extractors that bind input the way clients send it and fail as problem+json.
//!
//! - [`JsonBody`] is read only when the handler asks, after it has decided who may call it;
//!   it ignores the `Content-Type` (clients send `application/json-patch+json`, even on GET),
//!   treats an empty body as `{}` (restore calls arrive without one) and binds property names
//!   case-insensitively.
//! - [`Query`] binds parameter names case-insensitively, repeated keys as lists.
//! - [`Path`] turns malformed ids into a 400 naming the segment.
//!
//! No text Basin accepts may hold a NUL character: PostgreSQL cannot store it in text, SQLite
//! would keep it and hand it to every client, and no name or value needs it. [`JsonBody`] and
//! [`Query`] refuse it anywhere in their input with a 400 naming the field, on both
//! databases alike.

use std::convert::Infallible;
use std::marker::PhantomData;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, FieldErrors};
use crate::http::case_insensitive::{BindError, from_json_value, from_query_pairs};

/// The JSON body limit in force, set as a request extension by the router.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonBodyLimit(pub u64);

/// A JSON response body.
#[derive(Debug, Clone, Default)]
pub(crate) struct Json<T>(pub T);

/// A JSON request body, not read yet. Handlers decide who may call them first (credentials,
/// then the rights on what the path names) and only then [`read`](Self::read) the body, so
/// that a caller without the right gets the same 401, 403 or 404 whatever it sends and learns
/// nothing of what the body should hold. There is deliberately no extractor that reads a
/// JSON body on its own.
///
/// The body is read like this: the `Content-Type` is ignored (clients send
/// `application/json-patch+json`, even on GET), an empty body is `{}` (restore calls arrive
/// without one) and property names bind case-insensitively.
pub(crate) struct JsonBody<T> {
    request: Request,
    _type: PhantomData<fn() -> T>,
}

impl<T, S> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
{
    type Rejection = Infallible;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self {
            request,
            _type: PhantomData,
        })
    }
}

impl<T: DeserializeOwned> JsonBody<T> {
    /// Reads and binds the body, within the JSON body limit in force.
    pub(crate) async fn read(self) -> Result<T, ApiError> {
        let bytes = body_bytes(self.request).await?;
        bind_json(&bytes)
    }

    /// Reads the body like [`read`](Self::read), except that every number reaches the target
    /// type as its literal text: for exact decimals (credit amounts), which a trip through
    /// `f64` would round. The body must be JSON as it was sent (`00001` or `1.` is refused)
    /// before its numbers become marked text ([`NUMBER_MARK`]); a marked number binds to the
    /// number types and to types that read any value, and is refused where a string is
    /// expected, as any number is.
    ///
    /// [`NUMBER_MARK`]: crate::http::case_insensitive::NUMBER_MARK
    pub(crate) async fn read_exact(self) -> Result<T, ApiError> {
        let bytes = body_bytes(self.request).await?;
        if is_blank(&bytes) {
            return bind_json(&bytes);
        }
        let sent: serde_json::Value = serde_json::from_slice(&bytes).map_err(invalid_json)?;
        refuse_nul(&sent)?;
        let marked = serde_json::from_slice(&quote_numbers(&bytes)).map_err(invalid_json)?;
        from_json_value(marked).map_err(|error| bind_error("body", error))
    }
}

/// The body, within the JSON body limit in force.
async fn body_bytes(request: Request) -> Result<Bytes, ApiError> {
    let limit = request
        .extensions()
        .get::<JsonBodyLimit>()
        .map_or(crate::limits::JSON_BODY_BYTES_MAX, |limit| limit.0);
    Bytes::from_request(request, &())
        .await
        .map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge { limit_bytes: limit }
            } else {
                ApiError::InvalidBody(rejection.body_text())
            }
        })
}

/// Parses and binds a body: blank is `{}`, NUL is refused, names bind ignoring case.
fn bind_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value = if is_blank(bytes) {
        serde_json::Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_slice(bytes).map_err(invalid_json)?
    };
    refuse_nul(&value)?;
    from_json_value(value).map_err(|error| bind_error("body", error))
}

/// A 400 naming the first string or key of `value` that holds a NUL.
fn refuse_nul(value: &serde_json::Value) -> Result<(), ApiError> {
    match nul_in_json(value, String::new()) {
        Some(field) if field.is_empty() => Err(nul_error("body".into())),
        Some(field) => Err(nul_error(field)),
        None => Ok(()),
    }
}

/// Whether a body is empty or only white space (bound as `{}`).
fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

fn invalid_json(error: serde_json::Error) -> ApiError {
    ApiError::InvalidBody(format!("The body is not valid JSON: {error}."))
}

/// JSON text with every number outside strings turned into a string of its literal text after
/// [`NUMBER_MARK`] (written as the escape `\u0000`). Anything that is not valid JSON stays
/// invalid (the parser that follows reports it).
///
/// [`NUMBER_MARK`]: crate::http::case_insensitive::NUMBER_MARK
fn quote_numbers(input: &[u8]) -> Vec<u8> {
    let mut output = Vec::with_capacity(input.len() + 16);
    let mut rest = input;
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'"' {
            // Copy the whole string, escapes included, up to its closing quote.
            let mut end = 1;
            let mut escaped = false;
            for &inner in tail {
                end += 1;
                match inner {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => break,
                    _ => {}
                }
            }
            let (string, after) = rest.split_at(end.min(rest.len()));
            output.extend_from_slice(string);
            rest = after;
        } else if byte == b'-' || byte.is_ascii_digit() {
            let end = rest
                .iter()
                .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .unwrap_or(rest.len());
            let (number, after) = rest.split_at(end);
            output.extend_from_slice(b"\"\\u0000");
            output.extend_from_slice(number);
            output.push(b'"');
            rest = after;
        } else {
            output.push(byte);
            rest = tail;
        }
    }
    output
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// Query parameters bound case-insensitively.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query<T>(pub T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
                .into_owned()
                .collect();
        if let Some((key, _)) = pairs
            .iter()
            .find(|(key, value)| key.contains('\0') || value.contains('\0'))
        {
            return Err(nul_error(key.replace('\0', "\\0")));
        }
        from_query_pairs(pairs)
            .map(Query)
            .map_err(|error| bind_error("query", error))
    }
}

/// Path parameters; malformed ids are a 400 naming the segment.
#[derive(Debug, Clone)]
pub(crate) struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Path(value))
            .map_err(|rejection: PathRejection| ApiError::InvalidPath(rejection.body_text()))
    }
}

/// The path (`members[0].name`) of the first string or key holding a NUL, if any. JSON nests
/// at most 128 levels (serde_json's limit), so the recursion is bounded.
fn nul_in_json(value: &serde_json::Value, at: String) -> Option<String> {
    match value {
        serde_json::Value::String(text) if text.contains('\0') => Some(at),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(index, item)| nul_in_json(item, format!("{at}[{index}]"))),
        serde_json::Value::Object(members) => members.iter().find_map(|(key, member)| {
            let path = if at.is_empty() {
                key.replace('\0', "\\0")
            } else {
                format!("{at}.{}", key.replace('\0', "\\0"))
            };
            if key.contains('\0') {
                Some(path)
            } else {
                nul_in_json(member, path)
            }
        }),
        _ => None,
    }
}

fn nul_error(field: String) -> ApiError {
    ApiError::field(field, "text must not contain NUL characters (\\u0000)")
}

fn bind_error(source: &str, error: BindError) -> ApiError {
    let field = if error.path.is_empty() {
        source.to_owned()
    } else {
        error.path.clone()
    };
    let mut errors = FieldErrors::new();
    errors.insert(field, vec![error.message.clone()]);
    ApiError::Validation {
        detail: error.to_string(),
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::quote_numbers;

    fn quoted(text: &str) -> String {
        String::from_utf8(quote_numbers(text.as_bytes())).unwrap()
    }

    #[test]
    fn numbers_become_their_marked_literal_text_and_strings_stay_as_they_are() {
        assert_eq!(
            quoted(r#"{"credits": 1.0000001, "n": -2e-3, "a": [1,2]}"#),
            r#"{"credits": "\u00001.0000001", "n": "\u0000-2e-3", "a": ["\u00001","\u00002"]}"#
        );
        assert_eq!(
            quoted(r#"{"s": "1 \"2\" \\", "t": true, "u": null}"#),
            r#"{"s": "1 \"2\" \\", "t": true, "u": null}"#
        );
        assert_eq!(
            quoted(r#"{"s": "unterminated 1"#),
            r#"{"s": "unterminated 1"#
        );
        assert_eq!(quoted("12"), r#""\u000012""#);
    }
}
