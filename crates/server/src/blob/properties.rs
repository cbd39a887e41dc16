//! Blob properties on the wire: read from the headers of `Put Blob` and `Put Block List`,
//! written into the headers of `Get Blob` and `Get Blob Properties`, as Azure Blob Storage
//! does, so that what a client stores with a blob (its content type, say) comes back with it.

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};

use crate::blob::azure::AzureError;
use crate::blob::store::BlobProperties;

/// Prefix of metadata headers.
const METADATA_PREFIX: &str = "x-ms-meta-";
/// Most bytes of metadata names and values together, as in Azure Blob Storage.
pub const METADATA_BYTES_MAX: usize = 8 * 1024;

/// Which request the headers come from: `Put Blob` also takes the standard content headers
/// (`Content-Type` ...) as the blob's; in `Put Block List` they describe the XML body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `Put Blob`.
    PutBlob,
    /// `Put Block List`.
    PutBlockList,
}

/// The properties the request's headers set: `x-ms-blob-content-type` and its siblings
/// (winning over the standard header of `Put Blob`), and `x-ms-meta-<name>`. Metadata names
/// must be C# identifiers, as Azure requires, and are kept in lower case.
pub fn from_headers(headers: &HeaderMap, request: Request) -> Result<BlobProperties, AzureError> {
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
pub fn insert_into(headers: &mut HeaderMap, properties: &BlobProperties) {
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
