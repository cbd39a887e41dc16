//! Point transformations between two coordinate systems with proj4rs.
//!
//! proj4rs works in radians for geographic systems; the model, like every file format here,
//! stores degrees. [`CrsTransform`] converts at both ends so that callers only ever see the
//! units of their data. Heights are not transformed (proj4rs is a 2D library): z values pass
//! through unchanged.

use proj4rs::Proj;

use super::{Crs, names, wkt};
use crate::error::{FormatError, FormatResult};

/// A coordinate system ready for proj4rs.
#[derive(Debug, Clone)]
pub struct Projection {
    proj: Proj,
    geographic: bool,
    label: String,
}

impl Projection {
    /// The projection of `crs`, or an error naming what is not understood.
    pub fn of(crs: &Crs) -> FormatResult<Self> {
        let (proj4, label) = proj4_of(crs)?;
        Self::from_proj4(&proj4, label)
    }

    /// The projection of EPSG `code`.
    pub fn epsg(code: u32) -> FormatResult<Self> {
        Self::of(&Crs::Epsg(code))
    }

    fn from_proj4(proj4: &str, label: String) -> FormatResult<Self> {
        let proj = Proj::from_proj_string(proj4)
            .map_err(|error| FormatError::Crs(format!("{label} ({proj4}): {error}")))?;
        Ok(Self {
            geographic: proj.is_latlong(),
            proj,
            label,
        })
    }

    /// True for longitude/latitude systems (coordinates in degrees).
    pub fn is_geographic(&self) -> bool {
        self.geographic
    }

    /// How messages name this system, e.g. `EPSG:32632`.
    pub fn label(&self) -> &str {
        &self.label
    }
}

/// The proj4 definition of `crs` and a label for messages.
pub fn proj4_of(crs: &Crs) -> FormatResult<(String, String)> {
    if let Some(code) = super::resolve_epsg(crs) {
        let def = super::definition(code).ok_or_else(|| unknown_code(code))?;
        return Ok((def.proj4.to_owned(), format!("EPSG:{code}")));
    }
    match crs {
        Crs::Proj4(proj4) => Ok((proj4.clone(), "the proj4 definition".to_owned())),
        Crs::Wkt(text) => {
            let node = wkt::parse(text).ok_or_else(|| {
                FormatError::Crs(format!("{:?} is not a WKT definition", shorten(text)))
            })?;
            let proj4 = wkt::to_proj4(&node).ok_or_else(|| {
                FormatError::Crs(format!(
                    "the WKT definition {:?} has no EPSG code, its name matches no EPSG name, \
                     and its projection is not one Basin can build (see docs/formats.md); \
                     give the input's EPSG code (inputSrid / --input-srid)",
                    node.name().unwrap_or_default()
                ))
            })?;
            Ok((proj4, format!("WKT {:?}", node.name().unwrap_or_default())))
        }
        Crs::Named(name) => Err(FormatError::Crs(format!(
            "the coordinate system {name:?} is not one Basin knows{}; give the input's EPSG \
             code (inputSrid / --input-srid)",
            if names::mike_code(name).is_none() && name.eq_ignore_ascii_case("NON-UTM") {
                " (MIKE's NON-UTM means local coordinates)"
            } else {
                ""
            }
        ))),
        Crs::Epsg(code) => Err(unknown_code(*code)),
    }
}

/// The error for an EPSG code the registry lacks.
pub(crate) fn unknown_code(code: u32) -> FormatError {
    FormatError::Crs(format!(
        "unknown SRID {code}: EPSG:{code} is not in Basin's EPSG registry"
    ))
}

fn shorten(text: &str) -> String {
    text.chars().take(60).collect()
}

/// Transforms points from one coordinate system to another.
#[derive(Debug, Clone)]
pub struct CrsTransform {
    from: Projection,
    to: Projection,
    identity: bool,
}

impl CrsTransform {
    /// A transformation between two systems.
    pub fn new(from: Projection, to: Projection) -> Self {
        let identity = from.label == to.label && from.label.starts_with("EPSG:");
        Self { from, to, identity }
    }

    /// The source system.
    pub fn from(&self) -> &Projection {
        &self.from
    }

    /// The target system.
    pub fn to(&self) -> &Projection {
        &self.to
    }

    /// The inverse transformation.
    pub fn inverse(&self) -> Self {
        Self {
            from: self.to.clone(),
            to: self.from.clone(),
            identity: self.identity,
        }
    }

    /// Transforms one position (degrees for geographic systems). Fails for positions outside
    /// the domain of either projection, naming the position.
    pub fn apply(&self, x: f64, y: f64) -> FormatResult<(f64, f64)> {
        self.try_apply(x, y).ok_or_else(|| {
            FormatError::Crs(format!(
                "the position ({x}, {y}) cannot be transformed from {} to {}",
                self.from.label, self.to.label
            ))
        })
    }

    /// Like [`CrsTransform::apply`], `None` on failure (for the grid warp, where a failed
    /// position is simply outside).
    pub fn try_apply(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        if self.identity {
            return Some((x, y));
        }
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        let mut point = if self.from.geographic {
            (x.to_radians(), y.to_radians(), 0.0)
        } else {
            (x, y, 0.0)
        };
        proj4rs::transform::transform(&self.from.proj, &self.to.proj, &mut point).ok()?;
        let (mut out_x, mut out_y, _) = point;
        if self.to.geographic {
            out_x = out_x.to_degrees();
            out_y = out_y.to_degrees();
        }
        (out_x.is_finite() && out_y.is_finite()).then_some((out_x, out_y))
    }
}
