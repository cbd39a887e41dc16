//! The tabular encodings of an answer: GeoJSON (a FeatureCollection with one feature per place
//! and step, its values as properties, RFC 7946) and CSV (one line per place and step). Both
//! are written from [`crate::rows`]. GeoJSON positions are longitude and latitude by RFC 7946;
//! an answer in another system says so in a `crs` member of the collection (outside RFC 7946,
//! as GDAL reads it) rather than pretending otherwise.

use std::fmt::Write as _;

use crate::coverage::Answer;
use crate::covjson::{iso_time, number, rings, string};
use crate::crs::CRS84_URI;
use crate::rows::{Place, columns, crs_uri, for_each_row};

/// The media type of GeoJSON.
pub const GEOJSON_MEDIA_TYPE: &str = "application/geo+json";

/// The media type of CSV.
pub const CSV_MEDIA_TYPE: &str = "text/csv; charset=utf-8";

/// Writes `answer` as a GeoJSON FeatureCollection.
pub fn geojson(answer: &Answer) -> String {
    let columns = columns(answer);
    let mut out = String::from(r#"{"type":"FeatureCollection""#);
    let crs = crs_uri(answer);
    if crs != CRS84_URI && !crs.is_empty() {
        out.push_str(r#","crs":{"type":"name","properties":{"name":"#);
        string(&mut out, crs);
        out.push_str("}}");
    }
    out.push_str(r#","features":["#);
    let mut first = true;
    for_each_row(answer, |place, time, values| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(r#"{"type":"Feature","geometry":"#);
        geometry(&mut out, place);
        out.push_str(r#","properties":{"#);
        let mut comma = false;
        if let Some(time) = time {
            out.push_str(r#""datetime":"#);
            string(&mut out, &iso_time(time));
            comma = true;
        }
        if let Place::Polygon(index, _) = place {
            if comma {
                out.push(',');
            }
            let _ = write!(out, r#""polygon":{index}"#);
            comma = true;
        }
        for ((name, single), value) in columns.iter().zip(values) {
            if comma {
                out.push(',');
            }
            comma = true;
            string(&mut out, name);
            out.push(':');
            number(&mut out, *value, *single);
        }
        out.push_str("}}");
    });
    out.push_str("]}");
    out
}

/// A place as a GeoJSON geometry.
fn geometry(out: &mut String, place: Place<'_>) {
    match place {
        Place::Nowhere => out.push_str("null"),
        Place::Point(x, y) => {
            out.push_str(r#"{"type":"Point","coordinates":["#);
            number(out, x, false);
            out.push(',');
            number(out, y, false);
            out.push_str("]}");
        }
        Place::Polygon(_, polygon) => {
            out.push_str(r#"{"type":"Polygon","coordinates":"#);
            rings(out, &oriented(polygon));
            out.push('}');
        }
    }
}

/// `polygon` with its exterior ring counter-clockwise and its holes clockwise, as RFC 7946
/// says.
fn oriented(polygon: &[Vec<(f64, f64)>]) -> Vec<Vec<(f64, f64)>> {
    polygon
        .iter()
        .enumerate()
        .map(|(index, ring)| {
            let twice_area: f64 = ring
                .windows(2)
                .map(|pair| pair[0].0 * pair[1].1 - pair[1].0 * pair[0].1)
                .sum();
            let counter_clockwise = twice_area > 0.0;
            let mut ring = ring.clone();
            if counter_clockwise != (index == 0) {
                ring.reverse();
            }
            ring
        })
        .collect()
}

/// Writes `answer` as CSV: `x,y[,polygon],datetime,<columns>` (`datetime` only for data with
/// time), values empty where missing, names quoted as RFC 4180 says.
pub fn csv(answer: &Answer) -> String {
    let columns = columns(answer);
    let has_polygons = matches!(answer, Answer::Statistics(_));
    let has_time = match answer {
        Answer::Points(c) => !c.times.is_empty(),
        Answer::Grid(g) => !g.times.is_empty(),
        Answer::Cells(c) => !c.times.is_empty(),
        Answer::Statistics(s) => !s.times.is_empty(),
        Answer::Trajectory(_) | Answer::Series(_) => true,
    };
    let mut out = String::new();
    let has_place = !matches!(answer, Answer::Series(_));
    let mut header = Vec::new();
    if has_polygons {
        header.push("polygon");
    } else if has_place {
        header.extend(["x", "y"]);
    }
    if has_time {
        header.push("datetime");
    }
    out.push_str(&header.join(","));
    for (at, (name, _)) in columns.iter().enumerate() {
        if at > 0 || !header.is_empty() {
            out.push(',');
        }
        csv_field(&mut out, name);
    }
    out.push_str("\r\n");
    for_each_row(answer, |place, time, values| {
        let mut fields = Vec::with_capacity(3);
        match place {
            Place::Nowhere => {}
            Place::Point(x, y) => {
                let mut text = String::new();
                number(&mut text, x, false);
                fields.push(text);
                let mut text = String::new();
                number(&mut text, y, false);
                fields.push(text);
            }
            Place::Polygon(index, _) => fields.push(index.to_string()),
        }
        if let Some(time) = time {
            fields.push(iso_time(time));
        }
        out.push_str(&fields.join(","));
        for (at, ((_, single), value)) in columns.iter().zip(values).enumerate() {
            if at > 0 || !fields.is_empty() {
                out.push(',');
            }
            if value.is_finite() {
                number(&mut out, *value, *single);
            }
        }
        out.push_str("\r\n");
    });
    out
}

fn csv_field(out: &mut String, text: &str) {
    if text.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::{Coverages, Parameter, PointValues};

    fn answer() -> Answer {
        let parameter = |id: &str| Parameter {
            id: id.to_owned(),
            observed: id.to_owned(),
            unit_symbol: "m".to_owned(),
            unit_label: "meter".to_owned(),
            single_precision: true,
        };
        let start = chrono::NaiveDate::from_ymd_opt(2020, 1, 1)
            .and_then(|day| day.and_hms_opt(0, 0, 0))
            .unwrap_or_default();
        Answer::Points(Coverages {
            crs_uri: CRS84_URI.to_owned(),
            parameters: vec![parameter("H"), parameter("a, \"b\"")],
            times: vec![start, start + chrono::TimeDelta::hours(1)],
            points: vec![PointValues {
                x: 12.5,
                y: 55.0,
                values: vec![vec![0.1, f64::NAN], vec![1.0, 2.0]],
            }],
            multiple: false,
        })
    }

    #[test]
    fn geojson_has_a_feature_per_place_and_step() -> Result<(), serde_json::Error> {
        let json: serde_json::Value = serde_json::from_str(&geojson(&answer()))?;
        assert_eq!(json["type"], "FeatureCollection");
        assert!(json.get("crs").is_none(), "CRS84 needs no crs member");
        let features = json["features"].as_array().cloned().unwrap_or_default();
        assert_eq!(features.len(), 2);
        assert_eq!(
            features[0]["geometry"]["coordinates"],
            serde_json::json!([12.5, 55.0])
        );
        assert_eq!(
            features[0]["properties"]["datetime"],
            "2020-01-01T00:00:00Z"
        );
        assert_eq!(features[0]["properties"]["H"], 0.1);
        assert!(features[1]["properties"]["H"].is_null());
        Ok(())
    }

    #[test]
    fn csv_quotes_names_and_leaves_missing_values_empty() {
        let text = csv(&answer());
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(lines[0], "x,y,datetime,H,\"a, \"\"b\"\"\"");
        assert_eq!(lines[1], "12.5,55.0,2020-01-01T00:00:00Z,0.1,1.0");
        assert_eq!(lines[2], "12.5,55.0,2020-01-01T01:00:00Z,,2.0");
        assert_eq!(lines[3], "");
    }
}
