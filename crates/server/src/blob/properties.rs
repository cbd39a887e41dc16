//! Blob properties on the wire: read from the headers of `Put Blob` and `Put Block List`,
//! written into the headers of `Get Blob` and `Get Blob Properties`, as Azure Blob Storage
//! does, so that what a client stores with a blob (its content type, say) comes back with it.

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};

use crate::blob::azure::AzureError;
use basin_blob::BlobProperties;

/// Prefix of metadata headers.
const METADATA_PREFIX: &str = "x-ms-meta-";
/// Most bytes of metadata names and values together, as in Azure Blob Storage.
pub(crate) const METADATA_BYTES_MAX: usize = 8 * 1024;

/// Which request the headers come from: `Put Blob` also takes the standard content headers
/// (`Content-Type` ...) as the blob's; in `Put Block List` they describe the XML body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Request {
    /// `Put Blob`.
    PutBlob,
    /// `Put Block List`.
    PutBlockList,
}

/// The properties the request's headers set: `x-ms-blob-content-type` and its siblings
/// (winning over the standard header of `Put Blob`), and `x-ms-meta-<name>`. Metadata names
/// must be C# identifiers, as Azure requires, and are kept in lower case.
pub(crate) fn from_headers(
    headers: &HeaderMap,
    request: Request,
) -> Result<BlobProperties, AzureError> {
    let field = |azure: &'static str, standard: HeaderName| -> Result<Option<String>, AzureError> {
        let value = match headers.get(azure) {
            Some(value) => Some(value),
            None if request == Request::PutBlob => headers.get(&standard),
            None => None,
        };
        value
            .map(|value| {
                value
                    .to_str()
                    .map(str::to_owned)
                    .map_err(|_| AzureError::InvalidHeader(azure))
            })
            .transpose()
    };
    let mut properties = BlobProperties {
        content_type: field("x-ms-blob-content-type", header::CONTENT_TYPE)?,
        content_encoding: field("x-ms-blob-content-encoding", header::CONTENT_ENCODING)?,
        content_language: field("x-ms-blob-content-language", header::CONTENT_LANGUAGE)?,
        content_disposition: field("x-ms-blob-content-disposition", header::CONTENT_DISPOSITION)?,
        cache_control: field("x-ms-blob-cache-control", header::CACHE_CONTROL)?,
        metadata: Default::default(),
    };
    let mut metadata_bytes = 0usize;
    for (name, value) in headers {
        let Some(key) = name.as_str().strip_prefix(METADATA_PREFIX) else {
            continue;
        };
        if !is_identifier(key) {
            return Err(AzureError::InvalidMetadata(format!(
                "metadata name {key:?} is not a C# identifier"
            )));
        }
        let value = value
            .to_str()
            .map_err(|_| AzureError::InvalidMetadata(format!("metadata {key:?}: not ASCII")))?;
        metadata_bytes = metadata_bytes
            .saturating_add(key.len())
            .saturating_add(value.len());
        if metadata_bytes > METADATA_BYTES_MAX {
            return Err(AzureError::MetadataTooLarge);
        }
        properties
            .metadata
            .insert(key.to_ascii_lowercase(), value.to_owned());
    }
    Ok(properties)
}

/// Writes the blob's properties into the headers of a read (`application/octet-stream` when it
/// has no content type).
pub(crate) fn insert_into(headers: &mut HeaderMap, properties: &BlobProperties) {
    let content_type = properties
        .content_type
        .as_deref()
        .and_then(|value| HeaderValue::from_str(value).ok())
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    headers.insert(header::CONTENT_TYPE, content_type);
    let fields = [
        (header::CONTENT_ENCODING, &properties.content_encoding),
        (header::CONTENT_LANGUAGE, &properties.content_language),
        (header::CONTENT_DISPOSITION, &properties.content_disposition),
        (header::CACHE_CONTROL, &properties.cache_control),
    ];
    for (name, value) in fields {
        if let Some(value) = value.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(name, value);
        }
    }
    for (key, value) in &properties.metadata {
        let name = HeaderName::from_bytes(format!("{METADATA_PREFIX}{key}").as_bytes());
        if let (Ok(name), Ok(value)) = (name, HeaderValue::from_str(value)) {
            headers.insert(name, value);
        }
    }
}

/// Media types a browser shows inline without running anything: images (but not SVG), plain
/// text and data. Blobs are served from the API's origin, so a type that a browser could run as
/// a document or script (HTML, SVG, any XML such as Atom, RSS or MathML, JavaScript, PDF ...)
/// shown inline could run script there (stored XSS next to `/docs`). An allow-list, because
/// browsers keep learning new active types; everything else is downloaded.
const PASSIVE_TYPES: &[&str] = &[
    "application/geo+json",
    "application/json",
    "application/octet-stream",
    "application/zip",
    "audio/mpeg",
    "audio/ogg",
    "audio/wav",
    "image/avif",
    "image/bmp",
    "image/gif",
    "image/jpeg",
    "image/png",
    "image/tiff",
    "image/webp",
    "text/csv",
    "text/plain",
    "video/mp4",
    "video/webm",
];

/// Hardens the headers of a blob read: the browser must not sniff another type, must run no
/// script and load nothing (`sandbox`), and must download anything but a known passive type
/// instead of showing it, whatever disposition the uploader stored (its file name is kept).
pub(crate) fn insert_safety_headers(headers: &mut HeaderMap, path_file_name: &str) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; sandbox"),
    );
    let passive = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(single_media_type_essence)
        .is_some_and(|essence| PASSIVE_TYPES.contains(&essence.as_str()));
    if passive {
        return;
    }
    let stored = headers
        .get(header::CONTENT_DISPOSITION)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    if stored
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("attachment")
    {
        return;
    }
    let file_name = stored
        .split(';')
        .skip(1)
        .map(str::trim)
        .find(|parameter| parameter.to_ascii_lowercase().starts_with("filename"))
        .map_or_else(
            || format!("filename=\"{}\"", quoted_ascii(path_file_name)),
            str::to_owned,
        );
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; {file_name}")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    } else {
        headers.insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment"),
        );
    }
}

/// The essence (`type/subtype`, lower case) of `value` when it is exactly one media type:
/// `type "/" subtype *( ";" parameter )` with token names and token or quoted-string values.
/// `None` for anything else, such as a list (`text/plain, text/html`), which a browser reads
/// by its last member.
fn single_media_type_essence(value: &str) -> Option<String> {
    let (essence, mut rest) = match value.find(';') {
        Some(at) => (&value[..at], &value[at..]),
        None => (value, ""),
    };
    let (kind, subtype) = essence.trim().split_once('/')?;
    if !is_token(kind) || !is_token(subtype) {
        return None;
    }
    while let Some(after) = rest.strip_prefix(';') {
        let parameter = after.trim_start_matches([' ', '\t']);
        let (name, value) = parameter.split_once('=')?;
        if !is_token(name) {
            return None;
        }
        rest = if let Some(quoted) = value.strip_prefix('"') {
            let end = quoted_string_end(quoted)?;
            &quoted[end..]
        } else {
            let end = value.find(';').unwrap_or(value.len());
            let token = value[..end].trim_end_matches([' ', '\t']);
            if !is_token(token) {
                return None;
            }
            &value[end..]
        };
        rest = rest.trim_start_matches([' ', '\t']);
    }
    rest.is_empty()
        .then(|| format!("{kind}/{subtype}").to_ascii_lowercase())
}

/// The byte offset just past the closing quote of a quoted-string whose opening quote was
/// already taken off `text`.
fn quoted_string_end(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(at + 1),
            _ => {}
        }
    }
    None
}

/// An HTTP token (RFC 9110 `tchar`s, at least one).
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `name` as the content of a quoted-string: ASCII without quotes, backslashes or controls.
fn quoted_ascii(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A C# identifier in ASCII: a letter or `_`, then letters, digits or `_`.
fn is_identifier(name: &str) -> bool {
    let mut characters = name.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && characters.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                )
            })
            .collect()
    }

    /// The headers a read of a blob stored with these properties gets, as `page.html`.
    fn served(content_type: &str, disposition: Option<&str>) -> HeaderMap {
        let mut read = HeaderMap::new();
        let properties = BlobProperties {
            content_type: Some(content_type.to_owned()),
            content_disposition: disposition.map(str::to_owned),
            ..BlobProperties::default()
        };
        insert_into(&mut read, &properties);
        insert_safety_headers(&mut read, "page.html");
        read
    }

    #[test]
    fn azure_headers_win_and_put_block_list_ignores_standard_ones() {
        let sent = headers(&[
            ("content-type", "application/xml"),
            ("cache-control", "no-cache"),
            ("x-ms-blob-content-type", "image/tiff"),
            ("x-ms-meta-Source", "model run 7"),
        ]);
        let put = from_headers(&sent, Request::PutBlob).unwrap();
        assert_eq!(put.content_type.as_deref(), Some("image/tiff"));
        assert_eq!(put.cache_control.as_deref(), Some("no-cache"));
        assert_eq!(
            put.metadata.get("source").map(String::as_str),
            Some("model run 7")
        );
        let list = from_headers(&sent, Request::PutBlockList).unwrap();
        assert_eq!(list.content_type.as_deref(), Some("image/tiff"));
        assert_eq!(list.cache_control, None);
        let mut read = HeaderMap::new();
        insert_into(&mut read, &put);
        assert_eq!(read["content-type"], "image/tiff");
        assert_eq!(read["cache-control"], "no-cache");
        assert_eq!(read["x-ms-meta-source"], "model run 7");
        let mut plain = HeaderMap::new();
        insert_into(&mut plain, &BlobProperties::default());
        assert_eq!(plain["content-type"], "application/octet-stream");
        assert_eq!(plain.len(), 1);
    }

    #[test]
    fn active_types_are_downloaded_and_nothing_is_sniffed_or_run() {
        for (content_type, disposition, expected) in [
            (
                "text/html",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            (
                "Text/HTML; charset=utf-8",
                Some("inline; filename=\"x.htm\""),
                Some("attachment; filename=\"x.htm\""),
            ),
            (
                "image/svg+xml",
                Some("attachment; filename=a.svg"),
                Some("attachment; filename=a.svg"),
            ),
            ("image/tiff", None, None),
            ("application/octet-stream", Some("inline"), Some("inline")),
        ] {
            let read = served(content_type, disposition);
            assert_eq!(read["x-content-type-options"], "nosniff");
            assert_eq!(
                read["content-security-policy"],
                "default-src 'none'; sandbox"
            );
            assert_eq!(
                read.get("content-disposition").map(|v| v.to_str().unwrap()),
                expected,
                "{content_type}"
            );
        }
        assert_eq!(quoted_ascii("a\"b\\c\u{e9}.html"), "a_b_c_.html");
    }

    // Issue 33, item 3: a list is read by its last member; XML dialects run script. Only one
    // passive type, with well-formed parameters, is shown inline.
    #[test]
    fn only_a_single_passive_media_type_is_shown_inline() {
        for (content_type, disposition, expected) in [
            (
                "text/plain, text/html",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            (
                "text/plain,text/html",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            (
                "application/atom+xml",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            (
                "application/rss+xml",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            (
                "application/mathml+xml",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            ("text/plain; charset=\"utf-8, x\"", None, None),
            ("text/plain; charset=utf-8", None, None),
            ("TEXT/Plain ; charset=utf-8", None, None),
            (
                "text/plain; charset=utf-8, text/html",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            (
                "text/plain;",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            (
                "image/png; a=\"unterminated",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
            ("", None, Some("attachment; filename=\"page.html\"")),
            (
                "application/x-unknown",
                None,
                Some("attachment; filename=\"page.html\""),
            ),
        ] {
            let read = served(content_type, disposition);
            assert_eq!(
                read.get("content-disposition").map(|v| v.to_str().unwrap()),
                expected,
                "{content_type:?}"
            );
        }
    }

    #[test]
    fn metadata_names_must_be_identifiers_and_metadata_small() {
        for bad in ["x-ms-meta-1st", "x-ms-meta-a-b", "x-ms-meta-"] {
            let error = from_headers(&headers(&[(bad, "v")]), Request::PutBlob).unwrap_err();
            assert!(matches!(error, AzureError::InvalidMetadata(_)), "{bad}");
        }
        let ok = headers(&[("x-ms-meta-_a1", "v"), ("x-ms-meta-b", "")]);
        assert_eq!(
            from_headers(&ok, Request::PutBlob).unwrap().metadata.len(),
            2
        );
        let big = "v".repeat(METADATA_BYTES_MAX);
        let error = from_headers(&headers(&[("x-ms-meta-big", &big)]), Request::PutBlob);
        assert!(matches!(error, Err(AzureError::MetadataTooLarge)));
        let not_ascii = [(
            HeaderName::from_static("x-ms-blob-content-type"),
            HeaderValue::from_bytes(b"caf\xe9").unwrap(),
        )]
        .into_iter()
        .collect();
        let error = from_headers(&not_ascii, Request::PutBlob).unwrap_err();
        assert!(matches!(
            error,
            AzureError::InvalidHeader("x-ms-blob-content-type")
        ));
    }
}
