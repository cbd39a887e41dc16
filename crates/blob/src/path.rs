//! Blob paths, parsed once at the edge. A [`BlobPath`] is a container plus a blob name whose
//! `/`-separated segments are never empty, `.` or `..`, and hold no backslash or control
//! character, so every backend can map it to a file or object key that stays inside its root.

use crate::limits::{BLOB_NAME_BYTES_MAX, BLOB_NAME_SEGMENTS_MAX, BLOB_SEGMENT_BYTES_MAX};

/// Container of uploads: `uploads/<tenant id>/<uuid>[/<file name>]`.
pub const UPLOADS_CONTAINER: &str = "uploads";

/// Why a container or blob name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobPathError {
    /// The container name breaks Azure's rules (3 to 63 of `a-z0-9-`, no `--`, no edge `-`).
    #[error("the container name must be 3 to 63 lower-case letters, digits or single hyphens")]
    Container,
    /// The blob name is empty or longer than the limit.
    #[error("the blob name must be 1 to {BLOB_NAME_BYTES_MAX} bytes")]
    Length,
    /// Too many `/`-separated segments.
    #[error("the blob name has more than {BLOB_NAME_SEGMENTS_MAX} segments")]
    Segments,
    /// A segment is empty, `.`, `..`, too long, or holds a backslash or control character.
    #[error(
        "the blob name has an empty, `.` or `..` segment, a backslash, a control character or a segment over {BLOB_SEGMENT_BYTES_MAX} bytes"
    )]
    Segment,
}

/// A checked container and blob name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlobPath {
    container: String,
    name: String,
}

impl BlobPath {
    /// Checks a container and a blob name (already percent-decoded).
    pub fn parse(container: &str, name: &str) -> Result<Self, BlobPathError> {
        check_container(container)?;
        if name.is_empty() || name.len() > BLOB_NAME_BYTES_MAX {
            return Err(BlobPathError::Length);
        }
        let mut segments = 0usize;
        for segment in name.split('/') {
            segments = segments.saturating_add(1);
            if segments > BLOB_NAME_SEGMENTS_MAX {
                return Err(BlobPathError::Segments);
            }
            check_segment(segment)?;
        }
        Ok(Self {
            container: container.to_owned(),
            name: name.to_owned(),
        })
    }

    /// Parses `container/name`, the form [`BlobPath::key`] returns.
    pub fn parse_key(key: &str) -> Result<Self, BlobPathError> {
        let (container, name) = key.split_once('/').ok_or(BlobPathError::Length)?;
        Self::parse(container, name)
    }

    /// The container.
    pub fn container(&self) -> &str {
        &self.container
    }

    /// The blob name within the container (may contain `/`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `container/name`: the storage key, and the form kept in the database.
    pub fn key(&self) -> String {
        format!("{}/{}", self.container, self.name)
    }

    /// The name's segments.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.name.split('/')
    }
}

impl std::fmt::Display for BlobPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.container, self.name)
    }
}

fn check_container(container: &str) -> Result<(), BlobPathError> {
    let length_ok = (3..=63).contains(&container.len());
    let chars_ok = container
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let hyphens_ok =
        !container.starts_with('-') && !container.ends_with('-') && !container.contains("--");
    if length_ok && chars_ok && hyphens_ok {
        Ok(())
    } else {
        Err(BlobPathError::Container)
    }
}

/// Checks one segment of a blob name; also used for file names appended to upload paths.
pub fn check_segment(segment: &str) -> Result<(), BlobPathError> {
    let bad = segment.is_empty()
        || segment == "."
        || segment == ".."
        || segment.len() > BLOB_SEGMENT_BYTES_MAX
        || segment
            .chars()
            .any(|c| c == '\\' || c == '/' || c.is_control());
    if bad {
        Err(BlobPathError::Segment)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_names_parse_and_round_trip_through_the_key() {
        let path = BlobPath::parse("uploads", "tenant/id/model result.dfsu").unwrap();
        assert_eq!(path.key(), "uploads/tenant/id/model result.dfsu");
        assert_eq!(BlobPath::parse_key(&path.key()).unwrap(), path);
        assert_eq!(path.segments().count(), 3);
    }

    #[test]
    fn traversal_empty_segments_backslashes_and_controls_are_refused() {
        for bad in [
            "..", "a/../b", "./a", "a/.", "a//b", "/a", "a/", "a\\b", "a\0b", "a\nb", "",
        ] {
            assert!(BlobPath::parse("uploads", bad).is_err(), "{bad:?}");
        }
        assert!(BlobPath::parse("uploads", "..a/b..").is_ok());
    }

    #[test]
    fn names_and_segments_are_bounded() {
        let at_limit = "a".repeat(BLOB_SEGMENT_BYTES_MAX);
        assert!(BlobPath::parse("uploads", &at_limit).is_ok());
        let over = "a".repeat(BLOB_SEGMENT_BYTES_MAX + 1);
        assert_eq!(
            BlobPath::parse("uploads", &over),
            Err(BlobPathError::Segment)
        );
        let long = vec!["a"; BLOB_NAME_BYTES_MAX / 2 + 1].join("/");
        assert!(BlobPath::parse("uploads", &long).is_err());
        let many = vec!["a"; BLOB_NAME_SEGMENTS_MAX + 1].join("/");
        assert_eq!(
            BlobPath::parse("uploads", &many),
            Err(BlobPathError::Segments)
        );
        let most = vec!["a"; BLOB_NAME_SEGMENTS_MAX].join("/");
        assert!(BlobPath::parse("uploads", &most).is_ok());
    }

    #[test]
    fn container_names_follow_azure_rules() {
        for good in ["uploads", "abc", "a-b-c", "x1"] {
            let result = BlobPath::parse(good, "b");
            assert_eq!(result.is_ok(), good.len() >= 3, "{good}");
        }
        for bad in [
            "Uploads",
            "a",
            "-ab",
            "ab-",
            "a--b",
            ".blocks",
            "a_b",
            &"a".repeat(64),
        ] {
            assert_eq!(
                BlobPath::parse(bad, "b"),
                Err(BlobPathError::Container),
                "{bad}"
            );
        }
    }
}
