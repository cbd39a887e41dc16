//! Text helpers the formats share: [`Lines`], line-by-line reading of the line-based text
//! formats (.mesh, XYZ) with a bound on the length of one line, so that a file without line
//! breaks cannot make a reader buffer it whole, and with progress in bytes; and [`shorten`],
//! which keeps a piece of input quoted in a message short. They live here rather than in one
//! format so that no format module depends on another.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::catalogue::ReadContext;
use crate::error::{FormatError, FormatResult};
use crate::progress::Progress;

/// At most 60 characters of `text`, then `...` if there were more, for messages.
pub(crate) fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(60).collect();
    if text.chars().nth(60).is_some() {
        short.push_str("...");
    }
    short
}

/// Reads lines of at most `line_bytes_max` bytes, counting line numbers (1-based) and
/// reporting bytes to a [`Progress`].
pub(crate) struct Lines<'a, R> {
    reader: R,
    format: &'static str,
    path: &'a Path,
    line_bytes_max: u64,
    progress: &'a dyn Progress,
    buffer: Vec<u8>,
    line_number: u64,
}

impl<'a> Lines<'a, BufReader<File>> {
    /// Opens the file at `path` for reading its lines with the line bound of
    /// `context.limits`, after telling `context.progress` its size; errors name `format`.
    pub(crate) fn open(
        path: &'a Path,
        format: &'static str,
        context: &ReadContext<'a>,
    ) -> FormatResult<Self> {
        let file = File::open(path).map_err(|source| FormatError::read(path, source))?;
        if let Ok(metadata) = file.metadata() {
            context.progress.set_total(metadata.len());
        }
        Ok(Self::new(
            BufReader::new(file),
            format,
            path,
            context.limits.line_bytes_max,
            context.progress,
        ))
    }
}

impl<'a, R: BufRead> Lines<'a, R> {
    /// Wraps `reader`; errors name `format` and `path`.
    fn new(
        reader: R,
        format: &'static str,
        path: &'a Path,
        line_bytes_max: u64,
        progress: &'a dyn Progress,
    ) -> Self {
        Self {
            reader,
            format,
            path,
            line_bytes_max,
            progress,
            buffer: Vec::new(),
            line_number: 0,
        }
    }

    /// `line N` of the line last returned, for error locations.
    pub(crate) fn location(&self) -> String {
        format!("line {}", self.line_number)
    }

    /// The next line without its line break, or `None` at the end of the file. Bytes that
    /// are not UTF-8 are read as cp1252-compatible Latin-1, the encoding of MIKE files.
    pub(crate) fn next_line(&mut self) -> FormatResult<Option<String>> {
        self.buffer.clear();
        let limit = self.line_bytes_max.saturating_add(1);
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.buffer)
            .map_err(|source| FormatError::read(self.path, source))?;
        if read == 0 {
            return Ok(None);
        }
        self.line_number = self.line_number.saturating_add(1);
        self.progress.advance(read as u64);
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
        } else if read as u64 >= limit {
            return Err(FormatError::invalid(
                self.format,
                self.location(),
                format!("line longer than {} bytes", self.line_bytes_max),
            ));
        }
        if self.buffer.last() == Some(&b'\r') {
            self.buffer.pop();
        }
        Ok(Some(match std::str::from_utf8(&self.buffer) {
            Ok(text) => text.to_owned(),
            Err(_) => self.buffer.iter().map(|&byte| char::from(byte)).collect(),
        }))
    }

    /// The next line that is not blank, or `None` at the end of the file.
    pub(crate) fn next_non_blank(&mut self) -> FormatResult<Option<String>> {
        while let Some(line) = self.next_line()? {
            if !line.trim().is_empty() {
                return Ok(Some(line));
            }
        }
        Ok(None)
    }

    /// The next non-blank line, or an error saying that `what` was expected there.
    pub(crate) fn expect_line(&mut self, what: &str) -> FormatResult<String> {
        match self.next_non_blank()? {
            Some(line) => Ok(line),
            None => Err(FormatError::invalid(
                self.format,
                format!("line {}", self.line_number.saturating_add(1)),
                format!("the file ends where {what} was expected (truncated?)"),
            )),
        }
    }
}
