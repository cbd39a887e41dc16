//! File names of transfer results, made from dataset names that may hold anything a user
//! typed: slashes, control characters, a different extension.

/// Longest file stem a result gets, in characters; blob path segments allow 255 bytes.
const STEM_CHARS_MAX: usize = 120;

/// A file stem for `name`: its extension (if any) removed, characters that cannot be in a
/// file or blob name replaced by `_`, at most [`STEM_CHARS_MAX`] characters, never empty.
pub(crate) fn file_stem(name: &str) -> String {
    let without_extension = if crate::datasets::model::format_of(name).is_empty() {
        name
    } else {
        name.rsplit_once('.').map_or(name, |(stem, _)| stem)
    };
    let cleaned: String = without_extension
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '_'
            } else {
                c
            }
        })
        .take(STEM_CHARS_MAX)
        .collect();
    let trimmed = cleaned.trim().trim_matches('.');
    if trimmed.is_empty() {
        "data".to_owned()
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::file_stem;

    #[test]
    fn stems_are_safe_file_names() {
        assert_eq!(file_stem("Lake.dfsu"), "Lake");
        assert_eq!(file_stem("a/b\\c\u{0}d"), "a_b_c_d");
        assert_eq!(file_stem(".."), "data");
        assert_eq!(file_stem("   "), "data");
        assert_eq!(file_stem("no extension here"), "no extension here");
        assert_eq!(file_stem(&"x".repeat(500)).chars().count(), 120);
    }
}
