//! Writing a grid as DFS1/DFS2/DFS3: the header as MIKE IO builds it, then each item's step
//! as it completes (rows reversed to the file's south-to-north order, NaN as the delete
//! value).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::catalogue::{WriterSink, Written};
use crate::crs;
use crate::error::{FormatError, FormatResult};
use crate::model::{DataType, DatasetSink, Frame, GridHeader, Header, Item, Values};

use super::super::container::{
    DfsHeader, DfsWriter, FileHeader, ProjectionRecord, SpatialAxis, now_timestamp,
};
use super::super::mapping::{self, TimeWriting, Titles};
use super::placement::{self, Georeference, Placement};
use super::reader::reverse_rows;
use super::{Dimensions, FORMAT};

/// Receives a grid and writes it.
pub(crate) struct GridSink {
    output: PathBuf,
    dimensions: Dimensions,
    titles: Titles,
    open: Option<Open>,
    notes: Vec<String>,
    finished: bool,
}

struct Open {
    writer: DfsWriter<BufWriter<File>>,
    items: Vec<Item>,
    /// The type each item is written as.
    types: Vec<DataType>,
    time: TimeWriting,
    columns: usize,
    rows: usize,
    cells: usize,
    flipped: bool,
    /// The item step being gathered: (step, item, values).
    pending: Option<(usize, usize, Values)>,
    scratch: Values,
}

impl GridSink {
    /// The projection record and the item axis of a grid placed as `placement`, with `counts`
    /// columns, rows and layers.
    fn record_and_axis(
        &mut self,
        geometry: &crate::model::GridGeometry,
        placement: &Placement,
        counts: [i32; 3],
    ) -> FormatResult<(ProjectionRecord, SpatialAxis)> {
        let [nx, ny, nz] = counts;
        let projection = crs::mike_projection(geometry.crs.as_ref(), &mut self.notes);
        let non_utm = projection.eq_ignore_ascii_case(crs::MIKE_NON_UTM);
        let georeference = if non_utm {
            Georeference::Direct
        } else {
            placement::georeference(
                &projection,
                geometry.crs.as_ref(),
                "reproject the grid first (CrsTransformation) to a system Basin can project",
            )?
        };
        if matches!(georeference, Georeference::Direct) && !non_utm && placement.orientation != 0.0
        {
            self.notes.push(format!(
                "the grid is rotated by {} degrees in geographic coordinates; MIKE IO refuses \
                 rotated LONG/LAT grids",
                placement.orientation
            ));
        }
        // MIKE IO keeps an unrotated local DFS1/DFS3 position in the (float32) axis offsets;
        // so does Basin where float32 holds it exactly, else in the (double) projection origin.
        let exact_in_axis = |value: f64| f64::from(value as f32) == value;
        let (x, y) = placement.centre;
        let in_axis = non_utm && placement.orientation == 0.0 && exact_in_axis(x);
        let (origin, offsets) = match self.dimensions {
            Dimensions::One if in_axis => ((0.0, y), [x, 0.0]),
            Dimensions::Three if in_axis && exact_in_axis(y) => ((0.0, 0.0), [x, y]),
            _ => (placement.centre, [0.0, 0.0]),
        };
        let (longitude, latitude, orientation) =
            placement::geographic_origin(&georeference, origin, placement.orientation)?;
        let (z0, dz) = geometry
            .vertical
            .map_or((0.0, 1.0), |vertical| (vertical.origin, vertical.spacing));
        let [x0, y0] = offsets;
        let axis = match self.dimensions {
            Dimensions::One => SpatialAxis::eq_d1(1000, nx, x0 as f32, placement.dx as f32),
            Dimensions::Two => SpatialAxis::eq_d2(
                1000,
                nx,
                ny,
                [x0 as f32, y0 as f32],
                [placement.dx as f32, placement.dy as f32],
            ),
            Dimensions::Three => SpatialAxis::eq_d3(
                1000,
                [nx, ny, nz],
                [x0 as f32, y0 as f32, z0 as f32],
                [placement.dx as f32, placement.dy as f32, dz as f32],
            ),
        };
        Ok((
            ProjectionRecord {
                name: projection,
                origin_longitude: longitude,
                origin_latitude: latitude,
                orientation,
            },
            axis,
        ))
    }

    /// The DFS item definitions on `axis` and the type each item is stored as.
    fn item_infos(
        &mut self,
        items: &[Item],
        axis: &SpatialAxis,
    ) -> (Vec<super::super::container::ItemInfo>, Vec<DataType>) {
        let mut types = Vec::with_capacity(items.len());
        let mut infos = Vec::with_capacity(items.len());
        for item in items {
            let data_type = stored_type(item.data_type);
            if data_type != item.data_type {
                self.notes.push(format!(
                    "item {:?} ({}) written as {} (MIKE reads float grids)",
                    item.name,
                    item.data_type.gdal_name(),
                    data_type.gdal_name()
                ));
            }
            let mut info = mapping::info_of(item, axis.clone());
            info.data_type = data_type;
            infos.push(info);
            types.push(data_type);
        }
        (infos, types)
    }
    pub(crate) fn new(output: &Path, dimensions: Dimensions, titles: Titles) -> Self {
        Self {
            output: output.to_owned(),
            dimensions,
            titles,
            open: None,
            notes: Vec::new(),
            finished: false,
        }
    }

    fn incompatible(&self, message: String) -> FormatError {
        FormatError::Incompatible {
            data: "grid",
            format: self.dimensions.name(),
            message,
        }
    }

    fn header_of(
        &mut self,
        grid: &GridHeader,
    ) -> FormatResult<(DfsHeader, Placement, Vec<DataType>)> {
        let geometry = &grid.geometry;
        let layers = geometry.layers();
        match self.dimensions {
            Dimensions::One if geometry.rows != 1 || layers != 1 => {
                return Err(self.incompatible(format!(
                    "a DFS1 holds one row of cells; this grid has {} rows and {layers} layers \
                     (write it as DFS2 or DFS3)",
                    geometry.rows
                )));
            }
            Dimensions::Two if layers != 1 => {
                return Err(self.incompatible(format!(
                    "a DFS2 holds one layer; this grid has {layers} (write it as DFS3)"
                )));
            }
            _ => {}
        }
        if grid.items.is_empty() {
            return Err(self.incompatible("the grid has no items to write".to_owned()));
        }
        let count = |value: usize, what: &str| {
            i32::try_from(value)
                .ok()
                .filter(|value| *value > 0)
                .ok_or_else(|| self.incompatible(format!("{value} {what} cannot be written")))
        };
        let nx = count(geometry.columns, "columns")?;
        let ny = count(geometry.rows, "rows")?;
        let nz = count(layers, "layers")?;
        let placement = Placement::of_transform(&geometry.transform, geometry.rows)?;
        let (record, axis) = self.record_and_axis(geometry, &placement, [nx, ny, nz])?;
        let (infos, types) = self.item_infos(&grid.items, &axis);
        let time = mapping::time_writing_of(&grid.time);
        let now = now_timestamp();
        let header = DfsHeader {
            created: now,
            modified: now,
            file: FileHeader {
                title: self.titles.title.clone().unwrap_or_default(),
                application: self.titles.application.clone(),
                application_version: self.titles.version,
                data_type: 0,
                projection: Some(record),
                time: time.record.clone(),
                ..FileHeader::default()
            },
            items: infos,
            custom_blocks: Vec::new(),
            statics: Vec::new(),
        };
        Ok((header, placement, types))
    }
}

/// The type a grid item is stored as: floats as they are; integers as the float that holds
/// them exactly (MIKE's grid tools and MIKE IO read float and double items only).
fn stored_type(data_type: DataType) -> DataType {
    match data_type {
        DataType::F32 | DataType::U8 | DataType::I16 | DataType::U16 => DataType::F32,
        _ => DataType::F64,
    }
}

/// `values` as `data_type` (floats pass through; integers widen exactly), appended to `out`.
fn append_as(values: &Values, item: &Item, out: &mut Values) -> bool {
    let nodata = item.nodata.filter(|_| !item.data_type.is_float());
    match (values, out) {
        (Values::F32(values), Values::F32(out)) => out.extend_from_slice(values),
        (Values::F64(values), Values::F64(out)) => out.extend_from_slice(values),
        (values, Values::F32(out)) if !values.data_type().is_float() => {
            out.extend(values.to_f64().into_iter().map(|value| {
                if Some(value) == nodata {
                    f32::NAN
                } else {
                    value as f32
                }
            }));
        }
        (values, Values::F64(out)) if !values.data_type().is_float() => {
            out.extend(values.to_f64().into_iter().map(|value| {
                if Some(value) == nodata {
                    f64::NAN
                } else {
                    value
                }
            }));
        }
        _ => return false,
    }
    true
}

impl Open {
    fn write_pending(&mut self) -> FormatResult<()> {
        let Some((step, item, mut values)) = self.pending.take() else {
            return Ok(());
        };
        if values.len() != self.cells {
            return Err(FormatError::Catalogue(format!(
                "step {step} item {item} ended with {} of its {} values",
                values.len(),
                self.cells
            )));
        }
        if self.flipped && self.rows > 1 {
            let (columns, rows) = (self.columns, self.rows);
            match (&mut values, &mut self.scratch) {
                (Values::F32(v), Values::F32(s)) => reverse_rows(v, s, columns, rows),
                (Values::F64(v), Values::F64(s)) => reverse_rows(v, s, columns, rows),
                (values, scratch) => {
                    // Items are stored as floats (`stored_type`); the scratch buffer only
                    // needs the same type.
                    *scratch = Values::with_capacity(values.data_type(), 0);
                    return Err(FormatError::Catalogue(format!(
                        "step {step} item {item}: {} values where floats were expected",
                        values.data_type().gdal_name()
                    )));
                }
            }
        }
        self.write_values(step, item, values)
    }

    fn write_values(&mut self, step: usize, item: usize, mut values: Values) -> FormatResult<()> {
        if let Some(model_item) = self.items.get(item) {
            mapping::nan_to_delete_values(self.writer.header(), model_item, &mut values);
        }
        if item == 0 {
            self.writer.start_step(self.time.step_time(step))?;
        }
        self.writer.write_item(&values)?;
        self.scratch = values;
        Ok(())
    }
}

impl DatasetSink for GridSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::Grid(grid) = header else {
            return Err(FormatError::Incompatible {
                data: header.kind().name(),
                format: self.dimensions.name(),
                message: format!("a {} file holds a grid", self.dimensions.name()),
            });
        };
        let (dfs_header, placement, types) = self.header_of(grid)?;
        let geometry = &grid.geometry;
        let cells = geometry
            .cells()
            .ok_or_else(|| self.incompatible("the grid is too large".to_owned()))?;
        let writer = DfsWriter::create(&self.output, dfs_header)?;
        self.open = Some(Open {
            writer,
            items: grid.items.clone(),
            types,
            time: mapping::time_writing_of(&grid.time),
            columns: geometry.columns,
            rows: geometry.rows,
            cells,
            flipped: placement.flipped,
            pending: None,
            scratch: Values::with_capacity(DataType::F32, 0),
        });
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some(open) = self.open.as_mut() else {
            return Err(FormatError::Catalogue(format!(
                "{} writer: values before the header",
                FORMAT
            )));
        };
        let starts_new = !matches!(
            &open.pending,
            Some((step, item, _)) if *step == frame.step && *item == frame.item
        );
        if starts_new {
            open.write_pending()?;
            let data_type = open.types.get(frame.item).copied().ok_or_else(|| {
                FormatError::Catalogue(format!(
                    "values of item {} which the grid lacks",
                    frame.item
                ))
            })?;
            let mut buffer =
                std::mem::replace(&mut open.scratch, Values::with_capacity(data_type, 0));
            if buffer.data_type() != data_type {
                buffer = Values::with_capacity(data_type, open.cells);
            }
            buffer.clear();
            open.pending = Some((frame.step, frame.item, buffer));
        }
        let (item, pending) = match (open.items.get(frame.item), open.pending.as_mut()) {
            (Some(item), Some((_, _, pending))) => (item, pending),
            _ => return Err(FormatError::Catalogue("frame out of order".to_owned())),
        };
        if pending.len() != frame.offset {
            return Err(FormatError::Catalogue(format!(
                "step {} item {}: values from offset {} after {}",
                frame.step,
                frame.item,
                frame.offset,
                pending.len()
            )));
        }
        if !append_as(frame.values, item, pending) {
            return Err(FormatError::Catalogue(format!(
                "item {:?} announced as {} sent {} values",
                item.name,
                item.data_type.gdal_name(),
                frame.values.data_type().gdal_name()
            )));
        }
        if pending.len() > open.cells {
            return Err(FormatError::Catalogue(format!(
                "step {} item {} has more than its {} values",
                frame.step, frame.item, open.cells
            )));
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        let Some(mut open) = self.open.take() else {
            return Err(FormatError::Catalogue(format!(
                "{} writer: the grid ended before it began",
                FORMAT
            )));
        };
        open.write_pending()?;
        open.writer.finish()?;
        self.finished = true;
        Ok(())
    }
}

impl WriterSink for GridSink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.finished {
            return Err(FormatError::Catalogue(format!(
                "the {} file was not completed",
                self.dimensions.name()
            )));
        }
        Ok(Written {
            files: vec![self.output],
            notes: self.notes,
            summary: None,
        })
    }
}
