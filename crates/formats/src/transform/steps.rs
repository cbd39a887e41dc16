//! The temporal filter: keeps the selected time steps.
//!
//! The selection is resolved against the header's time axis; the filtered axis goes on, and
//! each frame of a kept step goes on with the step's new index. The output axis stays as
//! regular as the selection allows: an equidistant axis stays equidistant for a contiguous
//! range or for indices a constant stride apart (the step length times the stride), and
//! becomes a list of calendar times otherwise; calendar and relative axes keep the selected
//! entries. Frames of dropped steps are not passed on; nothing is buffered.
//!
//! Feature collections and point sets have no time: like grids without a time axis they count
//! as one step, which a filter may keep (index 0) but not drop.

use chrono::NaiveDateTime;

use super::{TEMPORAL_FILTER_TRANSFORMATION, TemporalFilter};
use crate::error::{FormatError, FormatResult};
use crate::model::{
    DatasetSink, Feature, Frame, GridHeader, Header, MeshHeader, PointChunk, TimeAxis,
    TimeSeriesHeader,
};

/// Fails for a filter that can select nothing whatever the data: no bound, bounds in the
/// wrong order, an empty list.
pub(super) fn validate(filter: &TemporalFilter) -> FormatResult<()> {
    match filter {
        TemporalFilter::IndexRange { from, to } => match (from, to) {
            (None, None) => Err(error("the temporal index filter needs from, to or both")),
            (Some(from), Some(to)) if from > to => Err(error(format!(
                "the temporal index filter's from ({from}) is after its to ({to})"
            ))),
            _ => Ok(()),
        },
        TemporalFilter::TimeRange { from, to } => match (from, to) {
            (None, None) => Err(error("the temporal value filter needs from, to or both")),
            (Some(from), Some(to)) if from > to => Err(error(format!(
                "the temporal value filter's from ({}) is after its to ({})",
                iso(*from),
                iso(*to)
            ))),
            _ => Ok(()),
        },
        TemporalFilter::IndexList(indices) if indices.is_empty() => {
            Err(error("the temporal index list filter lists no index"))
        }
        TemporalFilter::IndexList(_) => Ok(()),
    }
}

fn error(message: impl Into<String>) -> FormatError {
    FormatError::transformation(TEMPORAL_FILTER_TRANSFORMATION, message)
}

fn iso(time: NaiveDateTime) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.f").to_string()
}

/// The kept steps of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selected {
    /// `count` steps from `first`.
    Range { first: usize, count: usize },
    /// These steps, ascending, without duplicates.
    List(Vec<usize>),
}

impl Selected {
    /// The output index of input step `step`, or `None` when it is dropped.
    fn output_step(&self, step: usize) -> Option<usize> {
        match self {
            Self::Range { first, count } => {
                step.checked_sub(*first).filter(|offset| offset < count)
            }
            Self::List(steps) => steps.binary_search(&step).ok(),
        }
    }

    /// The kept steps in order (allocates for a range; used for axes that list their steps,
    /// whose header already holds one entry per step).
    fn steps(&self) -> Vec<usize> {
        match self {
            Self::Range { first, count } => (*first..first.saturating_add(*count)).collect(),
            Self::List(steps) => steps.clone(),
        }
    }

    fn first(&self) -> usize {
        match self {
            Self::Range { first, .. } => *first,
            Self::List(steps) => steps.first().copied().unwrap_or(0),
        }
    }

    fn count(&self) -> usize {
        match self {
            Self::Range { count, .. } => *count,
            Self::List(steps) => steps.len(),
        }
    }

    /// The constant distance between kept steps: 1 for a range, the list's stride when it
    /// has one, `None` for an irregular list.
    fn stride(&self) -> Option<usize> {
        match self {
            Self::Range { .. } => Some(1),
            Self::List(steps) => {
                let mut pairs = steps.windows(2).map(|pair| match pair {
                    [a, b] => b.saturating_sub(*a),
                    _ => 0,
                });
                let Some(stride) = pairs.next() else {
                    return Some(1);
                };
                pairs.all(|next| next == stride).then_some(stride)
            }
        }
    }
}

/// Passes on the selected time steps only.
pub(super) struct TemporalFilterSink<'a> {
    inner: Box<dyn DatasetSink + 'a>,
    filter: TemporalFilter,
    /// Set at `begin`.
    selected: Option<Selected>,
}

impl<'a> TemporalFilterSink<'a> {
    pub(super) fn new(inner: Box<dyn DatasetSink + 'a>, filter: TemporalFilter) -> Self {
        Self {
            inner,
            filter,
            selected: None,
        }
    }

    /// Resolves the filter against `axis` and returns the filtered axis.
    fn filter_axis(&mut self, axis: &TimeAxis) -> FormatResult<TimeAxis> {
        let selected = select(&self.filter, axis)?;
        let filtered = filtered_axis(axis, &selected);
        self.selected = Some(selected);
        Ok(filtered)
    }
}

impl DatasetSink for TemporalFilterSink<'_> {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let header = match header {
            Header::Grid(grid) => Header::Grid(GridHeader {
                time: self.filter_axis(&grid.time)?,
                ..grid.clone()
            }),
            Header::Mesh(mesh) => Header::Mesh(MeshHeader {
                time: self.filter_axis(&mesh.time)?,
                geometry: std::sync::Arc::clone(&mesh.geometry),
                items: mesh.items.clone(),
            }),
            Header::TimeSeries(series) => Header::TimeSeries(TimeSeriesHeader {
                time: self.filter_axis(&series.time)?,
                ..series.clone()
            }),
            Header::Features(_) | Header::Points(_) => {
                // One step without time: the filter must keep it.
                self.filter_axis(&TimeAxis::None).map_err(|cause| {
                    error(format!(
                        "a {} has no time steps: {}",
                        header.kind().name(),
                        message_of(&cause)
                    ))
                })?;
                header.clone()
            }
        };
        self.inner.begin(&header)
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        match &self.selected {
            Some(selected) => selected
                .output_step(step)
                .is_some_and(|step| self.inner.wants(step, item)),
            None => true,
        }
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some(selected) = &self.selected else {
            return Err(error("values arrived before the header"));
        };
        match selected.output_step(frame.step) {
            Some(step) => self.inner.frame(Frame { step, ..frame }),
            None => Ok(()),
        }
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        self.inner.feature(feature)
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        self.inner.points(chunk)
    }

    fn end(&mut self) -> FormatResult<()> {
        self.inner.end()
    }
}

/// The message of one of this module's errors, without the transformation's name.
fn message_of(error: &FormatError) -> String {
    match error {
        FormatError::Transformation { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// The steps of `axis` the filter keeps; an error when it keeps none or names a step the
/// axis does not have.
fn select(filter: &TemporalFilter, axis: &TimeAxis) -> FormatResult<Selected> {
    let steps = axis.steps();
    let none_selected = || {
        error(format!(
            "the temporal filter selects no time step of the {steps}{}",
            span_of(axis)
        ))
    };
    let selected = match filter {
        TemporalFilter::IndexRange { from, to } => {
            let first = from.unwrap_or(0);
            let last = to.unwrap_or(usize::MAX).min(steps.saturating_sub(1));
            if steps == 0 || first > last {
                return Err(none_selected());
            }
            Selected::Range {
                first,
                count: last.saturating_sub(first).saturating_add(1),
            }
        }
        TemporalFilter::IndexList(indices) => {
            let mut indices = indices.clone();
            indices.sort_unstable();
            indices.dedup();
            if let Some(past) = indices.iter().find(|index| **index >= steps) {
                return Err(error(format!(
                    "time step index {past} is out of range: the data has {steps} time step{} \
                     (indices 0 to {})",
                    if steps == 1 { "" } else { "s" },
                    steps.saturating_sub(1)
                )));
            }
            Selected::List(indices)
        }
        TemporalFilter::TimeRange { from, to } => select_times(axis, *from, *to)?,
    };
    if selected.count() == 0 {
        return Err(none_selected());
    }
    Ok(selected)
}

/// ` (from .. to)` for an axis with calendar times, for messages.
fn span_of(axis: &TimeAxis) -> String {
    let last = axis.steps().saturating_sub(1);
    match (axis.time(0), axis.time(last)) {
        (Some(first), Some(last)) => format!(" ({} to {})", iso(first), iso(last)),
        _ => String::new(),
    }
}

/// The steps of a calendar axis within `from..=to`.
fn select_times(
    axis: &TimeAxis,
    from: Option<NaiveDateTime>,
    to: Option<NaiveDateTime>,
) -> FormatResult<Selected> {
    let steps = axis.steps();
    let (first, end) = match axis {
        TimeAxis::None => {
            return Err(error(
                "the temporal value filter needs calendar times; the data has no time axis",
            ));
        }
        TimeAxis::Relative(_) => {
            return Err(error(
                "the temporal value filter needs calendar times; the data has times relative \
                 to an unknown start; use a temporal index filter",
            ));
        }
        TimeAxis::Calendar(times) => (
            from.map_or(0, |from| times.partition_point(|time| *time < from)),
            to.map_or(steps, |to| times.partition_point(|time| *time <= to)),
        ),
        TimeAxis::Equidistant { .. } => (
            from.map_or(0, |from| first_at_or_after(axis, from)),
            to.map_or(steps, |to| first_at_or_after_strictly(axis, to)),
        ),
    };
    Ok(Selected::Range {
        first,
        count: end.saturating_sub(first),
    })
}

/// The first step of an equidistant axis whose time is at or after `time` (the step count
/// when there is none). Searched against [`TimeAxis::time`] rather than computed by division,
/// so that rounding agrees with the times the writer will see.
fn first_at_or_after(axis: &TimeAxis, time: NaiveDateTime) -> usize {
    partition(axis.steps(), |step| {
        axis.time(step).is_some_and(|step_time| step_time < time)
    })
}

/// The first step of an equidistant axis whose time is after `time`.
fn first_at_or_after_strictly(axis: &TimeAxis, time: NaiveDateTime) -> usize {
    partition(axis.steps(), |step| {
        axis.time(step).is_some_and(|step_time| step_time <= time)
    })
}

/// The first index in `0..count` where `before` is false, for `before` true then false:
/// a binary search, so a hundred million steps cost 27 calls.
fn partition(count: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0_usize, count);
    while low < high {
        let middle = low + (high - low) / 2;
        if before(middle) {
            low = middle.saturating_add(1);
        } else {
            high = middle;
        }
    }
    low
}

/// The axis of the kept steps.
fn filtered_axis(axis: &TimeAxis, selected: &Selected) -> TimeAxis {
    match axis {
        TimeAxis::None => TimeAxis::None,
        TimeAxis::Equidistant {
            start,
            step_seconds,
            ..
        } => {
            let first = axis.time(selected.first()).unwrap_or(*start);
            match selected.stride() {
                Some(stride) => TimeAxis::Equidistant {
                    start: first,
                    step_seconds: step_seconds * stride as f64,
                    steps: selected.count(),
                },
                None => TimeAxis::Calendar(
                    selected
                        .steps()
                        .into_iter()
                        .filter_map(|step| axis.time(step))
                        .collect(),
                ),
            }
        }
        TimeAxis::Calendar(times) => TimeAxis::Calendar(
            selected
                .steps()
                .into_iter()
                .filter_map(|step| times.get(step).copied())
                .collect(),
        ),
        TimeAxis::Relative(offsets) => TimeAxis::Relative(
            selected
                .steps()
                .into_iter()
                .filter_map(|step| offsets.get(step).copied())
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").unwrap()
    }

    fn hourly(steps: usize) -> TimeAxis {
        TimeAxis::Equidistant {
            start: at("2020-01-01T00:00:00"),
            step_seconds: 3600.0,
            steps,
        }
    }

    #[test]
    fn time_ranges_on_equidistant_axes_include_both_bounds() {
        let axis = hourly(10);
        let selected = select_times(
            &axis,
            Some(at("2020-01-01T02:00:00")),
            Some(at("2020-01-01T05:00:00")),
        )
        .unwrap();
        assert_eq!(selected, Selected::Range { first: 2, count: 4 });
        let selected = select_times(
            &axis,
            Some(at("2020-01-01T01:30:00")),
            Some(at("2020-01-01T05:59:59")),
        )
        .unwrap();
        assert_eq!(selected, Selected::Range { first: 2, count: 4 });
        let selected = select_times(&axis, Some(at("2019-01-01T00:00:00")), None).unwrap();
        assert_eq!(
            selected,
            Selected::Range {
                first: 0,
                count: 10
            }
        );
        let selected = select_times(&axis, Some(at("2021-01-01T00:00:00")), None).unwrap();
        assert_eq!(selected.count(), 0);
    }

    #[test]
    fn fractional_steps_agree_with_the_axis_times() {
        let axis = TimeAxis::Equidistant {
            start: at("2020-01-01T00:00:00"),
            step_seconds: 0.1,
            steps: 100,
        };
        for step in 0..100 {
            let time = axis.time(step).unwrap();
            assert_eq!(first_at_or_after(&axis, time), step);
            assert_eq!(first_at_or_after_strictly(&axis, time), step + 1);
        }
    }

    #[test]
    fn strides_keep_equidistant_axes_equidistant() {
        let axis = hourly(10);
        let list = Selected::List(vec![1, 4, 7]);
        assert_eq!(
            filtered_axis(&axis, &list),
            TimeAxis::Equidistant {
                start: at("2020-01-01T01:00:00"),
                step_seconds: 3.0 * 3600.0,
                steps: 3
            }
        );
        let irregular = Selected::List(vec![1, 2, 7]);
        assert_eq!(
            filtered_axis(&axis, &irregular),
            TimeAxis::Calendar(vec![
                at("2020-01-01T01:00:00"),
                at("2020-01-01T02:00:00"),
                at("2020-01-01T07:00:00"),
            ])
        );
    }

    #[test]
    fn bounds_in_the_wrong_order_fail_validation() {
        let error = validate(&TemporalFilter::IndexRange {
            from: Some(5),
            to: Some(2),
        })
        .unwrap_err()
        .to_string();
        assert!(error.contains("from (5) is after its to (2)"), "{error}");
        assert!(validate(&TemporalFilter::IndexList(Vec::new())).is_err());
        assert!(
            validate(&TemporalFilter::TimeRange {
                from: None,
                to: None
            })
            .is_err()
        );
    }
}
