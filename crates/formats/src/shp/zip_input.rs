//! A zipped Shapefile: the archive must hold exactly one `.shp` (any case, possibly in a
//! folder); its parts are found beside it by stem. Each part is streamed from its own handle
//! on the archive, decompressing as it goes, so nothing is extracted.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use zip::ZipArchive;

use crate::catalogue::ReadContext;
use crate::error::{FormatError, FormatResult};
use crate::model::DatasetSink;
use crate::side_files::read_small;

use super::FORMAT;
use super::reader::{SideFiles, read_streams};

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
    let shp = archive
        .by_name(&shp_name)
        .map_err(|error| zip_error(&shp_name, error))?;
    let mut total = shp.size();
    let mut dbf_archive = open(input)?;
    let dbf = match companion(&names, &shp_name, "dbf") {
        Some(name) => {
            let entry = dbf_archive
                .by_name(name)
                .map_err(|error| zip_error(name, error))?;
            total = total.saturating_add(entry.size());
            Some(BufReader::with_capacity(256 * 1024, entry))
        }
        None => None,
    };
    context.progress.set_total(total);
    let shp = BufReader::with_capacity(256 * 1024, shp);
    read_streams(shp, dbf, &side, srid, context, sink)
}
