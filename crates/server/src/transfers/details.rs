//! What a dataset record says of its data, taken from the summary the format library gives of
//! what a transfer wrote: `datasetType`, `spatialInformation` and `temporalInformation`
//! (docs/datasets.md#records-and-operations). Fields the data does not tell are left out,
//! never sent as null.

use basin_formats::model::DataKind;
use basin_formats::summary::{DataSize, DataSummary};
use serde_json::{Map, Value, json};

use crate::datasets::model::DatasetType;
use crate::datasets::service::ContentDetails;
use crate::db::JsonText;
use crate::http::time::WireTime;

/// The dataset type of a kind of data.
pub(crate) fn dataset_type_of(kind: DataKind) -> DatasetType {
    match kind {
        DataKind::Grid | DataKind::Mesh | DataKind::Points => DatasetType::Multidimensional,
        DataKind::TimeSeries => DatasetType::Timeseries,
        DataKind::Features => DatasetType::Gisvectordata,
    }
}

/// Details of content in `format` described by `summary` (`None`: a plain copy, whose type
/// follows from its format).
pub(crate) fn details(format: &str, summary: Option<&DataSummary>) -> ContentDetails {
    let Some(summary) = summary else {
        return ContentDetails {
            dataset_format: format.to_owned(),
            dataset_type: crate::datasets::model::type_of(format).wire(),
            temporal_information: None,
            spatial_information: None,
        };
    };
    ContentDetails {
        dataset_format: format.to_owned(),
        dataset_type: dataset_type_of(summary.kind).wire(),
        temporal_information: temporal(summary),
        spatial_information: spatial(summary),
    }
}

fn spatial(summary: &DataSummary) -> Option<JsonText> {
    let mut out = Map::new();
    if let Some([min_x, min_y, max_x, max_y]) = summary.extent {
        out.insert(
            "location".into(),
            json!(format!(
                "POLYGON (({min_x} {min_y}, {max_x} {min_y}, {max_x} {max_y}, {min_x} {max_y}, {min_x} {min_y}))"
            )),
        );
    }
    if let Some(wkt) = &summary.wkt {
        out.insert("primarySpatialReference".into(), json!(wkt));
    }
    if let DataSize::Grid {
        cell_width,
        cell_height,
        ..
    } = summary.size
    {
        out.insert(
            "resolution".into(),
            json!(cell_width.abs().min(cell_height.abs())),
        );
    }
    if let Some(srid) = summary.srid {
        out.insert("srid".into(), json!(srid));
    }
    (!out.is_empty()).then(|| JsonText::from_value(&Value::Object(out)))
}

fn temporal(summary: &DataSummary) -> Option<JsonText> {
    let time = summary.time?;
    let mut out = Map::new();
    out.insert(
        "startTime".into(),
        serde_json::to_value(WireTime(time.start.and_utc())).ok()?,
    );
    out.insert(
        "endTime".into(),
        serde_json::to_value(WireTime(time.end.and_utc())).ok()?,
    );
    if let Some(seconds) = time.interval_seconds {
        out.insert("interval".into(), json!(time_span(seconds)));
        out.insert("resolution".into(), json!(seconds));
    }
    Some(JsonText::from_value(&Value::Object(out)))
}

/// Seconds as .NET writes a `TimeSpan` (`1.02:03:04`, `00:30:00`, `00:00:00.5`), the form the
/// platform's clients read.
fn time_span(seconds: f64) -> String {
    let millis = (seconds * 1000.0).round();
    // Steps are far below 2^53 ms; the cast keeps whole milliseconds.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "rounded, and bounded by the axis"
    )]
    let millis = millis as i64;
    let sign = if millis < 0 { "-" } else { "" };
    let millis = millis.unsigned_abs();
    let (days, rest) = (millis / 86_400_000, millis % 86_400_000);
    let (hours, rest) = (rest / 3_600_000, rest % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let (secs, fraction) = (rest / 1000, rest % 1000);
    let mut out = String::from(sign);
    if days > 0 {
        out.push_str(&format!("{days}."));
    }
    out.push_str(&format!("{hours:02}:{minutes:02}:{secs:02}"));
    if fraction > 0 {
        out.push_str(&format!(".{fraction:03}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::time_span;

    #[test]
    fn intervals_read_as_dotnet_time_spans() {
        assert_eq!(time_span(3600.0), "01:00:00");
        assert_eq!(time_span(1800.0), "00:30:00");
        assert_eq!(time_span(93_784.0), "1.02:03:04");
        assert_eq!(time_span(0.5), "00:00:00.500");
    }
}
