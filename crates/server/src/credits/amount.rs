//! Credit amounts: exact decimals with at most six places, kept as whole micro-credits in an
//! `i64`. No binary floating point touches an amount, on the way in, in the store or on the way
//! out: requests are read from the number's literal text (see
//! [`crate::http::extract::JsonBody::read_exact`]) and responses write the decimal text as a
//! JSON number.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Decimal places an amount may have.
pub(crate) const DECIMALS: usize = 6;
/// Micro-credits per credit.
const SCALE: i64 = 1_000_000;
/// The largest amount one request may name: one billion credits.
pub(crate) const REQUEST_MAX: Credits = Credits(1_000_000_000 * SCALE);
/// The most a pool may ever receive: a trillion credits, so that every sum of a pool's amounts
/// (at most 10^18 micro-credits) fits in an `i64`.
pub(crate) const POOL_RECEIVED_MAX: Credits = Credits(1_000_000_000_000 * SCALE);
/// Exponents beyond this cannot name an amount in range with six places or fewer.
const EXPONENT_MAX: i64 = 40;

/// An amount of credits (or a signed change of one, in the journal), in micro-credits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Credits(i64);

/// Why an amount was refused; the message is shown to the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AmountError {
    /// Not a decimal number.
    #[error("must be a decimal number such as 12.5")]
    NotANumber,
    /// Zero or negative.
    #[error("must be greater than zero")]
    NotPositive,
    /// More than six decimal places.
    #[error("must have at most 6 decimal places")]
    TooPrecise,
    /// Above [`REQUEST_MAX`].
    #[error("must be at most 1000000000")]
    TooLarge,
}

impl Credits {
    /// Nothing.
    pub(crate) const ZERO: Self = Self(0);

    /// An amount of `micros` micro-credits.
    pub(crate) const fn from_micros(micros: i64) -> Self {
        Self(micros)
    }

    /// The amount in micro-credits.
    pub(crate) const fn micros(self) -> i64 {
        self.0
    }

    /// Whether the amount is above zero.
    pub(crate) const fn is_positive(self) -> bool {
        self.0 > 0
    }

    /// The sum, `None` on overflow.
    pub(crate) fn checked_add(self, other: Self) -> Option<Self> {
        self.0.checked_add(other.0).map(Self)
    }

    /// The difference, `None` on overflow.
    pub(crate) fn checked_sub(self, other: Self) -> Option<Self> {
        self.0.checked_sub(other.0).map(Self)
    }

    /// The negated amount (journal changes); amounts are far from `i64::MIN`.
    pub(crate) const fn negated(self) -> Self {
        Self(self.0.saturating_neg())
    }

    /// Parses a request amount: positive, at most six decimal places, at most
    /// [`REQUEST_MAX`]. Accepts exactly what JSON numbers may be (`12`, `12.50`, `1.25e2`),
    /// whether sent as a number or in a string: no white space, no leading zeros (`007`), no
    /// `+`. Trailing zeros do not count as places.
    pub(crate) fn parse_amount(text: &str) -> Result<Self, AmountError> {
        let value = parse_decimal(text)?;
        if value <= 0 {
            return Err(AmountError::NotPositive);
        }
        if value > i128::from(REQUEST_MAX.0) {
            return Err(AmountError::TooLarge);
        }
        i64::try_from(value)
            .map(Self)
            .map_err(|_| AmountError::TooLarge)
    }
}

/// The value of a decimal literal in micro-credits (may be zero or negative), refusing more
/// than six places. Works on the digits as text: `0.1` is exactly 100,000 micro-credits.
fn parse_decimal(text: &str) -> Result<i128, AmountError> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => {
            let exponent = unsigned.get(at + 1..).unwrap_or_default();
            let exponent = parse_exponent(exponent)?;
            (unsigned.get(..at).unwrap_or_default(), exponent)
        }
        None => (unsigned, 0),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (mantissa, ""),
    };
    let digits_only = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    // JSON has no leading zeros: `0.5` and `0` are numbers, `00001` and `01.5` are not.
    if whole.is_empty()
        || (whole.len() > 1 && whole.starts_with('0'))
        || !digits_only(whole)
        || !digits_only(fraction)
        || (mantissa.contains('.') && fraction.is_empty())
    {
        return Err(AmountError::NotANumber);
    }
    // The value is digits × 10^(exponent − places); drop zeros that change nothing.
    let digits = format!("{whole}{fraction}");
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Ok(0);
    }
    let places = i64::try_from(fraction.len()).map_err(|_| AmountError::TooLarge)?;
    let dropped = i64::try_from(significant.len() - trimmed.len()).unwrap_or(i64::MAX);
    let scale = places - exponent - dropped;
    let decimals = i64::try_from(DECIMALS).unwrap_or(6);
    if scale > decimals {
        return Err(AmountError::TooPrecise);
    }
    // 10^(6 − scale) micro-credits per unit of the trimmed digits; too many digits is too large.
    let shift = u32::try_from(decimals - scale).map_err(|_| AmountError::TooLarge)?;
    if trimmed.len() > 30 || shift > 30 {
        return Err(AmountError::TooLarge);
    }
    let units: i128 = trimmed.parse().map_err(|_| AmountError::NotANumber)?;
    let value = 10_i128
        .checked_pow(shift)
        .and_then(|factor| units.checked_mul(factor))
        .ok_or(AmountError::TooLarge)?;
    Ok(if negative { -value } else { value })
}

fn parse_exponent(text: &str) -> Result<i64, AmountError> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AmountError::NotANumber);
    }
    let magnitude: i64 = digits.trim_start_matches('0').parse().or_else(|_| {
        if digits.trim_start_matches('0').is_empty() {
            Ok(0)
        } else {
            Err(AmountError::TooLarge)
        }
    })?;
    if magnitude > EXPONENT_MAX {
        // 1e-41 has too many places; 1e41 is too large (zero mantissas are refused later
        // anyway as not positive, so which error a zero gets does not matter).
        return Err(if text.starts_with('-') {
            AmountError::TooPrecise
        } else {
            AmountError::TooLarge
        });
    }
    Ok(if text.starts_with('-') {
        -magnitude
    } else {
        magnitude
    })
}

impl fmt::Display for Credits {
    /// The shortest exact decimal, with at least one place: `12.0`, `0.000001`, `-3.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let magnitude = self.0.unsigned_abs();
        let scale = SCALE.unsigned_abs();
        let whole = magnitude / scale;
        let fraction = format!("{:06}", magnitude % scale);
        let fraction = fraction.trim_end_matches('0');
        let fraction = if fraction.is_empty() { "0" } else { fraction };
        write!(f, "{sign}{whole}.{fraction}")
    }
}

impl Serialize for Credits {
    /// A JSON number written from the decimal text (serde_json's raw value), so no binary
    /// floating point rounds it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = serde_json::value::RawValue::from_string(self.to_string())
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Credits {
    /// A request amount, from the literal text of a JSON number (or a string holding one).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AmountVisitor)
    }
}

struct AmountVisitor;

impl Visitor<'_> for AmountVisitor {
    type Value = Credits;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a decimal number of credits")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Credits, E> {
        Credits::parse_amount(text).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Credits, E> {
        Credits::parse_amount(&value.to_string()).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Credits, E> {
        Credits::parse_amount(&value.to_string()).map_err(E::custom)
    }

    fn visit_f64<E: de::Error>(self, _value: f64) -> Result<Credits, E> {
        // Only reached when a body was bound without its literal text: refuse rather than
        // round.
        Err(E::custom(AmountError::NotANumber))
    }
}

impl utoipa::PartialSchema for Credits {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Number)
            .description(Some(
                "Credits: a decimal with at most 6 places, read and written exactly.",
            ))
            .examples([serde_json::json!(12.5)])
            .into()
    }
}

impl utoipa::ToSchema for Credits {}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(text: &str) -> Result<i64, AmountError> {
        Credits::parse_amount(text).map(Credits::micros)
    }

    #[test]
    fn amounts_are_read_exactly_from_their_digits() {
        assert_eq!(micros("1"), Ok(1_000_000));
        assert_eq!(micros("1.0"), Ok(1_000_000));
        assert_eq!(micros("0.1"), Ok(100_000));
        assert_eq!(micros("0.000001"), Ok(1));
        assert_eq!(micros("12.345678"), Ok(12_345_678));
        assert_eq!(micros("1.50000000000"), Ok(1_500_000));
        assert_eq!(micros("1.25e2"), Ok(125_000_000));
        assert_eq!(micros("125E-2"), Ok(1_250_000));
        assert_eq!(micros("1e-6"), Ok(1));
        assert_eq!(micros("0.5"), Ok(500_000));
        assert_eq!(micros("1e006"), Ok(1_000_000_000_000));
        assert_eq!(micros("1000000000"), Ok(1_000_000_000_000_000));
    }

    #[test]
    fn amounts_outside_the_rules_are_refused_with_their_reason() {
        use AmountError::*;
        for (text, error) in [
            ("0", NotPositive),
            ("0.0000", NotPositive),
            ("-1", NotPositive),
            ("-0.000001", NotPositive),
            ("0.0000001", TooPrecise),
            ("1.0000000000000001", TooPrecise),
            ("1e-7", TooPrecise),
            ("1e-999999999999", TooPrecise),
            ("1000000000.000001", TooLarge),
            ("1e10", TooLarge),
            ("1e999999999999999999999", TooLarge),
            ("99999999999999999999999999999999999999999", TooLarge),
            ("", NotANumber),
            ("abc", NotANumber),
            ("1.", NotANumber),
            (".5", NotANumber),
            ("1.2.3", NotANumber),
            ("1e", NotANumber),
            ("0x10", NotANumber),
            ("NaN", NotANumber),
            ("Infinity", NotANumber),
            ("+1", NotANumber),
            ("1,5", NotANumber),
            ("000012", NotANumber),
            ("00001", NotANumber),
            ("01.5", NotANumber),
            ("-01", NotANumber),
            (" 1", NotANumber),
            ("1 ", NotANumber),
            ("\t1", NotANumber),
            ("1\n", NotANumber),
        ] {
            assert_eq!(micros(text), Err(error), "{text}");
        }
    }

    #[test]
    fn amounts_are_written_as_the_shortest_exact_decimal() {
        for (micros, text) in [
            (1_000_000, "1.0"),
            (1, "0.000001"),
            (12_345_678, "12.345678"),
            (1_500_000, "1.5"),
            (0, "0.0"),
            (-3_500_000, "-3.5"),
            (1_000_000_000_000_000_000, "1000000000000.0"),
        ] {
            assert_eq!(Credits::from_micros(micros).to_string(), text);
        }
        let json = serde_json::to_string(&Credits::from_micros(100_000)).unwrap();
        assert_eq!(json, "0.1");
    }
}
