//! Byte ranges of `Range` and `x-ms-range` headers (`bytes=a-b`, `bytes=a-`, `bytes=-n`).
//!
//! One range per request: Azure serves no multipart ranges and its clients never ask for them.
//! A malformed header is a client error rather than silently ignored, so a client that meant a
//! range never receives a whole 5 GiB blob by surprise.

use std::ops::Range;

/// A requested range before the blob's size is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeSpec {
    /// `bytes=first-last`, both inclusive.
    FromTo(u64, u64),
    /// `bytes=first-`: from `first` to the end.
    From(u64),
    /// `bytes=-n`: the last `n` bytes.
    Suffix(u64),
}

/// The header is not a single byte range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the range must be one `bytes=first-last`, `bytes=first-` or `bytes=-length`")]
pub struct RangeSyntaxError;

impl RangeSpec {
    /// Parses a header value.
    pub fn parse(header: &str) -> Result<Self, RangeSyntaxError> {
        let spec = header
            .trim()
            .strip_prefix("bytes=")
            .ok_or(RangeSyntaxError)?;
        let (first, last) = spec.split_once('-').ok_or(RangeSyntaxError)?;
        let number = |text: &str| -> Result<u64, RangeSyntaxError> {
            let text = text.trim();
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return Err(RangeSyntaxError);
            }
            text.parse().map_err(|_| RangeSyntaxError)
        };
        match (first.trim().is_empty(), last.trim().is_empty()) {
            (true, true) => Err(RangeSyntaxError),
            (true, false) => Ok(Self::Suffix(number(last)?)),
            (false, true) => Ok(Self::From(number(first)?)),
            (false, false) => {
                let (first, last) = (number(first)?, number(last)?);
                if first > last {
                    return Err(RangeSyntaxError);
                }
                Ok(Self::FromTo(first, last))
            }
        }
    }

    /// The half-open byte range this spec selects in a blob of `size` bytes, or `None` when it
    /// selects nothing (416). A last byte past the end is clamped, as RFC 9110 says.
    pub fn resolve(self, size: u64) -> Option<Range<u64>> {
        match self {
            Self::FromTo(first, last) if first < size => {
                Some(first..last.min(size.saturating_sub(1)).saturating_add(1))
            }
            Self::From(first) if first < size => Some(first..size),
            Self::Suffix(length) if length > 0 && size > 0 => {
                Some(size.saturating_sub(length)..size)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_parse() {
        assert_eq!(
            RangeSpec::parse("bytes=0-33554431"),
            Ok(RangeSpec::FromTo(0, 33_554_431))
        );
        assert_eq!(RangeSpec::parse("bytes=100-"), Ok(RangeSpec::From(100)));
        assert_eq!(RangeSpec::parse("bytes=-100"), Ok(RangeSpec::Suffix(100)));
    }

    #[test]
    fn malformed_and_multiple_ranges_are_refused() {
        for bad in [
            "",
            "bytes=",
            "bytes=-",
            "bytes=5-1",
            "items=0-1",
            "bytes=0-1,3-4",
            "bytes=a-b",
            "bytes=+1-2",
            "bytes=99999999999999999999-",
        ] {
            assert_eq!(RangeSpec::parse(bad), Err(RangeSyntaxError), "{bad}");
        }
    }

    #[test]
    fn ranges_resolve_against_the_size_and_clamp_the_end() {
        assert_eq!(RangeSpec::FromTo(0, 9).resolve(100), Some(0..10));
        assert_eq!(RangeSpec::FromTo(90, 200).resolve(100), Some(90..100));
        assert_eq!(RangeSpec::From(99).resolve(100), Some(99..100));
        assert_eq!(RangeSpec::Suffix(10).resolve(100), Some(90..100));
        assert_eq!(RangeSpec::Suffix(500).resolve(100), Some(0..100));
        assert_eq!(RangeSpec::FromTo(0, u64::MAX).resolve(3), Some(0..3));
    }

    #[test]
    fn ranges_past_the_end_or_of_empty_blobs_are_unsatisfiable() {
        assert_eq!(RangeSpec::FromTo(100, 200).resolve(100), None);
        assert_eq!(RangeSpec::From(100).resolve(100), None);
        assert_eq!(RangeSpec::Suffix(0).resolve(100), None);
        assert_eq!(RangeSpec::FromTo(0, 0).resolve(0), None);
        assert_eq!(RangeSpec::Suffix(5).resolve(0), None);
    }
}
