//! The reprojection sink: sits between a reader and a writer and transforms every kind of
//! data to the output system. Features, points and mesh nodes are transformed position by
//! position; grids are warped (see [`super::warp`]); time series have no positions and pass
//! through unchanged.

use std::sync::Arc;

use super::Crs;
use super::project::{CrsTransform, Projection};
use super::warp;
use crate::error::{FormatError, FormatResult};
use crate::model::{
    Coord, DatasetSink, Feature, FeatureSchema, Frame, Geometry, GridGeometry, GridHeader, Header,
    MeshGeometry, MeshHeader, PointChunk, PointHeader, Values,
};

/// What the sink does with the data after `begin`.
enum Mode {
    /// Before `begin`.
    Waiting,
    /// Time series: nothing to transform.
    PassThrough,
    /// Features and points: transform each position.
    Positions(Box<CrsTransform>),
    /// Grids: collect each item's step, warp it, pass it on.
    Grid(Box<GridWarp>),
}

/// A warp in progress.
struct GridWarp {
    map: Vec<u32>,
    source_layer_cells: usize,
    layers: usize,
    step_values: usize,
    fills: Vec<f64>,
    current: Option<(usize, usize, Values)>,
}

/// Reprojects everything it receives from `input` (or the data's own CRS) to `output`.
pub(crate) struct TransformSink<'a> {
    inner: Box<dyn DatasetSink + 'a>,
    input_srid: Option<u32>,
    output_srid: u32,
    output: Projection,
    mode: Mode,
}

impl<'a> TransformSink<'a> {
    /// A sink reprojecting into `inner`.
    pub(crate) fn new(
        inner: Box<dyn DatasetSink + 'a>,
        input_srid: Option<u32>,
        output_srid: u32,
    ) -> FormatResult<Self> {
        Ok(Self {
            inner,
            input_srid,
            output_srid,
            output: Projection::epsg(output_srid)?,
            mode: Mode::Waiting,
        })
    }

    /// The transformation from the data's CRS (or `input_srid`) to the output.
    fn transform_for(&self, data_crs: Option<&Crs>) -> FormatResult<CrsTransform> {
        let from = match (self.input_srid, data_crs) {
            (Some(code), _) => Projection::epsg(code)?,
            (None, Some(crs)) => Projection::of(crs)?,
            (None, None) => {
                return Err(FormatError::Crs(
                    "the input has no coordinate system; give its EPSG code \
                     (inputSrid / --input-srid)"
                        .to_owned(),
                ));
            }
        };
        Ok(CrsTransform::new(from, self.output.clone()))
    }

    fn begin_grid(&mut self, header: &GridHeader) -> FormatResult<Header> {
        let transform = self.transform_for(header.geometry.crs.as_ref())?;
        let source = &header.geometry;
        let (geotransform, columns, rows) = warp::suggested_output(source, &transform)?;
        let target = GridGeometry {
            columns,
            rows,
            vertical: source.vertical,
            transform: geotransform,
            crs: Some(Crs::Epsg(self.output_srid)),
        };
        let map = warp::cell_map(source, &target, &transform.inverse())?;
        let fills = header
            .items
            .iter()
            .map(|item| {
                item.nodata.unwrap_or(if item.data_type.is_float() {
                    f64::NAN
                } else {
                    0.0
                })
            })
            .collect();
        let source_layer_cells = source.columns.saturating_mul(source.rows);
        self.mode = Mode::Grid(Box::new(GridWarp {
            map,
            source_layer_cells,
            layers: source.layers(),
            step_values: source_layer_cells.saturating_mul(source.layers()),
            fills,
            current: None,
        }));
        Ok(Header::Grid(GridHeader {
            geometry: target,
            items: header.items.clone(),
            time: header.time.clone(),
        }))
    }

    fn begin_mesh(&mut self, header: &MeshHeader) -> FormatResult<Header> {
        let transform = self.transform_for(header.geometry.crs.as_ref())?;
        let mut geometry: MeshGeometry = (*header.geometry).clone();
        let nodes = &mut geometry.nodes;
        for (index, (x, y)) in nodes.x.iter_mut().zip(nodes.y.iter_mut()).enumerate() {
            (*x, *y) = transform.apply(*x, *y).map_err(|error| {
                FormatError::Crs(format!("mesh node {}: {error}", index.saturating_add(1)))
            })?;
        }
        geometry.crs = Some(Crs::Epsg(self.output_srid));
        self.mode = Mode::PassThrough;
        Ok(Header::Mesh(MeshHeader {
            geometry: Arc::new(geometry),
            items: header.items.clone(),
            time: header.time.clone(),
        }))
    }
}

impl DatasetSink for TransformSink<'_> {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let output_crs = Some(Crs::Epsg(self.output_srid));
        let header = match header {
            Header::TimeSeries(_) => {
                self.mode = Mode::PassThrough;
                header.clone()
            }
            Header::Features(schema) => {
                self.mode = Mode::Positions(Box::new(self.transform_for(schema.crs.as_ref())?));
                Header::Features(FeatureSchema {
                    crs: output_crs,
                    ..schema.clone()
                })
            }
            Header::Points(points) => {
                self.mode = Mode::Positions(Box::new(self.transform_for(points.crs.as_ref())?));
                Header::Points(PointHeader {
                    crs: output_crs,
                    ..points.clone()
                })
            }
            Header::Mesh(mesh) => self.begin_mesh(mesh)?,
            Header::Grid(grid) => self.begin_grid(grid)?,
        };
        self.inner.begin(&header)
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        self.inner.wants(step, item)
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Mode::Grid(warp) = &mut self.mode else {
            return self.inner.frame(frame);
        };
        let mut buffer = match warp.current.take() {
            Some((step, item, buffer)) if (step, item) == (frame.step, frame.item) => buffer,
            Some(_) => return Err(out_of_order()),
            None if frame.offset == 0 => Values::with_capacity(
                frame.values.data_type(),
                crate::limits::prealloc_capacity(
                    warp.step_values as u64,
                    frame.values.data_type().size_bytes(),
                ),
            ),
            None => return Err(out_of_order()),
        };
        if buffer.len() != frame.offset || !buffer.extend_from(frame.values) {
            return Err(out_of_order());
        }
        if buffer.len() > warp.step_values {
            return Err(FormatError::Crs(format!(
                "item {} step {} has more values than the grid has cells",
                frame.item, frame.step
            )));
        }
        if buffer.len() < warp.step_values {
            warp.current = Some((frame.step, frame.item, buffer));
            return Ok(());
        }
        let fill = warp.fills.get(frame.item).copied().unwrap_or(f64::NAN);
        let warped = warp::apply_map(
            &warp.map,
            warp.source_layer_cells,
            warp.layers,
            &buffer,
            fill,
        );
        self.inner.frame(Frame {
            step: frame.step,
            item: frame.item,
            offset: 0,
            values: &warped,
        })
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        let Mode::Positions(transform) = &self.mode else {
            return self.inner.feature(feature);
        };
        let geometry = match &feature.geometry {
            Some(geometry) => Some(transform_geometry(geometry, transform)?),
            None => None,
        };
        self.inner.feature(&Feature {
            geometry,
            values: feature.values.clone(),
        })
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        let Mode::Positions(transform) = &self.mode else {
            return self.inner.points(chunk);
        };
        let mut out = chunk.clone();
        for (x, y) in out.x.iter_mut().zip(out.y.iter_mut()) {
            (*x, *y) = transform.apply(*x, *y)?;
        }
        self.inner.points(&out)
    }

    fn end(&mut self) -> FormatResult<()> {
        if let Mode::Grid(warp) = &self.mode
            && warp.current.is_some()
        {
            return Err(FormatError::Crs(
                "the grid ended before an item's values were complete".to_owned(),
            ));
        }
        self.inner.end()
    }
}

fn out_of_order() -> FormatError {
    FormatError::Crs("grid values arrived out of order".to_owned())
}

fn transform_coords(coords: &[Coord], transform: &CrsTransform) -> FormatResult<Vec<Coord>> {
    coords
        .iter()
        .map(|coord| {
            let (x, y) = transform.apply(coord.x, coord.y)?;
            Ok(Coord { x, y, ..*coord })
        })
        .collect()
}

fn transform_lines(
    lines: &[Vec<Coord>],
    transform: &CrsTransform,
) -> FormatResult<Vec<Vec<Coord>>> {
    lines
        .iter()
        .map(|line| transform_coords(line, transform))
        .collect()
}

/// Transforms every position of a geometry. Collections nest at most as deep as the reader
/// allowed (`ReadLimits::nesting_depth_max`).
pub(crate) fn transform_geometry(
    geometry: &Geometry,
    transform: &CrsTransform,
) -> FormatResult<Geometry> {
    Ok(match geometry {
        Geometry::Point(coord) => {
            let (x, y) = transform.apply(coord.x, coord.y)?;
            Geometry::Point(Coord { x, y, ..*coord })
        }
        Geometry::MultiPoint(coords) => Geometry::MultiPoint(transform_coords(coords, transform)?),
        Geometry::LineString(line) => Geometry::LineString(transform_coords(line, transform)?),
        Geometry::MultiLineString(lines) => {
            Geometry::MultiLineString(transform_lines(lines, transform)?)
        }
        Geometry::Polygon(rings) => Geometry::Polygon(transform_lines(rings, transform)?),
        Geometry::MultiPolygon(polygons) => Geometry::MultiPolygon(
            polygons
                .iter()
                .map(|rings| transform_lines(rings, transform))
                .collect::<FormatResult<_>>()?,
        ),
        Geometry::GeometryCollection(members) => Geometry::GeometryCollection(
            members
                .iter()
                .map(|member| transform_geometry(member, transform))
                .collect::<FormatResult<_>>()?,
        ),
    })
}
