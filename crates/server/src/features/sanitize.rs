//! Cleaning of message titles and bodies before storage
//! (docs/features.md#title-and-body-sanitizing).
//!
//! Bodies go through ammonia: it parses with html5ever, the HTML5 algorithm browsers use, so
//! what it keeps is what a browser would build, and it serializes its own well-formed output,
//! so no mutation between our parse and a browser's can bring markup back. URLs are read with
//! the `url` crate, which follows the WHATWG URL standard browsers follow: entities, tabs, line
//! breaks and case inside a scheme are read the way a browser reads them before the scheme is
//! compared with the allow-list.
//!
//! Titles are plain text. Removing the markup once is not enough: `&lt;script&gt;` is text
//! whose decoded form is markup, so the title is cleaned and decoded until nothing changes.
//! The result holds no tag and no character reference, and shows the same whether a client
//! renders it as text or as HTML.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use ammonia::{Builder, UrlRelative};

/// Tags a body may keep.
const BODY_TAGS: [&str; 11] = [
    "b", "strong", "i", "em", "u", "br", "p", "ul", "ol", "li", "a",
];

/// Elements removed with everything inside them: their content is code, styling, or markup
/// in another namespace, never text meant for the reader.
const CONTENT_REMOVED: [&str; 14] = [
    "script", "style", "template", "iframe", "object", "embed", "noscript", "svg", "math",
    "textarea", "title", "xmp", "noembed", "noframes",
];

/// The `rel` every kept link gets, so a linked page cannot reach back into the application.
const LINK_REL: &str = "noopener noreferrer";

/// Most passes of the title cleaning for a title of `chars` characters. A pass that changes the
/// text makes it shorter (it removes markup or turns a reference into one character), except
/// when all it does is read a carriage return as a line feed, which a shorter pass must have
/// produced; so twice the length, plus the pass that finds nothing left to do, settles every
/// title. A fixed count does not: each pass peels one level of `&amp;amp;...`, and a 255-character
/// title can hold 60 of them. Titles are at most `TITLE_CHARS_MAX` characters by then, so this is
/// at most 512 passes over 255 characters.
fn title_passes_max(chars: usize) -> usize {
    chars.saturating_mul(2).saturating_add(2)
}

static BODY: LazyLock<Builder<'static>> = LazyLock::new(|| {
    let mut builder = Builder::empty();
    builder
        .tags(BODY_TAGS.into_iter().collect())
        .clean_content_tags(CONTENT_REMOVED.into_iter().chain(["select"]).collect())
        .tag_attributes(HashMap::from([("a", HashSet::from(["href"]))]))
        .generic_attributes(HashSet::new())
        .generic_attribute_prefixes(HashSet::new())
        .url_schemes(HashSet::from(["https", "mailto"]))
        .url_relative(UrlRelative::Deny)
        .link_rel(Some(LINK_REL))
        .strip_comments(true);
    builder
});

static TITLE: LazyLock<Builder<'static>> = LazyLock::new(|| {
    let mut builder = Builder::empty();
    builder
        .clean_content_tags(CONTENT_REMOVED.into_iter().chain(["select"]).collect())
        .generic_attributes(HashSet::new())
        .strip_comments(true);
    builder
});

/// The body as stored: the allow-listed markup of `raw`, serialized by the sanitizer.
pub(crate) fn sanitize_body(raw: &str) -> String {
    BODY.clean(&without_controls(raw)).to_string()
}

/// The title as stored: the text of `raw` with every tag and character reference resolved
/// away, on one line.
pub(crate) fn sanitize_title(raw: &str) -> String {
    let mut text = without_controls(raw);
    for _ in 0..title_passes_max(text.chars().count()) {
        let next = decode_text(&TITLE.clean(&text).to_string());
        if next == text {
            break;
        }
        text = next;
    }
    let one_line: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\t' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        })
        .collect();
    one_line.trim().to_owned()
}

/// `raw` without NUL and the other control characters except tab, line feed and carriage
/// return (C0, DEL and C1): invisible, and NUL cannot be stored in PostgreSQL text.
fn without_controls(raw: &str) -> String {
    raw.chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || !c.is_control())
        .collect()
}

/// Text serialized by html5ever decoded back: in text nodes it writes exactly these four
/// references (`&amp;` last, so `&amp;lt;` becomes `&lt;`, not `<`).
fn decode_text(serialized: &str) -> String {
    serialized
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_markup_survives_in_canonical_form() {
        let body = "<p>Maintenance <b>tonight</b>, <STRONG>22:00</STRONG>.<br/>See \
                    <a href=\"https://status.example.com/x?a=1&amp;b=2\">status</a> or \
                    <a href=\"mailto:ops@example.com\">mail</a>.</p><ul><li><i>a</i></li>\
                    <li><em>b</em> <u>c</u></li></ul><ol><li>d</li></ol>";
        assert_eq!(
            sanitize_body(body),
            "<p>Maintenance <b>tonight</b>, <strong>22:00</strong>.<br>See \
             <a href=\"https://status.example.com/x?a=1&amp;b=2\" rel=\"noopener noreferrer\">status</a> or \
             <a href=\"mailto:ops@example.com\" rel=\"noopener noreferrer\">mail</a>.</p><ul><li><i>a</i></li>\
             <li><em>b</em> <u>c</u></li></ul><ol><li>d</li></ol>"
        );
    }

    #[test]
    fn scripts_handlers_styles_and_unsafe_urls_are_removed() {
        let cases = [
            ("<script>alert(1)</script>x", "x"),
            ("<img src=x onerror=alert(1)>x", "x"),
            (
                "<b onclick=\"alert(1)\" style=\"color:red\">x</b>",
                "<b>x</b>",
            ),
            (
                "<a href=\"javascript:alert(1)\">x</a>",
                "<a rel=\"noopener noreferrer\">x</a>",
            ),
            (
                "<a href=\"JaVa&#x09;ScRiPt:alert(1)\">x</a>",
                "<a rel=\"noopener noreferrer\">x</a>",
            ),
            (
                "<a href=\" \u{1}javascript:alert(1)\">x</a>",
                "<a rel=\"noopener noreferrer\">x</a>",
            ),
            (
                "<a href=\"http://example.com\">x</a>",
                "<a rel=\"noopener noreferrer\">x</a>",
            ),
            (
                "<a href=\"/relative\">x</a>",
                "<a rel=\"noopener noreferrer\">x</a>",
            ),
            ("<svg><script>alert(1)</script></svg>x", "x"),
            (
                "<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
                "",
            ),
            ("<!-- <script>alert(1)</script> -->x", "x"),
            ("<span class=c>text</span>", "text"),
        ];
        for (input, expected) in cases {
            assert_eq!(sanitize_body(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn nul_and_control_characters_are_removed() {
        assert_eq!(sanitize_body("a\0b\u{7}c\u{85}d\te"), "abcd\te");
        assert_eq!(sanitize_title("a\0b\u{1b}c"), "abc");
    }

    #[test]
    fn titles_are_plain_text_after_every_decoding() {
        let cases = [
            ("Planned <b>maintenance</b>", "Planned maintenance"),
            ("Fish &amp; chips & more", "Fish & chips & more"),
            ("Depth < 5 m", "Depth < 5 m"),
            ("&lt;script&gt;alert(1)&lt;/script&gt;ok", "ok"),
            ("&amp;lt;b&amp;gt;x", "x"),
            ("<script>alert(1)</script>Outage", "Outage"),
            ("  line\none\ttab  ", "line one tab"),
            ("<img src=x onerror=alert(1)>", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(sanitize_title(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn titles_hidden_behind_many_levels_of_references_are_resolved() {
        // One level of `&amp;` comes off per pass: a title of 255 characters holds 60.
        let levels = "amp;".repeat(60);
        let title = format!("&{levels}lt;b&amp;gt;x");
        assert!(title.chars().count() <= 255);
        assert_eq!(sanitize_title(&title), "x");
        let title = format!("&{levels}lt;script");
        assert_eq!(sanitize_title(&title), "");
        // A carriage return from a reference is read as a line feed one pass later.
        assert_eq!(sanitize_title("a&amp;#13;b&#13;c"), "a b c");
    }
}
