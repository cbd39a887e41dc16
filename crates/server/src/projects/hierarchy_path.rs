//! Paths of the bulk hierarchy endpoint (`a/b/file.dfsu`): parsed once, with every rule that
//! keeps a path inside its project and its names valid.

/// Longest path accepted, in characters.
pub(crate) const HIERARCHY_PATH_CHARS_MAX: usize = 1024;

/// A checked relative path: one or more names, none empty, `.` or `..`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct HierarchyPath {
    segments: Vec<String>,
}

impl HierarchyPath {
    /// Parses `raw`. One leading and one trailing `/` are ignored; `segment_chars_max` bounds
    /// each name and `segments_max` the nesting.
    pub(crate) fn parse(
        raw: &str,
        segment_chars_max: usize,
        segments_max: usize,
    ) -> Result<Self, String> {
        if raw.chars().count() > HIERARCHY_PATH_CHARS_MAX {
            return Err(format!(
                "path must be at most {HIERARCHY_PATH_CHARS_MAX} characters"
            ));
        }
        let trimmed = raw.trim();
        let trimmed = trimmed.strip_prefix('/').unwrap_or(trimmed);
        let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
        if trimmed.is_empty() {
            return Err("path must not be empty".into());
        }
        if trimmed.contains('\\') || trimmed.chars().any(char::is_control) {
            return Err("path must not contain backslashes or control characters".into());
        }
        let mut segments = Vec::new();
        for segment in trimmed.split('/') {
            match segment.trim() {
                "" => return Err("path must not contain empty segments (//)".into()),
                "." | ".." => return Err("path must not contain . or .. segments".into()),
                name => {
                    let name = crate::names::check_name(name, segment_chars_max)
                        .map_err(|error| format!("each {error} (in {segment:?})"))?;
                    segments.push(name);
                }
            }
            if segments.len() > segments_max {
                return Err(format!("path must be at most {segments_max} levels deep"));
            }
        }
        Ok(Self { segments })
    }

    /// The last name.
    pub(crate) fn name(&self) -> &str {
        self.segments.last().map_or("", String::as_str)
    }

    /// Every name, outermost first.
    pub(crate) fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The folders above the last name.
    pub(crate) fn parent_segments(&self) -> &[String] {
        self.segments
            .split_last()
            .map_or(&[], |(_, parents)| parents)
    }

    /// The path as `a/b/c`.
    pub(crate) fn display(&self) -> String {
        self.segments.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<HierarchyPath, String> {
        HierarchyPath::parse(raw, 10, 3)
    }

    #[test]
    fn paths_are_split_into_names() {
        let path = parse("/a/b/c.dfsu").unwrap();
        assert_eq!(path.display(), "a/b/c.dfsu");
        assert_eq!(path.name(), "c.dfsu");
        assert_eq!(path.parent_segments(), ["a", "b"]);
        assert_eq!(parse("folder/").unwrap().display(), "folder");
    }

    #[test]
    fn escaping_empty_and_oversized_paths_are_refused() {
        for bad in [
            "",
            "/",
            "a//b",
            "../x",
            "a/./b",
            "a/..",
            "a\\b",
            "a/b\u{0}",
            "a/b/c/d",
            "abcdefghijk",
            "a/\u{200B}/b",
            "a/\u{3164}",
            "x\u{202E}y/z",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse(&"a/".repeat(600)).is_err());
        assert!(parse("abcdefghij").is_ok());
    }
}
