//! A streaming walk over a GeoJSON document: the top-level object is read member by member,
//! and the elements of its `features` array are handed out one at a time as raw bytes, which
//! the reader then parses with serde_json. So a FeatureCollection of any size costs the memory
//! of its largest feature, never of the document. Nesting depth and the bytes of one feature
//! are bounded by [`ReadLimits`] while scanning, before serde_json sees anything.

use std::io::BufRead;

use serde_json::{Map, Value as Json};

use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};

use super::FORMAT;

/// What the walk found besides the features.
#[derive(Debug, Default)]
pub(crate) struct Document {
    /// The top-level members other than `features`, parsed.
    pub members: Map<String, Json>,
    /// The raw bytes of a top-level `properties` member (a single Feature), kept so that the
    /// reader can parse them in order.
    pub raw_properties: Option<Vec<u8>>,
    /// True when the document had a `features` array.
    pub had_features: bool,
}

/// Reads JSON bytes from a buffered reader, tracking the byte offset for messages.
pub(crate) struct Scanner<R> {
    reader: R,
    offset: u64,
    limits: ReadLimits,
}

impl<R: BufRead> Scanner<R> {
    /// A scanner over `reader`.
    pub(crate) fn new(reader: R, limits: ReadLimits) -> Self {
        Self {
            reader,
            offset: 0,
            limits,
        }
    }

    /// An error at the current offset.
    pub(crate) fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::invalid(FORMAT, format!("byte {}", self.offset), message)
    }

    fn io_error(&self, error: &std::io::Error) -> FormatError {
        self.error(format!("cannot read: {error}"))
    }

    fn peek(&mut self) -> FormatResult<Option<u8>> {
        match self.reader.fill_buf() {
            Ok(buffer) => Ok(buffer.first().copied()),
            Err(error) => Err(self.io_error(&error)),
        }
    }

    fn bump(&mut self) {
        self.reader.consume(1);
        self.offset += 1;
    }

    /// Skips white space (and a UTF-8 byte order mark at the start); returns the next byte.
    fn skip_white(&mut self) -> FormatResult<Option<u8>> {
        loop {
            match self.peek()? {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.bump(),
                Some(0xEF | 0xBB | 0xBF) if self.offset < 3 => self.bump(),
                other => return Ok(other),
            }
        }
    }

    fn expect(&mut self, wanted: u8) -> FormatResult<()> {
        match self.skip_white()? {
            Some(found) if found == wanted => {
                self.bump();
                Ok(())
            }
            Some(found) => Err(self.error(format!(
                "expected '{}' but found '{}'",
                char::from(wanted),
                char::from(found).escape_default()
            ))),
            None => Err(self.error(format!(
                "expected '{}' but the file ends",
                char::from(wanted)
            ))),
        }
    }

    /// Copies one complete JSON value into `out` (cleared first). `depth` is the nesting
    /// depth the value sits at.
    pub(crate) fn capture(&mut self, out: &mut Vec<u8>, depth: u64) -> FormatResult<()> {
        out.clear();
        let Some(first) = self.skip_white()? else {
            return Err(self.error("a value was expected but the file ends"));
        };
        let scalar = !matches!(first, b'{' | b'[' | b'"');
        let mut state = CaptureState {
            depth: 0,
            in_string: false,
            escape: false,
            done: false,
        };
        while !state.done {
            let buffer = match self.reader.fill_buf() {
                Ok(buffer) => buffer,
                Err(error) => return Err(self.io_error(&error)),
            };
            if buffer.is_empty() {
                if scalar && !out.is_empty() {
                    break;
                }
                return Err(self.error("the file ends inside a value"));
            }
            let (used, too_deep) = state.scan(buffer, scalar, depth, self.limits.nesting_depth_max);
            out.extend_from_slice(buffer.get(..used).unwrap_or_default());
            self.reader.consume(used);
            self.offset += used as u64;
            if let Some(actual) = too_deep {
                check_limit(
                    "GeoJSON nesting depth",
                    actual,
                    self.limits.nesting_depth_max,
                )?;
            }
            check_limit(
                "bytes of one GeoJSON value",
                out.len() as u64,
                self.limits.line_bytes_max,
            )?;
        }
        Ok(())
    }

    /// Walks the top-level object, calling `on_feature` with the raw bytes and byte offset of
    /// every element of its `features` array.
    pub(crate) fn walk(
        &mut self,
        on_feature: &mut dyn FnMut(&[u8], u64) -> FormatResult<()>,
    ) -> FormatResult<Document> {
        let mut document = Document::default();
        let mut buffer = Vec::new();
        self.expect(b'{')?;
        if self.skip_white()? == Some(b'}') {
            self.bump();
            return Ok(document);
        }
        loop {
            self.capture(&mut buffer, 1)?;
            let key: String = serde_json::from_slice(&buffer)
                .map_err(|_| self.error("an object key (a string) was expected"))?;
            self.expect(b':')?;
            if key == "features" && self.skip_white()? == Some(b'[') {
                document.had_features = true;
                self.walk_features(&mut buffer, on_feature)?;
            } else {
                let start = self.offset;
                self.capture(&mut buffer, 1)?;
                let value: Json = serde_json::from_slice(&buffer).map_err(|error| {
                    FormatError::invalid(FORMAT, format!("byte {start}"), error.to_string())
                })?;
                if key == "properties" {
                    document.raw_properties = Some(buffer.clone());
                }
                document.members.insert(key, value);
            }
            match self.skip_white()? {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    break;
                }
                _ => return Err(self.error("expected ',' or '}' after an object member")),
            }
        }
        if self.skip_white()?.is_some() {
            return Err(self.error("data after the end of the document"));
        }
        Ok(document)
    }

    fn walk_features(
        &mut self,
        buffer: &mut Vec<u8>,
        on_feature: &mut dyn FnMut(&[u8], u64) -> FormatResult<()>,
    ) -> FormatResult<()> {
        self.expect(b'[')?;
        if self.skip_white()? == Some(b']') {
            self.bump();
            return Ok(());
        }
        loop {
            let start = self.offset;
            self.capture(buffer, 2)?;
            on_feature(buffer, start)?;
            match self.skip_white()? {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    return Ok(());
                }
                _ => return Err(self.error("expected ',' or ']' after a feature")),
            }
        }
    }
}

struct CaptureState {
    depth: u64,
    in_string: bool,
    escape: bool,
    done: bool,
}

impl CaptureState {
    /// Scans `buffer`; returns the bytes that belong to the value and, when the nesting got
    /// too deep, the depth reached.
    fn scan(&mut self, buffer: &[u8], scalar: bool, base: u64, max: u64) -> (usize, Option<u64>) {
        let mut used = 0;
        for &byte in buffer {
            if scalar {
                if matches!(byte, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    self.done = true;
                    return (used, None);
                }
                used += 1;
                continue;
            }
            used += 1;
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if byte == b'\\' {
                    self.escape = true;
                } else if byte == b'"' {
                    self.in_string = false;
                    if self.depth == 0 {
                        self.done = true;
                        return (used, None);
                    }
                }
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    if base + self.depth > max {
                        return (used, Some(base + self.depth));
                    }
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        self.done = true;
                        return (used, None);
                    }
                }
                _ => {}
            }
        }
        (used, None)
    }
}
