//! The one rule for names people give things: projects, subprojects, datasets and the folders
//! and files of bulk hierarchy paths. Names show up in listings, paths and file systems, so a
//! name must be visible, must not pretend to be a path, and must not reorder the text around
//! it. Every area checks names here, so that what one endpoint accepts no other one rejects.

/// Right-to-left and left-to-right embeddings, overrides and isolates: they reorder how the
/// text after them is shown, so a name could display as something it is not ("Trojan source").
/// The plain direction marks (U+200E, U+200F, U+061C) stay allowed: right-to-left names need
/// them and they reorder nothing.
const BIDI_CONTROLS: &[char] = &[
    '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}',
];

/// Characters that take no space and show nothing (besides whitespace): a name made only of
/// these looks blank in every listing.
const INVISIBLE: &[char] = &[
    '\u{00AD}', '\u{034F}', '\u{061C}', '\u{115F}', '\u{1160}', '\u{17B4}', '\u{17B5}', '\u{180E}',
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{2060}', '\u{2061}', '\u{2062}',
    '\u{2063}', '\u{2064}', '\u{3164}', '\u{FEFF}', '\u{FFA0}', '\u{2800}',
];

/// Why a name was refused; its text is a sentence about "name".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NameError {
    /// Nothing but whitespace.
    #[error("name must not be empty")]
    Empty,
    /// Longer than the limit, in characters.
    #[error("name must be at most {chars_max} characters")]
    TooLong {
        /// The limit.
        chars_max: usize,
    },
    /// A control character or a path separator.
    #[error("name must not contain control characters, / or \\")]
    ControlOrSeparator,
    /// `.` or `..`.
    #[error("name must not be . or ..")]
    Dots,
    /// A character that reorders the text around it.
    #[error("name must not contain bidirectional embedding, override or isolate characters")]
    Reordering,
    /// Nothing visible.
    #[error("name must contain a visible character")]
    Invisible,
}

/// Checks a name and returns it without surrounding whitespace, or says what is wrong.
/// `chars_max` bounds its length in characters.
pub(crate) fn check_name(raw: &str, chars_max: usize) -> Result<String, NameError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.chars().count() > chars_max {
        return Err(NameError::TooLong { chars_max });
    }
    if name
        .chars()
        .any(|c| c.is_control() || c == '/' || c == '\\')
    {
        return Err(NameError::ControlOrSeparator);
    }
    if name == "." || name == ".." {
        return Err(NameError::Dots);
    }
    if name.chars().any(|c| BIDI_CONTROLS.contains(&c)) {
        return Err(NameError::Reordering);
    }
    if name
        .chars()
        .all(|c| c.is_whitespace() || INVISIBLE.contains(&c))
    {
        return Err(NameError::Invisible);
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_names_pass_trimmed() {
        assert_eq!(check_name("  Lake model ", 20).unwrap(), "Lake model");
        assert_eq!(check_name("..a", 20).unwrap(), "..a");
        assert_eq!(check_name("שלום\u{200F}", 20).unwrap(), "שלום\u{200F}");
        assert_eq!(check_name("résumé.dfsu", 11).unwrap(), "résumé.dfsu");
    }

    #[test]
    fn blank_path_like_reordering_and_long_names_are_refused() {
        for bad in [
            "",
            "   ",
            "\u{3000}\u{00A0}",
            ".",
            " .. ",
            "\u{200B}\u{200D}",
            "\u{2800}",
            "\u{3164}",
            "a/b",
            "a\\b",
            "a\0b",
            "a\u{7f}",
            "evil\u{202E}fdsu.exe",
            "x\u{2066}y",
            "abcdefghijk",
        ] {
            assert!(check_name(bad, 10).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn each_refusal_says_why_in_one_sentence() {
        assert_eq!(
            check_name(" ", 5).unwrap_err().to_string(),
            "name must not be empty"
        );
        assert_eq!(
            check_name("abcdef", 5).unwrap_err(),
            NameError::TooLong { chars_max: 5 }
        );
        assert_eq!(
            check_name("a/b", 5).unwrap_err().to_string(),
            "name must not contain control characters, / or \\"
        );
    }
}
