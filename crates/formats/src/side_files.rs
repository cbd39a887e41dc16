//! Side files: the small files that sit beside an input and complete it (a Shapefile's .dbf,
//! .prj and .cpg, an ASCII Grid's .prj, a TIFF's world file). Several formats look for them the
//! same way, so finding and reading them lives here rather than in one of those formats.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{FormatError, FormatResult};

/// Most bytes of a text side file (.prj, .cpg, world file): each holds a few short lines;
/// more is read no further, so that a huge file cannot be buffered whole.
pub(crate) const SIDE_FILE_BYTES_MAX: u64 = 1024 * 1024;

/// The file beside `input` with the same stem and extension `extension` in any case.
pub(crate) fn sibling(input: &Path, extension: &str) -> Option<PathBuf> {
    let stem = input.file_stem()?;
    let folder = match input.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    for candidate in [extension.to_owned(), extension.to_ascii_uppercase()] {
        let path = folder.join(stem).with_extension(candidate);
        if path.is_file() {
            return Some(path);
        }
    }
    std::fs::read_dir(&folder)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_stem() == Some(stem)
                && path
                    .extension()
                    .and_then(|found| found.to_str())
                    .is_some_and(|found| found.eq_ignore_ascii_case(extension))
        })
}

/// The trimmed text of the side file at `path`, at most [`SIDE_FILE_BYTES_MAX`] bytes of it;
/// `None` when it holds only whitespace.
pub(crate) fn read_text(path: &Path) -> FormatResult<Option<String>> {
    let file = File::open(path).map_err(|source| FormatError::read(path, source))?;
    read_small(file).map_err(|source| FormatError::read(path, source))
}

/// The trimmed text of a small side file from `reader` (a file or a zip entry), at most
/// [`SIDE_FILE_BYTES_MAX`] bytes of it; `None` when it holds only whitespace.
pub(crate) fn read_small(reader: impl Read) -> std::io::Result<Option<String>> {
    let mut bytes = Vec::new();
    reader.take(SIDE_FILE_BYTES_MAX).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).trim().to_owned();
    Ok((!text.is_empty()).then_some(text))
}
