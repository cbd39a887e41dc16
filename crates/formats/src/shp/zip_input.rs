//! A zipped Shapefile: the archive must hold exactly one `.shp` (any case, possibly in a
//! folder); its parts are found beside it by stem. Each part is streamed from its own handle
//! on the archive, decompressing as it goes, so nothing is extracted, except in one case: a
//! `.shx` that places a record before the end of the one read before it (records out of order
//! or overlapping) needs a `.shp` that can seek back, so the `.shp` is then decompressed to an
//! anonymous temporary file first.

use std::fs::File;
use std::io::{BufReader, Seek};
use std::path::Path;

use zip::ZipArchive;

use crate::catalogue::ReadContext;
use crate::error::{FormatError, FormatResult};
use crate::model::DatasetSink;
use crate::side_files::read_small;

use super::FORMAT;
use super::reader::{Forward, Seekable, ShpInput, Shx, SideFiles, read_streams, shx_is_forward};

fn open(input: &Path) -> FormatResult<ZipArchive<BufReader<File>>> {
    let file = File::open(input).map_err(|error| FormatError::read(input, error))?;
    ZipArchive::new(BufReader::with_capacity(256 * 1024, file)).map_err(|error| {
        FormatError::invalid(
            FORMAT,
            "zip archive",
            format!("not a readable zip: {error}"),
        )
    })
}

fn zip_error(name: &str, error: zip::result::ZipError) -> FormatError {
    FormatError::invalid(FORMAT, format!("zip entry {name}"), error.to_string())
}

fn has_extension(name: &str, extension: &str) -> bool {
    Path::new(name)
        .extension()
        .and_then(|found| found.to_str())
        .is_some_and(|found| found.eq_ignore_ascii_case(extension))
}

/// The entry beside `shp` (same path without extension) with `extension`, in any case.
fn companion<'a>(names: &'a [String], shp: &str, extension: &str) -> Option<&'a str> {
    let stem = Path::new(shp).with_extension("");
    names
        .iter()
        .find(|name| has_extension(name, extension) && Path::new(name).with_extension("") == stem)
        .map(String::as_str)
}

/// The one .shp entry of the archive.
fn find_shp(names: &[String]) -> FormatResult<&str> {
    let shps: Vec<&String> = names
        .iter()
        .filter(|name| has_extension(name, "shp") && !name.starts_with("__MACOSX/"))
        .collect();
    match shps.as_slice() {
        [one] => Ok(one.as_str()),
        [] => Err(FormatError::invalid(
            FORMAT,
            "zip archive",
            "the archive holds no .shp file",
        )),
        several => Err(FormatError::unsupported(
            FORMAT,
            format!(
                "the archive holds {} shapefiles ({}); zip one shapefile per file",
                several.len(),
                several
                    .iter()
                    .map(|name| name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Reads the zipped Shapefile at `input` into `sink`.
pub(crate) fn read(
    input: &Path,
    srid: Option<u32>,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let mut archive = open(input)?;
    let names: Vec<String> = archive
        .file_names()
        .filter_map(Result::ok)
        .map(|name| name.into_owned())
        .collect();
    let shp_name = find_shp(&names)?.to_owned();
    let mut side = SideFiles::default();
    for (extension, slot) in [("prj", &mut side.prj), ("cpg", &mut side.cpg)] {
        if let Some(name) = companion(&names, &shp_name, extension) {
            let entry = archive
                .by_name(name)
                .map_err(|error| zip_error(name, error))?;
            *slot = read_small(entry).map_err(|error| FormatError::read(input, error))?;
        }
    }
    let shx_name = companion(&names, &shp_name, "shx").map(str::to_owned);
    let forward = match &shx_name {
        Some(name) => {
            let entry = archive
                .by_name(name)
                .map_err(|error| zip_error(name, error))?;
            let size = entry.size();
            shx_is_forward(Shx::new(BufReader::new(entry), Some(size))?)?
        }
        None => true,
    };
    let mut shx_archive = open(input)?;
    let shx = match &shx_name {
        Some(name) => {
            let entry = shx_archive
                .by_name(name)
                .map_err(|error| zip_error(name, error))?;
            let size = entry.size();
            Some(Shx::new(BufReader::new(entry), Some(size))?)
        }
        None => None,
    };
    let mut dbf_archive = open(input)?;
    let dbf = match companion(&names, &shp_name, "dbf") {
        Some(name) => {
            let entry = dbf_archive
                .by_name(name)
                .map_err(|error| zip_error(name, error))?;
            Some(BufReader::with_capacity(256 * 1024, entry))
        }
        None => None,
    };
    let dbf_size = dbf.as_ref().map_or(0, |entry| entry.get_ref().size());
    let mut entry = archive
        .by_name(&shp_name)
        .map_err(|error| zip_error(&shp_name, error))?;
    context
        .progress
        .set_total(entry.size().saturating_add(dbf_size));
    let mut shp: Box<dyn ShpInput + '_> = if forward {
        Box::new(Forward::new(BufReader::with_capacity(256 * 1024, entry)))
    } else {
        let mut file = tempfile::tempfile().map_err(|error| FormatError::read(input, error))?;
        std::io::copy(&mut entry, &mut file).map_err(|error| FormatError::read(input, error))?;
        file.rewind()
            .map_err(|error| FormatError::read(input, error))?;
        Box::new(Seekable::new(BufReader::with_capacity(256 * 1024, file)))
    };
    read_streams(shp.as_mut(), shx, dbf, &side, srid, context, sink)
}
