//! The `position` query: the values of the selected parameters at the selected times, at one
//! point (`POINT`) or several (`MULTIPOINT`), taken from the grid cell or mesh element that
//! holds each point (for an item on mesh nodes, the element's corner nearest to the point).
//! That is MIKE IO's `Dataset.sel(x=, y=)`: the stored value, not an interpolation.

use std::path::Path;

use basin_formats::Catalogue;
use basin_formats::wkt::Shape;

use crate::Limits;
use crate::coverage::{Coverages, Parameter, PointValues};
use crate::crs::QueryCrs;
use crate::dataset::{Dataset, Space};
use crate::error::{EdrError, EdrResult};
use crate::read::{Selection, pick};
use crate::sample::{Method, Plan, Purpose};
use crate::select::{self, TimeFilter};

/// A position query as the request gave it, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct PositionQuery {
    /// The points, in the query's coordinate system.
    pub points: Vec<(f64, f64)>,
    /// Whether the geometry was a MULTIPOINT.
    pub multiple: bool,
    /// The `datetime` filter.
    pub time: Option<TimeFilter>,
    /// The `parameter-name` list as sent.
    pub parameter_names: Option<String>,
    /// The `crs` as sent.
    pub crs: Option<String>,
    /// Basin's `method`.
    pub method: Method,
    /// The `z` as sent: the vertical level of a grid with several layers.
    pub z: Option<String>,
}

impl PositionQuery {
    /// Parses the request's parameters: `coords` (WKT `POINT` or `MULTIPOINT`, required),
    /// `datetime`, `parameter-name` and `crs`.
    pub fn parse(
        coords: Option<&str>,
        datetime: Option<&str>,
        parameter_names: Option<&str>,
        crs: Option<&str>,
        limits: &Limits,
    ) -> EdrResult<Self> {
        let geometry = select::coords(coords, "POINT(12.5 55.7)", limits)?;
        let (points, multiple) = match geometry.shape {
            Shape::Point(Some(point)) => (vec![(point.x, point.y)], false),
            Shape::MultiPoint(points) if !points.is_empty() => (
                points.iter().map(|point| (point.x, point.y)).collect(),
                true,
            ),
            Shape::Point(None) | Shape::MultiPoint(_) => {
                return Err(EdrError::invalid("coords", "the geometry is empty"));
            }
            _ => {
                return Err(EdrError::invalid(
                    "coords",
                    "a position query takes a POINT or a MULTIPOINT",
                ));
            }
        };
        if let Some(&(x, y)) = points
            .iter()
            .find(|(x, y)| !(x.is_finite() && y.is_finite()))
        {
            return Err(EdrError::invalid(
                "coords",
                format!("the position ({x}, {y}) is not a finite number"),
            ));
        }
        Ok(Self {
            points,
            multiple,
            time: datetime.map(TimeFilter::parse).transpose()?,
            parameter_names: parameter_names.map(str::to_owned),
            crs: crs.map(str::to_owned),
            method: Method::Nearest,
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
    ) -> EdrResult<Coverages> {
        if matches!(dataset.space, Space::Series) {
            return Err(EdrError::NotSupported(
                "a time series has no space to take a position in; ask its locations".to_owned(),
            ));
        }
        let crs = QueryCrs::for_dataset(dataset, self.crs.as_deref())?;
        let items = select::items(&dataset.items, self.parameter_names.as_deref())?;
        let steps = select::steps(&dataset.time, self.time.as_ref())?;
        if steps.is_empty() {
            return Err(EdrError::NoData(
                "no time step of the collection is in datetime".to_owned(),
            ));
        }
        let times = select::calendar_times(&dataset.time, &steps)?;
        let values = self
            .points
            .len()
            .saturating_mul(items.len())
            .saturating_mul(steps.len());
        if values > limits.values_max {
            return Err(EdrError::TooLarge(format!(
                "the answer would hold {values} values ({} positions x {} parameters x {} \
                 steps), more than the {} one query may; narrow datetime or parameter-name",
                self.points.len(),
                items.len(),
                steps.len(),
                limits.values_max
            )));
        }
        let native: Vec<Option<(f64, f64)>> = self
            .points
            .iter()
            .map(|&(x, y)| crs.to_native(x, y))
            .collect();
        let layer = select::layer(dataset, self.z.as_deref())?;
        let plan = Plan::new(
            dataset,
            &items,
            &native,
            (self.method, Purpose::Position),
            layer,
        );
        if plan.is_empty() {
            return Err(EdrError::NoData(
                "no position of coords is inside the collection's data".to_owned(),
            ));
        }
        let selection = Selection {
            items: items.clone(),
            steps: steps.clone(),
            targets: plan.targets.clone(),
        };
        let picked = plan.values(&pick(catalogue, dataset, file, &selection)?, steps.len());
        Ok(Coverages {
            crs_uri: crs.uri,
            parameters: items
                .iter()
                .filter_map(|&item| dataset.items.get(item))
                .map(Parameter::of)
                .collect(),
            times,
            points: self
                .points
                .iter()
                .zip(picked)
                .map(|(&(x, y), values)| PointValues { x, y, values })
                .collect(),
            multiple: self.multiple,
        })
    }
}
