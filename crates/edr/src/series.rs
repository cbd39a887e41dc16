//! Time series collections (DFS0): a file of items over a time axis and no place. EDR serves
//! them as **one location**, [`LOCATION_ID`], whose parameters are the file's items: the
//! `locations` query lists it, and asking for it gives the selected items at the selected
//! steps. (A DFS0 does not say whether its items are one station's quantities or several
//! stations' values of one quantity, so Basin does not guess places from item names.)

use std::path::Path;

use basin_formats::Catalogue;

use crate::Limits;
use crate::coverage::{Answer, Parameter, SeriesCoverage};
use crate::dataset::{Dataset, Space};
use crate::error::{EdrError, EdrResult};
use crate::read::{Selection, pick};
use crate::select::{self, TimeFilter};

/// The id of the one location of a time series collection.
pub const LOCATION_ID: &str = "series";

/// A location query as the request gave it, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesQuery {
    /// The `datetime` filter.
    pub time: Option<TimeFilter>,
    /// The `parameter-name` list as sent.
    pub parameter_names: Option<String>,
}

impl SeriesQuery {
    /// Parses `datetime` and `parameter-name`.
    pub fn parse(datetime: Option<&str>, parameter_names: Option<&str>) -> EdrResult<Self> {
        Ok(Self {
            time: datetime.map(TimeFilter::parse).transpose()?,
            parameter_names: parameter_names.map(str::to_owned),
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
        if !matches!(dataset.space, Space::Series) {
            return Err(EdrError::NotSupported(
                "only time series collections have locations; ask a grid or mesh by position"
                    .to_owned(),
            ));
        }
        let items = select::items(&dataset.items, self.parameter_names.as_deref())?;
        let steps = select::steps(&dataset.time, self.time.as_ref())?;
        if steps.is_empty() {
            return Err(EdrError::NoData(
                "no time step of the collection is in datetime".to_owned(),
            ));
        }
        let values = items.len().saturating_mul(steps.len());
        if values > limits.values_max {
            return Err(EdrError::TooLarge(format!(
                "the answer would hold {values} values ({} parameters x {} steps), more than \
                 the {} one query may; narrow datetime or parameter-name",
                items.len(),
                steps.len(),
                limits.values_max
            )));
        }
        let times = select::calendar_times(&dataset.time, &steps)?;
        // A time series has one value per item and step, at index 0 of the item's step.
        let selection = Selection {
            targets: vec![vec![Some(0); items.len()]],
            items: items.clone(),
            steps,
        };
        let picked = pick(catalogue, dataset, file, &selection)?;
        Ok(Answer::Series(SeriesCoverage {
            parameters: items
                .iter()
                .filter_map(|&item| dataset.items.get(item))
                .map(Parameter::of)
                .collect(),
            times,
            values: picked.into_iter().next().unwrap_or_default(),
        }))
    }
}
