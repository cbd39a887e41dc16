//! CoverageJSON answers (the format EDR answers in by default): a `Coverage` with a
//! `PointSeries` domain (a `Point` domain for data without time) for one position, a
//! `CoverageCollection` of them for several.
//!
//! Written as text rather than through a JSON tree, for two reasons: values of single
//! precision items are written in the shortest form that reads back to the same `f32` (a tree
//! of `f64` would print 0.1 stored as `f32` as 0.10000000149011612), and large answers are
//! written without holding a tree of them. Missing values are `null`.

use std::fmt::Write as _;

use chrono::NaiveDateTime;

use crate::coverage::{Coverages, Parameter, PointValues};
use crate::crs::CRS84_URI;

/// The media type of CoverageJSON.
pub const MEDIA_TYPE: &str = "application/prs.coverage+json";

/// Writes `coverages` as CoverageJSON.
pub fn write(coverages: &Coverages) -> String {
    let mut out = String::with_capacity(256 + values_in(coverages) * 12);
    let domain_type = if coverages.times.is_empty() {
        "Point"
    } else {
        "PointSeries"
    };
    if coverages.multiple {
        out.push_str(r#"{"type":"CoverageCollection","domainType":""#);
        out.push_str(domain_type);
        out.push_str(r#"","parameters":"#);
        parameters(&mut out, &coverages.parameters);
        out.push_str(r#","referencing":"#);
        referencing(&mut out, coverages);
        out.push_str(r#","coverages":["#);
        for (index, point) in coverages.points.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            coverage(&mut out, coverages, point, domain_type, false);
        }
        out.push_str("]}");
    } else if let Some(point) = coverages.points.first() {
        coverage(&mut out, coverages, point, domain_type, true);
    }
    out
}

fn values_in(coverages: &Coverages) -> usize {
    coverages
        .points
        .len()
        .saturating_mul(coverages.parameters.len())
        .saturating_mul(coverages.times.len().max(1))
}

/// One coverage; `whole` for a coverage standing alone (it carries its own parameters and
/// referencing).
fn coverage(
    out: &mut String,
    coverages: &Coverages,
    point: &PointValues,
    domain_type: &str,
    whole: bool,
) {
    out.push_str(r#"{"type":"Coverage","domain":{"type":"Domain","domainType":""#);
    out.push_str(domain_type);
    out.push_str(r#"","axes":{"x":{"values":["#);
    number(out, point.x, false);
    out.push_str(r#"]},"y":{"values":["#);
    number(out, point.y, false);
    out.push_str("]}");
    if !coverages.times.is_empty() {
        out.push_str(r#","t":{"values":["#);
        for (index, time) in coverages.times.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            string(out, &iso_time(*time));
        }
        out.push_str("]}");
    }
    out.push('}');
    if whole {
        out.push_str(r#","referencing":"#);
        referencing(out, coverages);
    }
    out.push('}');
    if whole {
        out.push_str(r#","parameters":"#);
        parameters(out, &coverages.parameters);
    }
    out.push_str(r#","ranges":{"#);
    for (index, (parameter, values)) in coverages.parameters.iter().zip(&point.values).enumerate() {
        if index > 0 {
            out.push(',');
        }
        string(out, &parameter.id);
        out.push_str(r#":{"type":"NdArray","dataType":"float","#);
        if !coverages.times.is_empty() {
            let _ = write!(out, r#""axisNames":["t"],"shape":[{}],"#, values.len());
        }
        out.push_str(r#""values":["#);
        for (at, value) in values.iter().enumerate() {
            if at > 0 {
                out.push(',');
            }
            number(out, *value, parameter.single_precision);
        }
        out.push_str("]}");
    }
    out.push_str("}}");
}

fn parameters(out: &mut String, parameters: &[Parameter]) {
    out.push('{');
    for (index, parameter) in parameters.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        string(out, &parameter.id);
        out.push_str(r#":{"type":"Parameter","description":{"en":"#);
        string(out, &parameter.id);
        out.push_str(r#"},"observedProperty":{"label":{"en":"#);
        string(out, &parameter.observed);
        out.push_str("}}");
        if !parameter.unit_label.is_empty() || !parameter.unit_symbol.is_empty() {
            out.push_str(r#","unit":{"#);
            let label = if parameter.unit_label.is_empty() {
                &parameter.unit_symbol
            } else {
                &parameter.unit_label
            };
            out.push_str(r#""label":{"en":"#);
            string(out, label);
            out.push('}');
            if !parameter.unit_symbol.is_empty() {
                out.push_str(r#","symbol":"#);
                string(out, &parameter.unit_symbol);
            }
            out.push('}');
        }
        out.push('}');
    }
    out.push('}');
}

fn referencing(out: &mut String, coverages: &Coverages) {
    out.push_str(r#"[{"coordinates":["x","y"],"system":"#);
    if coverages.crs_uri == CRS84_URI {
        out.push_str(r#"{"type":"GeographicCRS","id":"#);
        string(out, CRS84_URI);
        out.push('}');
    } else if coverages.crs_uri.starts_with("http") {
        out.push_str(r#"{"type":"ProjectedCRS","id":"#);
        string(out, &coverages.crs_uri);
        out.push('}');
    } else {
        out.push_str(
            r#"{"type":"ProjectedCRS","description":{"en":"the dataset's own coordinates"}}"#,
        );
    }
    out.push('}');
    if !coverages.times.is_empty() {
        out.push_str(
            r#",{"coordinates":["t"],"system":{"type":"TemporalRS","calendar":"Gregorian"}}"#,
        );
    }
    out.push(']');
}

/// A time as ISO 8601 in UTC with `Z`, fractions of a second only when there are any.
pub fn iso_time(time: NaiveDateTime) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.fZ").to_string()
}

fn string(out: &mut String, text: &str) {
    // serde_json escapes exactly what JSON needs; writing a str cannot fail.
    out.push_str(&serde_json::Value::from(text).to_string());
}

/// `value`, or `null` when it is not finite; in the shortest form that reads back to the same
/// `f32` when `single`, else to the same `f64`.
fn number(out: &mut String, value: f64, single: bool) {
    if !value.is_finite() {
        out.push_str("null");
        return;
    }
    let mut buffer = ryu::Buffer::new();
    if single {
        out.push_str(buffer.format_finite(value as f32));
    } else {
        out.push_str(buffer.format_finite(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn sample(multiple: bool) -> Coverages {
        let start = NaiveDate::from_ymd_opt(2020, 1, 1)
            .and_then(|day| day.and_hms_milli_opt(6, 0, 0, 500))
            .unwrap_or_default();
        Coverages {
            crs_uri: CRS84_URI.to_owned(),
            parameters: vec![Parameter {
                id: "Surface \"elevation\"".to_owned(),
                observed: "Water Level".to_owned(),
                unit_symbol: "m".to_owned(),
                unit_label: "meter".to_owned(),
                single_precision: true,
            }],
            times: vec![start, start + chrono::TimeDelta::milliseconds(500)],
            points: vec![PointValues {
                x: 12.5,
                y: 55.25,
                values: vec![vec![f64::from(0.1_f32), f64::NAN]],
            }],
            multiple,
        }
    }

    #[test]
    fn one_position_is_a_point_series_coverage() -> Result<(), serde_json::Error> {
        let text = write(&sample(false));
        let json: serde_json::Value = serde_json::from_str(&text)?;
        assert_eq!(json["type"], "Coverage");
        assert_eq!(json["domain"]["domainType"], "PointSeries");
        assert_eq!(
            json["domain"]["axes"]["t"]["values"],
            serde_json::json!(["2020-01-01T06:00:00.500Z", "2020-01-01T06:00:01Z"])
        );
        let range = &json["ranges"]["Surface \"elevation\""];
        assert_eq!(range["shape"], serde_json::json!([2]));
        assert!(text.contains("[0.1,null]"), "{text}");
        assert_eq!(
            json["parameters"]["Surface \"elevation\""]["unit"]["symbol"],
            "m"
        );
        Ok(())
    }

    #[test]
    fn several_positions_are_a_collection() -> Result<(), serde_json::Error> {
        let json: serde_json::Value = serde_json::from_str(&write(&sample(true)))?;
        assert_eq!(json["type"], "CoverageCollection");
        assert_eq!(json["coverages"][0]["type"], "Coverage");
        assert!(json["coverages"][0]["parameters"].is_null());
        assert_eq!(json["referencing"][1]["system"]["type"], "TemporalRS");
        Ok(())
    }
}
