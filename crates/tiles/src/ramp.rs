//! Colour ramps: how a value becomes a pixel colour.
//!
//! A ramp spreads its colours evenly from `min` to `max` and interpolates linearly in sRGB
//! between neighbours, rounding to the nearest 8-bit value. The formula is written out in
//! docs/tiles.md so a client (or a test) can compute any pixel's colour from the value itself:
//! `t = (v - min) / (max - min) * (n - 1)`, `i = floor(t)` (the last colour for `t = n - 1`),
//! `colour = round(c[i] + (c[i+1] - c[i]) * (t - i))` per channel. No data is transparent;
//! values outside `min..max` take the end colours unless the out-of-range rule makes them
//! transparent.

use std::fmt;

/// Which values outside `min..=max` are drawn transparent (the rest take the end colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutOfRange {
    /// Clamp both ends.
    #[default]
    None,
    /// Values above `max` are transparent.
    Above,
    /// Values below `min` are transparent.
    Below,
    /// Both.
    AboveAndBelow,
}

impl OutOfRange {
    /// The wire name (`None`, `Above`, `Below`, `AboveAndBelow`).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Above => "Above",
            Self::Below => "Below",
            Self::AboveAndBelow => "AboveAndBelow",
        }
    }

    /// From the wire name, in any case.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::None, Self::Above, Self::Below, Self::AboveAndBelow]
            .into_iter()
            .find(|rule| rule.name().eq_ignore_ascii_case(text))
    }

    fn hides_above(self) -> bool {
        matches!(self, Self::Above | Self::AboveAndBelow)
    }

    fn hides_below(self) -> bool {
        matches!(self, Self::Below | Self::AboveAndBelow)
    }
}

/// An opaque colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub [u8; 3]);

impl Rgb {
    /// From `#rrggbb` (also `rrggbb` and `#rgb`), in any case.
    pub fn parse(text: &str) -> Option<Self> {
        let hex = text.strip_prefix('#').unwrap_or(text);
        if !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return None;
        }
        let digit = |index: usize| {
            hex.get(index..index + 1)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
        };
        match hex.len() {
            6 => {
                let pair = |index: usize| {
                    hex.get(index..index + 2)
                        .and_then(|d| u8::from_str_radix(d, 16).ok())
                };
                Some(Self([pair(0)?, pair(2)?, pair(4)?]))
            }
            3 => Some(Self([digit(0)? * 17, digit(1)? * 17, digit(2)? * 17])),
            _ => None,
        }
    }
}

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [r, g, b] = self.0;
        write!(f, "#{r:02x}{g:02x}{b:02x}")
    }
}

/// The colours of the default scheme, dark blue through green and yellow to dark red: ordered
/// in lightness to the middle and then down, readable for low and high values alike.
pub const DEFAULT_COLOURS: [Rgb; 7] = [
    Rgb([0x0b, 0x2a, 0x6f]),
    Rgb([0x1f, 0x6f, 0xb2]),
    Rgb([0x37, 0xb3, 0xc9]),
    Rgb([0x9b, 0xd8, 0x7f]),
    Rgb([0xf4, 0xe3, 0x5c]),
    Rgb([0xf5, 0x9a, 0x3b]),
    Rgb([0xc8, 0x35, 0x2b]),
];

/// Why a ramp cannot be built.
#[derive(Debug, Clone, PartialEq)]
pub enum RampError {
    /// No colours.
    NoColours,
    /// `min` or `max` is not finite, or `min > max`.
    BadRange,
}

impl fmt::Display for RampError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoColours => f.write_str("a colour ramp needs at least one colour"),
            Self::BadRange => {
                f.write_str("minValue and maxValue must be finite, with minValue <= maxValue")
            }
        }
    }
}

impl std::error::Error for RampError {}

/// A colour ramp with its value range and out-of-range rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    colours: Vec<Rgb>,
    min: f64,
    max: f64,
    out_of_range: OutOfRange,
}

impl Ramp {
    /// A ramp over `min..=max`.
    pub fn new(
        colours: Vec<Rgb>,
        min: f64,
        max: f64,
        out_of_range: OutOfRange,
    ) -> Result<Self, RampError> {
        if colours.is_empty() {
            return Err(RampError::NoColours);
        }
        if !(min.is_finite() && max.is_finite() && min <= max) {
            return Err(RampError::BadRange);
        }
        Ok(Self {
            colours,
            min,
            max,
            out_of_range,
        })
    }

    /// The colour of `value` as RGBA; fully transparent for no data (NaN) and hidden
    /// out-of-range values.
    pub fn colour(&self, value: f32) -> [u8; 4] {
        const CLEAR: [u8; 4] = [0, 0, 0, 0];
        if value.is_nan() {
            return CLEAR;
        }
        let value = f64::from(value);
        if value > self.max && self.out_of_range.hides_above() {
            return CLEAR;
        }
        if value < self.min && self.out_of_range.hides_below() {
            return CLEAR;
        }
        let last = self.colours.len() - 1;
        let span = self.max - self.min;
        let position = if span > 0.0 {
            ((value - self.min) / span).clamp(0.0, 1.0) * last as f64
        } else if value > self.max {
            last as f64
        } else {
            0.0
        };
        let index = (position.floor() as usize).min(last);
        let fraction = position - index as f64;
        let low = self.colours.get(index).copied().unwrap_or(Rgb([0, 0, 0]));
        let high = self.colours.get(index + 1).copied().unwrap_or(low);
        let mix = |a: u8, b: u8| {
            (f64::from(a) + (f64::from(b) - f64::from(a)) * fraction)
                .round()
                .clamp(0.0, 255.0) as u8
        };
        [
            mix(low.0[0], high.0[0]),
            mix(low.0[1], high.0[1]),
            mix(low.0[2], high.0[2]),
            255,
        ]
    }

    /// The bin of `value` among 255 equal bins over `min..=max` (0 to 254), clamped at the
    /// ends; `None` for no data and hidden out-of-range values.
    pub fn bin(&self, value: f32) -> Option<u8> {
        if value.is_nan() {
            return None;
        }
        let value = f64::from(value);
        if (value > self.max && self.out_of_range.hides_above())
            || (value < self.min && self.out_of_range.hides_below())
        {
            return None;
        }
        let span = self.max - self.min;
        if span <= 0.0 {
            return Some(if value > self.max { 254 } else { 0 });
        }
        let position = ((value - self.min) / span).clamp(0.0, 1.0) * 255.0;
        Some((position.floor() as u8).min(254))
    }

    /// The value range, `(min, max)`.
    pub fn range(&self) -> (f64, f64) {
        (self.min, self.max)
    }

    /// The colours.
    pub fn colours(&self) -> &[Rgb] {
        &self.colours
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(rule: OutOfRange) -> Ramp {
        Ramp::new(
            vec![Rgb([0, 0, 0]), Rgb([255, 0, 0]), Rgb([255, 255, 255])],
            0.0,
            10.0,
            rule,
        )
        .unwrap()
    }

    #[test]
    fn colours_interpolate_between_even_stops() {
        let ramp = ramp(OutOfRange::None);
        assert_eq!(ramp.colour(0.0), [0, 0, 0, 255]);
        assert_eq!(ramp.colour(2.5), [128, 0, 0, 255]);
        assert_eq!(ramp.colour(5.0), [255, 0, 0, 255]);
        assert_eq!(ramp.colour(10.0), [255, 255, 255, 255]);
        assert_eq!(ramp.colour(11.0), [255, 255, 255, 255]);
        assert_eq!(ramp.colour(-1.0), [0, 0, 0, 255]);
        assert_eq!(ramp.colour(f32::NAN), [0, 0, 0, 0]);
    }

    #[test]
    fn out_of_range_rules_hide_the_named_side() {
        assert_eq!(ramp(OutOfRange::Above).colour(11.0)[3], 0);
        assert_eq!(ramp(OutOfRange::Above).colour(-1.0)[3], 255);
        assert_eq!(ramp(OutOfRange::Below).colour(-1.0)[3], 0);
        assert_eq!(ramp(OutOfRange::AboveAndBelow).colour(11.0)[3], 0);
        assert_eq!(ramp(OutOfRange::AboveAndBelow).colour(10.0)[3], 255);
        assert_eq!(
            OutOfRange::parse("aboveandbelow"),
            Some(OutOfRange::AboveAndBelow)
        );
        assert_eq!(OutOfRange::parse("sideways"), None);
    }

    #[test]
    fn bins_and_degenerate_ranges() {
        let ramp = ramp(OutOfRange::None);
        assert_eq!(ramp.bin(0.0), Some(0));
        assert_eq!(ramp.bin(10.0), Some(254));
        assert_eq!(ramp.bin(5.0), Some(127));
        assert_eq!(ramp.bin(f32::NAN), None);
        let flat = Ramp::new(vec![Rgb([1, 2, 3])], 4.0, 4.0, OutOfRange::None).unwrap();
        assert_eq!(flat.colour(4.0), [1, 2, 3, 255]);
        assert_eq!(flat.bin(5.0), Some(254));
        assert!(Ramp::new(vec![], 0.0, 1.0, OutOfRange::None).is_err());
        assert!(Ramp::new(vec![Rgb([0, 0, 0])], 1.0, 0.0, OutOfRange::None).is_err());
        assert!(Ramp::new(vec![Rgb([0, 0, 0])], f64::NAN, 0.0, OutOfRange::None).is_err());
    }

    #[test]
    fn colours_parse_and_print() {
        assert_eq!(Rgb::parse("#FF8000"), Some(Rgb([255, 128, 0])));
        assert_eq!(Rgb::parse("0a0b0c"), Some(Rgb([10, 11, 12])));
        assert_eq!(Rgb::parse("#f80"), Some(Rgb([255, 136, 0])));
        assert_eq!(Rgb::parse("#ff80"), None);
        assert_eq!(Rgb::parse("#+f+f+f"), None);
        assert_eq!(Rgb::parse("#ééé"), None);
        assert_eq!(Rgb([255, 128, 0]).to_string(), "#ff8000");
    }
}
