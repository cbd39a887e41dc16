//! Which steps and items a query asks for: the `datetime` parameter (an instant, a closed
//! interval or an interval open at one end) against the dataset's time axis, and
//! `parameter-name` against its items.
//!
//! Times in the files of this field carry no zone (DFS, VTU series); Basin reads them as UTC,
//! so `2020-01-01T00:00:00Z` and `2020-01-01T01:00:00+01:00` select the same step. Intervals
//! include both ends, as MIKE IO's and pandas' time slices do.

use basin_formats::model::{Item, TimeAxis};
use chrono::{DateTime, NaiveDateTime, Utc};

use crate::error::{EdrError, EdrResult};

/// How many item names an error lists before it stops.
const NAMES_LISTED_MAX: usize = 20;

/// A `datetime` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFilter {
    /// One instant.
    Instant(NaiveDateTime),
    /// From `start` to `end`, both included; `None` is open.
    Interval {
        /// First instant, or `..`.
        start: Option<NaiveDateTime>,
        /// Last instant, or `..`.
        end: Option<NaiveDateTime>,
    },
}

impl TimeFilter {
    /// Parses `text`: `instant`, `start/end`, `../end` or `start/..`, each instant an RFC 3339
    /// date-time (with `Z` or an offset).
    pub fn parse(text: &str) -> EdrResult<Self> {
        let text = text.trim();
        let Some((start, end)) = text.split_once('/') else {
            return Ok(Self::Instant(instant(text)?));
        };
        let bound = |part: &str| -> EdrResult<Option<NaiveDateTime>> {
            let part = part.trim();
            if part == ".." || part.is_empty() {
                Ok(None)
            } else {
                instant(part).map(Some)
            }
        };
        let (start, end) = (bound(start)?, bound(end)?);
        if start.is_none() && end.is_none() {
            return Err(EdrError::invalid(
                "datetime",
                "an interval needs at least one end (`../..` selects nothing)",
            ));
        }
        if let (Some(start), Some(end)) = (start, end)
            && end < start
        {
            return Err(EdrError::invalid(
                "datetime",
                format!("the interval ends ({end}) before it starts ({start})"),
            ));
        }
        Ok(Self::Interval { start, end })
    }

    /// Whether `time` is selected.
    pub fn contains(&self, time: NaiveDateTime) -> bool {
        match *self {
            Self::Instant(instant) => time == instant,
            Self::Interval { start, end } => {
                start.is_none_or(|start| start <= time) && end.is_none_or(|end| time <= end)
            }
        }
    }
}

fn instant(text: &str) -> EdrResult<NaiveDateTime> {
    DateTime::parse_from_rfc3339(text)
        .map(|time| time.with_timezone(&Utc).naive_utc())
        .map_err(|error| {
            EdrError::invalid(
                "datetime",
                format!(
                    "{text:?} is not an RFC 3339 date-time such as 2020-01-01T00:00:00Z ({error})"
                ),
            )
        })
}

/// The steps of `time` that `filter` selects, ascending; every step without a filter.
pub fn steps(time: &TimeAxis, filter: Option<&TimeFilter>) -> EdrResult<Vec<usize>> {
    let all = time.steps();
    let Some(filter) = filter else {
        return Ok((0..all).collect());
    };
    if matches!(time, TimeAxis::None | TimeAxis::Relative(_)) {
        return Err(EdrError::invalid(
            "datetime",
            "this collection has no calendar time, so it cannot be selected by datetime",
        ));
    }
    Ok((0..all)
        .filter(|&step| time.time(step).is_some_and(|at| filter.contains(at)))
        .collect())
}

/// The items `parameter-name` names (a comma-separated list of item names as the file
/// stores them), in the order named, each once; every item when `names` is `None`.
pub fn items(items: &[Item], names: Option<&str>) -> EdrResult<Vec<usize>> {
    let Some(names) = names else {
        return Ok((0..items.len()).collect());
    };
    // A name that itself holds a comma is matched whole first.
    if let Some(index) = items.iter().position(|item| item.name == names) {
        return Ok(vec![index]);
    }
    let mut selected = Vec::new();
    for name in names.split(',') {
        let index = items
            .iter()
            .position(|item| item.name == name)
            .or_else(|| items.iter().position(|item| item.name == name.trim()))
            .ok_or_else(|| {
                let known: Vec<&str> = items
                    .iter()
                    .take(NAMES_LISTED_MAX)
                    .map(|item| item.name.as_str())
                    .collect();
                let more = if items.len() > NAMES_LISTED_MAX {
                    ", ..."
                } else {
                    ""
                };
                EdrError::invalid(
                    "parameter-name",
                    format!("the collection has no parameter {name:?}; it has {known:?}{more}"),
                )
            })?;
        if !selected.contains(&index) {
            selected.push(index);
        }
    }
    Ok(selected)
}

/// The calendar times of `steps`; none for data without time. A relative time axis (seconds
/// from an unknown start) has no place in CoverageJSON's time axis.
pub fn calendar_times(time: &TimeAxis, steps: &[usize]) -> EdrResult<Vec<chrono::NaiveDateTime>> {
    if matches!(time, TimeAxis::None) {
        return Ok(Vec::new());
    }
    steps
        .iter()
        .map(|&step| {
            time.time(step).ok_or_else(|| {
                EdrError::NotSupported(
                    "the collection's time axis counts seconds from an unknown start, which \
                     answers cannot state as times"
                        .to_owned(),
                )
            })
        })
        .collect()
}

/// Parses `coords`, a query's WKT geometry: required (`example` shows one in the error), at
/// most `limits.positions_max` positions (more is [`EdrError::TooLarge`]).
pub fn coords(
    coords: Option<&str>,
    example: &str,
    limits: &crate::Limits,
) -> EdrResult<basin_formats::wkt::Geometry> {
    use basin_formats::wkt::{self, WktError};
    let coords = coords
        .filter(|text| !text.trim().is_empty())
        .ok_or_else(|| {
            EdrError::invalid("coords", format!("the query needs coords, e.g. {example}"))
        })?;
    let mut budget = limits.positions_max;
    wkt::parse(coords, &mut budget).map_err(|error| match error {
        WktError::PositionBudget => EdrError::TooLarge(format!(
            "coords has more than {} positions, the most one query takes",
            limits.positions_max
        )),
        WktError::Syntax { .. } => {
            EdrError::invalid("coords", format!("not a WKT geometry: {error}"))
        }
    })
}

/// The layer `z` names: the layer of a grid with several layers (DFS3) whose level is `z`
/// (within 1e-9 of it, relative to the larger of 1 and `z`); layer 0 without `z`. One level
/// at a time: a list or an interval is refused, and so is any `z` for data with one level.
pub fn layer(dataset: &crate::Dataset, z: Option<&str>) -> EdrResult<usize> {
    let Some(text) = z else {
        return Ok(0);
    };
    let Some(levels) = dataset.levels() else {
        return Err(EdrError::invalid(
            "z",
            "this collection answers for one vertical level (a layered mesh for its surface), \
             so z selects nothing",
        ));
    };
    let value = text
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .ok_or_else(|| {
            EdrError::invalid(
                "z",
                format!("{text:?} is not one level: give one number, one level at a time"),
            )
        })?;
    let tolerance = 1e-9 * value.abs().max(1.0);
    levels
        .iter()
        .position(|level| (level - value).abs() <= tolerance)
        .ok_or_else(|| {
            let listed: Vec<String> = levels
                .iter()
                .take(NAMES_LISTED_MAX)
                .map(f64::to_string)
                .collect();
            EdrError::invalid(
                "z",
                format!(
                    "{value} is not a level of this collection; its levels are {}",
                    listed.join(", ")
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basin_formats::model::DataType;
    use chrono::NaiveDate;

    fn at(hour: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2020, 1, 1)
            .and_then(|day| day.and_hms_opt(hour, 0, 0))
            .unwrap_or_default()
    }

    fn hourly() -> TimeAxis {
        TimeAxis::Equidistant {
            start: at(0),
            step_seconds: 3600.0,
            steps: 6,
        }
    }

    #[test]
    fn instants_and_intervals_select_steps_inclusively_in_utc() -> EdrResult<()> {
        let time = hourly();
        let select = |text: &str| TimeFilter::parse(text).and_then(|f| steps(&time, Some(&f)));
        assert_eq!(select("2020-01-01T02:00:00Z")?, [2]);
        assert_eq!(select("2020-01-01T03:00:00+01:00")?, [2]);
        assert_eq!(select("2020-01-01T02:30:00Z")?, Vec::<usize>::new());
        assert_eq!(
            select("2020-01-01T01:00:00Z/2020-01-01T03:00:00Z")?,
            [1, 2, 3]
        );
        assert_eq!(select("../2020-01-01T01:00:00Z")?, [0, 1]);
        assert_eq!(select("2020-01-01T04:00:00Z/..")?, [4, 5]);
        assert_eq!(steps(&time, None)?, [0, 1, 2, 3, 4, 5]);
        Ok(())
    }

    #[test]
    fn malformed_datetimes_name_the_parameter() {
        for text in [
            "yesterday",
            "2020-01-01",
            "../..",
            "2020-01-02T00:00:00Z/2020-01-01T00:00:00Z",
            "2020-13-01T00:00:00Z",
        ] {
            let error = TimeFilter::parse(text).err();
            assert!(
                matches!(
                    error,
                    Some(EdrError::Invalid {
                        parameter: "datetime",
                        ..
                    })
                ),
                "{text}: {error:?}"
            );
        }
        let relative = TimeAxis::Relative(vec![0.0, 1.0]);
        let filter = TimeFilter::Instant(at(0));
        assert!(steps(&relative, Some(&filter)).is_err());
    }

    #[test]
    fn parameter_names_select_items_in_the_order_named() -> EdrResult<()> {
        let list = [
            Item::new("Surface elevation", DataType::F32),
            Item::new("U velocity", DataType::F32),
            Item::new("a, b", DataType::F32),
        ];
        assert_eq!(items(&list, None)?, [0, 1, 2]);
        assert_eq!(items(&list, Some("U velocity,Surface elevation"))?, [1, 0]);
        assert_eq!(items(&list, Some("U velocity, U velocity"))?, [1]);
        assert_eq!(items(&list, Some("a, b"))?, [2]);
        let error = items(&list, Some("Depth")).err();
        assert!(
            matches!(&error, Some(EdrError::Invalid { parameter: "parameter-name", message }) if message.contains("Surface elevation")),
            "{error:?}"
        );
        Ok(())
    }
}
