//! Entity tags: `If-None-Match` matching for the endpoints that answer 304 (the banner,
//! tiles).

/// Whether an `If-None-Match` value names `etag` (weak comparison, as RFC 9110 asks for
/// `If-None-Match`), or is `*`.
pub(crate) fn matches_etag(if_none_match: &str, etag: &str) -> bool {
    let bare = etag.trim_start_matches("W/");
    if_none_match
        .split(',')
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == bare)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_lists_wildcards_and_weak_tags_match() {
        let tag = "\"abc\"";
        assert!(matches_etag("\"abc\"", tag));
        assert!(matches_etag("\"x\", W/\"abc\"", tag));
        assert!(matches_etag("*", tag));
        assert!(!matches_etag("\"abd\"", tag));
        assert!(!matches_etag("", tag));
    }
}
