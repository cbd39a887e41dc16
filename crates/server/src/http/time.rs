//! Timestamps in the wire format clients require: `2019-01-24T08:17:02.4355712`, UTC, no zone
//! suffix, exactly seven fractional digits (docs/api-conventions.md#timestamps). Input accepts
//! that form, `Z`, offsets and any number of fractional digits.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A UTC instant that serialises in the wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct WireTime(pub DateTime<Utc>);

impl WireTime {
    /// The 27 ASCII bytes of the wire format, `YYYY-MM-DDTHH:MM:SS.fffffff`.
    ///
    /// Written digit by digit: `format!` (and chrono's strftime, which also parses its
    /// format string on every call) were several percent of the CPU of a 100-row list page.
    /// Years outside 0..=9999 are clamped to four digits; none can be stored.
    fn wire_bytes(&self) -> [u8; 27] {
        use chrono::{Datelike, Timelike};
        let time = &self.0;
        // A leap second reports more than 10^9 nanoseconds; keep to seven digits.
        let ticks = (time.timestamp_subsec_nanos() / 100).min(9_999_999);
        let year = u32::try_from(time.year().clamp(0, 9999)).unwrap_or(0);
        let mut out = *b"0000-00-00T00:00:00.0000000";
        let fields: [(usize, usize, u32); 7] = [
            (0, 4, year),
            (5, 2, time.month()),
            (8, 2, time.day()),
            (11, 2, time.hour()),
            (14, 2, time.minute()),
            (17, 2, time.second()),
            (20, 7, ticks),
        ];
        for (start, width, value) in fields {
            let mut rest = value;
            for position in (start..start + width).rev() {
                if let Some(slot) = out.get_mut(position) {
                    // `rest % 10` is below 10, so the cast cannot truncate.
                    *slot = b'0' + (rest % 10) as u8;
                }
                rest /= 10;
            }
        }
        out
    }

    /// Parses a timestamp with or without zone; no zone means UTC.
    /// Besides RFC 3339 this takes the other ISO 8601 forms clients send: an offset without a
    /// colon (`+0200`), no seconds (`T08:17`), and a date alone (midnight UTC).
    pub(crate) fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if let Ok(with_zone) = DateTime::parse_from_rfc3339(raw) {
            return Some(Self(with_zone.with_timezone(&Utc)));
        }
        let zoned = match raw.strip_suffix(['Z', 'z']) {
            Some(local) => format!("{local}+0000"),
            None => raw.to_owned(),
        };
        for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%z"] {
            if let Ok(with_zone) = DateTime::parse_from_str(&zoned, format) {
                return Some(Self(with_zone.with_timezone(&Utc)));
            }
        }
        for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
            if let Ok(naive) = NaiveDateTime::parse_from_str(raw, format) {
                return Some(Self(naive.and_utc()));
            }
        }
        chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d")
            .ok()
            .and_then(|date| date.and_hms_opt(0, 0, 0))
            .map(|naive| Self(naive.and_utc()))
    }
}

impl From<DateTime<Utc>> for WireTime {
    fn from(time: DateTime<Utc>) -> Self {
        Self(time)
    }
}

impl Serialize for WireTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let bytes = self.wire_bytes();
        serializer.serialize_str(std::str::from_utf8(&bytes).map_err(serde::ser::Error::custom)?)
    }
}

impl<'de> Deserialize<'de> for WireTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Self::parse(&raw).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "invalid timestamp '{raw}'; use ISO 8601 such as 2019-01-24T08:17:02.4355712"
            ))
        })
    }
}

impl utoipa::PartialSchema for WireTime {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some(
                "UTC timestamp without zone suffix, seven fractional digits",
            ))
            .examples([serde_json::json!("2019-01-24T08:17:02.4355712")])
            .into()
    }
}

impl utoipa::ToSchema for WireTime {}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn timestamps_are_written_with_seven_digits_and_no_zone() {
        let time = Utc.with_ymd_and_hms(2019, 1, 24, 8, 17, 2).unwrap()
            + chrono::TimeDelta::nanoseconds(435_571_200);
        assert_eq!(
            serde_json::to_string(&WireTime(time)).unwrap(),
            "\"2019-01-24T08:17:02.4355712\""
        );
        let whole = Utc.with_ymd_and_hms(2026, 11, 21, 0, 0, 0).unwrap();
        assert_eq!(
            serde_json::to_string(&WireTime(whole)).unwrap(),
            "\"2026-11-21T00:00:00.0000000\""
        );
    }

    #[test]
    fn timestamps_are_read_with_z_offsets_or_no_zone() {
        let expected = Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).unwrap();
        for raw in [
            "2025-06-01T12:00:00Z",
            "2025-06-01T14:00:00+02:00",
            "2025-06-01T12:00:00",
            "2025-06-01T12:00:00.0000000",
            "2025-06-01T14:00:00+0200",
            "2025-06-01T12:00",
            "2025-06-01T12:00Z",
        ] {
            assert_eq!(WireTime::parse(raw), Some(WireTime(expected)), "{raw}");
        }
        assert_eq!(
            WireTime::parse("2025-06-01"),
            Some(WireTime(Utc.with_ymd_and_hms(2025, 6, 1, 0, 0, 0).unwrap()))
        );
        assert_eq!(WireTime::parse("yesterday"), None);
    }
}
