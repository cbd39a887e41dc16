//! Reader and writer parameters: their declared shape (name, type, required, default, allowed
//! values, as the interface's reader and writer lists publish them) and validation of what a
//! user passed, done before any work starts.
//!
//! Names match case-insensitively (clients send `srid` and `SRID`); values arrive as text
//! from the CLI (`-p NAME=VALUE`) and as JSON scalars rendered to text by the server.

use std::collections::BTreeMap;

use crate::error::{FormatError, FormatResult};

/// The type of a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterType {
    /// Any text.
    String,
    /// A whole number.
    Integer,
    /// A real number.
    Double,
    /// `true` or `false` (any case).
    Boolean,
    /// A comma-separated list of texts.
    StringList,
}

impl ParameterType {
    /// The `dataType` published in reader and writer lists.
    pub fn wire_name(self) -> &'static str {
        match self {
            Self::String => "String",
            Self::Integer => "Integer",
            Self::Double => "Double",
            Self::Boolean => "Boolean",
            Self::StringList => "StringList",
        }
    }
}

/// The declaration of one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParameterSpec {
    /// Name, e.g. `SRID`.
    pub name: &'static str,
    /// What it does, for the reader/writer list.
    pub description: &'static str,
    /// Value type.
    pub data_type: ParameterType,
    /// Whether it must be given. A reader may also demand an optional parameter at run time
    /// (GeoTIFF's `SRID` when the file has no CRS); it then fails with a parameter error.
    pub required: bool,
    /// Default as text, if any.
    pub default_value: Option<&'static str>,
    /// The accepted values (compared case-insensitively); empty when any value of the type is
    /// accepted.
    pub allowed_values: &'static [&'static str],
}

/// Name of the reader parameter that gives the EPSG code of the input's coordinate system.
pub const SRID: &str = "SRID";

/// The `SRID` parameter of a reader whose input may state its coordinate system itself: the
/// parameter then applies only when the file does not.
pub const SRID_PARAMETER: ParameterSpec = srid_parameter(
    "EPSG code of the input's coordinate system, used when the file does not state one",
);

/// A reader's optional, integer `SRID` parameter with its own `description`, for readers
/// whose input states its coordinate system in its own way, or never. Read it with
/// [`Parameters::srid`].
pub const fn srid_parameter(description: &'static str) -> ParameterSpec {
    ParameterSpec {
        name: SRID,
        description,
        data_type: ParameterType::Integer,
        required: false,
        default_value: None,
        allowed_values: &[],
    }
}

/// A validated parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterValue {
    /// Text.
    String(String),
    /// Whole number.
    Integer(i64),
    /// Real number.
    Double(f64),
    /// Boolean.
    Boolean(bool),
    /// List of texts.
    StringList(Vec<String>),
}

/// Validated parameters of one reader or writer, with defaults applied. Keys are the
/// declared spellings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parameters {
    values: BTreeMap<&'static str, ParameterValue>,
}

impl Parameters {
    /// Checks `raw` against `specs`: unknown names, missing required parameters, values of the
    /// wrong type and values outside `allowed_values` are errors naming the parameter.
    pub fn validate(specs: &[ParameterSpec], raw: &[(String, String)]) -> FormatResult<Self> {
        let mut values = BTreeMap::new();
        for (name, text) in raw {
            let Some(spec) = specs
                .iter()
                .find(|spec| spec.name.eq_ignore_ascii_case(name))
            else {
                let known: Vec<&str> = specs.iter().map(|spec| spec.name).collect();
                let message = if known.is_empty() {
                    "unknown parameter; this takes no parameters".to_owned()
                } else {
                    format!("unknown parameter; known are {}", known.join(", "))
                };
                return Err(FormatError::parameter(name, message));
            };
            if values.contains_key(spec.name) {
                return Err(FormatError::parameter(spec.name, "given more than once"));
            }
            values.insert(spec.name, parse_value(spec, text)?);
        }
        for spec in specs {
            if values.contains_key(spec.name) {
                continue;
            }
            if let Some(default) = spec.default_value {
                values.insert(spec.name, parse_value(spec, default)?);
            } else if spec.required {
                return Err(FormatError::parameter(spec.name, "required but not given"));
            }
        }
        Ok(Self { values })
    }

    /// The value of `name`, if given or defaulted.
    pub fn get(&self, name: &str) -> Option<&ParameterValue> {
        self.values.get(name)
    }

    /// Text value of `name`.
    pub fn string(&self, name: &str) -> Option<&str> {
        match self.values.get(name)? {
            ParameterValue::String(text) => Some(text),
            _ => None,
        }
    }

    /// Integer value of `name`.
    pub fn integer(&self, name: &str) -> Option<i64> {
        match self.values.get(name)? {
            ParameterValue::Integer(value) => Some(*value),
            _ => None,
        }
    }

    /// Real value of `name` (integers widen).
    pub fn double(&self, name: &str) -> Option<f64> {
        match self.values.get(name)? {
            ParameterValue::Double(value) => Some(*value),
            ParameterValue::Integer(value) => Some(*value as f64),
            _ => None,
        }
    }

    /// Boolean value of `name`.
    pub fn boolean(&self, name: &str) -> Option<bool> {
        match self.values.get(name)? {
            ParameterValue::Boolean(value) => Some(*value),
            _ => None,
        }
    }

    /// List value of `name`.
    pub fn string_list(&self, name: &str) -> Option<&[String]> {
        match self.values.get(name)? {
            ParameterValue::StringList(values) => Some(values),
            _ => None,
        }
    }

    /// An SRID parameter as an EPSG code: a positive integer that fits in u32.
    pub fn srid(&self, name: &str) -> FormatResult<Option<u32>> {
        let Some(value) = self.integer(name) else {
            return Ok(None);
        };
        u32::try_from(value)
            .ok()
            .filter(|code| *code > 0)
            .map(Some)
            .ok_or_else(|| FormatError::parameter(name, format!("{value} is not an EPSG code")))
    }
}

fn parse_value(spec: &ParameterSpec, text: &str) -> FormatResult<ParameterValue> {
    let text = text.trim();
    if !spec.allowed_values.is_empty()
        && !spec
            .allowed_values
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(text))
    {
        let message = format!("{text:?} is not one of {}", spec.allowed_values.join(", "));
        return Err(FormatError::parameter(spec.name, message));
    }
    let wrong_type = || {
        FormatError::parameter(
            spec.name,
            format!("{text:?} is not a valid {}", spec.data_type.wire_name()),
        )
    };
    Ok(match spec.data_type {
        ParameterType::String => {
            let canonical = spec
                .allowed_values
                .iter()
                .find(|allowed| allowed.eq_ignore_ascii_case(text))
                .map_or(text, |allowed| allowed);
            ParameterValue::String(canonical.to_owned())
        }
        ParameterType::Integer => ParameterValue::Integer(text.parse().map_err(|_| wrong_type())?),
        ParameterType::Double => {
            let value: f64 = text.parse().map_err(|_| wrong_type())?;
            if !value.is_finite() {
                return Err(wrong_type());
            }
            ParameterValue::Double(value)
        }
        ParameterType::Boolean => match text.to_ascii_lowercase().as_str() {
            "true" => ParameterValue::Boolean(true),
            "false" => ParameterValue::Boolean(false),
            _ => return Err(wrong_type()),
        },
        ParameterType::StringList => ParameterValue::StringList(
            text.split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParameterSpec] = &[
        ParameterSpec {
            name: "SRID",
            description: "EPSG code",
            data_type: ParameterType::Integer,
            required: true,
            default_value: None,
            allowed_values: &[],
        },
        ParameterSpec {
            name: "Mode",
            description: "mode",
            data_type: ParameterType::String,
            required: false,
            default_value: Some("Fast"),
            allowed_values: &["Fast", "Exact"],
        },
    ];

    fn raw(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn names_match_case_insensitively_and_defaults_apply() {
        let parameters = Parameters::validate(SPECS, &raw(&[("srid", "4326")])).unwrap();
        assert_eq!(parameters.srid("SRID").unwrap(), Some(4326));
        assert_eq!(parameters.string("Mode"), Some("Fast"));
    }

    #[test]
    fn allowed_values_are_canonicalised() {
        let parameters =
            Parameters::validate(SPECS, &raw(&[("SRID", "1"), ("mode", "EXACT")])).unwrap();
        assert_eq!(parameters.string("Mode"), Some("Exact"));
    }

    #[test]
    fn missing_unknown_and_bad_values_are_errors_naming_the_parameter() {
        let missing = Parameters::validate(SPECS, &[]).unwrap_err().to_string();
        assert!(
            missing.contains("SRID") && missing.contains("required"),
            "{missing}"
        );
        let unknown = Parameters::validate(SPECS, &raw(&[("SRID", "1"), ("Colour", "red")]))
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("Colour") && unknown.contains("unknown"),
            "{unknown}"
        );
        let typed = Parameters::validate(SPECS, &raw(&[("SRID", "abc")])).unwrap_err();
        assert!(typed.to_string().contains("Integer"));
        let allowed = Parameters::validate(SPECS, &raw(&[("SRID", "1"), ("Mode", "Slow")]));
        assert!(allowed.unwrap_err().to_string().contains("Fast, Exact"));
        let negative = Parameters::validate(SPECS, &raw(&[("SRID", "-3")])).unwrap();
        assert!(negative.srid("SRID").is_err());
    }
}
