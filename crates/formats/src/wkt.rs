//! WKT geometries: a parser and a writer for the six simple-feature types clients send
//! (`POINT`, `MULTIPOINT`, `LINESTRING`, `MULTILINESTRING`, `POLYGON`, `MULTIPOLYGON`), with
//! `Z`, `M` or `ZM` ordinates and `EMPTY`. The server's reprojection endpoint
//! (`POST /api/crs/project`, docs/gis.md) reads and writes its geometries with them. The WKT of
//! coordinate systems is another grammar, read in [`crate::crs`].
//!
//! Hand-written rather than a dependency: the grammar is small, the lockfile has no WKT crate,
//! and the parser must stop at a position budget shared by every geometry of a request (the
//! request limit), which a general parser does not offer. Nesting is fixed by the grammar (a
//! multipolygon is three levels of parentheses), so there is no recursion on input.
//!
//! Reading is lenient where writers differ: keywords in any case, any whitespace, `POINTZ` as
//! well as `POINT Z`, multipoint members with or without parentheses, and the dimension told
//! by the first position when no `Z`/`M`/`ZM` is given (3 ordinates are `Z`, 4 are `ZM`).
//! Writing is canonical: upper-case keywords, `POINT Z (1 2 3)`, `MULTIPOINT ((1 2), (3 4))`,
//! and numbers in the shortest form that reads back to the same `f64`.

use std::fmt;

/// Which ordinates each position of a geometry has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dims {
    /// x y.
    Xy,
    /// x y z.
    Xyz,
    /// x y m.
    Xym,
    /// x y z m.
    Xyzm,
}

impl Dims {
    /// Ordinates per position.
    fn count(self) -> usize {
        match self {
            Self::Xy => 2,
            Self::Xyz | Self::Xym => 3,
            Self::Xyzm => 4,
        }
    }

    /// The tag written after the type name.
    fn tag(self) -> &'static str {
        match self {
            Self::Xy => "",
            Self::Xyz => " Z",
            Self::Xym => " M",
            Self::Xyzm => " ZM",
        }
    }

    /// The dimension of an untagged position with `count` ordinates.
    fn untagged(count: usize) -> Option<Self> {
        match count {
            2 => Some(Self::Xy),
            3 => Some(Self::Xyz),
            4 => Some(Self::Xyzm),
            _ => None,
        }
    }

    fn from_tag(tag: &str) -> Option<Self> {
        if tag.eq_ignore_ascii_case("Z") {
            Some(Self::Xyz)
        } else if tag.eq_ignore_ascii_case("M") {
            Some(Self::Xym)
        } else if tag.eq_ignore_ascii_case("ZM") {
            Some(Self::Xyzm)
        } else {
            None
        }
    }
}

/// A position: x and y, which a reprojection changes, and up to two more ordinates (z and/or
/// m, as the geometry's [`Dims`] say), which it keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// Easting or longitude.
    pub x: f64,
    /// Northing or latitude.
    pub y: f64,
    /// z and/or m; unused ordinates are 0.
    rest: [f64; 2],
}

impl Position {
    /// The ordinates after x and y, as `dims` says which they are: `(z, m)`.
    pub fn z_and_m(&self, dims: Dims) -> (Option<f64>, Option<f64>) {
        let [first, second] = self.rest;
        match dims {
            Dims::Xy => (None, None),
            Dims::Xyz => (Some(first), None),
            Dims::Xym => (None, Some(first)),
            Dims::Xyzm => (Some(first), Some(second)),
        }
    }
}

/// The shape of a geometry; `EMPTY` is `Point(None)` or an empty list.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// `POINT`.
    Point(Option<Position>),
    /// `MULTIPOINT`.
    MultiPoint(Vec<Position>),
    /// `LINESTRING`.
    LineString(Vec<Position>),
    /// `MULTILINESTRING`.
    MultiLineString(Vec<Vec<Position>>),
    /// `POLYGON`: exterior ring, then holes.
    Polygon(Vec<Vec<Position>>),
    /// `MULTIPOLYGON`.
    MultiPolygon(Vec<Vec<Vec<Position>>>),
}

/// A parsed WKT geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    /// Its shape and positions.
    pub shape: Shape,
    /// The ordinates of every position.
    pub dims: Dims,
}

/// Why a text is not a geometry this module reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WktError {
    /// The text breaks the grammar at a character (1-based).
    #[error("at character {at}: {message}")]
    Syntax {
        /// Where, counting characters from 1.
        at: usize,
        /// What was expected and found.
        message: String,
    },
    /// The request's position budget ran out inside this geometry.
    #[error("the position limit is used up")]
    PositionBudget,
}

/// Parses one geometry, taking one unit of `positions_left` per position; when the budget
/// runs out the parse stops with [`WktError::PositionBudget`].
pub fn parse(text: &str, positions_left: &mut usize) -> Result<Geometry, WktError> {
    let mut parser = Parser {
        text,
        at: 0,
        dims: None,
        positions_left,
    };
    let geometry = parser.geometry()?;
    parser.skip_whitespace();
    if parser.at < text.len() {
        return Err(parser.error("expected the end of the geometry"));
    }
    Ok(geometry)
}

/// The six types.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Point,
    MultiPoint,
    LineString,
    MultiLineString,
    Polygon,
    MultiPolygon,
}

impl Kind {
    fn named(name: &str) -> Option<Self> {
        const KINDS: [(&str, Kind); 6] = [
            ("POINT", Kind::Point),
            ("MULTIPOINT", Kind::MultiPoint),
            ("LINESTRING", Kind::LineString),
            ("MULTILINESTRING", Kind::MultiLineString),
            ("POLYGON", Kind::Polygon),
            ("MULTIPOLYGON", Kind::MultiPolygon),
        ];
        KINDS
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
            .map(|(_, kind)| *kind)
    }

    /// The type and the dimension tag of a first word: `POINT`, or `POINTZ` written together.
    fn with_tag(word: &str) -> Option<(Self, Option<Dims>)> {
        if let Some(kind) = Self::named(word) {
            return Some((kind, None));
        }
        ["ZM", "Z", "M"].into_iter().find_map(|tag| {
            let split = word.len().checked_sub(tag.len())?;
            let (name, suffix) = (word.get(..split)?, word.get(split..)?);
            let kind = Self::named(name)?;
            Some((kind, Dims::from_tag(suffix))).filter(|(_, dims)| dims.is_some())
        })
    }
}

struct Parser<'a> {
    text: &'a str,
    /// Byte offset of the next character. Everything before it is ASCII (the grammar is), so
    /// it is also the number of characters read.
    at: usize,
    /// Fixed by a tag or by the first position.
    dims: Option<Dims>,
    positions_left: &'a mut usize,
}

const TYPES: &str = "POINT, MULTIPOINT, LINESTRING, MULTILINESTRING, POLYGON or MULTIPOLYGON";

impl<'a> Parser<'a> {
    fn geometry(&mut self) -> Result<Geometry, WktError> {
        self.skip_whitespace();
        let word = self.word();
        let Some((kind, tag)) = Kind::with_tag(word) else {
            return Err(if word.is_empty() {
                self.error(&format!("expected a geometry type ({TYPES})"))
            } else {
                WktError::Syntax {
                    at: self.at - word.len() + 1,
                    message: format!(
                        "{:?} is not a geometry type Basin reprojects ({TYPES})",
                        shorten(word)
                    ),
                }
            });
        };
        self.dims = tag;
        if self.dims.is_none() {
            self.skip_whitespace();
            let start = self.at;
            let word = self.word();
            if !word.is_empty() && !word.eq_ignore_ascii_case("EMPTY") {
                self.dims = Some(Dims::from_tag(word).ok_or_else(|| WktError::Syntax {
                    at: start + 1,
                    message: format!("expected Z, M, ZM, EMPTY or '(', found {:?}", shorten(word)),
                })?);
            } else {
                self.at = start;
            }
        }
        let shape = if self.empty() {
            match kind {
                Kind::Point => Shape::Point(None),
                Kind::MultiPoint => Shape::MultiPoint(Vec::new()),
                Kind::LineString => Shape::LineString(Vec::new()),
                Kind::MultiLineString => Shape::MultiLineString(Vec::new()),
                Kind::Polygon => Shape::Polygon(Vec::new()),
                Kind::MultiPolygon => Shape::MultiPolygon(Vec::new()),
            }
        } else {
            match kind {
                Kind::Point => {
                    self.open()?;
                    let position = self.position()?;
                    self.close()?;
                    Shape::Point(Some(position))
                }
                Kind::MultiPoint => Shape::MultiPoint(self.list(Self::multipoint_member)?),
                Kind::LineString => Shape::LineString(self.line()?),
                Kind::MultiLineString => Shape::MultiLineString(self.list(Self::line)?),
                Kind::Polygon => Shape::Polygon(self.list(Self::line)?),
                Kind::MultiPolygon => {
                    Shape::MultiPolygon(self.list(|parser| parser.list(Self::line))?)
                }
            }
        };
        Ok(Geometry {
            shape,
            dims: self.dims.unwrap_or(Dims::Xy),
        })
    }

    /// `( item, item, ... )`, at least one item.
    fn list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, WktError>,
    ) -> Result<Vec<T>, WktError> {
        self.open()?;
        let mut items = vec![item(self)?];
        while self.comma_or_close()? {
            items.push(item(self)?);
        }
        Ok(items)
    }

    fn line(&mut self) -> Result<Vec<Position>, WktError> {
        self.list(Self::position)
    }

    /// `(1 2)` or `1 2`: both forms are in use.
    fn multipoint_member(&mut self) -> Result<Position, WktError> {
        self.skip_whitespace();
        if self.peek() == Some(b'(') {
            self.open()?;
            let position = self.position()?;
            self.close()?;
            Ok(position)
        } else {
            self.position()
        }
    }

    fn position(&mut self) -> Result<Position, WktError> {
        self.skip_whitespace();
        let start = self.at;
        let mut ordinates = [0.0; 4];
        let mut count = 0;
        loop {
            self.skip_whitespace();
            if matches!(self.peek(), Some(b',' | b')') | None) && count >= 2 {
                break;
            }
            let Some(slot) = ordinates.get_mut(count) else {
                return Err(self.error("expected ',' or ')' after at most 4 ordinates"));
            };
            *slot = self.number()?;
            count += 1;
        }
        let dims = match self.dims {
            Some(dims) if dims.count() == count => dims,
            Some(dims) => {
                return Err(WktError::Syntax {
                    at: start + 1,
                    message: format!(
                        "a position has {count} ordinates where the geometry has {}",
                        dims.count()
                    ),
                });
            }
            None => {
                let dims =
                    Dims::untagged(count).ok_or_else(|| self.error("expected 2 to 4 ordinates"))?;
                self.dims = Some(dims);
                dims
            }
        };
        *self.positions_left = self
            .positions_left
            .checked_sub(1)
            .ok_or(WktError::PositionBudget)?;
        let [x, y, first, second] = ordinates;
        Ok(Position {
            x,
            y,
            rest: if dims.count() > 2 {
                [first, second]
            } else {
                [0.0; 2]
            },
        })
    }

    fn number(&mut self) -> Result<f64, WktError> {
        let start = self.at;
        let token = self
            .take_while(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
        if token.is_empty() {
            self.at = start;
            return Err(self.error("expected a number"));
        }
        match token.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(value),
            _ => Err(WktError::Syntax {
                at: start + 1,
                message: format!("{:?} is not a finite number", shorten(token)),
            }),
        }
    }

    /// Consumes `EMPTY` if it comes next.
    fn empty(&mut self) -> bool {
        self.skip_whitespace();
        let start = self.at;
        if self.word().eq_ignore_ascii_case("EMPTY") {
            true
        } else {
            self.at = start;
            false
        }
    }

    fn open(&mut self) -> Result<(), WktError> {
        self.skip_whitespace();
        if self.peek() == Some(b'(') {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error("expected '('"))
        }
    }

    fn close(&mut self) -> Result<(), WktError> {
        self.skip_whitespace();
        if self.peek() == Some(b')') {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error("expected ')'"))
        }
    }

    /// True after a `,` (another item follows), false after a `)`.
    fn comma_or_close(&mut self) -> Result<bool, WktError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(true)
            }
            Some(b')') => {
                self.at += 1;
                Ok(false)
            }
            _ => Err(self.error("expected ',' or ')'")),
        }
    }

    fn word(&mut self) -> &'a str {
        self.take_while(|b| b.is_ascii_alphabetic())
    }

    fn take_while(&mut self, keep: impl Fn(u8) -> bool) -> &'a str {
        let start = self.at;
        while self.peek().is_some_and(&keep) {
            self.at += 1;
        }
        self.text.get(start..self.at).unwrap_or_default()
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn error(&self, expected: &str) -> WktError {
        let found = match self
            .text
            .get(self.at..)
            .and_then(|rest| rest.chars().next())
        {
            Some(next) => format!("found {next:?}"),
            None => "found the end of the text".to_owned(),
        };
        WktError::Syntax {
            at: self.at + 1,
            message: format!("{expected}, {found}"),
        }
    }
}

/// A piece of the input for a message: enough to recognise, never the whole input.
fn shorten(text: &str) -> String {
    const CHARS_MAX: usize = 40;
    let mut short: String = text.chars().take(CHARS_MAX).collect();
    if text.chars().nth(CHARS_MAX).is_some() {
        short.push_str("...");
    }
    short
}

impl Geometry {
    /// Calls `change` on every position in order; stops at its first error.
    pub fn try_for_each_position<E>(
        &mut self,
        mut change: impl FnMut(&mut Position) -> Result<(), E>,
    ) -> Result<(), E> {
        match &mut self.shape {
            Shape::Point(point) => point.iter_mut().try_for_each(change),
            Shape::MultiPoint(line) | Shape::LineString(line) => {
                line.iter_mut().try_for_each(change)
            }
            Shape::MultiLineString(lines) | Shape::Polygon(lines) => {
                lines.iter_mut().flatten().try_for_each(change)
            }
            Shape::MultiPolygon(polygons) => polygons
                .iter_mut()
                .flatten()
                .flatten()
                .try_for_each(&mut change),
        }
    }
}

impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match &self.shape {
            Shape::Point(_) => "POINT",
            Shape::MultiPoint(_) => "MULTIPOINT",
            Shape::LineString(_) => "LINESTRING",
            Shape::MultiLineString(_) => "MULTILINESTRING",
            Shape::Polygon(_) => "POLYGON",
            Shape::MultiPolygon(_) => "MULTIPOLYGON",
        };
        write!(f, "{name}{}", self.dims.tag())?;
        let writer = Writer { dims: self.dims };
        match &self.shape {
            Shape::Point(None) => f.write_str(" EMPTY"),
            Shape::Point(Some(position)) => {
                f.write_str(" (")?;
                writer.position(f, position)?;
                f.write_str(")")
            }
            Shape::MultiPoint(points) => writer.list(f, points, |f, position| {
                f.write_str("(")?;
                writer.position(f, position)?;
                f.write_str(")")
            }),
            Shape::LineString(line) => writer.list(f, line, |f, p| writer.position(f, p)),
            Shape::MultiLineString(lines) | Shape::Polygon(lines) => {
                writer.list(f, lines, |f, line| writer.line(f, line))
            }
            Shape::MultiPolygon(polygons) => writer.list(f, polygons, |f, polygon| {
                f.write_str("(")?;
                writer.join(f, polygon, |f, line| writer.line(f, line))?;
                f.write_str(")")
            }),
        }
    }
}

struct Writer {
    dims: Dims,
}

impl Writer {
    /// ` (a, b, ...)`, or ` EMPTY` for no items.
    fn list<T>(
        &self,
        f: &mut fmt::Formatter<'_>,
        items: &[T],
        item: impl FnMut(&mut fmt::Formatter<'_>, &T) -> fmt::Result,
    ) -> fmt::Result {
        if items.is_empty() {
            return f.write_str(" EMPTY");
        }
        f.write_str(" (")?;
        self.join(f, items, item)?;
        f.write_str(")")
    }

    fn join<T>(
        &self,
        f: &mut fmt::Formatter<'_>,
        items: &[T],
        mut item: impl FnMut(&mut fmt::Formatter<'_>, &T) -> fmt::Result,
    ) -> fmt::Result {
        for (index, value) in items.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            item(f, value)?;
        }
        Ok(())
    }

    fn line(&self, f: &mut fmt::Formatter<'_>, line: &[Position]) -> fmt::Result {
        f.write_str("(")?;
        self.join(f, line, |f, position| self.position(f, position))?;
        f.write_str(")")
    }

    /// `f64`'s `Display` is the shortest text that reads back to the same value, and never
    /// uses an exponent, which some WKT readers reject.
    fn position(&self, f: &mut fmt::Formatter<'_>, position: &Position) -> fmt::Result {
        write!(f, "{} {}", position.x, position.y)?;
        for ordinate in position.rest.iter().take(self.dims.count() - 2) {
            write!(f, " {ordinate}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(text: &str) -> Result<Geometry, WktError> {
        let mut left = usize::MAX;
        parse(text, &mut left)
    }

    fn canonical(text: &str) -> String {
        parse_all(text)
            .unwrap_or_else(|error| panic!("{text}: {error}"))
            .to_string()
    }

    #[test]
    fn every_type_reads_and_writes_canonically() {
        for (input, output) in [
            ("POINT (10 56)", "POINT (10 56)"),
            ("point(10.5 -56.25)", "POINT (10.5 -56.25)"),
            ("POINT Z (1 2 3)", "POINT Z (1 2 3)"),
            ("POINTZ(1 2 3)", "POINT Z (1 2 3)"),
            ("POINT (1 2 3)", "POINT Z (1 2 3)"),
            ("POINT M (1 2 3)", "POINT M (1 2 3)"),
            ("POINT ZM (1 2 3 4)", "POINT ZM (1 2 3 4)"),
            ("POINT (1 2 3 4)", "POINT ZM (1 2 3 4)"),
            ("MULTIPOINT (1 2, 3 4)", "MULTIPOINT ((1 2), (3 4))"),
            ("MULTIPOINT ((1 2), 3 4)", "MULTIPOINT ((1 2), (3 4))"),
            ("LINESTRING (1 2, 3 4, 5 6)", "LINESTRING (1 2, 3 4, 5 6)"),
            (
                " MultiLineString ( (1 2,3 4) ,\n\t(5 6, 7 8) ) ",
                "MULTILINESTRING ((1 2, 3 4), (5 6, 7 8))",
            ),
            (
                "POLYGON ((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2, 1 1))",
                "POLYGON ((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2, 1 1))",
            ),
            (
                "MULTIPOLYGON Z (((0 0 1, 4 0 1, 4 4 1, 0 0 1)), ((5 5 2, 6 5 2, 6 6 2, 5 5 2)))",
                "MULTIPOLYGON Z (((0 0 1, 4 0 1, 4 4 1, 0 0 1)), ((5 5 2, 6 5 2, 6 6 2, 5 5 2)))",
            ),
            ("POINT EMPTY", "POINT EMPTY"),
            ("point z empty", "POINT Z EMPTY"),
            ("MULTIPOLYGON EMPTY", "MULTIPOLYGON EMPTY"),
            ("LINESTRING EMPTY", "LINESTRING EMPTY"),
            ("POINT (1e3 -2.5E-1)", "POINT (1000 -0.25)"),
            ("POINT (.5 +5.)", "POINT (0.5 5)"),
        ] {
            assert_eq!(canonical(input), output, "{input}");
        }
    }

    #[test]
    fn numbers_are_written_in_the_shortest_form_that_reads_back() {
        for value in [
            0.1,
            1.0 / 3.0,
            6_206_079.587_128_01,
            -0.000_001,
            1e21,
            5e-324,
        ] {
            let text = canonical(&format!("POINT ({value} 0)"));
            let inner = text
                .strip_prefix("POINT (")
                .and_then(|rest| rest.strip_suffix(" 0)"))
                .unwrap();
            assert_eq!(inner.parse::<f64>().unwrap(), value, "{text}");
            assert!(!inner.contains('e'), "{text}");
        }
        assert_eq!(canonical("POINT (0.1 0.2)"), "POINT (0.1 0.2)");
    }

    #[test]
    fn malformed_text_is_an_error_naming_the_character() {
        for (input, at, expected) in [
            ("", 1, "expected a geometry type"),
            ("CIRCLE (1 2)", 1, "\"CIRCLE\" is not a geometry type"),
            ("GEOMETRYCOLLECTION EMPTY", 1, "is not a geometry type"),
            ("POINT", 6, "expected '('"),
            ("POINT (1)", 9, "expected a number"),
            ("POINT (1 2", 11, "expected ')'"),
            ("POINT (1 2) x", 13, "expected the end"),
            ("POINT (1 x)", 10, "expected a number"),
            ("POINT (1 2 3 4 5)", 16, "at most 4 ordinates"),
            ("POINT (1 2,3 4)", 11, "expected ')'"),
            ("POINT Q (1 2)", 7, "expected Z, M, ZM, EMPTY"),
            (
                "POINT Z (1 2)",
                10,
                "has 2 ordinates where the geometry has 3",
            ),
            (
                "LINESTRING (1 2, 3 4 5)",
                18,
                "has 3 ordinates where the geometry has 2",
            ),
            ("LINESTRING ()", 13, "expected a number"),
            ("POINT (1e999 2)", 8, "\"1e999\" is not a finite number"),
            ("POINT (1-2 3)", 8, "\"1-2\" is not a finite number"),
            ("POLYGON ((1 2, 3 4)", 20, "expected ',' or ')'"),
            ("POINT (1 2) é", 13, "found 'é'"),
        ] {
            match parse_all(input) {
                Err(WktError::Syntax { at: got, message }) => {
                    assert_eq!(got, at, "{input}: {message}");
                    assert!(message.contains(expected), "{input}: {message}");
                }
                other => panic!("{input}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_position_budget_stops_the_parse() {
        let mut left = 3;
        parse("LINESTRING (1 2, 3 4)", &mut left).unwrap();
        assert_eq!(left, 1);
        parse("POINT (1 2)", &mut left).unwrap();
        assert_eq!(left, 0);
        assert_eq!(
            parse("POINT EMPTY", &mut left).unwrap().to_string(),
            "POINT EMPTY"
        );
        assert_eq!(
            parse("POINT (1 2)", &mut left),
            Err(WktError::PositionBudget)
        );
    }

    #[test]
    fn positions_are_visited_in_order_and_changed_in_place() {
        let mut geometry = parse_all(
            "MULTIPOLYGON Z (((0 0 7, 1 0 7, 1 1 7, 0 0 7)), ((2 2 8, 3 2 8, 3 3 8, 2 2 8)))",
        )
        .unwrap();
        let mut seen = Vec::new();
        geometry
            .try_for_each_position(|position| {
                seen.push(position.x);
                position.x += 10.0;
                Ok::<_, ()>(())
            })
            .unwrap();
        assert_eq!(seen, [0.0, 1.0, 1.0, 0.0, 2.0, 3.0, 3.0, 2.0]);
        assert_eq!(
            geometry.to_string(),
            "MULTIPOLYGON Z (((10 0 7, 11 0 7, 11 1 7, 10 0 7)), ((12 2 8, 13 2 8, 13 3 8, 12 2 8)))"
        );
        let stopped = geometry.try_for_each_position(|position| {
            if position.x > 11.0 {
                Err(position.x)
            } else {
                Ok(())
            }
        });
        assert_eq!(stopped, Err(12.0));
    }
}
