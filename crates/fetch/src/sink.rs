//! Where fetched bytes go: the destination file, within the size limit, with progress reports.
//! HTTP and FTP both write through a [`FileSink`], so the limit and the reporting are one code.

use tokio::fs::File;
use tokio::io::{AsyncWriteExt, BufWriter};

use crate::FetchError;

/// Progress callback: bytes written so far, and the total when the server announced it.
pub(crate) type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Send + Sync);

/// Progress is reported after at least this many new bytes (and at the start and the end):
/// often enough for a progress bar, rare enough that a callback writing to a database costs
/// nothing measurable.
pub const PROGRESS_STEP_BYTES: u64 = 1024 * 1024;

/// Write buffer in front of the file: fewer trips to tokio's blocking pool than chunk-sized
/// writes (HTTP chunks are often 8 to 16 KiB).
const WRITE_BUFFER_BYTES: usize = 256 * 1024;

/// The destination file of one fetch.
pub(crate) struct FileSink<'a> {
    file: BufWriter<File>,
    written_bytes: u64,
    bytes_max: u64,
    total_bytes: Option<u64>,
    reported_bytes: u64,
    progress: Progress<'a>,
}

impl<'a> FileSink<'a> {
    /// A sink writing to `file` (created empty by the caller), refusing more than `bytes_max`.
    pub(crate) fn new(file: File, bytes_max: u64, progress: Progress<'a>) -> Self {
        Self {
            file: BufWriter::with_capacity(WRITE_BUFFER_BYTES, file),
            written_bytes: 0,
            bytes_max,
            total_bytes: None,
            reported_bytes: 0,
            progress,
        }
    }

    /// Records the size the server announced, failing at once when it is over the limit so
    /// that no byte is read.
    pub(crate) fn announce_size(&mut self, total_bytes: Option<u64>) -> Result<(), FetchError> {
        if total_bytes.is_some_and(|total| total > self.bytes_max) {
            return Err(FetchError::TooLarge {
                limit_bytes: self.bytes_max,
            });
        }
        self.total_bytes = total_bytes;
        (self.progress)(0, total_bytes);
        Ok(())
    }

    /// Appends `chunk`, failing before writing it when it would pass the limit.
    pub(crate) async fn write(&mut self, chunk: &[u8]) -> Result<(), FetchError> {
        let chunk_bytes = u64::try_from(chunk.len()).unwrap_or(u64::MAX);
        let written_bytes = self.written_bytes.saturating_add(chunk_bytes);
        if written_bytes > self.bytes_max {
            return Err(FetchError::TooLarge {
                limit_bytes: self.bytes_max,
            });
        }
        self.file.write_all(chunk).await.map_err(FetchError::File)?;
        self.written_bytes = written_bytes;
        if written_bytes.saturating_sub(self.reported_bytes) >= PROGRESS_STEP_BYTES {
            self.reported_bytes = written_bytes;
            (self.progress)(written_bytes, self.total_bytes);
        }
        Ok(())
    }

    /// Flushes the file and reports the final size, which is returned.
    pub(crate) async fn finish(mut self) -> Result<u64, FetchError> {
        self.file.flush().await.map_err(FetchError::File)?;
        if self.reported_bytes != self.written_bytes || self.written_bytes == 0 {
            (self.progress)(self.written_bytes, self.total_bytes);
        }
        Ok(self.written_bytes)
    }
}

/// Longest file name hint, in bytes: the file-name limit of common file systems.
const FILE_NAME_BYTES_MAX: usize = 255;

/// Longest `Content-Type` passed on, in bytes; longer ones are dropped as junk.
const CONTENT_TYPE_BYTES_MAX: usize = 255;

/// A file name fit to show and to name a dataset by: the last segment of `raw` (after `/` or
/// `\`), without control characters, not `.` or `..`, at most 255 bytes; `None` when nothing
/// is left.
pub(crate) fn clean_file_name(raw: &str) -> Option<String> {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let mut name: String = last.chars().filter(|c| !c.is_control()).collect();
    let trimmed = name.trim();
    if trimmed.len() != name.len() {
        name = trimmed.to_owned();
    }
    crate::error::truncate_on_char(&mut name, FILE_NAME_BYTES_MAX);
    if name.is_empty() || name == "." || name == ".." {
        return None;
    }
    Some(name)
}

/// The file name of the last segment of a URL path, percent-decoded.
pub(crate) fn file_name_from_path(path: &str) -> Option<String> {
    let last = path.rsplit('/').next().unwrap_or(path);
    let decoded = percent_encoding::percent_decode_str(last).decode_utf8_lossy();
    clean_file_name(&decoded)
}

/// The `filename*` (RFC 6266 / RFC 8187, UTF-8 only) or else the `filename` parameter of a
/// `Content-Disposition` header.
pub(crate) fn file_name_from_disposition(header: &str) -> Option<String> {
    let parameters = disposition_parameters(header);
    let extended = parameters
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("filename*"))
        .and_then(|(_, value)| {
            let (charset, rest) = value.split_once('\'')?;
            let (_language, encoded) = rest.split_once('\'')?;
            if !charset.eq_ignore_ascii_case("utf-8") {
                return None;
            }
            let decoded = percent_encoding::percent_decode_str(encoded)
                .decode_utf8()
                .ok()?;
            clean_file_name(&decoded)
        });
    extended.or_else(|| {
        parameters
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("filename"))
            .and_then(|(_, value)| clean_file_name(value))
    })
}

/// The `name=value` parameters after the disposition type; values may be quoted strings with
/// backslash escapes. A malformed rest ends the list rather than failing: the name is a hint.
fn disposition_parameters(header: &str) -> Vec<(String, String)> {
    let mut parameters = Vec::new();
    let mut rest = match header.split_once(';') {
        Some((_, rest)) => rest,
        None => return parameters,
    };
    // Each round consumes at least one `;`, so the header's length bounds the rounds.
    for _ in 0..header.len() {
        let Some((name, after_name)) = rest.split_once('=') else {
            break;
        };
        let name = name.trim().to_owned();
        let after_name = after_name.trim_start();
        let (value, after_value) = if let Some(quoted) = after_name.strip_prefix('"') {
            let mut value = String::new();
            let mut end = None;
            let mut escaped = false;
            for (index, c) in quoted.char_indices() {
                match (escaped, c) {
                    (true, _) => {
                        value.push(c);
                        escaped = false;
                    }
                    (false, '\\') => escaped = true,
                    (false, '"') => {
                        end = Some(index + 1);
                        break;
                    }
                    (false, _) => value.push(c),
                }
            }
            let Some(end) = end else { break };
            (value, quoted.get(end..).unwrap_or(""))
        } else {
            let end = after_name.find(';').unwrap_or(after_name.len());
            let (value, after) = after_name.split_at(end);
            (value.trim().to_owned(), after)
        };
        parameters.push((name, value));
        match after_value.split_once(';') {
            Some((_, next)) => rest = next,
            None => break,
        }
    }
    parameters
}

/// The `Content-Type` worth passing on: trimmed, printable, at most 255 bytes.
pub(crate) fn clean_content_type(raw: &str) -> Option<String> {
    let trimmed = raw.trim();
    (!trimmed.is_empty()
        && trimmed.len() <= CONTENT_TYPE_BYTES_MAX
        && !trimmed.chars().any(char::is_control))
    .then(|| trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_come_from_the_disposition_header() {
        for (header, expected) in [
            ("attachment; filename=\"model.dfsu\"", Some("model.dfsu")),
            ("attachment; filename=model.dfsu", Some("model.dfsu")),
            ("attachment;filename=\"a \\\"b\\\".nc\"", Some("a \"b\".nc")),
            (
                "attachment; filename=\"fallback.nc\"; filename*=UTF-8''%C3%A9t%C3%A9.nc",
                Some("été.nc"),
            ),
            (
                "attachment; filename*=utf-8'en'r%C3%A9sum%C3%A9.txt",
                Some("résumé.txt"),
            ),
            (
                "attachment; filename*=iso-8859-1''x.nc; filename=y.nc",
                Some("y.nc"),
            ),
            ("attachment; filename=\"../../etc/passwd\"", Some("passwd")),
            ("attachment; filename=\"C:\\\\dir\\\\f.txt\"", Some("f.txt")),
            ("attachment; filename=\"..\"", None),
            ("attachment; filename=\"\"", None),
            ("attachment; filename=\"unterminated", None),
            ("attachment", None),
            (
                "inline; name=x; filename = \" spaced.nc \" ; size=3",
                Some("spaced.nc"),
            ),
        ] {
            assert_eq!(
                file_name_from_disposition(header).as_deref(),
                expected,
                "{header}"
            );
        }
    }

    #[test]
    fn file_names_come_from_the_path() {
        assert_eq!(
            file_name_from_path("/data/my%20model.dfsu").as_deref(),
            Some("my model.dfsu")
        );
        assert_eq!(file_name_from_path("/data/").as_deref(), None);
        assert_eq!(file_name_from_path("/").as_deref(), None);
        assert_eq!(file_name_from_path("/a%2F..").as_deref(), None);
        assert_eq!(file_name_from_path("/a%0Ab").as_deref(), Some("ab"));
        let long = format!("/{}", "é".repeat(200));
        assert_eq!(file_name_from_path(&long).unwrap().len(), 254);
    }

    #[test]
    fn content_types_are_passed_on_when_sane() {
        assert_eq!(
            clean_content_type(" application/x-netcdf ").as_deref(),
            Some("application/x-netcdf")
        );
        assert_eq!(clean_content_type(""), None);
        assert_eq!(clean_content_type(&"a".repeat(256)), None);
    }

    #[tokio::test]
    async fn the_sink_refuses_bytes_past_the_limit_and_reports_progress() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let reports = std::sync::Mutex::new(Vec::new());
        let progress = |done: u64, total: Option<u64>| reports.lock().unwrap().push((done, total));
        let file = File::create(&path).await.unwrap();
        let mut sink = FileSink::new(file, 10, &progress);
        assert!(matches!(
            sink.announce_size(Some(11)),
            Err(FetchError::TooLarge { limit_bytes: 10 })
        ));
        sink.announce_size(Some(10)).unwrap();
        sink.write(b"12345").await.unwrap();
        sink.write(b"67890").await.unwrap();
        assert!(matches!(
            sink.write(b"x").await,
            Err(FetchError::TooLarge { limit_bytes: 10 })
        ));
        assert_eq!(sink.finish().await.unwrap(), 10);
        assert_eq!(std::fs::read(&path).unwrap(), b"1234567890");
        assert_eq!(
            *reports.lock().unwrap(),
            vec![(0, Some(10)), (10, Some(10))]
        );
    }
}
