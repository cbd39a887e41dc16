//! The time axis of appended data: the existing steps, then the addition's, which must come
//! after them. The result is as regular as the times allow: equidistant when every step is
//! the same length (to the millisecond), calendar times otherwise.

use chrono::NaiveDateTime;

use crate::error::{FormatError, FormatResult};
use crate::model::TimeAxis;

/// The axis of `existing`'s steps followed by `addition`'s.
///
/// Both must have times: calendar axes (equidistant or listed) whose addition starts after
/// the existing last time, or relative axes whose addition's offsets continue after the
/// existing last offset. Data without a time axis cannot take more steps, because nothing
/// says when they are.
pub fn concatenate(existing: &TimeAxis, addition: &TimeAxis) -> FormatResult<TimeAxis> {
    let error = |message: String| Err(FormatError::Append(message));
    let steps = existing
        .steps()
        .checked_add(addition.steps())
        .ok_or_else(|| FormatError::Append("too many time steps".to_owned()))?;
    match (existing, addition) {
        (TimeAxis::None, _) => error(
            "the existing data has no time axis; time steps can only be appended to data with \
             times"
                .to_owned(),
        ),
        (_, TimeAxis::None) => error(
            "the addition has no time axis; appended steps need times after the existing ones"
                .to_owned(),
        ),
        (TimeAxis::Relative(first), TimeAxis::Relative(second)) => {
            match (first.last(), second.first()) {
                (Some(last), Some(next)) if next <= last => error(format!(
                    "the addition's time offsets must continue after the existing data's last \
                     offset ({last} s); the addition starts at {next} s"
                )),
                _ => Ok(TimeAxis::Relative(
                    first.iter().chain(second).copied().collect(),
                )),
            }
        }
        (TimeAxis::Relative(_), _) => error(
            "the existing data has times relative to an unknown start and the addition has \
             calendar times"
                .to_owned(),
        ),
        (_, TimeAxis::Relative(_)) => error(
            "the existing data has calendar times and the addition has times relative to an \
             unknown start"
                .to_owned(),
        ),
        (existing, addition) => calendar(existing, addition, steps),
    }
}

/// Two calendar axes (equidistant or listed) of `steps` steps together.
fn calendar(existing: &TimeAxis, addition: &TimeAxis, steps: usize) -> FormatResult<TimeAxis> {
    let last = existing.time(existing.steps().saturating_sub(1));
    let next = addition.time(0);
    let (Some(last), Some(next)) = (last, next) else {
        // An axis with calendar times but no steps: nothing to order.
        return listed(existing, addition);
    };
    if next <= last {
        return Err(FormatError::Append(format!(
            "the addition starts at {}, which is not after the existing data's last time {}",
            iso(next),
            iso(last)
        )));
    }
    if let (
        TimeAxis::Equidistant {
            start,
            step_seconds: existing_step,
            steps: existing_steps,
        },
        TimeAxis::Equidistant {
            step_seconds: addition_step,
            steps: addition_steps,
            ..
        },
    ) = (existing, addition)
    {
        // Regular throughout when the gap between the two is one existing step and the
        // addition's step is the same (a single step has no length of its own).
        let gap_ms = (next - last).num_milliseconds();
        let step_ms = if *existing_steps >= 2 {
            milliseconds(*existing_step)
        } else {
            gap_ms
        };
        if gap_ms == step_ms && (*addition_steps < 2 || milliseconds(*addition_step) == step_ms) {
            return Ok(TimeAxis::Equidistant {
                start: *start,
                step_seconds: if *existing_steps >= 2 {
                    *existing_step
                } else {
                    gap_ms as f64 / 1000.0
                },
                steps,
            });
        }
    }
    listed(existing, addition)
}

/// Every time of both axes in order: equidistant when they are equally spaced, else the list.
fn listed(existing: &TimeAxis, addition: &TimeAxis) -> FormatResult<TimeAxis> {
    let count = existing.steps().saturating_add(addition.steps());
    let mut times: Vec<NaiveDateTime> = Vec::new();
    // The count comes from two headers that the readers bounded; the list is what the output
    // header must hold, but a failed allocation is an error, not an abort.
    times
        .try_reserve_exact(count)
        .map_err(|_| FormatError::Append(format!("{count} time steps are too many to list")))?;
    for axis in [existing, addition] {
        times.extend((0..axis.steps()).filter_map(|step| axis.time(step)));
    }
    let mut gaps = times.windows(2).map(|pair| match pair {
        [a, b] => (*b - *a).num_milliseconds(),
        _ => 0,
    });
    let regular = match gaps.next() {
        Some(first) if first > 0 => gaps.all(|gap| gap == first).then_some(first),
        _ => None,
    };
    Ok(match (regular, times.first()) {
        (Some(step_ms), Some(start)) => TimeAxis::Equidistant {
            start: *start,
            step_seconds: step_ms as f64 / 1000.0,
            steps: times.len(),
        },
        _ => TimeAxis::Calendar(times),
    })
}

fn milliseconds(seconds: f64) -> i64 {
    (seconds * 1000.0).round() as i64
}

fn iso(time: NaiveDateTime) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.f").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").unwrap()
    }

    fn hourly(start: &str, steps: usize) -> TimeAxis {
        TimeAxis::Equidistant {
            start: at(start),
            step_seconds: 3600.0,
            steps,
        }
    }

    #[test]
    fn equidistant_axes_that_follow_on_stay_equidistant() {
        let combined = concatenate(
            &hourly("2020-01-01T00:00:00", 3),
            &hourly("2020-01-01T03:00:00", 2),
        )
        .unwrap();
        assert_eq!(combined, hourly("2020-01-01T00:00:00", 5));
        // A single existing step takes its length from the gap.
        let combined = concatenate(
            &hourly("2020-01-01T00:00:00", 1),
            &hourly("2020-01-01T01:00:00", 3),
        )
        .unwrap();
        assert_eq!(combined, hourly("2020-01-01T00:00:00", 4));
    }

    #[test]
    fn a_gap_makes_calendar_times() {
        let combined = concatenate(
            &hourly("2020-01-01T00:00:00", 2),
            &hourly("2020-01-01T05:00:00", 1),
        )
        .unwrap();
        assert_eq!(
            combined,
            TimeAxis::Calendar(vec![
                at("2020-01-01T00:00:00"),
                at("2020-01-01T01:00:00"),
                at("2020-01-01T05:00:00"),
            ])
        );
    }

    #[test]
    fn regular_calendar_times_become_equidistant() {
        let existing =
            TimeAxis::Calendar(vec![at("2020-01-01T00:00:00"), at("2020-01-02T00:00:00")]);
        let combined = concatenate(
            &existing,
            &TimeAxis::Calendar(vec![at("2020-01-03T00:00:00")]),
        )
        .unwrap();
        assert_eq!(
            combined,
            TimeAxis::Equidistant {
                start: at("2020-01-01T00:00:00"),
                step_seconds: 86_400.0,
                steps: 3
            }
        );
    }

    #[test]
    fn an_addition_that_does_not_come_after_is_refused() {
        let error = concatenate(
            &hourly("2020-01-01T00:00:00", 3),
            &hourly("2020-01-01T02:00:00", 2),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains(
                "the addition starts at 2020-01-01T02:00:00, which is not after the existing \
                 data's last time 2020-01-01T02:00:00"
            ),
            "{error}"
        );
    }

    #[test]
    fn relative_axes_concatenate_when_the_offsets_continue() {
        let combined = concatenate(
            &TimeAxis::Relative(vec![0.0, 60.0]),
            &TimeAxis::Relative(vec![120.0]),
        )
        .unwrap();
        assert_eq!(combined, TimeAxis::Relative(vec![0.0, 60.0, 120.0]));
        let error = concatenate(
            &TimeAxis::Relative(vec![0.0, 60.0]),
            &TimeAxis::Relative(vec![0.0, 60.0]),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("must continue after"), "{error}");
    }

    #[test]
    fn axes_without_time_or_of_different_sorts_are_refused() {
        for (existing, addition, expected) in [
            (
                TimeAxis::None,
                hourly("2020-01-01T00:00:00", 1),
                "existing data has no time",
            ),
            (
                hourly("2020-01-01T00:00:00", 1),
                TimeAxis::None,
                "addition has no time",
            ),
            (
                TimeAxis::Relative(vec![0.0]),
                hourly("2020-01-01T00:00:00", 1),
                "relative to an unknown start and the addition has calendar",
            ),
        ] {
            let error = concatenate(&existing, &addition).unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
        }
    }
}
