//! The time axis of a dataset. Formats without time have one step and [`TimeAxis::None`].

use chrono::NaiveDateTime;

/// When the steps of a dataset are. Times are calendar times without a zone, as in the
/// formats of this field (DFS, VTU series, NetCDF with a reference time).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TimeAxis {
    /// No time: exactly one step.
    None,
    /// `steps` steps, `step_seconds` apart, from `start`.
    Equidistant {
        /// Time of step 0.
        start: NaiveDateTime,
        /// Seconds between steps (may be fractional).
        step_seconds: f64,
        /// Number of steps.
        steps: usize,
    },
    /// Explicit times, one per step, ascending.
    Calendar(Vec<NaiveDateTime>),
    /// Offsets in seconds from an unspecified start (DFS relative axes), one per step.
    Relative(Vec<f64>),
}

impl TimeAxis {
    /// Number of steps (1 for [`TimeAxis::None`]).
    pub fn steps(&self) -> usize {
        match self {
            Self::None => 1,
            Self::Equidistant { steps, .. } => *steps,
            Self::Calendar(times) => times.len(),
            Self::Relative(offsets) => offsets.len(),
        }
    }

    /// Seconds of step `step` after step 0, or `None` past the end.
    pub fn offset_seconds(&self, step: usize) -> Option<f64> {
        match self {
            Self::None => (step == 0).then_some(0.0),
            Self::Equidistant {
                step_seconds,
                steps,
                ..
            } => (step < *steps).then_some(*step_seconds * step as f64),
            Self::Calendar(times) => {
                let first = times.first()?;
                let time = times.get(step)?;
                let delta = *time - *first;
                Some(delta.num_milliseconds() as f64 / 1000.0)
            }
            Self::Relative(offsets) => {
                let first = offsets.first()?;
                offsets.get(step).map(|offset| offset - first)
            }
        }
    }

    /// Calendar time of step `step`, when the axis has calendar times.
    pub fn time(&self, step: usize) -> Option<NaiveDateTime> {
        match self {
            Self::None | Self::Relative(_) => None,
            Self::Equidistant {
                start,
                step_seconds,
                steps,
            } => {
                if step >= *steps {
                    return None;
                }
                let millis = (*step_seconds * 1000.0 * step as f64).round();
                start.checked_add_signed(chrono::TimeDelta::milliseconds(millis as i64))
            }
            Self::Calendar(times) => times.get(step).copied(),
        }
    }
}
