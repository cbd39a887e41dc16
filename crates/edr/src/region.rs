//! A region of a query (`area`'s polygons, `cube`'s box) in the dataset's own coordinates, and
//! the grid cells or mesh elements it holds: those whose centre is inside it or on its edge,
//! as MIKE IO's `Dataset.sel(area=...)` takes the elements whose centres are in the area.

use crate::dataset::{Dataset, Space};
use crate::error::{EdrError, EdrResult};

/// A ring of positions; the last may repeat the first.
pub type Ring = Vec<(f64, f64)>;

/// Polygons (an exterior ring, then holes), in the dataset's own coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    polygons: Vec<Vec<Ring>>,
    /// Per polygon: its box, to skip what cannot be inside.
    boxes: Vec<[f64; 4]>,
}

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
            .map(|polygon| {
                polygon.first().map_or([f64::NAN; 4], |exterior| {
                    exterior.iter().fold(
                        [
                            f64::INFINITY,
                            f64::INFINITY,
                            f64::NEG_INFINITY,
                            f64::NEG_INFINITY,
                        ],
                        |[x0, y0, x1, y1], (x, y)| [x0.min(*x), y0.min(*y), x1.max(*x), y1.max(*y)],
                    )
                })
            })
            .collect();
        Self { polygons, boxes }
    }

    /// How many polygons it has.
    pub fn len(&self) -> usize {
        self.polygons.len()
    }

    /// Whether it has no polygon.
    pub fn is_empty(&self) -> bool {
        self.polygons.is_empty()
    }

    /// The box of every polygon: `[min_x, min_y, max_x, max_y]`.
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

    /// Whether polygon `polygon` holds `(x, y)`: inside its exterior or on its edge, and not
    /// strictly inside one of its holes.
    pub fn polygon_holds(&self, polygon: usize, x: f64, y: f64) -> bool {
        let (Some(rings), Some([x0, y0, x1, y1])) =
            (self.polygons.get(polygon), self.boxes.get(polygon))
        else {
            return false;
        };
        if !(x >= *x0 && x <= *x1 && y >= *y0 && y <= *y1) {
            return false;
        }
        let mut rings = rings.iter();
        let Some(exterior) = rings.next() else {
            return false;
        };
        if side(exterior, x, y) == Side::Outside {
            return false;
        }
        rings.all(|hole| side(hole, x, y) != Side::Inside)
    }

    /// The polygons holding `(x, y)`.
    pub fn holders(&self, x: f64, y: f64) -> Vec<usize> {
        (0..self.polygons.len())
            .filter(|&polygon| self.polygon_holds(polygon, x, y))
            .collect()
    }
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
