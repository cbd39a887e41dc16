//! Where a dataset's data is: its bounding box in its own coordinates, and in longitude and
//! latitude (CRS84) when its coordinate system can be transformed. A projected box's edges
//! bend in longitude and latitude, so the CRS84 box is that of 21 points along each edge.

use basin_formats::crs::{CrsTransform, Projection};

use crate::dataset::{Dataset, Space};

/// A box: `[min_x, min_y, max_x, max_y]`.
pub type BoundingBox = [f64; 4];

/// The box of the data in the dataset's own coordinates; `None` for a time series.
pub fn native(dataset: &Dataset) -> Option<BoundingBox> {
    match &dataset.space {
        Space::Series => None,
        Space::Mesh { index, .. } => {
            let extent = index.extent();
            Some([extent.min_x, extent.min_y, extent.max_x, extent.max_y])
        }
        Space::Grid(grid) => {
            let (columns, rows) = (grid.columns as f64, grid.rows as f64);
            let transform = grid.transform;
            let corners = [(0.0, 0.0), (columns, 0.0), (0.0, rows), (columns, rows)];
            box_of(
                corners
                    .into_iter()
                    .map(|(column, row)| transform.apply(column, row)),
            )
        }
    }
}

/// The box of the data in longitude and latitude, when the system can be transformed.
pub fn crs84(dataset: &Dataset) -> Option<BoundingBox> {
    let [min_x, min_y, max_x, max_y] = native(dataset)?;
    let from = Projection::of(dataset.crs.as_ref()?).ok()?;
    let to = Projection::epsg(4326).ok()?;
    let transform = CrsTransform::new(from, to);
    let mut points = Vec::with_capacity(84);
    for step in 0..=20 {
        let t = f64::from(step) / 20.0;
        let x = min_x + t * (max_x - min_x);
        let y = min_y + t * (max_y - min_y);
        points.extend([(x, min_y), (x, max_y), (min_x, y), (max_x, y)]);
    }
    let [west, south, east, north] = box_of(
        points
            .into_iter()
            .filter_map(|(x, y)| transform.try_apply(x, y))
            .filter(|(x, y)| x.is_finite() && y.is_finite()),
    )?;
    Some([
        west.max(-180.0),
        south.max(-90.0),
        east.min(180.0),
        north.min(90.0),
    ])
}

fn box_of(points: impl Iterator<Item = (f64, f64)>) -> Option<BoundingBox> {
    points.fold(None, |bounds, (x, y)| match bounds {
        None => Some([x, y, x, y]),
        Some([min_x, min_y, max_x, max_y]) => {
            Some([min_x.min(x), min_y.min(y), max_x.max(x), max_y.max(y)])
        }
    })
}

/// The time a dataset covers: its first and last step, and the steps as EDR lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct Temporal {
    /// First step.
    pub start: chrono::NaiveDateTime,
    /// Last step.
    pub end: chrono::NaiveDateTime,
    /// The steps: one ISO 8601 repeating interval (`R160/2020-01-01T00:00:00Z/PT900S`) for
    /// equidistant steps, else every time.
    pub values: Vec<String>,
}

/// The calendar time of `time`; `None` for data without calendar time.
pub fn temporal(time: &basin_formats::model::TimeAxis) -> Option<Temporal> {
    use basin_formats::model::TimeAxis;
    let steps = time.steps();
    let start = time.time(0)?;
    let end = time.time(steps.checked_sub(1)?)?;
    let values = match time {
        TimeAxis::Equidistant {
            step_seconds,
            steps,
            ..
        } => {
            let mut seconds = ryu::Buffer::new();
            let seconds = seconds.format_finite(*step_seconds);
            let seconds = seconds.strip_suffix(".0").unwrap_or(seconds);
            vec![format!(
                "R{steps}/{}/PT{seconds}S",
                crate::covjson::iso_time(start)
            )]
        }
        _ => (0..steps)
            .filter_map(|step| time.time(step))
            .map(crate::covjson::iso_time)
            .collect(),
    };
    Some(Temporal { start, end, values })
}
