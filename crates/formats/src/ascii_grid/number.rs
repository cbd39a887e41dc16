//! Numbers of an ASCII Grid: splitting a token into digits and exponent, converting it to a
//! value, and telling which type holds it exactly.
//!
//! A grid of 10^8 values spends most of its time here, so the common case avoids the general
//! float parser: a decimal of at most 19 significant digits whose mantissa fits in 53 bits and
//! whose power of ten is at most 22 converts with one exact multiplication or division, which
//! IEEE arithmetic rounds correctly (Clinger's fast path). Everything else (more digits, large
//! exponents, `nan`, `inf`) goes to `str::parse::<f64>`, which is correctly rounded too, so the
//! value never depends on which path was taken. Float32 grids written by GDAL spell every value
//! with 20 digits; for those, [`Decimal::float32_from_prefix`] finds the float32 from the first
//! 15 digits and [`Decimal::is_float32_written_out`] proves exactness in integer arithmetic,
//! each only when the answer is certain, so that such a grid never needs the general parser.

use crate::text::shorten;

/// The powers of ten that are exact in f64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The negative powers of ten, each the f64 nearest to it.
const NEGATIVE_POW10: [f64; 23] = [
    1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14,
    1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
];

/// Significant digits kept in the mantissa; 19 digits always fit in a u64.
const MANTISSA_DIGITS_MAX: u32 = 19;

/// Largest mantissa that is exact in f64 (2^53).
const EXACT_MANTISSA_MAX: u64 = 1 << 53;

/// Exponent digits beyond this magnitude only say "overflow" or "underflow".
const EXPONENT_MAGNITUDE_MAX: i32 = 100_000;

/// A decimal token split into sign, significant digits and power of ten, not yet converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal {
    /// A leading `-`.
    pub negative: bool,
    /// The first (up to) 19 significant digits.
    pub mantissa: u64,
    /// The power of ten the mantissa is multiplied by.
    pub exponent: i32,
    /// Number of digits in `mantissa` (0 for zero).
    pub digits: u32,
    /// True when non-zero digits beyond the 19th were dropped.
    pub truncated: bool,
    /// True when written as an integer: an optional sign and digits, nothing else.
    pub integer: bool,
}

impl Decimal {
    /// Splits a token of the form `[+-]digits[.digits][(e|E)[+-]digits]` (at least one
    /// mantissa digit, either side of the point); `None` for anything else, including `nan`
    /// and `inf`.
    pub fn scan(token: &[u8]) -> Option<Self> {
        let (negative, mut rest) = match token {
            [b'-', rest @ ..] => (true, rest),
            [b'+', rest @ ..] => (false, rest),
            _ => (false, token),
        };
        let mut decimal = Self {
            negative,
            mantissa: 0,
            exponent: 0,
            digits: 0,
            truncated: false,
            integer: true,
        };
        let mut any_digit = false;
        while let [b'0', tail @ ..] = rest {
            any_digit = true;
            rest = tail;
        }
        let integer_part = rest;
        rest = decimal.push_digits(rest, false);
        any_digit |= rest.len() < integer_part.len();
        if let [b'.', tail @ ..] = rest {
            decimal.integer = false;
            rest = tail;
            if decimal.mantissa == 0 {
                while let [b'0', tail @ ..] = rest {
                    any_digit = true;
                    decimal.exponent = decimal.exponent.saturating_sub(1);
                    rest = tail;
                }
            }
            let fraction = rest;
            rest = decimal.push_digits(rest, true);
            any_digit |= rest.len() < fraction.len();
        }
        if !any_digit {
            return None;
        }
        if let [b'e' | b'E', tail @ ..] = rest {
            decimal.integer = false;
            let (power, after) = scan_exponent(tail)?;
            decimal.exponent = decimal.exponent.saturating_add(power);
            rest = after;
        }
        rest.is_empty().then_some(decimal)
    }

    /// Adds the digits at the start of `rest` to the mantissa, eight at a time while they fit,
    /// and returns what follows them. Past [`MANTISSA_DIGITS_MAX`] digits are dropped (noting
    /// whether a non-zero one was). Digits after the point (`fraction`) lower the exponent when
    /// kept; digits before it raise it when dropped. Inlined because [`Decimal::scan`] calls it
    /// twice for every value of a grid.
    #[inline(always)]
    fn push_digits<'a>(&mut self, mut rest: &'a [u8], fraction: bool) -> &'a [u8] {
        while self.digits <= MANTISSA_DIGITS_MAX - 8
            && let Some((chunk, tail)) = rest.split_first_chunk::<8>()
            && let Some(value) = eight_digits(*chunk)
        {
            // At most 11 digits so far: below 10^11, times 10^8 plus 8 digits is below 10^19.
            self.mantissa = self.mantissa * 100_000_000 + value;
            self.digits += 8;
            if fraction {
                self.exponent = self.exponent.saturating_sub(8);
            }
            rest = tail;
        }
        while let [byte @ b'0'..=b'9', tail @ ..] = rest {
            rest = tail;
            if self.digits < MANTISSA_DIGITS_MAX {
                // Fewer than 19 digits so far: below 10^18, times 10 plus 9 is below 2^64.
                self.mantissa = self.mantissa * 10 + u64::from(byte - b'0');
                self.digits += 1;
                if fraction {
                    self.exponent = self.exponent.saturating_sub(1);
                }
            } else {
                self.truncated |= *byte != b'0';
                if !fraction {
                    self.exponent = self.exponent.saturating_add(1);
                }
            }
        }
        rest
    }

    /// The value as f64, correctly rounded; `None` only if the general parser disagrees with
    /// the scan, which it cannot for a token [`Decimal::scan`] accepted.
    pub fn value(&self, token: &[u8]) -> Option<f64> {
        if self.mantissa == 0 {
            return Some(if self.negative { -0.0 } else { 0.0 });
        }
        if !self.truncated
            && let Some(magnitude) = clinger(self.mantissa, self.exponent)
        {
            return Some(if self.negative { -magnitude } else { magnitude });
        }
        parse_general(token)
    }

    /// The value rounded to f64 and then to f32 (as GDAL rounds), for a decimal of more than
    /// 15 significant digits, from its first 15 digits alone; `None` when those do not decide
    /// it. The decimal lies between the 15-digit truncation and the next 15-digit decimal;
    /// when that range, widened by far more than the rounding of the arithmetic, lies strictly
    /// between the midpoints to the neighbouring f32, every number in it, and so the decimal's
    /// f64, rounds to that f32. Decimals written from float32 by GDAL (`%.20g`)
    /// are always decided here, which spares the general parser.
    pub fn float32_from_prefix(&self) -> Option<f32> {
        // Constant divisors, so that no integer division is needed.
        let (prefix, dropped) = match self.digits {
            16 => (self.mantissa / 10, 1),
            17 => (self.mantissa / 100, 2),
            18 => (self.mantissa / 1_000, 3),
            19 => (self.mantissa / 10_000, 4),
            _ => return None,
        };
        let exponent = self.exponent.checked_add(dropped)?;
        let index = usize::try_from(exponent.unsigned_abs()).ok()?;
        // 10^exponent, exact for exponent >= 0 and within half an ulp below.
        let scale = if exponent >= 0 {
            POW10.get(index)
        } else {
            NEGATIVE_POW10.get(index)
        }
        .copied()?;
        // The prefix is exact (below 10^15); `low` is within two ulps of prefix x 10^exponent,
        // and the decimal lies below `low + scale`. `margin` covers those ulps many times over.
        let low = prefix as f64 * scale;
        let margin = low * 1e-15;
        let narrow = low as f32;
        let below = (f64::from(narrow) + f64::from(narrow.next_down())) / 2.0;
        let above = (f64::from(narrow) + f64::from(narrow.next_up())) / 2.0;
        let decided = narrow.is_finite()
            && narrow != 0.0
            && below < low - margin
            && low + scale + margin < above;
        if !decided {
            return None;
        }
        Some(if self.negative { -narrow } else { narrow })
    }

    /// True when the decimal (of more than 15 digits) is certainly a float32 written out:
    /// its f64 is exactly the f64 of a float32, as in GDAL's `%.20g` output of float32 data.
    /// Decided in integers, without the general parser; false means "not shown", and the
    /// caller then parses.
    pub fn is_float32_written_out(&self) -> bool {
        self.float32_from_prefix()
            .and_then(|narrow| self.rounds_to(f64::from(narrow)))
            .unwrap_or(false)
    }

    /// Whether the decimal rounds (to nearest, ties to even) to `wide`, the f64 of a float32,
    /// compared in integers: with `wide = f x 2^g` (53-bit `f`), the decimal `T x 10^-k` rounds
    /// to it when `|T x 10^-k - f x 2^g| <= 2^(g-1)`; multiplying by `10^k x 2^(1-g-k)` makes
    /// every side an integer: `|T x 2^s - 2 f 5^k| <= 5^k` with `s = 1 - g - k`. A truncated
    /// decimal lies between `T` and `T + 1` and must pass at both ends. `None` when the numbers
    /// do not fit in 128 bits or `wide` is a power of two (whose lower half-gap is smaller).
    fn rounds_to(&self, wide: f64) -> Option<bool> {
        let bits = wide.abs().to_bits();
        let fraction = bits & ((1_u64 << 52) - 1);
        let biased = i32::try_from(bits >> 52).ok()?;
        if fraction == 0 || biased == 0 || biased == 0x7ff {
            return None;
        }
        let f = u128::from(fraction | (1_u64 << 52));
        let g = biased - 1075;
        let k = self.exponent.checked_neg()?;
        let s = 1_i32.checked_sub(g)?.checked_sub(k)?;
        if !(0..=31).contains(&k) || !(0..=120).contains(&s) {
            return None;
        }
        let five = 5_u128.checked_pow(k.unsigned_abs())?;
        let target = f.checked_mul(five)?.checked_mul(2)?;
        let scale = 1_u128.checked_shl(s.unsigned_abs())?;
        let low = u128::from(self.mantissa).checked_mul(scale)?;
        let high = if self.truncated {
            u128::from(self.mantissa)
                .checked_add(1)?
                .checked_mul(scale)?
        } else {
            low
        };
        Some(low.abs_diff(target) <= five && high.abs_diff(target) <= five)
    }

    /// The value as an i32 when the token is an integer in range.
    pub fn int32(&self) -> Option<i32> {
        if !self.integer || self.truncated || self.exponent != 0 {
            return None;
        }
        let magnitude = i64::try_from(self.mantissa).ok()?;
        let value = if self.negative {
            magnitude.checked_neg()?
        } else {
            magnitude
        };
        i32::try_from(value).ok()
    }

    /// Mantissa and exponent with trailing zeros moved into the exponent, so that two
    /// spellings of one decimal (`1.50`, `15e-1`) compare equal.
    fn normalised(&self) -> (bool, u64, i32) {
        let (mut mantissa, mut exponent) = (self.mantissa, self.exponent);
        while mantissa != 0 && mantissa % 10 == 0 {
            mantissa /= 10;
            exponent = exponent.saturating_add(1);
        }
        (self.negative && mantissa != 0, mantissa, exponent)
    }
}

/// The value of eight ASCII digits, or `None` when one of the bytes is not a digit; eight at
/// once with integer arithmetic (the SWAR method of `core::num::dec2flt`), for long numbers
/// such as GDAL's 20-digit float32 output.
fn eight_digits(chunk: [u8; 8]) -> Option<u64> {
    let value = u64::from_le_bytes(chunk);
    let above_nine = value.wrapping_add(0x4646_4646_4646_4646);
    let digits = value.wrapping_sub(0x3030_3030_3030_3030);
    if (above_nine | digits) & 0x8080_8080_8080_8080 != 0 {
        return None;
    }
    let pairs = digits.wrapping_mul(10).wrapping_add(digits >> 8);
    let mask = 0x0000_00ff_0000_00ff;
    let high = (pairs & mask).wrapping_mul(100 + (1_000_000 << 32));
    let low = ((pairs >> 16) & mask).wrapping_mul(1 + (10_000 << 32));
    Some(high.wrapping_add(low) >> 32)
}

/// `mantissa x 10^exponent` correctly rounded, when both are exact in f64.
fn clinger(mantissa: u64, exponent: i32) -> Option<f64> {
    if mantissa > EXACT_MANTISSA_MAX {
        return None;
    }
    let power = usize::try_from(exponent.unsigned_abs())
        .ok()
        .and_then(|index| POW10.get(index))
        .copied()?;
    let mantissa = mantissa as f64;
    Some(if exponent >= 0 {
        mantissa * power
    } else {
        mantissa / power
    })
}

/// The exponent after `e`: optional sign and at least one digit; saturates far beyond any
/// exponent a float can have.
fn scan_exponent(token: &[u8]) -> Option<(i32, &[u8])> {
    let (negative, mut rest) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, token),
    };
    let mut value: i32 = 0;
    let mut count = 0_usize;
    while let Some((&byte, tail)) = rest.split_first() {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value
            .saturating_mul(10)
            .saturating_add(i32::from(digit))
            .min(EXPONENT_MAGNITUDE_MAX);
        count = count.saturating_add(1);
        rest = tail;
    }
    (count > 0).then_some((if negative { -value } else { value }, rest))
}

/// Any number `str::parse::<f64>` accepts, including `nan`, `inf` and `infinity` in any case.
pub(crate) fn parse_general(token: &[u8]) -> Option<f64> {
    std::str::from_utf8(token).ok()?.parse::<f64>().ok()
}

/// A token read as a number: the decimal when it has digits, and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Number {
    /// The split decimal; `None` for `nan` and `inf`.
    pub decimal: Option<Decimal>,
    /// The value.
    pub value: f64,
}

/// Why a token is not a number of a grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Not a number at all.
    NotANumber,
    /// Digits whose value is beyond f64 (`1e400`).
    OutOfRange,
}

impl NumberError {
    /// The message for `token`.
    pub fn message(self, token: &[u8]) -> String {
        let text = shorten(&String::from_utf8_lossy(token));
        match self {
            Self::NotANumber => format!("{text:?} is not a number"),
            Self::OutOfRange => format!("{text:?} is beyond the range of a 64-bit float"),
        }
    }
}

/// Reads a token as a float32 the way GDAL does (to f64, then to f32), without the general
/// parser where [`Decimal::float32_from_prefix`] decides it.
pub(crate) fn read_float32(token: &[u8]) -> Result<f32, NumberError> {
    if let Some(decimal) = Decimal::scan(token)
        && decimal.digits > 15
        && let Some(value) = decimal.float32_from_prefix()
    {
        return Ok(value);
    }
    read_number(token).map(|number| number.value as f32)
}

/// Reads a token as a number: a decimal, or `nan` / `inf` (as GDAL reads them).
pub(crate) fn read_number(token: &[u8]) -> Result<Number, NumberError> {
    match Decimal::scan(token) {
        Some(decimal) => decimal_number(decimal, token),
        None => special_number(token),
    }
}

/// The number of a token already split into `decimal`.
pub(crate) fn decimal_number(decimal: Decimal, token: &[u8]) -> Result<Number, NumberError> {
    let value = decimal.value(token).ok_or(NumberError::NotANumber)?;
    if value.is_infinite() {
        return Err(NumberError::OutOfRange);
    }
    Ok(Number {
        decimal: Some(decimal),
        value,
    })
}

/// The number of a token that is not a decimal: `nan`, `inf`, or an error.
pub(crate) fn special_number(token: &[u8]) -> Result<Number, NumberError> {
    match parse_general(token) {
        Some(value) if !value.is_finite() => Ok(Number {
            decimal: None,
            value,
        }),
        _ => Err(NumberError::NotANumber),
    }
}

/// The narrowest type that keeps a value exactly as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Width {
    /// Written as an integer within i32.
    Int32,
    /// The nearest f32 denotes the same number: its f64 widening is the value, or its shortest
    /// decimal reads as the value (`0.1` is Float32: the f32 nearest to 0.1 prints as `0.1`).
    Float32,
    /// Anything else.
    Float64,
}

impl Number {
    /// The narrowest type holding this number exactly.
    pub fn width(&self) -> Width {
        let Some(decimal) = &self.decimal else {
            return Width::Float32;
        };
        if decimal.int32().is_some() {
            return Width::Int32;
        }
        if fits_float32(decimal, self.value) {
            Width::Float32
        } else {
            Width::Float64
        }
    }
}

/// True when the f32 nearest to `value` denotes the number `decimal` spells: the f32 is the
/// value, or its shortest decimal is `decimal`.
fn fits_float32(decimal: &Decimal, value: f64) -> bool {
    if value == 0.0 || !value.is_finite() {
        return true;
    }
    let narrow = value as f32;
    if !narrow.is_finite() {
        return false;
    }
    if f64::from(narrow) == value {
        return true;
    }
    if decimal.truncated {
        return shortest_reads_as(narrow, value);
    }
    // Any decimal of at most six significant digits (FLT_DIG) that lands on a normal f32 is
    // that f32's shortest decimal: two such decimals never share an f32.
    if decimal.digits <= 6 && narrow.is_normal() {
        return true;
    }
    let (_, mantissa, exponent) = decimal.normalised();
    let digits = mantissa.checked_ilog10().map_or(0, |log| log + 1);
    match digits {
        0..=6 if narrow.is_normal() => true,
        // The shortest decimal of an f32 has at most nine digits; up to 16 digits, two
        // different decimals are two different f64, so a longer one cannot read as it.
        10..=16 => false,
        0..=9 => is_shortest(narrow, mantissa, exponent)
            .unwrap_or_else(|| shortest_reads_as(narrow, value)),
        _ => shortest_reads_as(narrow, value),
    }
}

/// Whether `mantissa x 10^exponent` (normalised, seven to nine digits, rounding to `narrow`)
/// is the shortest decimal of `narrow`, decided without printing: it is when it is the
/// decimal of its length nearest to `narrow`, and no decimal one digit shorter lies in the
/// interval of numbers that round to `narrow`. The comparisons are made in units of
/// `10^exponent`, where the decimals are whole numbers and the rest is off by at most
/// 10^-7 units; `None` when something lies within [`TIE_MARGIN_UNITS`] of a boundary, or the
/// power of ten is not exact: the caller then prints.
fn is_shortest(narrow: f32, mantissa: u64, exponent: i32) -> Option<bool> {
    let magnitude = narrow.abs();
    if magnitude == 0.0 {
        return None;
    }
    let unit = usize::try_from(exponent.unsigned_abs())
        .ok()
        .and_then(|index| POW10.get(index))
        .copied()?;
    let to_units = |value: f64| {
        if exponent >= 0 {
            value / unit
        } else {
            value * unit
        }
    };
    let distance = (to_units(f64::from(magnitude)) - mantissa as f64).abs();
    if distance > 0.5 + TIE_MARGIN_UNITS {
        return Some(false);
    }
    if distance > 0.5 - TIE_MARGIN_UNITS {
        return None;
    }
    // The midpoints to the neighbouring f32 are exact in f64.
    let low = to_units((f64::from(magnitude) + f64::from(magnitude.next_down())) / 2.0);
    let high = to_units((f64::from(magnitude) + f64::from(magnitude.next_up())) / 2.0);
    let shorter = (mantissa / 10 * 10) as f64;
    for candidate in [shorter, shorter + 10.0] {
        if (candidate - low).abs() < TIE_MARGIN_UNITS || (candidate - high).abs() < TIE_MARGIN_UNITS
        {
            return None;
        }
        if low < candidate && candidate < high {
            return Some(false);
        }
    }
    Some(true)
}

/// How close (in units of the last digit) a comparison in [`is_shortest`] may come to a
/// boundary before it is left to printing: ten times the worst rounding error of the scaling.
const TIE_MARGIN_UNITS: f64 = 1e-6;

/// The general test: the shortest decimal of `narrow`, printed, reads as `value`.
fn shortest_reads_as(narrow: f32, value: f64) -> bool {
    let mut buffer = ryu::Buffer::new();
    parse_general(buffer.format_finite(narrow).as_bytes()) == Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn width(token: &str) -> Width {
        read_number(token.as_bytes()).unwrap().width()
    }

    #[test]
    fn fast_and_general_paths_agree_with_the_standard_parser() {
        for token in [
            "0",
            "-0",
            "1",
            "+1",
            "1.5",
            "-1.5",
            ".5",
            "5.",
            "1e5",
            "1E-5",
            "1.25e+3",
            "123456789012345678",
            "9007199254740993",
            "0.1",
            "0.3",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "3.4028234663852886e38",
            "4.9e-324",
            "1e-400",
            "00012.5000",
            "0.10000000149011611938",
            "12345678901234567890123",
            "-0.000",
        ] {
            let number = read_number(token.as_bytes()).unwrap();
            let expected: f64 = token.parse().unwrap();
            assert_eq!(number.value.to_bits(), expected.to_bits(), "{token}");
        }
    }

    #[test]
    fn float32_from_the_first_digits_is_the_float32_of_the_value() {
        let mut state = 0x0bad_cafe_u64;
        let mut decided = 0;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = f32::from_bits((state >> 32) as u32);
            if !value.is_finite() || value.abs() < 1e-30 || value.abs() > 1e30 {
                continue;
            }
            let digits = usize::try_from(state % 6).unwrap() + 16;
            let mut text = format!("{:.*e}", digits - 1, f64::from(value));
            if state & 0x100 != 0 {
                // Nudge the last digit so that ties and near-ties occur too.
                text = text.replacen("e", "7e", 1);
            }
            let expected = text.parse::<f64>().unwrap() as f32;
            assert_eq!(read_float32(text.as_bytes()).unwrap(), expected, "{text}");
            let decimal = Decimal::scan(text.as_bytes()).unwrap();
            decided += usize::from(decimal.float32_from_prefix().is_some());
        }
        assert!(decided > 50_000, "{decided}");
        for text in [
            "16777217.000000000001",
            "16777217.0000000000000",
            "0.1000000000000000055511",
        ] {
            let expected = text.parse::<f64>().unwrap() as f32;
            assert_eq!(read_float32(text.as_bytes()).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn float32_written_out_is_recognised_without_parsing_and_never_wrongly() {
        let mut state = 0x5eed_u64;
        let mut recognised = 0;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = f32::from_bits((state >> 32) as u32);
            if !value.is_finite() || value == 0.0 {
                continue;
            }
            let digits = usize::try_from(state % 10).unwrap() + 16;
            let mut text = format!("{:.*e}", digits - 1, f64::from(value));
            if state & 0x300 == 0x100 {
                text = text.replacen("e", "3e", 1);
            }
            let parsed: f64 = text.parse().unwrap();
            let exact = f64::from(parsed as f32) == parsed;
            let decimal = Decimal::scan(text.as_bytes()).unwrap();
            let found = decimal.is_float32_written_out();
            assert!(!found || exact, "{text}");
            recognised += usize::from(found);
        }
        assert!(recognised > 30_000, "{recognised}");
        for text in [
            "2.9999954700469970703",
            "0.10000000149011611938",
            "-16777215.000000000000",
        ] {
            let decimal = Decimal::scan(text.as_bytes()).unwrap();
            assert!(decimal.is_float32_written_out(), "{text}");
        }
        for text in [
            "0.10000000149011611939",
            "0.1000000000000000055511",
            "2.99999547004699707031251",
        ] {
            let decimal = Decimal::scan(text.as_bytes()).unwrap();
            let parsed: f64 = text.parse().unwrap();
            let exact = f64::from(parsed as f32) == parsed;
            assert!(!decimal.is_float32_written_out() || exact, "{text}");
        }
    }

    #[test]
    fn random_decimals_read_as_the_standard_parser_reads_them() {
        let mut state = 0x0123_4567_89ab_cdef_u64;
        let mut next = |modulus: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % modulus
        };
        for _ in 0..200_000 {
            let length = next(30) + 1;
            let mut text = String::new();
            if next(2) == 0 {
                text.push('-');
            }
            let point = next(length + 2);
            for position in 0..length {
                if position == point {
                    text.push('.');
                }
                let digit = if next(4) == 0 { 0 } else { next(10) };
                text.push(char::from(b'0' + u8::try_from(digit).unwrap()));
            }
            if next(3) == 0 {
                text.push_str(&format!("e{}", i64::try_from(next(80)).unwrap() - 40));
            }
            let expected: f64 = text.parse().unwrap();
            let number = read_number(text.as_bytes());
            if expected.is_infinite() {
                assert_eq!(number, Err(NumberError::OutOfRange), "{text}");
                continue;
            }
            let number = number.unwrap();
            assert_eq!(number.value.to_bits(), expected.to_bits(), "{text}");
            assert_eq!(
                read_float32(text.as_bytes()).unwrap(),
                expected as f32,
                "{text}"
            );
        }
    }

    #[test]
    fn eight_digits_at_once_agree_with_one_at_a_time() {
        assert_eq!(eight_digits(*b"12345678"), Some(12_345_678));
        assert_eq!(eight_digits(*b"00000000"), Some(0));
        assert_eq!(eight_digits(*b"99999999"), Some(99_999_999));
        for bad in [
            b"1234567a",
            b"/2345678",
            b":2345678",
            b"1234 678",
            b"\xff2345678",
        ] {
            assert_eq!(eight_digits(*bad), None);
        }
        for token in [
            "12345678901234567890",
            "0.000123456789012345678901",
            "98765432.123456789e-3",
        ] {
            let expected: f64 = token.parse().unwrap();
            assert_eq!(
                read_number(token.as_bytes()).unwrap().value,
                expected,
                "{token}"
            );
        }
    }

    #[test]
    fn garbage_and_overflow_are_errors() {
        for token in [
            "", "-", "+", ".", "e5", "1e", "1e+", "1.5.", "1,5", "0x10", "1f", "--1",
        ] {
            assert_eq!(
                read_number(token.as_bytes()),
                Err(NumberError::NotANumber),
                "{token:?}"
            );
        }
        assert_eq!(read_number(b"1e400"), Err(NumberError::OutOfRange));
        assert!(read_number(b"nan").unwrap().value.is_nan());
        assert_eq!(read_number(b"-inf").unwrap().value, f64::NEG_INFINITY);
        assert_eq!(read_number(b"Infinity").unwrap().value, f64::INFINITY);
    }

    #[test]
    fn widths_keep_every_value_as_written() {
        assert_eq!(width("-2147483648"), Width::Int32);
        assert_eq!(width("2147483647"), Width::Int32);
        assert_eq!(width("2147483648"), Width::Float32);
        assert_eq!(width("3.0"), Width::Float32);
        assert_eq!(width("0.1"), Width::Float32);
        assert_eq!(width("0.123457"), Width::Float32);
        assert_eq!(width("0.12345679"), Width::Float32);
        assert_eq!(width("0.123456789"), Width::Float64);
        assert_eq!(width("0.10000000149011611938"), Width::Float32);
        assert_eq!(width("16777216"), Width::Int32);
        assert_eq!(width("16777217.0"), Width::Float64);
        assert_eq!(width("3.4028235e38"), Width::Float32);
        assert_eq!(width("3.5e38"), Width::Float64);
        assert_eq!(width("1e-40"), Width::Float32);
        assert_eq!(width("1e-45"), Width::Float32);
        assert_eq!(width("1e-46"), Width::Float64);
        assert_eq!(width("nan"), Width::Float32);
        assert_eq!(width("1.0000000"), Width::Float32);
    }

    /// The rule as the definition states it, by printing.
    fn reference_fits_float32(text: &str) -> bool {
        let value: f64 = text.parse().unwrap();
        let narrow = value as f32;
        if value == 0.0 || f64::from(narrow) == value {
            return true;
        }
        narrow.is_finite()
            && ryu::Buffer::new()
                .format_finite(narrow)
                .parse::<f64>()
                .unwrap()
                == value
    }

    #[test]
    fn the_float32_test_without_printing_agrees_with_printing() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut agreed = [0_usize; 2];
        for _ in 0..300_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = f32::from_bits((state >> 32) as u32);
            if !value.is_finite() || value == 0.0 {
                continue;
            }
            let digits = usize::try_from(state % 12).unwrap() + 1;
            let text = format!("{:.*e}", digits - 1, f64::from(value));
            let expected = reference_fits_float32(&text);
            let number = read_number(text.as_bytes()).unwrap();
            let decimal = number.decimal.unwrap();
            assert_eq!(fits_float32(&decimal, number.value), expected, "{text}");
            agreed[usize::from(expected)] += 1;
        }
        assert!(agreed[0] > 10_000 && agreed[1] > 10_000, "{agreed:?}");
        for _ in 0..300_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let digits = (state >> 60) % 4 + 6;
            let mantissa = (state >> 8) % 10_u64.pow(u32::try_from(digits).unwrap());
            let exponent = i64::try_from((state >> 2) % 80).unwrap() - 45;
            let text = format!("-{mantissa}e{exponent}");
            let number = read_number(text.as_bytes()).unwrap();
            let decimal = number.decimal.unwrap();
            let expected = reference_fits_float32(&text);
            assert_eq!(fits_float32(&decimal, number.value), expected, "{text}");
        }
    }

    #[test]
    fn every_float32_shortest_decimal_is_float32() {
        let mut state = 0x9e37_79b9_u32;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let value = f32::from_bits(state);
            if !value.is_finite() {
                continue;
            }
            let mut buffer = ryu::Buffer::new();
            let text = buffer.format_finite(value);
            let number = read_number(text.as_bytes()).unwrap();
            assert_eq!(number.value as f32, value, "{text}");
            assert!(number.width() <= Width::Float32, "{text}");
        }
    }
}
