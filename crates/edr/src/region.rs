//! A region of a query (`area`'s polygons, `cube`'s box) in the dataset's own coordinates, and
//! the grid cells or mesh elements it holds: those whose centre is inside it or on its edge,
//! as MIKE IO's `Dataset.sel(area=...)` takes the elements whose centres are in the area.

use crate::dataset::{Dataset, Space};
use crate::error::{EdrError, EdrResult};

/// A ring of positions; the last may repeat the first.
pub type Ring = Vec<(f64, f64)>;

/// The region of a query, in the dataset's own coordinates: polygons (an exterior ring, then
/// holes), or the places within a distance of points (`radius`) or of a line (`corridor`).
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    parts: Parts,
    /// Per part: its box, to skip what cannot be inside.
    boxes: Vec<[f64; 4]>,
}

#[derive(Debug, Clone, PartialEq)]
enum Parts {
    Polygons(Vec<Vec<Ring>>),
    /// Each line (or single point) with the distance around it, measured as `metric` says.
    Near {
        lines: Vec<Ring>,
        within: f64,
        metric: Metric,
    },
}

/// How distances are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Straight lines in the dataset's own (projected) units.
    Planar,
    /// Great circles on the mean Earth sphere, in metres, for longitude and latitude data.
    Sphere,
}

/// The mean radius of the Earth (IUGG), in metres.
const EARTH_RADIUS: f64 = 6_371_008.8;

/// Where a point is with regard to a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Inside,
    Outside,
    OnEdge,
}

impl Region {
    /// The region of `polygons` (each with at least its exterior ring).
    pub fn new(polygons: Vec<Vec<Ring>>) -> Self {
        let boxes = polygons
            .iter()
            .map(|polygon| polygon.first().map_or([f64::NAN; 4], |ring| box_of(ring)))
            .collect();
        Self {
            parts: Parts::Polygons(polygons),
            boxes,
        }
    }

    /// The places within `within` of each of `lines` (a line of one position is a point):
    /// `within` in the dataset's units for [`Metric::Planar`], in metres for
    /// [`Metric::Sphere`].
    pub fn near(lines: Vec<Ring>, within: f64, metric: Metric) -> Self {
        let boxes = lines
            .iter()
            .map(|line| {
                let [x0, y0, x1, y1] = box_of(line);
                match metric {
                    Metric::Planar => [x0 - within, y0 - within, x1 + within, y1 + within],
                    Metric::Sphere => {
                        let degrees = (within / EARTH_RADIUS).to_degrees();
                        let widest = y0.abs().max(y1.abs()).min(89.9).to_radians().cos();
                        let across = (degrees / widest).min(360.0);
                        [x0 - across, y0 - degrees, x1 + across, y1 + degrees]
                    }
                }
            })
            .collect();
        Self {
            parts: Parts::Near {
                lines,
                within,
                metric,
            },
            boxes,
        }
    }

    /// How many parts (polygons, points or lines) it has.
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// Whether it has no part.
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// The box of every part: `[min_x, min_y, max_x, max_y]`.
    pub fn bounds(&self) -> [f64; 4] {
        self.boxes.iter().fold(
            [
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ],
            |[x0, y0, x1, y1], [a, b, c, d]| [x0.min(*a), y0.min(*b), x1.max(*c), y1.max(*d)],
        )
    }

    /// Whether part `part` holds `(x, y)`. A polygon holds what is inside its exterior or on
    /// its edge and not strictly inside one of its holes; a point or line what is within the
    /// distance of it (the distance itself included).
    pub fn polygon_holds(&self, part: usize, x: f64, y: f64) -> bool {
        let Some([x0, y0, x1, y1]) = self.boxes.get(part) else {
            return false;
        };
        if !(x >= *x0 && x <= *x1 && y >= *y0 && y <= *y1) {
            return false;
        }
        match &self.parts {
            Parts::Polygons(polygons) => {
                let Some(rings) = polygons.get(part) else {
                    return false;
                };
                let mut rings = rings.iter();
                let Some(exterior) = rings.next() else {
                    return false;
                };
                if side(exterior, x, y) == Side::Outside {
                    return false;
                }
                rings.all(|hole| side(hole, x, y) != Side::Inside)
            }
            Parts::Near {
                lines,
                within,
                metric,
            } => lines
                .get(part)
                .is_some_and(|line| distance_to_line(line, (x, y), *metric) <= *within),
        }
    }

    /// The parts holding `(x, y)`.
    pub fn holders(&self, x: f64, y: f64) -> Vec<usize> {
        (0..self.len())
            .filter(|&part| self.polygon_holds(part, x, y))
            .collect()
    }
}

fn box_of(ring: &[(f64, f64)]) -> [f64; 4] {
    ring.iter().fold(
        [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ],
        |[x0, y0, x1, y1], (x, y)| [x0.min(*x), y0.min(*y), x1.max(*x), y1.max(*y)],
    )
}

/// The distance from `point` to the nearest place of `line` (a point when it has one
/// position).
fn distance_to_line(line: &[(f64, f64)], point: (f64, f64), metric: Metric) -> f64 {
    match line {
        [] => f64::INFINITY,
        [only] => distance(*only, point, metric),
        _ => line
            .windows(2)
            .map(|pair| distance_to_segment(pair[0], pair[1], point, metric))
            .fold(f64::INFINITY, f64::min),
    }
}

fn distance(a: (f64, f64), b: (f64, f64), metric: Metric) -> f64 {
    match metric {
        Metric::Planar => (a.0 - b.0).hypot(a.1 - b.1),
        Metric::Sphere => {
            let (lat_a, lat_b) = (a.1.to_radians(), b.1.to_radians());
            let half_lat = (lat_b - lat_a) / 2.0;
            let half_lon = (b.0 - a.0).to_radians() / 2.0;
            let h = half_lat.sin().powi(2) + lat_a.cos() * lat_b.cos() * half_lon.sin().powi(2);
            2.0 * EARTH_RADIUS * h.sqrt().min(1.0).asin()
        }
    }
}

/// The distance to a segment: the nearest point of the segment is found in the plane (in
/// longitude and latitude scaled by the cosine of the latitude for the sphere, which is exact
/// enough over the lengths of a corridor), then measured as `metric` says.
fn distance_to_segment(a: (f64, f64), b: (f64, f64), p: (f64, f64), metric: Metric) -> f64 {
    let scale = match metric {
        Metric::Planar => 1.0,
        Metric::Sphere => p.1.to_radians().cos().max(1e-12),
    };
    let (ax, bx, px) = (a.0 * scale, b.0 * scale, p.0 * scale);
    let (dx, dy) = (bx - ax, b.1 - a.1);
    let length = dx * dx + dy * dy;
    let t = if length > 0.0 {
        (((px - ax) * dx + (p.1 - a.1) * dy) / length).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let nearest = (a.0 + t * (b.0 - a.0), a.1 + t * dy);
    distance(nearest, p, metric)
}

/// Even-odd test with the edges themselves told apart.
fn side(ring: &[(f64, f64)], x: f64, y: f64) -> Side {
    let mut inside = false;
    let count = ring.len();
    for index in 0..count {
        let (ax, ay) = ring[index];
        let (bx, by) = ring[(index + 1) % count];
        let cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax);
        if cross == 0.0 && x >= ax.min(bx) && x <= ax.max(bx) && y >= ay.min(by) && y <= ay.max(by)
        {
            return Side::OnEdge;
        }
        if (ay > y) != (by > y) {
            let crossing = ax + (y - ay) * (bx - ax) / (by - ay);
            if x < crossing {
                inside = !inside;
            }
        }
    }
    if inside { Side::Inside } else { Side::Outside }
}

/// A cell or element a region holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// Its centre, in the dataset's own coordinates.
    pub centre: (f64, f64),
    /// Its horizontal area (map units squared).
    pub area: f64,
    /// Its column and row, for a grid cell.
    pub cell: Option<(usize, usize)>,
    /// For a mesh element: the element of the geometry.
    pub element: Option<usize>,
    /// The polygons of the region holding it.
    pub polygons: Vec<usize>,
}

/// The cells or elements of `dataset` that `region` holds, in the data's order. More than
/// `cells_max` candidates (a grid window too large to look through) is
/// [`EdrError::TooLarge`].
pub fn held(dataset: &Dataset, region: &Region, cells_max: usize) -> EdrResult<Vec<Held>> {
    match &dataset.space {
        Space::Series => Err(EdrError::NotSupported(
            "a time series has no space to take an area of; ask its locations".to_owned(),
        )),
        Space::Mesh { surface, .. } => Ok(surface
            .centres
            .iter()
            .zip(&surface.areas)
            .zip(&surface.elements)
            .filter_map(|((&(x, y), &area), &element)| {
                let polygons = region.holders(x, y);
                (!polygons.is_empty()).then_some(Held {
                    centre: (x, y),
                    area,
                    cell: None,
                    element: Some(element),
                    polygons,
                })
            })
            .collect()),
        Space::Grid(grid) => held_cells(grid, region, cells_max),
    }
}

fn held_cells(
    grid: &basin_formats::model::GridGeometry,
    region: &Region,
    cells_max: usize,
) -> EdrResult<Vec<Held>> {
    let transform = grid.transform;
    let determinant = transform.pixel_width * transform.pixel_height
        - transform.row_rotation * transform.column_rotation;
    if determinant == 0.0 || !determinant.is_finite() {
        return Ok(Vec::new());
    }
    // The window of columns and rows the region's box covers, from its corners.
    let [x0, y0, x1, y1] = region.bounds();
    let fractional = |x: f64, y: f64| {
        let (dx, dy) = (x - transform.origin_x, y - transform.origin_y);
        (
            (dx * transform.pixel_height - dy * transform.row_rotation) / determinant,
            (dy * transform.pixel_width - dx * transform.column_rotation) / determinant,
        )
    };
    let corners = [
        fractional(x0, y0),
        fractional(x1, y0),
        fractional(x0, y1),
        fractional(x1, y1),
    ];
    let low = |values: &mut dyn Iterator<Item = f64>| values.fold(f64::INFINITY, f64::min);
    let high = |values: &mut dyn Iterator<Item = f64>| values.fold(f64::NEG_INFINITY, f64::max);
    let (columns, rows) = (grid.columns as f64, grid.rows as f64);
    let first_column = low(&mut corners.iter().map(|c| c.0)).floor().max(0.0);
    let last_column = high(&mut corners.iter().map(|c| c.0)).ceil().min(columns);
    let first_row = low(&mut corners.iter().map(|c| c.1)).floor().max(0.0);
    let last_row = high(&mut corners.iter().map(|c| c.1)).ceil().min(rows);
    if !(first_column < last_column && first_row < last_row) {
        return Ok(Vec::new());
    }
    let window = (last_column - first_column) * (last_row - first_row);
    if window > cells_max as f64 {
        return Err(EdrError::TooLarge(format!(
            "the region spans {window} cells of the grid, more than the {cells_max} one query may \
             look through; make it smaller"
        )));
    }
    let cell_area = determinant.abs();
    let mut held = Vec::new();
    for row in first_row as usize..last_row as usize {
        for column in first_column as usize..last_column as usize {
            let (x, y) = transform.apply(column as f64 + 0.5, row as f64 + 0.5);
            let polygons = region.holders(x, y);
            if !polygons.is_empty() {
                held.push(Held {
                    centre: (x, y),
                    area: cell_area,
                    cell: Some((column, row)),
                    element: None,
                    polygons,
                });
            }
        }
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x0: f64, y0: f64, size: f64) -> Ring {
        vec![
            (x0, y0),
            (x0 + size, y0),
            (x0 + size, y0 + size),
            (x0, y0 + size),
            (x0, y0),
        ]
    }

    #[test]
    fn points_inside_or_on_the_edge_are_held_and_holes_are_not() {
        let region = Region::new(vec![vec![square(0.0, 0.0, 10.0), square(4.0, 4.0, 2.0)]]);
        assert!(region.polygon_holds(0, 1.0, 1.0));
        assert!(region.polygon_holds(0, 0.0, 5.0), "on the exterior's edge");
        assert!(region.polygon_holds(0, 10.0, 10.0), "on a corner");
        assert!(!region.polygon_holds(0, 5.0, 5.0), "inside the hole");
        assert!(region.polygon_holds(0, 4.0, 5.0), "on the hole's edge");
        assert!(!region.polygon_holds(0, 11.0, 5.0));
        assert!(!region.polygon_holds(0, f64::NAN, 5.0));
        assert!(!region.polygon_holds(1, 1.0, 1.0), "no such polygon");
    }

    #[test]
    fn a_concave_polygon_is_told_apart_from_its_box() {
        // A U shape: the notch between its arms is outside.
        let u = vec![
            (0.0, 0.0),
            (3.0, 0.0),
            (3.0, 3.0),
            (2.0, 3.0),
            (2.0, 1.0),
            (1.0, 1.0),
            (1.0, 3.0),
            (0.0, 3.0),
        ];
        let region = Region::new(vec![vec![u]]);
        assert!(region.polygon_holds(0, 0.5, 2.5));
        assert!(!region.polygon_holds(0, 1.5, 2.5));
        assert!(region.polygon_holds(0, 1.5, 0.5));
    }
}
