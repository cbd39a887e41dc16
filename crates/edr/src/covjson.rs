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

use crate::coverage::{
    Answer, CellsCoverage, Coverages, GridCoverage, Parameter, PointValues, SeriesCoverage,
    StatisticsCoverage, TrajectoryCoverage,
};
use crate::crs::CRS84_URI;

/// The media type of CoverageJSON.
pub const MEDIA_TYPE: &str = "application/prs.coverage+json";

/// Writes `answer` as CoverageJSON.
pub fn write_answer(answer: &Answer) -> String {
    match answer {
        Answer::Points(coverages) => write(coverages),
        Answer::Grid(grid) => write_grid(grid),
        Answer::Cells(cells) => write_cells(cells),
        Answer::Statistics(statistics) => write_statistics(statistics),
        Answer::Trajectory(trajectory) => write_trajectory(trajectory),
        Answer::Series(series) => write_series(series),
    }
}

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
        referencing(&mut out, &coverages.crs_uri, !coverages.times.is_empty());
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
        referencing(out, &coverages.crs_uri, !coverages.times.is_empty());
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

/// The start of a coverage up to its axes: `{"type":"Coverage","domain":{..."axes":{`.
fn open_coverage(out: &mut String, domain_type: &str) {
    out.push_str(r#"{"type":"Coverage","domain":{"type":"Domain","domainType":""#);
    out.push_str(domain_type);
    out.push_str(r#"","axes":{"#);
}

/// `"t":{"values":[...]}` preceded by a comma when `comma`.
fn time_axis(out: &mut String, times: &[NaiveDateTime], comma: bool) {
    if times.is_empty() {
        return;
    }
    if comma {
        out.push(',');
    }
    out.push_str(r#""t":{"values":["#);
    for (index, time) in times.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        string(out, &iso_time(*time));
    }
    out.push_str("]}");
}

/// The end of the axes, the referencing, the parameters and the start of the ranges.
fn close_domain(
    out: &mut String,
    crs_uri: &str,
    times: &[NaiveDateTime],
    parameters: &[Parameter],
) {
    out.push_str(r#"},"referencing":"#);
    referencing(out, crs_uri, !times.is_empty());
    out.push_str(r#"},"parameters":"#);
    self::parameters(out, parameters);
    out.push_str(r#","ranges":{"#);
}

/// One range: `"id":{"type":"NdArray",...}` with its axes and shape.
fn range(out: &mut String, id: &str, axes: &[(&str, usize)], values: &[f64], single: bool) {
    string(out, id);
    out.push_str(r#":{"type":"NdArray","dataType":"float","axisNames":["#);
    for (index, (name, _)) in axes.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        string(out, name);
    }
    out.push_str(r#"],"shape":["#);
    for (index, (_, size)) in axes.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        let _ = write!(out, "{size}");
    }
    out.push_str(r#"],"values":["#);
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        number(out, *value, single);
    }
    out.push_str("]}");
}

/// The ranges of `parameters`, each over `axes`, in their precision.
fn ranges(out: &mut String, parameters: &[Parameter], values: &[Vec<f64>], axes: &[(&str, usize)]) {
    for (index, (parameter, values)) in parameters.iter().zip(values).enumerate() {
        if index > 0 {
            out.push(',');
        }
        range(out, &parameter.id, axes, values, parameter.single_precision);
    }
}

/// The axes of a range over `times` (when any) and then `rest`.
fn with_time<'a>(times: &[NaiveDateTime], rest: &[(&'a str, usize)]) -> Vec<(&'a str, usize)> {
    let mut axes = Vec::with_capacity(rest.len() + 1);
    if !times.is_empty() {
        axes.push(("t", times.len()));
    }
    axes.extend_from_slice(rest);
    axes
}

fn write_grid(grid: &GridCoverage) -> String {
    let mut out = String::with_capacity(512 + grid.values.iter().map(Vec::len).sum::<usize>() * 10);
    open_coverage(&mut out, "Grid");
    for (name, values) in [("x", &grid.xs), ("y", &grid.ys)] {
        if name == "y" {
            out.push(',');
        }
        string(&mut out, name);
        out.push_str(r#":{"values":["#);
        for (index, value) in values.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            number(&mut out, *value, false);
        }
        out.push_str("]}");
    }
    time_axis(&mut out, &grid.times, true);
    close_domain(&mut out, &grid.crs_uri, &grid.times, &grid.parameters);
    let axes = with_time(&grid.times, &[("y", grid.ys.len()), ("x", grid.xs.len())]);
    ranges(&mut out, &grid.parameters, &grid.values, &axes);
    out.push_str("}}");
    out
}

fn write_cells(cells: &CellsCoverage) -> String {
    let mut out =
        String::with_capacity(512 + cells.values.iter().map(Vec::len).sum::<usize>() * 10);
    let domain_type = if cells.times.is_empty() {
        "MultiPoint"
    } else {
        "MultiPointSeries"
    };
    open_coverage(&mut out, domain_type);
    out.push_str(r#""composite":{"dataType":"tuple","coordinates":["x","y"],"values":["#);
    for (index, (x, y)) in cells.centres.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push('[');
        number(&mut out, *x, false);
        out.push(',');
        number(&mut out, *y, false);
        out.push(']');
    }
    out.push_str("]}");
    time_axis(&mut out, &cells.times, true);
    close_domain(&mut out, &cells.crs_uri, &cells.times, &cells.parameters);
    let axes = with_time(&cells.times, &[("composite", cells.centres.len())]);
    ranges(&mut out, &cells.parameters, &cells.values, &axes);
    out.push_str("}}");
    out
}

/// A time series: a coverage whose domain has a time axis only (no place, so no domain type of
/// CoverageJSON's list fits, and none is given).
fn write_series(series: &SeriesCoverage) -> String {
    let mut out =
        String::with_capacity(512 + series.values.iter().map(Vec::len).sum::<usize>() * 10);
    out.push_str(r#"{"type":"Coverage","domain":{"type":"Domain","axes":{"#);
    time_axis(&mut out, &series.times, false);
    out.push_str(r#"},"referencing":[{"coordinates":["t"],"system":{"type":"TemporalRS","calendar":"Gregorian"}}]},"parameters":"#);
    parameters(&mut out, &series.parameters);
    out.push_str(r#","ranges":{"#);
    let axes = [("t", series.times.len())];
    ranges(&mut out, &series.parameters, &series.values, &axes);
    out.push_str("}}");
    out
}

fn write_trajectory(trajectory: &TrajectoryCoverage) -> String {
    let mut out = String::with_capacity(512 + trajectory.positions.len() * 64);
    open_coverage(&mut out, "Trajectory");
    out.push_str(r#""composite":{"dataType":"tuple","coordinates":["t","x","y"],"values":["#);
    for (index, (time, x, y)) in trajectory.positions.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push('[');
        string(&mut out, &iso_time(*time));
        out.push(',');
        number(&mut out, *x, false);
        out.push(',');
        number(&mut out, *y, false);
        out.push(']');
    }
    out.push_str("]}");
    out.push_str(r#"},"referencing":"#);
    referencing(&mut out, &trajectory.crs_uri, true);
    out.push_str(r#"},"parameters":"#);
    parameters(&mut out, &trajectory.parameters);
    out.push_str(r#","ranges":{"#);
    let axes = [("composite", trajectory.positions.len())];
    for (index, (parameter, values)) in trajectory
        .parameters
        .iter()
        .zip(&trajectory.values)
        .enumerate()
    {
        if index > 0 {
            out.push(',');
        }
        range(&mut out, &parameter.id, &axes, values, false);
    }
    out.push_str("}}");
    out
}

/// The key of statistic `statistic` of `parameter` in `ranges` and `parameters`.
pub fn statistic_key(parameter: &str, statistic: &str) -> String {
    format!("{parameter}:{statistic}")
}

fn write_statistics(statistics: &StatisticsCoverage) -> String {
    let mut out = String::with_capacity(1024);
    let domain_type = match (statistics.multiple, statistics.times.is_empty()) {
        (false, false) => "PolygonSeries",
        (false, true) => "Polygon",
        (true, false) => "MultiPolygonSeries",
        (true, true) => "MultiPolygon",
    };
    open_coverage(&mut out, domain_type);
    out.push_str(r#""composite":{"dataType":"polygon","coordinates":["x","y"],"values":["#);
    for (index, polygon) in statistics.polygons.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        rings(&mut out, polygon);
    }
    out.push_str("]}");
    time_axis(&mut out, &statistics.times, true);
    let keyed: Vec<Parameter> = statistics
        .parameters
        .iter()
        .flat_map(|parameter| {
            statistics.statistics.iter().map(move |statistic| {
                // A count is a number of cells, without the item's unit.
                let count = statistic == "count";
                Parameter {
                    id: statistic_key(&parameter.id, statistic),
                    observed: format!("{} ({statistic})", parameter.observed),
                    unit_symbol: if count {
                        String::new()
                    } else {
                        parameter.unit_symbol.clone()
                    },
                    unit_label: if count {
                        String::new()
                    } else {
                        parameter.unit_label.clone()
                    },
                    ..parameter.clone()
                }
            })
        })
        .collect();
    close_domain(&mut out, &statistics.crs_uri, &statistics.times, &keyed);
    let rest: &[(&str, usize)] = if statistics.multiple {
        &[("composite", statistics.polygons.len())]
    } else {
        &[]
    };
    let axes = with_time(&statistics.times, rest);
    let mut first = true;
    for (parameter, per_statistic) in statistics.parameters.iter().zip(&statistics.values) {
        for (statistic, values) in statistics.statistics.iter().zip(per_statistic) {
            if !first {
                out.push(',');
            }
            first = false;
            let key = statistic_key(&parameter.id, statistic);
            range(&mut out, &key, &axes, values, false);
        }
    }
    let _ = write!(out, r#"}},"basin:cells":{:?}}}"#, statistics.cells);
    out
}

/// A polygon as CoverageJSON writes it: rings of `[x, y]`.
pub(crate) fn rings(out: &mut String, polygon: &[Vec<(f64, f64)>]) {
    out.push('[');
    for (index, ring) in polygon.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push('[');
        for (at, (x, y)) in ring.iter().enumerate() {
            if at > 0 {
                out.push(',');
            }
            out.push('[');
            number(out, *x, false);
            out.push(',');
            number(out, *y, false);
            out.push(']');
        }
        out.push(']');
    }
    out.push(']');
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

fn referencing(out: &mut String, crs_uri: &str, has_time: bool) {
    out.push_str(r#"[{"coordinates":["x","y"],"system":"#);
    if crs_uri == CRS84_URI {
        out.push_str(r#"{"type":"GeographicCRS","id":"#);
        string(out, CRS84_URI);
        out.push('}');
    } else if crs_uri.starts_with("http") {
        out.push_str(r#"{"type":"ProjectedCRS","id":"#);
        string(out, crs_uri);
        out.push('}');
    } else {
        out.push_str(
            r#"{"type":"ProjectedCRS","description":{"en":"the dataset's own coordinates"}}"#,
        );
    }
    out.push('}');
    if has_time {
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

pub(crate) fn string(out: &mut String, text: &str) {
    // serde_json escapes exactly what JSON needs; writing a str cannot fail.
    out.push_str(&serde_json::Value::from(text).to_string());
}

/// `value`, or `null` when it is not finite; in the shortest form that reads back to the same
/// `f32` when `single`, else to the same `f64`.
pub(crate) fn number(out: &mut String, value: f64, single: bool) {
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
