//! World files (`.tfw`, `.tifw`, `.wld`): the placement of a TIFF that carries none itself,
//! as scanners, older GIS and `gdal_translate -co TFW=YES -co PROFILE=BASELINE` write it.
//! GDAL reads one when the file has no georeferencing of its own (its default
//! `GDAL_GEOREF_SOURCES`), and so does Basin.
//!
//! Six numbers, one per line: the cell width (A), the row and column rotations (D, B), the
//! cell height (E, negative for north-up), and the centre of the upper-left cell (C, F).

use std::path::{Path, PathBuf};

use super::FORMAT;
use crate::error::{FormatError, FormatResult};
use crate::model::GeoTransform;
use crate::side_files;

/// The world file beside `tiff`, in GDAL's order: `.tfw` (first and last letter of the
/// extension, then `w`), `.tifw` (the extension and `w`), `.wld`; any case.
pub(crate) fn find(tiff: &Path) -> Option<PathBuf> {
    let extension = tiff.extension()?.to_str()?.to_ascii_lowercase();
    let short = format!(
        "{}{}w",
        extension.chars().next()?,
        extension.chars().last()?
    );
    [short, format!("{extension}w"), "wld".to_owned()]
        .iter()
        .find_map(|candidate| side_files::sibling(tiff, candidate))
}

/// The transform a world file states, as GDAL computes it: the origin is the corner of the
/// upper-left cell, half a cell from the centre the file names.
pub(crate) fn read(path: &Path) -> FormatResult<GeoTransform> {
    let text = side_files::read_text(path)?.unwrap_or_default();
    parse(&text).map_err(|message| {
        FormatError::invalid(FORMAT, format!("world file {}", path.display()), message)
    })
}

fn parse(text: &str) -> Result<GeoTransform, String> {
    let mut numbers = [0.0f64; 6];
    let mut tokens = text.split_whitespace();
    for (index, slot) in numbers.iter_mut().enumerate() {
        let token = tokens
            .next()
            .ok_or_else(|| format!("holds {index} numbers; a world file has six"))?;
        *slot = token
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite())
            .ok_or_else(|| format!("line {}: {token:?} is not a number", index + 1))?;
    }
    let [a, d, b, e, c, f] = numbers;
    if a == 0.0 && b == 0.0 || d == 0.0 && e == 0.0 {
        return Err("the cell size is 0".to_owned());
    }
    Ok(GeoTransform {
        origin_x: c - 0.5 * a - 0.5 * b,
        pixel_width: a,
        row_rotation: b,
        origin_y: f - 0.5 * d - 0.5 * e,
        column_rotation: d,
        pixel_height: e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_centre_of_the_first_cell_becomes_its_corner() {
        let transform = parse("25.0\n0.0\n0.0\n-25.0\n500012.5\n6000562.5\n").unwrap();
        assert_eq!(transform.origin_x, 500_000.0);
        assert_eq!(transform.origin_y, 6_000_575.0);
        assert_eq!(transform.pixel_width, 25.0);
        assert_eq!(transform.pixel_height, -25.0);
        let rotated = parse("2 0.5 0.25 -2 10 20").unwrap();
        assert_eq!(
            (rotated.origin_x, rotated.origin_y),
            (10.0 - 1.0 - 0.125, 20.0 - 0.25 + 1.0)
        );
        assert_eq!((rotated.row_rotation, rotated.column_rotation), (0.25, 0.5));
    }

    #[test]
    fn short_or_garbled_world_files_are_errors_naming_the_line() {
        assert!(parse("1\n0\n0\n-1\n5").unwrap_err().contains("5 numbers"));
        assert!(parse("1\n0\nx\n-1\n5\n6").unwrap_err().contains("line 3"));
        assert!(parse("1\n0\n0\n-1\n5\nnan").unwrap_err().contains("line 6"));
        assert!(parse("0\n0\n0\n-1\n5\n6").unwrap_err().contains("0"));
    }
}
