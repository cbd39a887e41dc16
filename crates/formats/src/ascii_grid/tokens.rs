//! Splitting the data part of an ASCII Grid into whitespace-separated tokens, one large buffer
//! at a time.
//!
//! Rows need not match lines (GDAL reads the values as one stream, and so do we), so the
//! tokenizer ignores line structure except to bound line length and to name the line of an
//! error: newlines are counted, and line lengths checked, only in the whitespace between
//! tokens, so the work per byte of a value is a search for the next separator (eight bytes at
//! a time). A token cut by the end of the buffer is carried to the front of the next fill;
//! tokens are at most [`TOKEN_BYTES_MAX`] bytes, so the carry is small and the buffer never
//! grows.

use std::io::Read;
use std::path::Path;

use super::{FORMAT, TOKEN_BYTES_MAX};
use crate::error::{FormatError, FormatResult};
use crate::progress::Progress;

/// Bytes read at once: large enough that system calls and the carry cost nothing.
const BUFFER_BYTES: usize = 1024 * 1024;

/// Whether the tokenizer goes on after a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Go on.
    Continue,
    /// Stop reading; the rest of the input is not looked at.
    Stop,
}

/// Why a token handler failed.
#[derive(Debug)]
pub(crate) enum Fault {
    /// The token is wrong; the tokenizer adds its line to the message.
    Token(String),
    /// Something else failed (the sink); passed on as it is.
    Other(FormatError),
}

/// Tokens of a reader, with line numbers for errors and a bound on line length.
pub(crate) struct Tokens<'a, R> {
    reader: R,
    path: &'a Path,
    buffer: Vec<u8>,
    lines: Lines,
    progress: &'a dyn Progress,
}

/// Where the tokenizer is, in lines and bytes.
#[derive(Debug, Clone, Copy)]
struct Lines {
    /// Line number (1-based) of the next byte.
    line: u64,
    /// Line of the last token (the first line before any).
    token_line: u64,
    /// Offset (from the start of the tokens) of the first byte of line `line`.
    line_start: u64,
    /// Offset of the first byte of the buffer.
    buffer_start: u64,
    line_bytes_max: u64,
}

impl Lines {
    /// Fails when the line that reaches to offset `end` is too long.
    fn check(&self, end: u64) -> FormatResult<()> {
        if end.saturating_sub(self.line_start) > self.line_bytes_max {
            return Err(FormatError::invalid(
                FORMAT,
                format!("line {}", self.line),
                format!("line longer than {} bytes", self.line_bytes_max),
            ));
        }
        Ok(())
    }
}

impl<'a, R: Read> Tokens<'a, R> {
    /// Tokens of `reader`, whose first byte is on line `first_line` of `path`.
    pub fn new(
        reader: R,
        path: &'a Path,
        first_line: u64,
        line_bytes_max: u64,
        progress: &'a dyn Progress,
    ) -> Self {
        Self {
            reader,
            path,
            buffer: vec![0; BUFFER_BYTES],
            lines: Lines {
                line: first_line,
                token_line: first_line,
                line_start: 0,
                buffer_start: 0,
                line_bytes_max,
            },
            progress,
        }
    }

    /// The line of the last token, for "the file ends here" messages.
    pub fn last_token_line(&self) -> u64 {
        self.lines.token_line
    }

    /// Calls `on_token` with each token in order until the input ends or it returns
    /// [`Step::Stop`]. A token error becomes [`FormatError::InvalidInput`] at the token's line.
    pub fn for_each(
        &mut self,
        mut on_token: impl FnMut(&[u8]) -> Result<Step, Fault>,
    ) -> FormatResult<()> {
        let mut carry = 0;
        loop {
            let filled = self.fill(carry)?;
            let end_of_input = filled < self.buffer.len();
            let data = self.buffer.get(..filled).unwrap_or_default();
            let complete = if end_of_input {
                filled
            } else {
                data.iter()
                    .rposition(|&byte| is_space(byte))
                    .map_or(0, |last| last + 1)
            };
            let (body, tail) = data.split_at(complete);
            let step = each_token(body, &mut self.lines, &mut on_token)?;
            if step == Step::Stop {
                // Everything read counts as done, so that the caller can report the rest.
                self.progress.advance(filled as u64);
                return Ok(());
            }
            if tail.len() > TOKEN_BYTES_MAX {
                return Err(token_too_long(self.lines.line));
            }
            self.progress.advance(complete as u64);
            self.lines.buffer_start = self.lines.buffer_start.saturating_add(complete as u64);
            carry = tail.len();
            self.buffer.copy_within(complete..filled, 0);
            if end_of_input {
                return Ok(());
            }
        }
    }

    /// Reads after the first `carry` bytes until the buffer is full or the input ends;
    /// returns the bytes in the buffer.
    fn fill(&mut self, carry: usize) -> FormatResult<usize> {
        let mut filled = carry;
        while let Some(space) = self.buffer.get_mut(filled..) {
            if space.is_empty() {
                break;
            }
            match self.reader.read(space) {
                Ok(0) => break,
                Ok(read) => filled = filled.saturating_add(read),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(FormatError::read(self.path, error)),
            }
        }
        Ok(filled)
    }
}

fn token_too_long(line: u64) -> FormatError {
    FormatError::invalid(
        FORMAT,
        format!("line {line}"),
        format!("a value longer than {TOKEN_BYTES_MAX} bytes: not a number"),
    )
}

/// Calls `on_token` for each token of `body`, which starts at `lines.buffer_start`, counting
/// lines and checking their length on the way.
fn each_token(
    body: &[u8],
    lines: &mut Lines,
    on_token: &mut impl FnMut(&[u8]) -> Result<Step, Fault>,
) -> FormatResult<Step> {
    let mut rest = body;
    let mut offset = lines.buffer_start;
    loop {
        while let [byte, tail @ ..] = rest {
            if !is_space(*byte) {
                break;
            }
            if *byte == b'\n' {
                lines.check(offset)?;
                lines.line = lines.line.saturating_add(1);
                lines.line_start = offset.saturating_add(1);
            }
            offset = offset.saturating_add(1);
            rest = tail;
        }
        if rest.is_empty() {
            break;
        }
        let length = token_length(rest);
        let (token, tail) = rest.split_at(length);
        if length > TOKEN_BYTES_MAX {
            return Err(token_too_long(lines.line));
        }
        lines.token_line = lines.line;
        match on_token(token) {
            Ok(Step::Continue) => {}
            Ok(Step::Stop) => return Ok(Step::Stop),
            Err(Fault::Token(message)) => {
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("line {}", lines.line),
                    message,
                ));
            }
            Err(Fault::Other(error)) => return Err(error),
        }
        offset = offset.saturating_add(length as u64);
        rest = tail;
    }
    lines.check(offset)?;
    Ok(Step::Continue)
}

/// Bytes up to the first separator (or all of `rest`). Eight bytes are tested at once for a
/// byte below `!` (the SWAR "has less than" test, exact for the first such byte); a control
/// byte that is not a separator is part of the token, and the search goes on after it.
fn token_length(rest: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let mut length = 0;
    while let Some(chunk) = rest.get(length..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*chunk);
        let below = word.wrapping_sub(ONES.wrapping_mul(u64::from(b'!'))) & !word & HIGH_BITS;
        if below == 0 {
            length += 8;
            continue;
        }
        let index = (below.trailing_zeros() / 8) as usize;
        let position = length + index;
        if rest.get(position).is_some_and(|&byte| is_space(byte)) {
            return position;
        }
        length = position + 1;
    }
    let tail = rest.get(length..).unwrap_or_default();
    length
        + tail
            .iter()
            .position(|&byte| is_space(byte))
            .unwrap_or(tail.len())
}

/// The separators: space, tab, line feed, vertical tab, form feed, carriage return. Other
/// control bytes are part of a token, which then is not a number.
fn is_space(byte: u8) -> bool {
    byte <= b' ' && matches!(byte, b' ' | b'\t'..=b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    fn tokens(text: &[u8], line_bytes_max: u64) -> FormatResult<Vec<String>> {
        let mut found = Vec::new();
        let mut tokens = Tokens::new(text, Path::new("t.asc"), 7, line_bytes_max, &NoProgress);
        tokens.for_each(|token| {
            found.push(String::from_utf8_lossy(token).into_owned());
            Ok(Step::Continue)
        })?;
        Ok(found)
    }

    #[test]
    fn splits_on_any_whitespace_and_carries_tokens_across_buffers() {
        let mut text = Vec::new();
        for index in 0..300_000 {
            text.extend_from_slice(
                format!("{index}{}", ["\t", " ", "\r\n", "  \n"][index % 4]).as_bytes(),
            );
        }
        let found = tokens(&text, 1024).unwrap();
        assert_eq!(found.len(), 300_000);
        assert!(
            found
                .iter()
                .enumerate()
                .all(|(index, token)| *token == index.to_string())
        );
    }

    #[test]
    fn token_length_stops_at_the_first_separator_only() {
        let cases: [&[u8]; 9] = [
            b"",
            b"1",
            b"12345678",
            b"123456789 1",
            b"1234567\n",
            b"1\x002345678901 2",
            b"\x01\x02\x03\x04\x05\x06\x07\x08\x0e\t",
            b"\xff\xfe\x80abcdefghijk\rx",
            b"12345678123456781234567\x0b",
        ];
        for bytes in cases {
            let expected = bytes
                .iter()
                .position(|&byte| is_space(byte))
                .unwrap_or(bytes.len());
            assert_eq!(token_length(bytes), expected, "{bytes:?}");
        }
        for length in 0..40 {
            for separator in [b' ', b'\t', b'\n', b'\r', 0x0b, 0x0c] {
                let mut bytes = vec![b'7'; length];
                bytes.push(separator);
                bytes.extend_from_slice(b"99 ");
                assert_eq!(token_length(&bytes), length);
            }
        }
    }

    #[test]
    fn errors_name_the_line_of_the_token() {
        let mut tokens = Tokens::new(
            &b"1 2\n3\n\n4 x 5"[..],
            Path::new("t.asc"),
            7,
            100,
            &NoProgress,
        );
        let error = tokens
            .for_each(|token| {
                if token == b"x" {
                    return Err(Fault::Token("bad".into()));
                }
                Ok(Step::Continue)
            })
            .unwrap_err();
        assert!(error.to_string().contains("line 10"), "{error}");
    }

    #[test]
    fn lines_at_the_limit_pass_and_one_byte_more_fails() {
        assert!(tokens(b"12345\n1234\n", 5).is_ok());
        let error = tokens(b"12345\n123456\n", 5).unwrap_err();
        assert!(error.to_string().contains("line 8"), "{error}");
        assert!(tokens(b"123456", 5).is_err());
    }

    #[test]
    fn a_token_over_the_limit_is_an_error() {
        let long = vec![b'1'; BUFFER_BYTES + 10];
        assert!(tokens(&long, u64::MAX).is_err());
        let at_limit = format!("1 {} 2", "7".repeat(TOKEN_BYTES_MAX));
        assert_eq!(tokens(at_limit.as_bytes(), u64::MAX).unwrap().len(), 3);
        let past_limit = format!("1 {} 2", "7".repeat(TOKEN_BYTES_MAX + 1));
        let error = tokens(past_limit.as_bytes(), u64::MAX).unwrap_err();
        assert!(
            error.to_string().contains("longer than 256 bytes"),
            "{error}"
        );
    }
}
