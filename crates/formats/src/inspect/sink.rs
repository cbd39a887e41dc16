//! The sink a reader feeds during an inspection: it keeps the header, counts feature geometry
//! types, and (only when asked) accumulates statistics or keeps every value. Statistics use
//! one accumulator per item whatever the file's size.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{FormatError, FormatResult};
use crate::model::{
    DataKind, DatasetSink, Feature, Frame, GeometryKind, GridGeometry, Header, Item, ItemLocation,
    MeshGeometry, PointChunk, TimeAxis, ValueType, Values,
};
use crate::summary::{DataSize, DataSummary};

use super::{
    FeaturesSummary, FieldSummary, GeometrySummary, GridSummary, Inspection, ItemSummary,
    MeshSummary, PointsSummary, StepValues, TimeAxisSummary, VALUES_MAX, crs_summary,
};

/// Statistics of one item over every step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValueStatistics {
    /// Item name.
    pub item: String,
    /// Least valid value.
    pub min: Option<f64>,
    /// Greatest valid value.
    pub max: Option<f64>,
    /// Mean of the valid values.
    pub mean: Option<f64>,
    /// Number of valid values.
    pub count_valid: u64,
    /// Number of NaN values and values equal to the item's nodata value.
    pub count_nan: u64,
}

/// Running statistics of one item.
#[derive(Debug, Clone, Copy)]
struct Accumulator {
    min: f64,
    max: f64,
    sum: f64,
    valid: u64,
    missing: u64,
}

impl Default for Accumulator {
    fn default() -> Self {
        Self {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sum: 0.0,
            valid: 0,
            missing: 0,
        }
    }
}

impl Accumulator {
    /// Adds `values` of `item`; NaN and the item's nodata value count as missing (float32
    /// items compare in float32, as [`Item::is_nodata`] does).
    fn add(&mut self, values: &Values, item: &Item) {
        match values {
            Values::F32(values) => {
                let nodata = item.nodata.map(|nodata| nodata as f32);
                self.add_all(
                    values
                        .iter()
                        .map(|&value| (f64::from(value), value.is_nan() || Some(value) == nodata)),
                );
            }
            Values::F64(values) => {
                let nodata = item.nodata;
                self.add_all(
                    values
                        .iter()
                        .map(|&value| (value, value.is_nan() || Some(value) == nodata)),
                );
            }
            other => self.add_all(
                (0..other.len())
                    .filter_map(|index| other.get_f64(index))
                    .map(|value| (value, item.is_nodata(value))),
            ),
        }
    }

    fn add_all(&mut self, values: impl Iterator<Item = (f64, bool)>) {
        for (value, missing) in values {
            if missing {
                self.missing += 1;
            } else {
                self.min = self.min.min(value);
                self.max = self.max.max(value);
                self.sum += value;
                self.valid += 1;
            }
        }
    }

    fn statistics(&self, item: &Item) -> ValueStatistics {
        let any = self.valid > 0;
        ValueStatistics {
            item: item.name.clone(),
            min: any.then_some(self.min),
            max: any.then_some(self.max),
            mean: any.then(|| self.sum / self.valid as f64),
            count_valid: self.valid,
            count_nan: self.missing,
        }
    }
}

/// Records what an inspection shows; see the module doc.
pub(super) struct InspectSink {
    want_values: bool,
    want_statistics: bool,
    header: Option<Header>,
    /// Items of grids, meshes and time series; z then the value columns of points.
    items: Vec<Item>,
    accumulators: Vec<Accumulator>,
    steps: Vec<StepValues>,
    geometry_types: BTreeMap<String, u64>,
    null_geometries: u64,
}

/// What the reader gave, ready to fill an [`Inspection`].
pub(super) struct Read {
    header: Header,
    summary: DataSummary,
    items: Vec<Item>,
    statistics: Option<Vec<ValueStatistics>>,
    values: Option<Vec<StepValues>>,
    /// `--values` was asked for data without values (features, points).
    values_not_printed: bool,
    geometry_types: BTreeMap<String, u64>,
    null_geometries: u64,
}

impl InspectSink {
    pub(super) fn new(want_values: bool, want_statistics: bool) -> Self {
        Self {
            want_values,
            want_statistics,
            header: None,
            items: Vec::new(),
            accumulators: Vec::new(),
            steps: Vec::new(),
            geometry_types: BTreeMap::new(),
            null_geometries: 0,
        }
    }

    /// What was read, with `summary` from the [`crate::summary::SummarySink`] in front.
    pub(super) fn finish(self, summary: DataSummary) -> FormatResult<Read> {
        let header = self
            .header
            .ok_or_else(|| FormatError::Catalogue("the reader produced no header".to_owned()))?;
        let statistics = self.want_statistics.then(|| {
            self.items
                .iter()
                .zip(&self.accumulators)
                .map(|(item, accumulator)| accumulator.statistics(item))
                .collect()
        });
        let gridded = matches!(
            header.kind(),
            DataKind::Grid | DataKind::Mesh | DataKind::TimeSeries
        );
        Ok(Read {
            header,
            summary,
            items: self.items,
            statistics,
            values: (self.want_values && gridded).then_some(self.steps),
            values_not_printed: self.want_values && !gridded,
            geometry_types: self.geometry_types,
            null_geometries: self.null_geometries,
        })
    }

    /// Fails when `--values` would keep more than [`VALUES_MAX`] values.
    fn check_value_count(header: &Header) -> FormatResult<()> {
        let Some((items, time)) = header.items_and_time() else {
            return Ok(());
        };
        let per_step: u64 = items
            .iter()
            .map(|item| values_per_step(header, item) as u64)
            .fold(0, u64::saturating_add);
        let total = per_step.saturating_mul(time.steps() as u64);
        if total > VALUES_MAX {
            return Err(FormatError::LimitExceeded {
                what: "number of values to print (use --statistics for large files)",
                actual: total,
                limit: VALUES_MAX,
            });
        }
        Ok(())
    }

    fn step_entry(&mut self, step: usize) -> Option<&mut StepValues> {
        if self.steps.last().is_none_or(|last| last.step != step) {
            let time = self
                .header
                .as_ref()
                .and_then(Header::items_and_time)
                .map(|(_, time)| time);
            self.steps.push(StepValues {
                step,
                time: time.and_then(|time| time.time(step)).map(iso),
                offset_seconds: time.and_then(|time| time.offset_seconds(step)),
                items: vec![Vec::new(); self.items.len()],
            });
        }
        self.steps.last_mut()
    }
}

impl DatasetSink for InspectSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        if self.want_values {
            Self::check_value_count(header)?;
        }
        self.items = match header {
            Header::Points(points) => std::iter::once(points.z_item.clone())
                .chain(points.items.iter().cloned())
                .collect(),
            other => other
                .items_and_time()
                .map(|(items, _)| items.to_vec())
                .unwrap_or_default(),
        };
        self.accumulators = vec![Accumulator::default(); self.items.len()];
        self.header = Some(header.clone());
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        if self.want_statistics
            && let (Some(accumulator), Some(item)) = (
                self.accumulators.get_mut(frame.item),
                self.items.get(frame.item),
            )
        {
            accumulator.add(frame.values, item);
        }
        if self.want_values {
            let values = frame.values.to_f64();
            if let Some(buffer) = self
                .step_entry(frame.step)
                .and_then(|entry| entry.items.get_mut(frame.item))
            {
                buffer.extend(values);
            }
        }
        Ok(())
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        match &feature.geometry {
            Some(geometry) => {
                *self
                    .geometry_types
                    .entry(geometry.type_name().to_owned())
                    .or_default() += 1;
            }
            None => self.null_geometries += 1,
        }
        Ok(())
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        if !self.want_statistics {
            return Ok(());
        }
        let columns = std::iter::once(&chunk.z).chain(&chunk.items);
        for ((accumulator, item), column) in
            self.accumulators.iter_mut().zip(&self.items).zip(columns)
        {
            accumulator.add_all(column.iter().map(|&value| (value, item.is_nodata(value))));
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }

    fn wants(&self, _step: usize, _item: usize) -> bool {
        self.want_values || self.want_statistics
    }
}

impl Read {
    /// Fills the reader's part of `inspection`.
    pub(super) fn fill(self, inspection: &mut Inspection) {
        let crs = match &self.header {
            Header::Grid(grid) => grid.geometry.crs.as_ref(),
            Header::Mesh(mesh) => mesh.geometry.crs.as_ref(),
            Header::Features(schema) => schema.crs.as_ref(),
            Header::Points(points) => points.crs.as_ref(),
            Header::TimeSeries(_) => None,
        };
        inspection.kind = Some(self.summary.kind.name().to_owned());
        inspection.crs = crs.map(crs_summary);
        inspection.extent = self.summary.extent;
        inspection.geometry = Some(self.geometry());
        inspection.time = self
            .header
            .items_and_time()
            .map(|(_, time)| time_summary(time));
        inspection.items = self.items.iter().map(item_summary).collect();
        inspection.statistics = self.statistics;
        if self.values_not_printed {
            inspection
                .notes
                .push("values are printed for grids, meshes and time series only".to_owned());
        }
        inspection.values = self.values;
    }

    fn geometry(&self) -> GeometrySummary {
        let count = match self.summary.size {
            DataSize::Features { count } | DataSize::Points { count } => count,
            _ => 0,
        };
        match &self.header {
            Header::Grid(grid) => GeometrySummary::Grid(grid_summary(&grid.geometry)),
            Header::Mesh(mesh) => GeometrySummary::Mesh(mesh_summary(&mesh.geometry)),
            Header::TimeSeries(_) => GeometrySummary::TimeSeries,
            Header::Features(schema) => GeometrySummary::Features(FeaturesSummary {
                count,
                declared_geometry: geometry_kind_name(schema.geometry_kind),
                geometry_types: self.geometry_types.clone(),
                null_geometries: self.null_geometries,
                has_z: schema.has_z,
                has_m: schema.has_m,
                fields: schema
                    .fields
                    .iter()
                    .map(|field| FieldSummary {
                        name: field.name.clone(),
                        field_type: field.field_type.name(),
                        width: field.width,
                        decimals: field.decimals,
                    })
                    .collect(),
            }),
            Header::Points(_) => GeometrySummary::Points(PointsSummary { count }),
        }
    }
}

/// Values of `item` per step: one per cell, element or node, or one for a time series.
fn values_per_step(header: &Header, item: &Item) -> usize {
    match header {
        Header::Grid(grid) => grid.geometry.cells().unwrap_or(usize::MAX),
        Header::Mesh(mesh) => match item.location {
            ItemLocation::Cell => mesh.geometry.elements.len(),
            ItemLocation::Node => mesh.geometry.nodes.len(),
        },
        Header::TimeSeries(_) | Header::Features(_) | Header::Points(_) => 1,
    }
}

fn grid_summary(geometry: &GridGeometry) -> GridSummary {
    let transform = geometry.transform;
    GridSummary {
        columns: geometry.columns,
        rows: geometry.rows,
        layers: geometry.layers(),
        vertical: geometry.vertical.map(|axis| [axis.origin, axis.spacing]),
        transform: transform.to_gdal(),
        cell_width: transform.pixel_width.hypot(transform.column_rotation),
        cell_height: transform.row_rotation.hypot(transform.pixel_height),
        rotation_degrees: transform
            .column_rotation
            .atan2(transform.pixel_width)
            .to_degrees(),
    }
}

fn mesh_summary(geometry: &MeshGeometry) -> MeshSummary {
    let mut element_kinds = BTreeMap::new();
    for kind in &geometry.elements.kinds {
        *element_kinds.entry(kind.name().to_owned()).or_default() += 1;
    }
    let z_range = geometry
        .nodes
        .z
        .iter()
        .copied()
        .filter(|z| z.is_finite())
        .fold(None, |range: Option<[f64; 2]>, z| {
            Some(range.map_or([z, z], |[low, high]| [low.min(z), high.max(z)]))
        });
    MeshSummary {
        nodes: geometry.nodes.len(),
        elements: geometry.elements.len(),
        element_kinds,
        layers: geometry.layers.map(|layers| layers.count),
        sigma_layers: geometry.layers.map(|layers| layers.sigma_count),
        z_quantity: geometry.z_quantity.name.clone(),
        z_unit: geometry.z_quantity.unit.clone(),
        z_range,
    }
}

fn time_summary(axis: &TimeAxis) -> TimeAxisSummary {
    let steps = axis.steps();
    let last = steps.saturating_sub(1);
    let (kind, interval_seconds, offsets) = match axis {
        TimeAxis::Equidistant { step_seconds, .. } => ("equidistant", Some(*step_seconds), None),
        TimeAxis::Calendar(times) => (
            "calendar",
            regular_interval(times.windows(2).map(|pair| match pair {
                [a, b] => (*b - *a).num_milliseconds() as f64 / 1000.0,
                _ => 0.0,
            })),
            None,
        ),
        TimeAxis::Relative(offsets) => (
            "relative",
            regular_interval(offsets.windows(2).map(|pair| match pair {
                [a, b] => b - a,
                _ => 0.0,
            })),
            Some((offsets.first().copied(), offsets.last().copied())),
        ),
        TimeAxis::None => ("none", None, None),
    };
    TimeAxisSummary {
        kind,
        steps,
        start: axis.time(0).map(iso),
        end: axis.time(last).map(iso),
        interval_seconds,
        first_offset_seconds: offsets.and_then(|(first, _)| first),
        last_offset_seconds: offsets.and_then(|(_, last)| last),
    }
}

/// The common gap of equally spaced steps, `None` for fewer than two steps or uneven gaps.
fn regular_interval(mut gaps: impl Iterator<Item = f64>) -> Option<f64> {
    let first = gaps.next()?;
    gaps.all(|gap| gap == first).then_some(first)
}

fn item_summary(item: &Item) -> ItemSummary {
    ItemSummary {
        name: item.name.clone(),
        quantity: item.quantity.name.clone(),
        unit: item.quantity.unit.clone(),
        eum_item: item.quantity.eum_item,
        eum_unit: item.quantity.eum_unit,
        data_type: item.data_type.gdal_name(),
        value_type: value_type_name(item.value_type),
        location: match item.location {
            ItemLocation::Cell => "cell",
            ItemLocation::Node => "node",
        },
        nodata: item.nodata,
    }
}

/// A calendar time in ISO 8601 without zone, with fractional seconds only when there are any.
pub(super) fn iso(time: chrono::NaiveDateTime) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.f").to_string()
}

pub(super) fn value_type_name(value_type: ValueType) -> &'static str {
    match value_type {
        ValueType::Instantaneous => "Instantaneous",
        ValueType::Accumulated => "Accumulated",
        ValueType::StepAccumulated => "StepAccumulated",
        ValueType::MeanStepBackward => "MeanStepBackward",
        ValueType::MeanStepForward => "MeanStepForward",
    }
}

fn geometry_kind_name(kind: GeometryKind) -> &'static str {
    match kind {
        GeometryKind::Point => "point",
        GeometryKind::MultiPoint => "multipoint",
        GeometryKind::Line => "line",
        GeometryKind::Polygon => "polygon",
        GeometryKind::Any => "any",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DataType, TimeSeriesHeader};

    fn series(items: Vec<Item>) -> Header {
        Header::TimeSeries(TimeSeriesHeader {
            items,
            time: TimeAxis::Relative(vec![0.0, 60.0]),
            position: None,
        })
    }

    #[test]
    fn data_is_wanted_only_for_values_or_statistics() {
        assert!(!InspectSink::new(false, false).wants(0, 0));
        assert!(InspectSink::new(true, false).wants(3, 1));
        assert!(InspectSink::new(false, true).wants(0, 0));
    }

    #[test]
    fn integer_nodata_counts_as_missing_and_steps_accumulate() {
        let mut item = Item::new("count", DataType::I32);
        item.nodata = Some(-1.0);
        let mut sink = InspectSink::new(true, true);
        sink.begin(&series(vec![item])).unwrap();
        for (step, values) in [vec![4, -1], vec![2, 6]].into_iter().enumerate() {
            let values = Values::I32(values);
            sink.frame(Frame {
                step,
                item: 0,
                offset: 0,
                values: &values,
            })
            .unwrap();
        }
        let [statistics] = sink.accumulators.as_slice() else {
            panic!("one item expected")
        };
        let statistics = statistics.statistics(&sink.items[0]);
        assert_eq!((statistics.min, statistics.max), (Some(2.0), Some(6.0)));
        assert_eq!(statistics.mean, Some(4.0));
        assert_eq!((statistics.count_valid, statistics.count_nan), (3, 1));
        assert_eq!(sink.steps.len(), 2);
        assert_eq!(sink.steps[1].offset_seconds, Some(60.0));
        assert_eq!(sink.steps[1].items, vec![vec![2.0, 6.0]]);
    }

    #[test]
    fn an_item_without_valid_values_has_no_extremes() {
        let statistics = Accumulator::default().statistics(&Item::new("empty", DataType::F32));
        assert_eq!(
            (statistics.min, statistics.max, statistics.mean),
            (None, None, None)
        );
    }

    #[test]
    fn relative_and_calendar_axes_are_summarised() {
        let relative = time_summary(&TimeAxis::Relative(vec![10.0, 20.0, 30.0]));
        assert_eq!(relative.kind, "relative");
        assert_eq!(relative.interval_seconds, Some(10.0));
        assert_eq!(
            (relative.first_offset_seconds, relative.last_offset_seconds),
            (Some(10.0), Some(30.0))
        );
        assert_eq!(relative.start, None);
        let start = chrono::NaiveDate::from_ymd_opt(2020, 1, 1)
            .unwrap()
            .and_hms_milli_opt(0, 0, 0, 500)
            .unwrap();
        let calendar = time_summary(&TimeAxis::Calendar(vec![
            start,
            start + chrono::TimeDelta::seconds(60),
            start + chrono::TimeDelta::seconds(180),
        ]));
        assert_eq!(calendar.kind, "calendar");
        assert_eq!(calendar.interval_seconds, None);
        assert_eq!(calendar.start.as_deref(), Some("2020-01-01T00:00:00.500"));
        assert_eq!(calendar.end.as_deref(), Some("2020-01-01T00:03:00.500"));
    }
}
