//! Where the value at a point comes from: which stored values, with which weights. Basin's
//! `method` parameter chooses, as MIKE IO does:
//!
//! - `nearest` (the default): one stored value. For a position, the grid cell or mesh element
//!   holding the point (`Dataset.sel(x=, y=)`); along a trajectory, the mesh element whose
//!   centre is nearest to the point, if the mesh holds the point (`Dfsu.extract_track`).
//! - `linear`: on a mesh, inverse distance weighting (power 2) of the five nearest element
//!   centres, the nearest alone when closer than 1e-8 (`Dataset.interp(x=, y=)`); on a grid,
//!   bilinear between the four surrounding cell centres, nothing outside the outermost centres
//!   (xarray's `interp`, which MIKE IO uses for grids). A missing value among those weighed
//!   makes the result missing, as in NumPy.

use crate::dataset::{Dataset, Location, Space};
use crate::error::{EdrError, EdrResult};

/// Element centres weighed by inverse distance interpolation.
const IDW_NEIGHBOURS: usize = 5;

/// Closer than this, the nearest centre alone gives the value.
const IDW_TOUCHING: f64 = 1e-8;

/// How a value at a point is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// The stored value of one cell or element.
    #[default]
    Nearest,
    /// Interpolated from neighbours.
    Linear,
}

impl Method {
    /// Parses `method` (`nearest` or `linear`, any case; `nearest` when absent).
    pub fn parse(text: Option<&str>) -> EdrResult<Self> {
        match text.map(|text| text.trim().to_ascii_lowercase()) {
            None => Ok(Self::Nearest),
            Some(text) if text == "nearest" => Ok(Self::Nearest),
            Some(text) if text == "linear" => Ok(Self::Linear),
            Some(text) => Err(EdrError::invalid(
                "method",
                format!("{text:?} is not a method; take nearest or linear"),
            )),
        }
    }
}

/// What a point is sampled for: the nearest value of a position is the element holding it,
/// of a trajectory the element with the nearest centre.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A `position` query.
    Position,
    /// A `trajectory` query.
    Track,
}

/// The stored values (indices within item `item`'s step) and weights giving the value at
/// `(x, y)` (the dataset's own coordinates); `None` where there is none.
pub fn weights(
    dataset: &Dataset,
    item: usize,
    (x, y): (f64, f64),
    (method, purpose): (Method, Purpose),
    layer: usize,
) -> Option<Vec<(usize, f64)>> {
    match (&dataset.space, method, purpose) {
        (Space::Series, _, _) => None,
        (Space::Grid(_), Method::Nearest, _)
        | (Space::Mesh { .. }, Method::Nearest, Purpose::Position) => {
            let location = dataset.locate(x, y)?;
            Some(vec![(
                dataset.value_index(item, location, (x, y), layer)?,
                1.0,
            )])
        }
        (Space::Mesh { index, surface, .. }, Method::Nearest, Purpose::Track) => {
            index.element_at(x, y)?;
            let (nearest, _) = *surface.nearest.nearest(x, y, 1).first()?;
            let element = *surface.elements.get(nearest)?;
            Some(vec![(
                dataset.value_index(item, Location::Element(element), (x, y), layer)?,
                1.0,
            )])
        }
        (Space::Mesh { index, surface, .. }, Method::Linear, _) => {
            index.element_at(x, y)?;
            let neighbours = surface.nearest.nearest(x, y, IDW_NEIGHBOURS);
            let weights = idw(&neighbours);
            neighbours
                .iter()
                .zip(weights)
                .map(|(&(nearest, _), weight)| {
                    let element = *surface.elements.get(nearest)?;
                    let value =
                        dataset.value_index(item, Location::Element(element), (x, y), layer)?;
                    Some((value, weight))
                })
                .collect()
        }
        (Space::Grid(grid), Method::Linear, _) => bilinear(grid, (x, y), layer),
    }
}

/// Inverse squared distance weights of `neighbours` (nearest first), normalised; the nearest
/// alone when it touches the point.
fn idw(neighbours: &[(usize, f64)]) -> Vec<f64> {
    if neighbours
        .first()
        .is_some_and(|(_, distance)| *distance < IDW_TOUCHING)
    {
        let mut weights = vec![0.0; neighbours.len()];
        if let Some(first) = weights.first_mut() {
            *first = 1.0;
        }
        return weights;
    }
    let inverse: Vec<f64> = neighbours
        .iter()
        .map(|(_, distance)| 1.0 / (distance * distance))
        .collect();
    let total: f64 = inverse.iter().sum();
    inverse.iter().map(|weight| weight / total).collect()
}

/// The four cell centres around `(x, y)` and their bilinear weights, for a grid's layer 0;
/// `None` outside the outermost centres.
fn bilinear(
    grid: &basin_formats::model::GridGeometry,
    (x, y): (f64, f64),
    layer: usize,
) -> Option<Vec<(usize, f64)>> {
    let transform = grid.transform;
    let determinant = transform.pixel_width * transform.pixel_height
        - transform.row_rotation * transform.column_rotation;
    if determinant == 0.0 || !determinant.is_finite() {
        return None;
    }
    let (dx, dy) = (x - transform.origin_x, y - transform.origin_y);
    // Fractional positions counted from the first cell's centre.
    let column = (dx * transform.pixel_height - dy * transform.row_rotation) / determinant - 0.5;
    let row = (dy * transform.pixel_width - dx * transform.column_rotation) / determinant - 0.5;
    let (last_column, last_row) = (
        grid.columns.checked_sub(1)? as f64,
        grid.rows.checked_sub(1)? as f64,
    );
    if !(column >= 0.0 && row >= 0.0 && column <= last_column && row <= last_row) {
        return None;
    }
    let c0 = column.floor().min((last_column - 1.0).max(0.0));
    let r0 = row.floor().min((last_row - 1.0).max(0.0));
    let (tx, ty) = (column - c0, row - r0);
    let (c0, r0) = (c0 as usize, r0 as usize);
    if layer >= grid.layers() {
        return None;
    }
    let c1 = (c0 + 1).min(grid.columns - 1);
    let r1 = (r0 + 1).min(grid.rows - 1);
    Some(vec![
        (grid.index(c0, r0, layer), (1.0 - tx) * (1.0 - ty)),
        (grid.index(c1, r0, layer), tx * (1.0 - ty)),
        (grid.index(c0, r1, layer), (1.0 - tx) * ty),
        (grid.index(c1, r1, layer), tx * ty),
    ])
}

/// What to read for values at points, and how to combine it: `targets` for
/// [`crate::read::Selection`] (one per stored value weighed, with only its item's index set),
/// and per point, per selected item, the targets and weights giving its value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Per target, per selected item: the value's index (only the target's own item).
    pub targets: Vec<Vec<Option<usize>>>,
    /// Per point, per selected item: `(target, weight)`; empty where there is no value.
    pub terms: Vec<Vec<Vec<(usize, f64)>>>,
}

impl Plan {
    /// The plan for `points` (in the dataset's own coordinates; `None` for a point that could
    /// not be carried there) and the selected `items`.
    pub fn new(
        dataset: &Dataset,
        items: &[usize],
        points: &[Option<(f64, f64)>],
        how: (Method, Purpose),
        layer: usize,
    ) -> Self {
        let mut plan = Self::default();
        for point in points {
            let mut per_item = Vec::with_capacity(items.len());
            for (slot, &item) in items.iter().enumerate() {
                let weighed = point
                    .and_then(|point| weights(dataset, item, point, how, layer))
                    .unwrap_or_default();
                let mut terms = Vec::with_capacity(weighed.len());
                for (index, weight) in weighed {
                    let mut target = vec![None; items.len()];
                    target[slot] = Some(index);
                    terms.push((plan.targets.len(), weight));
                    plan.targets.push(target);
                }
                per_item.push(terms);
            }
            plan.terms.push(per_item);
        }
        plan
    }

    /// Whether no point has a value.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// The values `[point][item][step]` from what was read for `targets`
    /// (`picked[target][item][step]`).
    pub fn values(&self, picked: &[Vec<Vec<f64>>], steps: usize) -> Vec<Vec<Vec<f64>>> {
        self.terms
            .iter()
            .map(|per_item| {
                per_item
                    .iter()
                    .enumerate()
                    .map(|(slot, terms)| {
                        (0..steps)
                            .map(|step| {
                                if terms.is_empty() {
                                    return f64::NAN;
                                }
                                let mut sum = 0.0;
                                for &(target, weight) in terms {
                                    let value = picked
                                        .get(target)
                                        .and_then(|items| items.get(slot))
                                        .and_then(|steps| steps.get(step))
                                        .copied()
                                        .unwrap_or(f64::NAN);
                                    sum += value * weight;
                                }
                                sum
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }
}

/// The weighted sum of `values`, missing when one of them is.
pub fn combine(values: &[f64], weights: &[f64]) -> f64 {
    values
        .iter()
        .zip(weights)
        .map(|(value, weight)| value * weight)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idw_weighs_by_inverse_squared_distance_and_touching_takes_the_nearest() {
        let weights = idw(&[(0, 1.0), (1, 2.0)]);
        assert!((weights[0] - 0.8).abs() < 1e-15 && (weights[1] - 0.2).abs() < 1e-15);
        assert_eq!(idw(&[(3, 1e-9), (1, 2.0)]), [1.0, 0.0]);
        assert!(combine(&[1.0, f64::NAN], &[1.0, 0.0]).is_nan());
    }

    #[test]
    fn methods_are_nearest_or_linear() {
        assert_eq!(Method::parse(None).ok(), Some(Method::Nearest));
        assert_eq!(Method::parse(Some("LINEAR")).ok(), Some(Method::Linear));
        assert!(matches!(
            Method::parse(Some("cubic")),
            Err(EdrError::Invalid {
                parameter: "method",
                ..
            })
        ));
    }
}
