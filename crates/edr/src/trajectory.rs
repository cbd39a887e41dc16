//! The `trajectory` query: values along a path (a LINESTRING), as MIKE IO's
//! `Dfsu.extract_track` gives them along a ship's track.
//!
//! - A path with times (`LINESTRINGM` or `LINESTRINGZM`, M in seconds since 1970-01-01 UTC, as
//!   EDR says) gives one value per position: at its place (see [`crate::sample`], `nearest`
//!   by default: the element with the nearest centre) and at its time, linear in time between
//!   the two steps around it (the step itself when the time is one). Positions before the first
//!   step or after the last have no value. The answer is a CoverageJSON `Trajectory`.
//! - A path without times gives the values at each of its positions at every selected step,
//!   as an area gives its cells' (a `MultiPointSeries`). A `Z` is not used.

use std::path::Path;

use basin_formats::Catalogue;
use basin_formats::wkt::Shape;
use chrono::NaiveDateTime;

use crate::Limits;
use crate::coverage::{Answer, CellsCoverage, Parameter, TrajectoryCoverage};
use crate::crs::QueryCrs;
use crate::dataset::{Dataset, Space};
use crate::error::{EdrError, EdrResult};
use crate::read::{Selection, pick};
use crate::sample::{Method, Plan, Purpose};
use crate::select::{self, TimeFilter};

/// A trajectory query as the request gave it, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryQuery {
    /// The positions, in the query's system, with their times when the path has them.
    pub positions: Vec<(f64, f64, Option<NaiveDateTime>)>,
    /// The `datetime` filter (paths without times only).
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

impl TrajectoryQuery {
    /// Parses `coords` (a LINESTRING of two positions or more, required), `datetime`,
    /// `parameter-name`, `crs` and `method`.
    pub fn parse(
        coords: Option<&str>,
        datetime: Option<&str>,
        parameter_names: Option<&str>,
        crs: Option<&str>,
        method: Option<&str>,
        limits: &Limits,
    ) -> EdrResult<Self> {
        let geometry = select::coords(coords, "LINESTRING(12.5 55.7, 12.6 55.8)", limits)?;
        let Shape::LineString(line) = geometry.shape else {
            return Err(EdrError::invalid(
                "coords",
                "a trajectory query takes a LINESTRING (with M as the time, optionally)",
            ));
        };
        if line.len() < 2 {
            return Err(EdrError::invalid(
                "coords",
                "a trajectory needs two positions or more",
            ));
        }
        let positions = line
            .iter()
            .map(|position| {
                let (x, y) = (position.x, position.y);
                if !(x.is_finite() && y.is_finite()) {
                    return Err(EdrError::invalid(
                        "coords",
                        format!("the position ({x}, {y}) is not a finite number"),
                    ));
                }
                let time = match position.z_and_m(geometry.dims).1 {
                    None => None,
                    Some(seconds) => Some(epoch_time(seconds)?),
                };
                Ok((x, y, time))
            })
            .collect::<EdrResult<Vec<_>>>()?;
        let timed = positions.iter().any(|(_, _, time)| time.is_some());
        if timed && datetime.is_some() {
            return Err(EdrError::invalid(
                "datetime",
                "the path gives its own times (M); datetime selects steps of a path without them",
            ));
        }
        if timed && positions.windows(2).any(|pair| pair[1].2 < pair[0].2) {
            return Err(EdrError::invalid(
                "coords",
                "the times (M) of the path must not go back",
            ));
        }
        Ok(Self {
            positions,
            time: datetime.map(TimeFilter::parse).transpose()?,
            parameter_names: parameter_names.map(str::to_owned),
            crs: crs.map(str::to_owned),
            method: Method::parse(method)?,
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
        if matches!(dataset.space, Space::Series) {
            return Err(EdrError::NotSupported(
                "a time series has no space to follow a path in".to_owned(),
            ));
        }
        let crs = QueryCrs::for_dataset(dataset, self.crs.as_deref())?;
        let items = select::items(&dataset.items, self.parameter_names.as_deref())?;
        let native: Vec<Option<(f64, f64)>> = self
            .positions
            .iter()
            .map(|&(x, y, _)| crs.to_native(x, y))
            .collect();
        let layer = select::layer(dataset, self.z.as_deref())?;
        let plan = Plan::new(
            dataset,
            &items,
            &native,
            (self.method, Purpose::Track),
            layer,
        );
        if plan.is_empty() {
            return Err(EdrError::NoData(
                "no position of the path is inside the collection's data".to_owned(),
            ));
        }
        let parameters: Vec<Parameter> = items
            .iter()
            .filter_map(|&item| dataset.items.get(item))
            .map(Parameter::of)
            .collect();
        if self.positions.iter().any(|(_, _, time)| time.is_some()) {
            return self.timed(
                catalogue,
                dataset,
                file,
                limits,
                (&items, &plan, parameters),
                &crs,
            );
        }
        let steps = select::steps(&dataset.time, self.time.as_ref())?;
        if steps.is_empty() {
            return Err(EdrError::NoData(
                "no time step of the collection is in datetime".to_owned(),
            ));
        }
        check_size(self.positions.len(), items.len(), steps.len(), limits)?;
        let times = select::calendar_times(&dataset.time, &steps)?;
        let selection = Selection {
            items: items.clone(),
            steps: steps.clone(),
            targets: plan.targets.clone(),
        };
        let values = plan.values(&pick(catalogue, dataset, file, &selection)?, steps.len());
        let count = self.positions.len();
        Ok(Answer::Cells(CellsCoverage {
            crs_uri: crs.uri.clone(),
            parameters,
            times,
            centres: self.positions.iter().map(|&(x, y, _)| (x, y)).collect(),
            values: (0..items.len())
                .map(|slot| {
                    let mut flat = Vec::with_capacity(steps.len() * count);
                    for step in 0..steps.len() {
                        flat.extend(values.iter().map(|point| point[slot][step]));
                    }
                    flat
                })
                .collect(),
        }))
    }

    /// A path with times: each position's value between the two steps around its time.
    fn timed(
        &self,
        catalogue: &Catalogue,
        dataset: &Dataset,
        file: &Path,
        limits: &Limits,
        (items, plan, parameters): (&[usize], &Plan, Vec<Parameter>),
        crs: &QueryCrs,
    ) -> EdrResult<Answer> {
        let all_steps: Vec<usize> = (0..dataset.time.steps()).collect();
        let step_times = select::calendar_times(&dataset.time, &all_steps)?;
        let brackets: Vec<Option<(usize, usize, f64)>> = self
            .positions
            .iter()
            .map(|(_, _, time)| time.and_then(|time| bracket(&step_times, time)))
            .collect();
        let mut needed: Vec<usize> = brackets
            .iter()
            .flatten()
            .flat_map(|&(before, after, _)| [before, after])
            .collect();
        needed.sort_unstable();
        needed.dedup();
        if needed.is_empty() {
            return Err(EdrError::NoData(
                "no time of the path is within the collection's steps".to_owned(),
            ));
        }
        check_size(self.positions.len(), items.len(), needed.len(), limits)?;
        let selection = Selection {
            items: items.to_vec(),
            steps: needed.clone(),
            targets: plan.targets.clone(),
        };
        let values = plan.values(&pick(catalogue, dataset, file, &selection)?, needed.len());
        let slot_of = |step: usize| needed.binary_search(&step).ok();
        let along = (0..items.len())
            .map(|slot| {
                values
                    .iter()
                    .zip(&brackets)
                    .map(|(point, bracket)| {
                        let Some((before, after, weight)) = *bracket else {
                            return f64::NAN;
                        };
                        let at = |step| slot_of(step).map_or(f64::NAN, |s| point[slot][s]);
                        if weight == 0.0 {
                            at(before)
                        } else {
                            (1.0 - weight) * at(before) + weight * at(after)
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(Answer::Trajectory(TrajectoryCoverage {
            crs_uri: crs.uri.clone(),
            parameters,
            positions: self
                .positions
                .iter()
                .filter_map(|&(x, y, time)| time.map(|time| (time, x, y)))
                .collect(),
            values: along,
        }))
    }
}

/// The steps around `time` and the weight of the later one; the step itself (weight 0) when
/// `time` is one; `None` outside the steps.
fn bracket(times: &[NaiveDateTime], time: NaiveDateTime) -> Option<(usize, usize, f64)> {
    match times.binary_search(&time) {
        Ok(step) => Some((step, step, 0.0)),
        Err(after) if after == 0 || after >= times.len() => None,
        Err(after) => {
            let (start, end) = (times[after - 1], times[after]);
            let span = (end - start).as_seconds_f64();
            let gone = (time - start).as_seconds_f64();
            (span > 0.0).then_some((after - 1, after, gone / span))
        }
    }
}

/// The time `seconds` after 1970-01-01 UTC.
fn epoch_time(seconds: f64) -> EdrResult<NaiveDateTime> {
    let whole = seconds.floor();
    let nanos = ((seconds - whole) * 1e9).round().min(999_999_999.0);
    (whole.is_finite() && whole.abs() < 1e12)
        .then(|| chrono::DateTime::from_timestamp(whole as i64, nanos as u32))
        .flatten()
        .map(|time| time.naive_utc())
        .ok_or_else(|| {
            EdrError::invalid(
                "coords",
                format!("M {seconds} is not a time in seconds since 1970-01-01"),
            )
        })
}

fn check_size(positions: usize, items: usize, steps: usize, limits: &Limits) -> EdrResult<()> {
    let values = positions.saturating_mul(items).saturating_mul(steps);
    if values > limits.values_max {
        return Err(EdrError::TooLarge(format!(
            "the answer would read {values} values ({positions} positions x {items} parameters x \
             {steps} steps), more than the {} one query may; narrow datetime or parameter-name",
            limits.values_max
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_between_steps_weigh_the_later_one_by_how_far_they_are() {
        let start = chrono::NaiveDate::from_ymd_opt(2020, 1, 1)
            .and_then(|day| day.and_hms_opt(0, 0, 0))
            .unwrap_or_default();
        let hours: Vec<NaiveDateTime> = (0..3)
            .map(|h| start + chrono::TimeDelta::hours(h))
            .collect();
        assert_eq!(bracket(&hours, start), Some((0, 0, 0.0)));
        assert_eq!(
            bracket(&hours, start + chrono::TimeDelta::minutes(90)),
            Some((1, 2, 0.5))
        );
        assert_eq!(bracket(&hours, start - chrono::TimeDelta::minutes(1)), None);
        assert_eq!(bracket(&hours, start + chrono::TimeDelta::hours(3)), None);
        assert_eq!(
            epoch_time(1.5).ok().map(|t| t.to_string()),
            Some("1970-01-01 00:00:01.500".to_owned())
        );
        assert!(epoch_time(f64::NAN).is_err());
    }
}
