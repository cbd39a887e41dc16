//! The `area` query (a POLYGON or MULTIPOLYGON) and the `cube` query (a box): the values of the
//! grid cells or mesh elements whose centres the region holds, at the selected times; or, with
//! Basin's `statistics`, their minimum, maximum, mean, area-weighted mean, count and
//! percentiles per step, for each polygon.
//!
//! A north-up grid answers as a CoverageJSON grid over the window of the cells held (cells of
//! the window outside the region are null), in the grid's own system; a mesh or a rotated grid
//! answers as the centres of the elements or cells held, in the query's system.

use std::path::Path;

use basin_formats::Catalogue;
use basin_formats::wkt::{self, Shape};

use crate::Limits;
use crate::coverage::{Answer, CellsCoverage, GridCoverage, Parameter, StatisticsCoverage};
use crate::crs::QueryCrs;
use crate::dataset::{Dataset, Space};
use crate::error::{EdrError, EdrResult};
use crate::read::{Selection, pick};
use crate::region::{Held, Metric, Region, Ring, held};
use crate::select::{self, TimeFilter};
use crate::statistics::Statistic;

/// Positions along each edge of a `cube` box when it is carried into another system.
const BOX_EDGE_POSITIONS: usize = 21;

/// An area or cube query as the request gave it, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct AreaQuery {
    /// The polygons, in the query's system.
    pub polygons: Vec<Vec<Ring>>,
    /// Whether the geometry was a MULTIPOLYGON.
    pub multiple: bool,
    /// Whether the region is a box (`cube`): it is carried into the dataset's system along
    /// its edges.
    pub is_box: bool,
    /// The `datetime` filter.
    pub time: Option<TimeFilter>,
    /// The `parameter-name` list as sent.
    pub parameter_names: Option<String>,
    /// The `crs` as sent.
    pub crs: Option<String>,
    /// Basin's `statistics`: none for the values themselves.
    pub statistics: Vec<Statistic>,
    /// For `radius` and `corridor`: the distance, in metres, around the points or lines held
    /// in `polygons` (one ring each).
    pub within_metres: Option<f64>,
    /// The `z` as sent: the vertical level of a grid with several layers.
    pub z: Option<String>,
    /// Answer a grid's cells as centres in the query's system rather than as a grid window in
    /// the grid's own system (for the tabular formats, whose positions follow the query).
    pub cells_only: bool,
}

/// The request's common parameters of a region query.
#[derive(Debug, Clone, Copy, Default)]
pub struct RegionParameters<'a> {
    /// `datetime`.
    pub datetime: Option<&'a str>,
    /// `parameter-name`.
    pub parameter_names: Option<&'a str>,
    /// `crs`.
    pub crs: Option<&'a str>,
    /// `statistics` (area only).
    pub statistics: Option<&'a str>,
}

impl AreaQuery {
    /// Parses an `area` query: `coords` (WKT POLYGON or MULTIPOLYGON, required) and the rest.
    pub fn parse_area(
        coords: Option<&str>,
        parameters: RegionParameters<'_>,
        limits: &Limits,
    ) -> EdrResult<Self> {
        let geometry = select::coords(coords, "POLYGON((0 0, 1 0, 1 1, 0 0))", limits)?;
        let xy = |ring: &Vec<wkt::Position>| -> Ring { ring.iter().map(|p| (p.x, p.y)).collect() };
        let (polygons, multiple): (Vec<Vec<Ring>>, bool) = match geometry.shape {
            Shape::Polygon(rings) if !rings.is_empty() => {
                (vec![rings.iter().map(xy).collect()], false)
            }
            Shape::MultiPolygon(polygons) if !polygons.is_empty() => (
                polygons
                    .iter()
                    .map(|rings| rings.iter().map(xy).collect())
                    .collect(),
                true,
            ),
            Shape::Polygon(_) | Shape::MultiPolygon(_) => {
                return Err(EdrError::invalid("coords", "the geometry is empty"));
            }
            _ => {
                return Err(EdrError::invalid(
                    "coords",
                    "an area query takes a POLYGON or a MULTIPOLYGON",
                ));
            }
        };
        check_rings(&polygons)?;
        // GeoJSON and CoverageJSON rings repeat their first position last; WKT writers that
        // leave it out are taken as meaning it.
        let polygons = polygons
            .into_iter()
            .map(|rings| rings.into_iter().map(closed).collect())
            .collect();
        Ok(Self {
            polygons,
            multiple,
            is_box: false,
            time: parameters.datetime.map(TimeFilter::parse).transpose()?,
            parameter_names: parameters.parameter_names.map(str::to_owned),
            crs: parameters.crs.map(str::to_owned),
            statistics: parameters
                .statistics
                .map(Statistic::parse_list)
                .transpose()?
                .unwrap_or_default(),
            within_metres: None,
            cells_only: false,
            z: None,
        })
    }

    /// Parses a `cube` query: `bbox` (`min_x,min_y,max_x,max_y`, required) and the rest.
    pub fn parse_cube(bbox: Option<&str>, parameters: RegionParameters<'_>) -> EdrResult<Self> {
        let bbox = bbox.filter(|text| !text.trim().is_empty()).ok_or_else(|| {
            EdrError::invalid("bbox", "a cube query needs bbox, e.g. 12.0,55.0,12.5,55.5")
        })?;
        let numbers: Vec<f64> = bbox
            .split(',')
            .map(|part| part.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| EdrError::invalid("bbox", format!("{bbox:?} is not four numbers")))?;
        let [x0, y0, x1, y1] = numbers[..] else {
            return Err(EdrError::invalid(
                "bbox",
                format!("{bbox:?} is not four numbers (min x, min y, max x, max y)"),
            ));
        };
        if !(x0.is_finite() && y0.is_finite() && x1.is_finite() && y1.is_finite())
            || x0 >= x1
            || y0 >= y1
        {
            return Err(EdrError::invalid(
                "bbox",
                format!("{bbox:?} is not a box: its minima must be finite and below its maxima"),
            ));
        }
        if parameters.statistics.is_some() {
            return Err(EdrError::invalid(
                "statistics",
                "statistics are an addition of the area query; ask an area with a POLYGON",
            ));
        }
        Ok(Self {
            polygons: vec![vec![vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]]],
            multiple: false,
            is_box: true,
            time: parameters.datetime.map(TimeFilter::parse).transpose()?,
            parameter_names: parameters.parameter_names.map(str::to_owned),
            crs: parameters.crs.map(str::to_owned),
            statistics: Vec::new(),
            within_metres: None,
            cells_only: false,
            z: None,
        })
    }

    /// Parses a `radius` query: `coords` (POINT or MULTIPOINT), `within` and `within-units`.
    pub fn parse_radius(
        coords: Option<&str>,
        within: Option<&str>,
        within_units: Option<&str>,
        parameters: RegionParameters<'_>,
        limits: &Limits,
    ) -> EdrResult<Self> {
        let metres = distance_in_metres("within", within, "within-units", within_units)?;
        let (lines, multiple) = parse_lines(coords, limits, LineKind::Points)?;
        Self::near(lines, multiple, metres, parameters)
    }

    /// Parses a `corridor` query: `coords` (LINESTRING or MULTILINESTRING), `corridor-width`
    /// and `width-units` (the full width: the corridor reaches half of it either side).
    pub fn parse_corridor(
        coords: Option<&str>,
        width: Option<&str>,
        width_units: Option<&str>,
        parameters: RegionParameters<'_>,
        limits: &Limits,
    ) -> EdrResult<Self> {
        let metres = distance_in_metres("corridor-width", width, "width-units", width_units)?;
        let (lines, multiple) = parse_lines(coords, limits, LineKind::Lines)?;
        Self::near(lines, multiple, metres / 2.0, parameters)
    }

    fn near(
        lines: Vec<Ring>,
        multiple: bool,
        metres: f64,
        parameters: RegionParameters<'_>,
    ) -> EdrResult<Self> {
        if parameters.statistics.is_some() {
            return Err(EdrError::invalid(
                "statistics",
                "statistics are an addition of the area query; ask an area with a POLYGON",
            ));
        }
        Ok(Self {
            polygons: lines.into_iter().map(|line| vec![line]).collect(),
            multiple,
            is_box: false,
            time: parameters.datetime.map(TimeFilter::parse).transpose()?,
            parameter_names: parameters.parameter_names.map(str::to_owned),
            crs: parameters.crs.map(str::to_owned),
            statistics: Vec::new(),
            within_metres: Some(metres),
            cells_only: false,
            z: None,
        })
    }

    /// Answers the query against `file`, the content `dataset` describes.
    pub fn answer(
        &self,
        catalogue: &Catalogue,
        dataset: &Dataset,
        file: &Path,
        limits: &Limits,
    ) -> EdrResult<Answer> {
        let crs = QueryCrs::for_dataset(dataset, self.crs.as_deref())?;
        let layer = select::layer(dataset, self.z.as_deref())?;
        let items = select::items(&dataset.items, self.parameter_names.as_deref())?;
        let steps = select::steps(&dataset.time, self.time.as_ref())?;
        if steps.is_empty() {
            return Err(EdrError::NoData(
                "no time step of the collection is in datetime".to_owned(),
            ));
        }
        let times = select::calendar_times(&dataset.time, &steps)?;
        let region = self.region(dataset, &crs)?;
        let held = held(dataset, &region, limits.values_max)?;
        if held.is_empty() {
            return Err(EdrError::NoData(
                "no cell or element of the collection has its centre in the region".to_owned(),
            ));
        }
        let values = held
            .len()
            .saturating_mul(items.len())
            .saturating_mul(steps.len());
        if values > limits.values_max {
            return Err(EdrError::TooLarge(format!(
                "the answer would read {values} values ({} cells x {} parameters x {} steps), \
                 more than the {} one query may; narrow the region, datetime or parameter-name",
                held.len(),
                items.len(),
                steps.len(),
                limits.values_max
            )));
        }
        let selection = Selection {
            targets: held
                .iter()
                .map(|cell| {
                    items
                        .iter()
                        .map(|&item| value_index(dataset, item, cell, layer))
                        .collect()
                })
                .collect(),
            items: items.clone(),
            steps: steps.clone(),
        };
        let picked = pick(catalogue, dataset, file, &selection)?;
        let parameters: Vec<Parameter> = items
            .iter()
            .filter_map(|&item| dataset.items.get(item))
            .map(Parameter::of)
            .collect();
        let shape = Shaped {
            parameters,
            times,
            held: &held,
            picked: &picked,
            steps: steps.len(),
        };
        if !self.statistics.is_empty() {
            return Ok(Answer::Statistics(self.statistics_of(
                &shape,
                &crs,
                region.len(),
            )));
        }
        match &dataset.space {
            Space::Grid(grid) if !self.cells_only && nearly_north_up(&grid.transform) => Ok(
                Answer::Grid(shape.grid(grid, QueryCrs::native_uri(dataset))),
            ),
            _ => Ok(Answer::Cells(shape.cells(&crs))),
        }
    }

    /// The region in the dataset's own coordinates: the polygons, or the places near the
    /// points or lines (distances on the sphere for longitude and latitude data).
    fn region(&self, dataset: &Dataset, crs: &QueryCrs) -> EdrResult<Region> {
        let native = self.native_polygons(crs)?;
        let Some(within) = self.within_metres else {
            return Ok(Region::new(native));
        };
        let geographic = dataset
            .crs
            .as_ref()
            .and_then(|crs| basin_formats::crs::Projection::of(crs).ok())
            .is_some_and(|projection| projection.is_geographic());
        let metric = if geographic {
            Metric::Sphere
        } else {
            Metric::Planar
        };
        Ok(Region::near(
            native.into_iter().flatten().collect(),
            within,
            metric,
        ))
    }

    /// The polygons in the dataset's own coordinates. A box's edges are carried over at
    /// [`BOX_EDGE_POSITIONS`] positions each, since a straight edge in one system bends in
    /// another.
    fn native_polygons(&self, crs: &QueryCrs) -> EdrResult<Vec<Vec<Ring>>> {
        let carry = |ring: &Ring| -> EdrResult<Ring> {
            let dense: Ring = if self.is_box {
                densify(ring, BOX_EDGE_POSITIONS)
            } else {
                ring.clone()
            };
            dense
                .iter()
                .map(|&(x, y)| {
                    crs.to_native(x, y).ok_or_else(|| {
                        EdrError::invalid(
                            if self.is_box { "bbox" } else { "coords" },
                            format!(
                                "the position ({x}, {y}) cannot be carried into the \
                                 collection's coordinate system"
                            ),
                        )
                    })
                })
                .collect()
        };
        self.polygons
            .iter()
            .map(|polygon| polygon.iter().map(carry).collect())
            .collect()
    }

    fn statistics_of(
        &self,
        shape: &Shaped<'_>,
        crs: &QueryCrs,
        polygons: usize,
    ) -> StatisticsCoverage {
        let names = self.statistics.iter().map(Statistic::name).collect();
        let mut cells = vec![0; polygons];
        for cell in shape.held {
            for &polygon in &cell.polygons {
                if let Some(count) = cells.get_mut(polygon) {
                    *count += 1;
                }
            }
        }
        let values = (0..shape.parameters.len())
            .map(|parameter| {
                self.statistics
                    .iter()
                    .map(|statistic| {
                        let mut per_step = Vec::with_capacity(shape.steps * polygons);
                        for step in 0..shape.steps {
                            for polygon in 0..polygons {
                                per_step
                                    .push(statistic.over(shape.sample(parameter, step, polygon)));
                            }
                        }
                        per_step
                    })
                    .collect()
            })
            .collect();
        StatisticsCoverage {
            crs_uri: crs.uri.clone(),
            parameters: shape.parameters.clone(),
            times: shape.times.clone(),
            polygons: self.polygons.clone(),
            multiple: self.multiple,
            statistics: names,
            cells,
            values,
        }
    }
}

/// The index of `cell`'s value of `item` within the item's step.
fn value_index(dataset: &Dataset, item: usize, cell: &Held, layer: usize) -> Option<usize> {
    let (x, y) = cell.centre;
    match (cell.cell, cell.element) {
        (Some((column, row)), _) => {
            let cell = crate::dataset::Location::Cell { column, row };
            dataset.value_index(item, cell, (x, y), layer)
        }
        (None, Some(element)) => {
            let element = crate::dataset::Location::Element(element);
            dataset.value_index(item, element, (x, y), layer)
        }
        (None, None) => None,
    }
}

/// What a `radius` or `corridor` geometry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    /// POINT or MULTIPOINT.
    Points,
    /// LINESTRING or MULTILINESTRING.
    Lines,
}

/// The points (as one-position lines) or lines of `coords`, and whether it was a MULTI
/// geometry.
fn parse_lines(
    coords: Option<&str>,
    limits: &Limits,
    kind: LineKind,
) -> EdrResult<(Vec<Ring>, bool)> {
    let example = match kind {
        LineKind::Points => "POINT(12.5 55.7)",
        LineKind::Lines => "LINESTRING(12.5 55.7, 12.6 55.8)",
    };
    let geometry = select::coords(coords, example, limits)?;
    let xy = |line: &Vec<wkt::Position>| -> Ring { line.iter().map(|p| (p.x, p.y)).collect() };
    let (lines, multiple) = match (kind, geometry.shape) {
        (LineKind::Points, Shape::Point(Some(point))) => (vec![vec![(point.x, point.y)]], false),
        (LineKind::Points, Shape::MultiPoint(points)) if !points.is_empty() => {
            (points.iter().map(|p| vec![(p.x, p.y)]).collect(), true)
        }
        (LineKind::Lines, Shape::LineString(line)) if line.len() >= 2 => (vec![xy(&line)], false),
        (LineKind::Lines, Shape::MultiLineString(lines))
            if !lines.is_empty() && lines.iter().all(|line| line.len() >= 2) =>
        {
            (lines.iter().map(xy).collect(), true)
        }
        (LineKind::Points, _) => {
            return Err(EdrError::invalid(
                "coords",
                "a radius query takes a POINT or a MULTIPOINT",
            ));
        }
        (LineKind::Lines, _) => {
            return Err(EdrError::invalid(
                "coords",
                "a corridor query takes a LINESTRING or a MULTILINESTRING of two positions or more",
            ));
        }
    };
    if let Some(&(x, y)) = lines
        .iter()
        .flatten()
        .find(|(x, y)| !(x.is_finite() && y.is_finite()))
    {
        return Err(EdrError::invalid(
            "coords",
            format!("the position ({x}, {y}) is not a finite number"),
        ));
    }
    Ok((lines, multiple))
}

/// A distance and its unit in metres: `value` a positive number, `unit` one of m, km, mi
/// (statute miles), nmi (nautical miles) and ft, or their names.
fn distance_in_metres(
    value_name: &'static str,
    value: Option<&str>,
    unit_name: &'static str,
    unit: Option<&str>,
) -> EdrResult<f64> {
    let text = value.ok_or_else(|| EdrError::invalid(value_name, "the distance is missing"))?;
    let number = text
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|number| number.is_finite() && *number > 0.0)
        .ok_or_else(|| {
            EdrError::invalid(value_name, format!("{text:?} is not a positive number"))
        })?;
    let unit_text = unit
        .ok_or_else(|| EdrError::invalid(unit_name, "the unit is missing: m, km, mi, nmi or ft"))?;
    let metres = match unit_text.trim().to_ascii_lowercase().as_str() {
        "m" | "meter" | "meters" | "metre" | "metres" => 1.0,
        "km" | "kilometer" | "kilometers" | "kilometre" | "kilometres" => 1000.0,
        "mi" | "mile" | "miles" => 1609.344,
        "nmi" | "nautical mile" | "nautical miles" => 1852.0,
        "ft" | "foot" | "feet" => 0.3048,
        _ => {
            return Err(EdrError::invalid(
                unit_name,
                format!("{unit_text:?} is not a unit of distance: m, km, mi, nmi or ft"),
            ));
        }
    };
    Ok(number * metres)
}

/// `ring` ending where it starts.
fn closed(mut ring: Ring) -> Ring {
    if let (Some(&first), Some(&last)) = (ring.first(), ring.last())
        && first != last
    {
        ring.push(first);
    }
    ring
}

/// Whether a grid is north-up within rounding: its rotation terms under 1e-5 degree of its
/// cell sizes (MIKE IO's own tolerance), as grids written off a projection's central
/// meridian come back from the convergence arithmetic.
fn nearly_north_up(transform: &basin_formats::model::GeoTransform) -> bool {
    const TOLERANCE: f64 = 1.75e-7;
    let across = transform.row_rotation.abs() <= TOLERANCE * transform.pixel_width.abs();
    let down = transform.column_rotation.abs() <= TOLERANCE * transform.pixel_height.abs();
    across && down
}

/// `ring` with `per_edge - 1` positions added along each edge.
fn densify(ring: &Ring, per_edge: usize) -> Ring {
    let mut dense = Vec::with_capacity(ring.len() * per_edge);
    for pair in ring.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        for step in 0..per_edge {
            let t = step as f64 / per_edge as f64;
            dense.push((x0 + t * (x1 - x0), y0 + t * (y1 - y0)));
        }
    }
    if let Some(&last) = ring.last() {
        dense.push(last);
    }
    dense
}

/// Rings need three distinct positions and finite numbers.
fn check_rings(polygons: &[Vec<Ring>]) -> EdrResult<()> {
    for ring in polygons.iter().flatten() {
        if let Some(&(x, y)) = ring.iter().find(|(x, y)| !(x.is_finite() && y.is_finite())) {
            return Err(EdrError::invalid(
                "coords",
                format!("the position ({x}, {y}) is not a finite number"),
            ));
        }
        let mut distinct = ring.clone();
        distinct.dedup();
        if distinct.first() == distinct.last() && distinct.len() > 1 {
            distinct.pop();
        }
        if distinct.len() < 3 {
            return Err(EdrError::invalid(
                "coords",
                "a polygon's ring needs at least three distinct positions",
            ));
        }
    }
    Ok(())
}

/// What was read, with what it takes to shape it into an answer.
struct Shaped<'a> {
    parameters: Vec<Parameter>,
    times: Vec<chrono::NaiveDateTime>,
    held: &'a [Held],
    /// `[cell][parameter][step]`.
    picked: &'a [Vec<Vec<f64>>],
    steps: usize,
}

impl Shaped<'_> {
    /// The value of `parameter` at `step` for `cell`.
    fn value(&self, cell: usize, parameter: usize, step: usize) -> f64 {
        self.picked
            .get(cell)
            .and_then(|parameters| parameters.get(parameter))
            .and_then(|steps| steps.get(step))
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// The values (with their cells' areas) of `parameter` at `step` in `polygon`.
    fn sample(&self, parameter: usize, step: usize, polygon: usize) -> Vec<(f64, f64)> {
        self.held
            .iter()
            .enumerate()
            .filter(|(_, cell)| cell.polygons.contains(&polygon))
            .map(|(index, cell)| (self.value(index, parameter, step), cell.area))
            .filter(|(value, _)| value.is_finite())
            .collect()
    }

    fn cells(&self, crs: &QueryCrs) -> CellsCoverage {
        let values = (0..self.parameters.len())
            .map(|parameter| {
                let mut values = Vec::with_capacity(self.steps * self.held.len());
                for step in 0..self.steps {
                    values
                        .extend((0..self.held.len()).map(|cell| self.value(cell, parameter, step)));
                }
                values
            })
            .collect();
        CellsCoverage {
            crs_uri: crs.uri.clone(),
            parameters: self.parameters.clone(),
            times: self.times.clone(),
            centres: self
                .held
                .iter()
                .map(|cell| {
                    let (x, y) = cell.centre;
                    crs.from_native(x, y).unwrap_or((f64::NAN, f64::NAN))
                })
                .collect(),
            values,
        }
    }

    fn grid(&self, grid: &basin_formats::model::GridGeometry, crs_uri: String) -> GridCoverage {
        let cells: Vec<(usize, usize)> = self.held.iter().filter_map(|cell| cell.cell).collect();
        let first_column = cells.iter().map(|c| c.0).min().unwrap_or(0);
        let last_column = cells.iter().map(|c| c.0).max().unwrap_or(0);
        let first_row = cells.iter().map(|c| c.1).min().unwrap_or(0);
        let last_row = cells.iter().map(|c| c.1).max().unwrap_or(0);
        let (width, height) = (last_column - first_column + 1, last_row - first_row + 1);
        let transform = grid.transform;
        let xs = (first_column..=last_column)
            .map(|column| transform.apply(column as f64 + 0.5, 0.0).0)
            .collect();
        let ys = (first_row..=last_row)
            .map(|row| transform.apply(0.0, row as f64 + 0.5).1)
            .collect();
        let values = (0..self.parameters.len())
            .map(|parameter| {
                let mut values = vec![f64::NAN; self.steps * width * height];
                for (index, &(column, row)) in cells.iter().enumerate() {
                    let at = (row - first_row) * width + (column - first_column);
                    for step in 0..self.steps {
                        if let Some(slot) = values.get_mut(step * width * height + at) {
                            *slot = self.value(index, parameter, step);
                        }
                    }
                }
                values
            })
            .collect();
        GridCoverage {
            crs_uri,
            parameters: self.parameters.clone(),
            times: self.times.clone(),
            xs,
            ys,
            values,
        }
    }
}
