//! Transformations from the JSON clients of the interface send, so that the server does not
//! need to know their shapes:
//!
//! ```json
//! {"type": "CrsTransformation", "inputSrid": 25832, "outputSrid": 4326}
//! {"type": "ItemFilterTransformation", "itemFilter": [{"itemIndices": [0, 2]}, {"names": ["H"]}]}
//! {"type": "TemporalFilterTransformation",
//!  "temporalFilter": {"type": "TemporalIndexFilter", "from": 2, "to": 5}}
//! ```
//!
//! Clients spell type values and property names in more than one case (`crsTransformation`,
//! `outputSRID`), so both compare ignoring ASCII case. A property given as `null` counts as
//! absent. An unknown property is an error rather than ignored, because a misspelt
//! `itemFilters` silently ignored would convert all the data instead of failing.

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use serde_json::{Map, Value as Json};

use super::{
    CRS_TRANSFORMATION, ITEM_FILTER_TRANSFORMATION, ItemSelection, TEMPORAL_FILTER_TRANSFORMATION,
    TemporalFilter, Transformation,
};
use crate::error::{FormatError, FormatResult};

/// The `type` values of a temporal filter.
const TEMPORAL_INDEX_FILTER: &str = "TemporalIndexFilter";
const TEMPORAL_VALUE_FILTER: &str = "TemporalValueFilter";
const TEMPORAL_INDEX_LIST_FILTER: &str = "TemporalIndexListFilter";

/// What messages call a transformation whose type is not known yet.
const UNTYPED: &str = "transformation";

impl Transformation {
    /// Parses one transformation of a request. `type` and property names compare ignoring
    /// case; errors name the offending property (`temporalFilter.from`, `itemFilter[1].names`).
    /// Known but unimplemented types (`SpatialFilterTransformation`) and unknown types are
    /// errors, as in [`super::parse_type`].
    pub fn from_json(value: &Json) -> FormatResult<Transformation> {
        let object = Object::new(UNTYPED, String::new(), value)?;
        let type_name = object
            .string("type")?
            .ok_or_else(|| FormatError::transformation(UNTYPED, "the property type is missing"))?;
        match super::parse_type(type_name)? {
            CRS_TRANSFORMATION => crs_from(object.named(CRS_TRANSFORMATION)),
            ITEM_FILTER_TRANSFORMATION => {
                item_filter_from(object.named(ITEM_FILTER_TRANSFORMATION))
            }
            TEMPORAL_FILTER_TRANSFORMATION => {
                temporal_filter_from(object.named(TEMPORAL_FILTER_TRANSFORMATION))
            }
            other => Err(FormatError::Catalogue(format!(
                "transformation {other} has no JSON form"
            ))),
        }
    }

    /// Parses a request's `transformations` array; errors say which entry
    /// (`transformations[1].outputSrid: ...`).
    pub fn list_from_json(value: &Json) -> FormatResult<Vec<Transformation>> {
        let Json::Array(entries) = value else {
            return Err(FormatError::transformation(
                UNTYPED,
                "transformations must be a JSON array",
            ));
        };
        entries
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                Transformation::from_json(entry).map_err(|error| match error {
                    FormatError::Transformation {
                        transformation,
                        message,
                    } => FormatError::Transformation {
                        transformation,
                        message: format!("transformations[{index}]: {message}"),
                    },
                    FormatError::Catalogue(message) => {
                        FormatError::Catalogue(format!("transformations[{index}]: {message}"))
                    }
                    other => other,
                })
            })
            .collect()
    }
}

fn crs_from(object: Object<'_>) -> FormatResult<Transformation> {
    object.only(&["type", "inputSrid", "outputSrid"])?;
    let input_srid = object.srid("inputSrid")?;
    let output_srid = object
        .srid("outputSrid")?
        .ok_or_else(|| object.error("outputSrid", "is missing"))?;
    Ok(Transformation::Crs {
        input_srid,
        output_srid,
    })
}

fn item_filter_from(object: Object<'_>) -> FormatResult<Transformation> {
    object.only(&["type", "itemFilter"])?;
    let Some(filter) = object.get("itemFilter")? else {
        return Err(object.error("itemFilter", "is missing"));
    };
    // The interface sends a list of filters; a single filter object is accepted as a list of one.
    let entries: Vec<&Json> = match filter {
        Json::Array(entries) => entries.iter().collect(),
        single => vec![single],
    };
    let mut selection = ItemSelection::default();
    for (index, entry) in entries.into_iter().enumerate() {
        let path = format!("itemFilter[{index}]");
        let entry = Object::new(ITEM_FILTER_TRANSFORMATION, path.clone(), entry)?;
        entry.only(&["itemIndices", "names"])?;
        let indices = entry.indices("itemIndices")?;
        let names = entry.strings("names")?;
        if indices.is_none() && names.is_none() {
            return Err(FormatError::transformation(
                ITEM_FILTER_TRANSFORMATION,
                format!("{path}: give itemIndices or names"),
            ));
        }
        selection.indices.extend(indices.unwrap_or_default());
        selection.names.extend(names.unwrap_or_default());
    }
    let transformation = Transformation::ItemFilter(selection);
    super::validate(std::slice::from_ref(&transformation))?;
    Ok(transformation)
}

fn temporal_filter_from(object: Object<'_>) -> FormatResult<Transformation> {
    object.only(&["type", "temporalFilter"])?;
    let Some(filter) = object.get("temporalFilter")? else {
        return Err(object.error("temporalFilter", "is missing"));
    };
    let filter = Object::new(
        TEMPORAL_FILTER_TRANSFORMATION,
        "temporalFilter".to_owned(),
        filter,
    )?;
    let Some(type_name) = filter.string("type")? else {
        return Err(filter.error(
            "type",
            format!(
                "is missing; give {TEMPORAL_INDEX_FILTER}, {TEMPORAL_VALUE_FILTER} or \
                 {TEMPORAL_INDEX_LIST_FILTER}"
            ),
        ));
    };
    let parsed = if type_name.eq_ignore_ascii_case(TEMPORAL_INDEX_FILTER) {
        filter.only(&["type", "from", "to"])?;
        TemporalFilter::IndexRange {
            from: filter.index("from")?,
            to: filter.index("to")?,
        }
    } else if type_name.eq_ignore_ascii_case(TEMPORAL_VALUE_FILTER) {
        filter.only(&["type", "from", "to"])?;
        TemporalFilter::TimeRange {
            from: filter.time("from")?,
            to: filter.time("to")?,
        }
    } else if type_name.eq_ignore_ascii_case(TEMPORAL_INDEX_LIST_FILTER) {
        filter.only(&["type", "indices"])?;
        TemporalFilter::IndexList(
            filter
                .indices("indices")?
                .ok_or_else(|| filter.error("indices", "is missing"))?,
        )
    } else {
        return Err(filter.error(
            "type",
            format!(
                "{type_name:?} is not a temporal filter; give {TEMPORAL_INDEX_FILTER}, \
                 {TEMPORAL_VALUE_FILTER} or {TEMPORAL_INDEX_LIST_FILTER}"
            ),
        ));
    };
    let transformation = Transformation::TemporalFilter(parsed);
    super::validate(std::slice::from_ref(&transformation))?;
    Ok(transformation)
}

/// A JSON object whose properties are looked up ignoring case; `path` locates it in the
/// transformation for messages (empty for the transformation itself).
struct Object<'a> {
    transformation: &'static str,
    path: String,
    map: &'a Map<String, Json>,
}

impl<'a> Object<'a> {
    fn new(transformation: &'static str, path: String, value: &'a Json) -> FormatResult<Self> {
        let Json::Object(map) = value else {
            let what = if path.is_empty() {
                "a transformation".to_owned()
            } else {
                path
            };
            return Err(FormatError::transformation(
                transformation,
                format!("{what} must be a JSON object"),
            ));
        };
        Ok(Self {
            transformation,
            path,
            map,
        })
    }

    /// The same object, with its type now known.
    fn named(self, transformation: &'static str) -> Self {
        Self {
            transformation,
            ..self
        }
    }

    /// The full name of property `name`, e.g. `temporalFilter.from`.
    fn path_of(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    fn error(&self, name: &str, message: impl std::fmt::Display) -> FormatError {
        FormatError::transformation(
            self.transformation,
            format!("property {} {message}", self.path_of(name)),
        )
    }

    /// Fails on a property not in `known` (ignoring case), naming it.
    fn only(&self, known: &[&str]) -> FormatResult<()> {
        match self
            .map
            .keys()
            .find(|key| !known.iter().any(|name| name.eq_ignore_ascii_case(key)))
        {
            Some(unknown) => Err(FormatError::transformation(
                self.transformation,
                format!(
                    "unknown property {}; expected {}",
                    self.path_of(unknown),
                    known.join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    /// Property `name` ignoring case; `None` when absent or null. Two spellings of one
    /// property (`from` and `From`) are an error: which one was meant is not clear.
    fn get(&self, name: &str) -> FormatResult<Option<&'a Json>> {
        let mut found = self
            .map
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case(name));
        let first = found.next();
        if found.next().is_some() {
            return Err(self.error(name, "is given more than once (in different cases)"));
        }
        Ok(first
            .map(|(_, value)| value)
            .filter(|value| !value.is_null()))
    }

    fn string(&self, name: &str) -> FormatResult<Option<&'a str>> {
        match self.get(name)? {
            None => Ok(None),
            Some(Json::String(text)) => Ok(Some(text.as_str())),
            Some(other) => Err(self.error(name, format!("must be a string, not {other}"))),
        }
    }

    /// An EPSG code: a positive integer, or a string holding one (some clients quote it).
    fn srid(&self, name: &str) -> FormatResult<Option<u32>> {
        let Some(value) = self.get(name)? else {
            return Ok(None);
        };
        let code = match value {
            Json::Number(number) => number.as_u64().and_then(|code| u32::try_from(code).ok()),
            Json::String(text) => text.trim().parse::<u32>().ok(),
            _ => None,
        };
        match code {
            Some(code) if code > 0 => Ok(Some(code)),
            _ => Err(self.error(name, format!("must be an EPSG code, not {value}"))),
        }
    }

    /// A zero-based index.
    fn index(&self, name: &str) -> FormatResult<Option<usize>> {
        self.get(name)?
            .map(|value| index_of(value).ok_or_else(|| self.not_an_index(name, value)))
            .transpose()
    }

    fn not_an_index(&self, name: &str, value: &Json) -> FormatError {
        self.error(
            name,
            format!("must be a zero-based index (a whole number from 0), not {value}"),
        )
    }

    /// A list of zero-based indices.
    fn indices(&self, name: &str) -> FormatResult<Option<Vec<usize>>> {
        let Some(value) = self.get(name)? else {
            return Ok(None);
        };
        let Json::Array(entries) = value else {
            return Err(self.error(name, format!("must be a list of indices, not {value}")));
        };
        entries
            .iter()
            .enumerate()
            .map(|(position, entry)| {
                index_of(entry)
                    .ok_or_else(|| self.not_an_index(&format!("{name}[{position}]"), entry))
            })
            .collect::<FormatResult<Vec<usize>>>()
            .map(Some)
    }

    /// A list of strings.
    fn strings(&self, name: &str) -> FormatResult<Option<Vec<String>>> {
        let Some(value) = self.get(name)? else {
            return Ok(None);
        };
        let Json::Array(entries) = value else {
            return Err(self.error(name, format!("must be a list of names, not {value}")));
        };
        entries
            .iter()
            .enumerate()
            .map(|(position, entry)| match entry {
                Json::String(text) => Ok(text.clone()),
                other => Err(self.error(
                    &format!("{name}[{position}]"),
                    format!("must be a string, not {other}"),
                )),
            })
            .collect::<FormatResult<Vec<String>>>()
            .map(Some)
    }

    /// An ISO 8601 time, see [`parse_time`].
    fn time(&self, name: &str) -> FormatResult<Option<NaiveDateTime>> {
        let Some(text) = self.string(name)? else {
            return Ok(None);
        };
        parse_time(text).map(Some).ok_or_else(|| {
            self.error(
                name,
                format!(
                    "{text:?} is not an ISO 8601 time such as 2020-01-01T00:00:00 (a fraction \
                     of a second and a zone such as Z or +01:00 may follow)"
                ),
            )
        })
    }
}

fn index_of(value: &Json) -> Option<usize> {
    value.as_u64().and_then(|index| usize::try_from(index).ok())
}

/// Parses an ISO 8601 time: `2020-01-01T00:00:00`, with an optional fraction of a second,
/// `T` or a space between date and time, optionally without seconds, optionally with a zone
/// (`Z`, `+01:00`, `+0100`), or a date alone (midnight). Model times have no zone, so a
/// time with a zone is converted to UTC.
pub(crate) fn parse_time(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.naive_utc());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%z"] {
        if let Ok(time) = DateTime::parse_from_str(text, format) {
            return Some(time.naive_utc());
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(time) = NaiveDateTime::parse_from_str(text, format) {
            return Some(time);
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").unwrap()
    }

    #[test]
    fn iso_times_parse_with_and_without_zone_and_fraction() {
        let cases = [
            ("2020-01-01T00:00:00", "2020-01-01T00:00:00"),
            ("2020-01-01T00:00:00.250", "2020-01-01T00:00:00.250"),
            ("2020-01-01 06:30:00", "2020-01-01T06:30:00"),
            ("2020-01-01T06:30", "2020-01-01T06:30:00"),
            ("2020-01-01T00:00:00Z", "2020-01-01T00:00:00"),
            ("2020-01-01T01:00:00+01:00", "2020-01-01T00:00:00"),
            ("2020-01-01T01:00:00.5+0100", "2020-01-01T00:00:00.5"),
            ("2020-01-01", "2020-01-01T00:00:00"),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_time(text), Some(at(expected)), "{text}");
        }
        for bad in [
            "",
            "yesterday",
            "2020-13-01T00:00:00",
            "2020-01-01T25:00:00",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }
}
