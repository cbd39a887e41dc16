//! How numbers in the configuration become typed values. On the wire (TOML, `BASIN_*`,
//! `basin config`) a duration stays a whole number in the unit its name ends with
//! (`lease_seconds`, `poll_interval_ms`) and a count stays a number; in Rust they are
//! [`Duration`]s and `NonZero*` integers, so code that uses them needs no clamp. A value out
//! of its range is refused while it is parsed: figment adds the key (or the environment
//! variable) to the message, so the error names the setting, its range and what was given.

use std::fmt;
use std::num::{NonZeroU32, NonZeroU64, NonZeroUsize};
use std::time::Duration;

use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};

/// Writes a duration as its whole seconds.
pub(super) fn as_seconds<S: Serializer>(
    value: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(value.as_secs())
}

/// Writes a duration as its whole milliseconds.
pub(super) fn as_millis<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
}

/// A default count written in the source; zero, which no default is, would read as 1.
pub(super) const fn count_u32(value: u32) -> NonZeroU32 {
    match NonZeroU32::new(value) {
        Some(count) => count,
        None => NonZeroU32::MIN,
    }
}

/// A default count written in the source; zero, which no default is, would read as 1.
pub(super) const fn count_u64(value: u64) -> NonZeroU64 {
    match NonZeroU64::new(value) {
        Some(count) => count,
        None => NonZeroU64::MIN,
    }
}

/// A default count written in the source; zero, which no default is, would read as 1.
pub(super) const fn count_usize(value: usize) -> NonZeroUsize {
    match NonZeroUsize::new(value) {
        Some(count) => count,
        None => NonZeroUsize::MIN,
    }
}

/// Reads values of at least `MIN` (in the setting's unit), with no upper bound.
pub(super) struct AtLeast<const MIN: u64>;

impl<const MIN: u64> AtLeast<MIN> {
    /// A duration written in seconds.
    pub(super) fn seconds<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        Between::<MIN, { u64::MAX }>::seconds(deserializer)
    }

    /// A duration written in milliseconds.
    pub(super) fn millis<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        Between::<MIN, { u64::MAX }>::millis(deserializer)
    }

    /// A count that must not be zero (`MIN` is then at least 1).
    pub(super) fn count<'de, D: Deserializer<'de>, T: Count>(
        deserializer: D,
    ) -> Result<T, D::Error> {
        Between::<MIN, { u64::MAX }>::count(deserializer)
    }
}

/// Reads values from `MIN` to `MAX` (in the setting's unit); `MAX` `u64::MAX` is no bound.
pub(super) struct Between<const MIN: u64, const MAX: u64>;

impl<const MIN: u64, const MAX: u64> Between<MIN, MAX> {
    /// A duration written in seconds.
    pub(super) fn seconds<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        in_range(deserializer, "seconds", MIN, MAX, u64::MAX).map(Duration::from_secs)
    }

    /// A duration written in milliseconds.
    pub(super) fn millis<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        in_range(deserializer, "milliseconds", MIN, MAX, u64::MAX).map(Duration::from_millis)
    }

    /// A count that must not be zero, at most `MAX` and what `T` holds.
    pub(super) fn count<'de, D: Deserializer<'de>, T: Count>(
        deserializer: D,
    ) -> Result<T, D::Error> {
        let min = if MIN == 0 { 1 } else { MIN };
        let value = in_range(deserializer, "", min, MAX, T::MAX)?;
        T::from_u64(value)
            .ok_or_else(|| de::Error::custom(range_message("", min, MAX, T::MAX, value)))
    }
}

/// A `NonZero*` integer a count setting is read into.
pub(super) trait Count: Sized {
    /// The largest value the type holds.
    const MAX: u64;
    /// `value` as this type; `None` for zero or a value too large.
    fn from_u64(value: u64) -> Option<Self>;
}

impl Count for NonZeroU32 {
    const MAX: u64 = u32::MAX as u64;
    fn from_u64(value: u64) -> Option<Self> {
        u32::try_from(value).ok().and_then(Self::new)
    }
}

impl Count for NonZeroU64 {
    const MAX: u64 = u64::MAX;
    fn from_u64(value: u64) -> Option<Self> {
        Self::new(value)
    }
}

impl Count for NonZeroUsize {
    const MAX: u64 = usize::MAX as u64;
    fn from_u64(value: u64) -> Option<Self> {
        usize::try_from(value).ok().and_then(Self::new)
    }
}

/// Reads a whole number and refuses it outside `min..=max` (`max` `u64::MAX`: the setting
/// has no upper bound) or above `held`, the largest value its type holds.
fn in_range<'de, D: Deserializer<'de>>(
    deserializer: D,
    unit: &'static str,
    min: u64,
    max: u64,
    held: u64,
) -> Result<u64, D::Error> {
    let value = deserializer.deserialize_u64(WholeNumber { unit })?;
    if (min..=max.min(held)).contains(&value) {
        Ok(value)
    } else {
        Err(de::Error::custom(range_message(
            unit, min, max, held, value,
        )))
    }
}

/// `must be at least 10 milliseconds, got 5`, `must be between 1 and 1000, got 0`, `must be
/// at most 4294967295, got 5000000000`.
pub(super) fn range_message(unit: &str, min: u64, max: u64, held: u64, value: u64) -> String {
    if max != u64::MAX {
        format!(
            "must be between {min} and {}, got {value}",
            amount(max, unit)
        )
    } else if value < min {
        format!("must be at least {}, got {value}", amount(min, unit))
    } else {
        format!("must be at most {}, got {value}", amount(held, unit))
    }
}

/// `10 milliseconds`, `1 second`, `1000` (a count has no unit).
fn amount(value: u64, unit: &str) -> String {
    match (unit, value) {
        ("", _) => value.to_string(),
        (_, 1) => format!("1 {}", unit.trim_end_matches('s')),
        _ => format!("{value} {unit}"),
    }
}

/// A non-negative whole number; anything else is refused naming the unit expected.
struct WholeNumber {
    unit: &'static str,
}

impl Visitor<'_> for WholeNumber {
    type Value = u64;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unit.is_empty() {
            formatter.write_str("a whole number")
        } else {
            write!(formatter, "a whole number of {}", self.unit)
        }
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<u64, E> {
        Ok(value)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<u64, E> {
        u64::try_from(value).map_err(|_| E::custom(format!("must not be negative, got {value}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_said_with_their_unit_and_the_value_given() {
        assert_eq!(
            range_message("milliseconds", 10, u64::MAX, u64::MAX, 5),
            "must be at least 10 milliseconds, got 5"
        );
        assert_eq!(
            range_message("", 1, 1000, u64::from(u32::MAX), 1001),
            "must be between 1 and 1000, got 1001"
        );
        assert_eq!(
            range_message("", 1, u64::MAX, u64::from(u32::MAX), 0),
            "must be at least 1, got 0"
        );
        assert_eq!(
            range_message("seconds", 1, u64::MAX, u64::MAX, 0),
            "must be at least 1 second, got 0"
        );
        assert_eq!(
            range_message("", 1, u64::MAX, u64::from(u32::MAX), 5_000_000_000),
            "must be at most 4294967295, got 5000000000"
        );
    }
}
