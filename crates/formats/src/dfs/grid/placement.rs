//! Where a DFS grid lies: between the file's projection record (origin in geographic
//! longitude/latitude, orientation from true north), its axis (offsets and spacings in grid
//! units) and the model's [`GeoTransform`] (outer corner of the top-left cell, rows top to
//! bottom).
//!
//! MIKE stores the origin of a grid in a projected system as geographic longitude/latitude and
//! its orientation relative to true north; MIKE IO rebuilds the projected origin with DHI's
//! cartography library and turns the orientation into one relative to grid north (the two
//! differ by the meridian convergence at the origin). Here proj4rs does the same: the origin
//! is projected from the geographic system on the projection's own datum, and the convergence
//! is measured as the angle of a short step north in projected coordinates. LONG/LAT and
//! NON-UTM origins are coordinates already and are taken as they are.
//!
//! Orientation is clockwise from north, as in MIKE: the grid's x axis points along
//! (cos θ, −sin θ) and its y axis (rows, south to north in the file) along (sin θ, cos θ).

use crate::crs::{self, Crs, CrsTransform, Projection};
use crate::error::{FormatError, FormatResult};
use crate::model::GeoTransform;

use super::FORMAT;

/// How the origin of a DFS2 grid is read (the reader's `CoordinateInterpretationType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpretation {
    /// The origin (plus the axis offsets) is the centre of the first cell, as MIKE and MIKE
    /// IO read it.
    #[default]
    CenterOfCell,
    /// The origin is the outer lower-left corner of the first cell.
    BottomLeftBorder,
    /// The origin and the last cell's point are the borders of the area: the first cell's
    /// outer corner is at the origin and the last cell's outer corner at origin + (n − 1) ×
    /// spacing, so cells are (n − 1) / n of the stored spacing (the stored spacing along an axis
    /// of one cell).
    Borders,
}

impl Interpretation {
    /// The interpretation a parameter value names (validated against the allowed values).
    pub fn from_name(name: &str) -> FormatResult<Self> {
        match name {
            _ if name.eq_ignore_ascii_case("CenterOfCell") => Ok(Self::CenterOfCell),
            _ if name.eq_ignore_ascii_case("BottomLeftBorder") => Ok(Self::BottomLeftBorder),
            _ if name.eq_ignore_ascii_case("Borders") => Ok(Self::Borders),
            _ => Err(FormatError::parameter(
                super::COORDINATE_INTERPRETATION,
                format!("{name:?} is not one of CenterOfCell, BottomLeftBorder, Borders"),
            )),
        }
    }
}

/// A grid in DFS terms, in map coordinates: the centre of the first cell as the file stores
/// it (lowest row), the orientation clockwise from grid north, the cell sizes, and whether
/// the model's rows run the other way (north-up model rows are the file's rows reversed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Centre of the file's first cell (x, y).
    pub centre: (f64, f64),
    /// Orientation in degrees, clockwise from the projection's north.
    pub orientation: f64,
    /// Cell size along the grid's x axis.
    pub dx: f64,
    /// Cell size along the grid's y axis.
    pub dy: f64,
    /// True when model row 0 is the file's last row.
    pub flipped: bool,
}

fn axes(orientation: f64) -> ((f64, f64), (f64, f64)) {
    let (sin, cos) = orientation.to_radians().sin_cos();
    ((cos, -sin), (sin, cos))
}

impl Placement {
    /// The model transform of a grid of `rows` rows placed like this.
    pub fn transform(&self, rows: usize) -> GeoTransform {
        let (ex, ey) = axes(self.orientation);
        let corner_x = self.centre.0 - 0.5 * self.dx * ex.0 - 0.5 * self.dy * ey.0;
        let corner_y = self.centre.1 - 0.5 * self.dx * ex.1 - 0.5 * self.dy * ey.1;
        let (origin_x, origin_y, down) = if self.flipped {
            let height = rows as f64 * self.dy;
            (
                corner_x + height * ey.0,
                corner_y + height * ey.1,
                (-self.dy * ey.0, -self.dy * ey.1),
            )
        } else {
            (corner_x, corner_y, (self.dy * ey.0, self.dy * ey.1))
        };
        let mut transform = GeoTransform {
            origin_x,
            pixel_width: self.dx * ex.0,
            row_rotation: down.0,
            origin_y,
            column_rotation: self.dx * ex.1,
            pixel_height: down.1,
        };
        if self.orientation == 0.0 {
            // sin(0) is exactly 0, but keep -0.0 out of a north-up transform.
            transform.row_rotation = 0.0;
            transform.column_rotation = 0.0;
        }
        transform
    }

    /// The placement of a model grid: its transform must be orthogonal (rotation and an
    /// optional mirror of the rows, no shear).
    pub fn of_transform(transform: &GeoTransform, rows: usize) -> FormatResult<Self> {
        let across = (transform.pixel_width, transform.column_rotation);
        let down = (transform.row_rotation, transform.pixel_height);
        let dx = across.0.hypot(across.1);
        let dy = down.0.hypot(down.1);
        let dot = across.0 * down.0 + across.1 * down.1;
        if !(dx > 0.0 && dy > 0.0 && dx.is_finite() && dy.is_finite()) {
            return Err(FormatError::Incompatible {
                data: "grid",
                format: FORMAT,
                message: format!("the cell size {dx} x {dy} is not positive and finite"),
            });
        }
        if dot.abs() > 1e-9 * dx * dy {
            return Err(FormatError::Incompatible {
                data: "grid",
                format: FORMAT,
                message: "a sheared grid (rows not at right angles to columns) cannot be \
                          written: DFS grids are rotated rectangles"
                    .to_owned(),
            });
        }
        // x axis along a row; the file's y axis is "down" reversed unless the model's rows
        // already run from the x axis counter-clockwise (south-up).
        let cross = across.0 * down.1 - across.1 * down.0;
        let flipped = cross < 0.0;
        let orientation = (-across.1).atan2(across.0).to_degrees();
        let orientation = if orientation.abs() < 1e-12 {
            0.0
        } else {
            orientation
        };
        let first_row = if flipped { rows as f64 - 0.5 } else { 0.5 };
        let centre = transform.apply(0.5, first_row);
        Ok(Self {
            centre,
            orientation,
            dx,
            dy,
            flipped,
        })
    }
}

/// What the projection string stands for, for placing a grid.
pub enum Georeference {
    /// The origin is a position in the grid's own coordinates (LONG/LAT, NON-UTM, a
    /// geographic WKT): no projection math.
    Direct,
    /// The origin is geographic and the grid's coordinates are projected.
    Projected(Box<CrsTransform>),
}

/// How a file's projection string places the grid. `crs` is what the string resolves to
/// (with `SRID` applied); a name that is neither MIKE's LONG/LAT or NON-UTM nor resolvable is
/// an error ending with `hint` (what the user can do).
pub fn georeference(projection: &str, crs: Option<&Crs>, hint: &str) -> FormatResult<Georeference> {
    let name = projection.trim();
    let Some(crs) = crs else {
        return Ok(Georeference::Direct);
    };
    if name.eq_ignore_ascii_case(crs::MIKE_NON_UTM) && matches!(crs, Crs::Named(_)) {
        return Ok(Georeference::Direct);
    }
    let projected = Projection::of(crs).map_err(|error| {
        FormatError::unsupported(
            FORMAT,
            format!(
                "the grid's projection {:?} cannot be placed: {error}; {hint}",
                shorten(name)
            ),
        )
    })?;
    if projected.is_geographic() {
        return Ok(Georeference::Direct);
    }
    let (proj4, _) = crs::proj4_of(crs)?;
    let geographic = Projection::of(&Crs::Proj4(geographic_of(&proj4)))?;
    Ok(Georeference::Projected(Box::new(CrsTransform::new(
        geographic, projected,
    ))))
}

fn shorten(text: &str) -> String {
    text.chars().take(60).collect()
}

/// The geographic system on the datum of a proj4 definition: MIKE's origin longitude and
/// latitude are on the projection's own ellipsoid.
fn geographic_of(proj4: &str) -> String {
    let mut out = String::from("+proj=longlat");
    for token in proj4.split_whitespace() {
        let key = token.split('=').next().unwrap_or_default();
        if matches!(
            key,
            "+ellps" | "+datum" | "+towgs84" | "+a" | "+b" | "+rf" | "+f" | "+pm" | "+nadgrids"
        ) {
            out.push(' ');
            out.push_str(token);
        }
    }
    if !out.contains("+ellps") && !out.contains("+datum") && !out.contains("+a=") {
        out.push_str(" +datum=WGS84");
    }
    out.push_str(" +no_defs");
    out
}

/// The angle in degrees, clockwise, from grid north to true north at `(longitude, latitude)`
/// (the meridian convergence as a rotation to add to a true-north orientation).
fn convergence(transform: &CrsTransform, longitude: f64, latitude: f64) -> FormatResult<f64> {
    let step = 1e-3;
    let (south_x, south_y) = transform.apply(longitude, latitude - step)?;
    let (north_x, north_y) = transform.apply(longitude, latitude + step)?;
    Ok((north_x - south_x).atan2(north_y - south_y).to_degrees())
}

/// The origin in map coordinates and the orientation from grid north, from the projection
/// record.
pub fn map_origin(
    georeference: &Georeference,
    longitude: f64,
    latitude: f64,
    orientation: f64,
) -> FormatResult<((f64, f64), f64)> {
    match georeference {
        Georeference::Direct => Ok(((longitude, latitude), orientation)),
        Georeference::Projected(transform) => {
            let exact = transform.apply(longitude, latitude)?;
            let convergence = convergence(transform, longitude, latitude)?;
            Ok((
                round_trip_origin(transform, exact, longitude, latitude),
                orientation + convergence,
            ))
        }
    }
}

/// `origin` rounded to the micrometre when the rounded position projects back to exactly the
/// stored longitude and latitude, else as it is. A grid Basin wrote from round coordinates
/// (500000, 6000020) then reads back at them, not 3e-10 m off (the projection there and back
/// is not exact); a file from another writer, whose longitude and latitude came from another
/// library's projection, keeps the position that gives back its bytes.
fn round_trip_origin(
    transform: &CrsTransform,
    origin: (f64, f64),
    longitude: f64,
    latitude: f64,
) -> (f64, f64) {
    let micrometres = |value: f64| (value * 1e6).round() / 1e6;
    let rounded = (micrometres(origin.0), micrometres(origin.1));
    match transform.inverse().try_apply(rounded.0, rounded.1) {
        Some((back_longitude, back_latitude))
            if back_longitude.to_bits() == longitude.to_bits()
                && back_latitude.to_bits() == latitude.to_bits() =>
        {
            rounded
        }
        _ => origin,
    }
}

/// The projection record's longitude, latitude and true-north orientation of a map origin
/// and a grid-north orientation: the inverse of [`map_origin`].
pub fn geographic_origin(
    georeference: &Georeference,
    origin: (f64, f64),
    orientation: f64,
) -> FormatResult<(f64, f64, f64)> {
    match georeference {
        Georeference::Direct => Ok((origin.0, origin.1, orientation)),
        Georeference::Projected(transform) => {
            let (longitude, latitude) = transform.inverse().apply(origin.0, origin.1)?;
            let convergence = convergence(transform, longitude, latitude)?;
            Ok((longitude, latitude, orientation - convergence))
        }
    }
}

/// The map position of a point `offset` grid units from `origin` along axes rotated by
/// `orientation`.
pub fn offset(origin: (f64, f64), orientation: f64, offset: (f64, f64)) -> (f64, f64) {
    let (ex, ey) = axes(orientation);
    (
        origin.0 + offset.0 * ex.0 + offset.1 * ey.0,
        origin.1 + offset.0 * ex.1 + offset.1 * ey.1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn north_up_transform_flips_rows_and_back() {
        let placement = Placement {
            centre: (100.0, 200.0),
            orientation: 0.0,
            dx: 10.0,
            dy: 20.0,
            flipped: true,
        };
        let transform = placement.transform(3);
        assert_eq!(transform.to_gdal(), [95.0, 10.0, 0.0, 250.0, 0.0, -20.0]);
        assert_eq!(Placement::of_transform(&transform, 3).unwrap(), placement);
    }

    #[test]
    fn rotated_transform_round_trips() {
        let placement = Placement {
            centre: (400000.0, 6000000.0),
            orientation: 30.0,
            dx: 50.0,
            dy: 50.0,
            flipped: true,
        };
        let transform = placement.transform(4);
        let back = Placement::of_transform(&transform, 4).unwrap();
        assert!((back.orientation - 30.0).abs() < 1e-12);
        assert!((back.centre.0 - 400000.0).abs() < 1e-6);
        assert!((back.centre.1 - 6000000.0).abs() < 1e-6);
        assert!(back.flipped);
        // The second cell of the first file row is 50 m along (cos 30, -sin 30).
        let (x, y) = transform.apply(1.5, 3.5);
        assert!((x - 400043.30127018922).abs() < 1e-6);
        assert!((y - 5999975.0).abs() < 1e-6);
    }

    #[test]
    fn south_up_rows_are_not_flipped_and_shear_is_refused() {
        let transform = GeoTransform::from_gdal([0.0, 1.0, 0.0, 0.0, 0.0, 2.0]);
        let placement = Placement::of_transform(&transform, 5).unwrap();
        assert!(!placement.flipped);
        assert_eq!(placement.centre, (0.5, 1.0));
        let sheared = GeoTransform::from_gdal([0.0, 1.0, 0.5, 0.0, 0.0, -1.0]);
        assert!(Placement::of_transform(&sheared, 5).is_err());
    }

    #[test]
    fn interpretation_names_are_case_insensitive() {
        assert_eq!(
            Interpretation::from_name("borders").unwrap(),
            Interpretation::Borders
        );
        assert!(Interpretation::from_name("Corner").is_err());
    }

    #[test]
    fn geographic_of_keeps_the_datum() {
        assert_eq!(
            geographic_of("+proj=utm +zone=32 +datum=WGS84 +units=m +no_defs"),
            "+proj=longlat +datum=WGS84 +no_defs"
        );
        assert_eq!(
            geographic_of("+proj=tmerc +lat_0=0 +ellps=intl +towgs84=1,2,3 +units=m"),
            "+proj=longlat +ellps=intl +towgs84=1,2,3 +no_defs"
        );
    }
}
