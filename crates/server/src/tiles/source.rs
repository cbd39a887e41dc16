//! Reading datasets for tiles: what a dataset holds (described once per content version) and
//! one band of it ready to sample (loaded once per item, step and layer, then cached).
//!
//! Everything here is blocking work on a local file: callers run it on the blocking pool.
//! Readers are the conversion catalogue's, so every format the catalogue reads as a grid or
//! a mesh can be tiled without code here.

use std::path::Path;

use basin_formats::crs::{Crs, CrsTransform, Projection};
use basin_formats::model::{DataKind, DatasetSink, Frame, GridGeometry, Header, Item};
use basin_formats::{Catalogue, FormatError, FormatResult, Parameters, ReadContext};
use basin_tiles::Field;
use basin_tiles::mesh::{MeshField, MeshIndex, Shading, ValueLocation};
use basin_tiles::raster::{Aggregation, Raster};
use basin_tiles::render::to_mercator;
use basin_tiles::tms::Bounds;
use chrono::NaiveDateTime;

/// Why a dataset cannot give tiles.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SourceError {
    /// No reader reads this format, or it reads something that has no map (a time series).
    #[error("{0}")]
    NotTileable(String),
    /// The reader failed: the file is broken or not what its name says.
    #[error("the dataset cannot be read: {0}")]
    Unreadable(String),
}

impl From<FormatError> for SourceError {
    fn from(error: FormatError) -> Self {
        Self::Unreadable(error.to_string())
    }
}

/// An item of a dataset and the range of its first step.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ItemSummary {
    /// Name.
    pub(crate) name: String,
    /// Unit.
    pub(crate) unit: String,
    /// Smallest and largest value with data in the first step, if any.
    pub(crate) range: Option<(f64, f64)>,
}

/// What the tiles of a dataset are drawn from.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    /// A grid.
    Grid(GridGeometry),
    /// A mesh: its drawable outline, indexed, and where each item's values are.
    Mesh {
        /// The index, shared by every band of the dataset.
        index: std::sync::Arc<MeshIndex>,
        /// Per item: on elements or on nodes.
        locations: Vec<ValueLocation>,
    },
}

/// What a dataset holds, as far as tiles care.
#[derive(Debug, Clone)]
pub(crate) struct Description {
    /// The reader that reads it.
    pub(crate) reader: &'static str,
    /// Grid or mesh.
    pub(crate) shape: Shape,
    /// Items with the value range of their first step.
    pub(crate) items: Vec<ItemSummary>,
    /// Times of the steps (empty when the data has no calendar time).
    pub(crate) times: Vec<NaiveDateTime>,
    /// Number of steps.
    pub(crate) steps: usize,
    /// Vertical layers (1 for 2D data).
    pub(crate) layers: usize,
    /// The coordinate system, when known.
    pub(crate) crs: Option<Crs>,
    /// Extent in the dataset's own coordinates.
    pub(crate) native_extent: Bounds,
    /// Extent in longitude and latitude, when the CRS is known and transformable.
    pub(crate) wgs84_extent: Option<Bounds>,
    /// EPSG code of the CRS, when it resolves to one.
    pub(crate) epsg: Option<u32>,
    /// True when the CRS is geographic (degrees).
    pub(crate) geographic: bool,
    /// Map units per cell of the grid along its shorter side, so the finest level of a
    /// scheme gives every cell at least one pixel.
    pub(crate) cell_size: f64,
}

impl Description {
    /// The extent in EPSG:3857, when known.
    pub(crate) fn mercator_extent(&self) -> Option<Bounds> {
        let wgs84 = self.wgs84_extent?;
        let (min_x, min_y) = to_mercator(wgs84.min_x, wgs84.min_y);
        let (max_x, max_y) = to_mercator(wgs84.max_x, wgs84.max_y);
        Some(Bounds {
            min_x,
            min_y,
            max_x,
            max_y,
        })
    }

    /// Bytes this description holds, roughly (for the cache).
    pub(crate) fn approximate_bytes(&self) -> usize {
        let shape = match &self.shape {
            Shape::Grid(_) => 0,
            Shape::Mesh { index, .. } => index.approximate_bytes(),
        };
        512 + self.times.len() * 16 + self.items.len() * 128 + shape
    }
}

/// Reads `file` (a dataset of `format`) far enough to describe it: the header and the first
/// step of every item.
pub(crate) fn describe(
    catalogue: &Catalogue,
    format: &str,
    file: &Path,
) -> Result<Description, SourceError> {
    let reader = reader_for(catalogue, format)?;
    let mut sink = DescribeSink::default();
    read(catalogue, reader, file, &mut sink)?;
    let header = sink
        .header
        .ok_or_else(|| SourceError::Unreadable("the reader produced no data".to_owned()))?;
    match header {
        Header::Grid(grid) => Ok(describe_grid(reader.name, grid, &sink.ranges)),
        Header::Mesh(mesh) => describe_mesh(reader.name, mesh, &sink.ranges),
        other => Err(SourceError::NotTileable(format!(
            "a {} has no raster tiles; only grids and meshes do",
            other.kind().name()
        ))),
    }
}

fn describe_grid(
    reader: &'static str,
    grid: basin_formats::model::GridHeader,
    ranges: &[Option<(f64, f64)>],
) -> Description {
    let geometry = grid.geometry;
    let [ox, pw, rr, oy, cr, ph] = geometry.transform.to_gdal();
    let columns = geometry.columns as f64;
    let rows = geometry.rows as f64;
    let corners = [
        (ox, oy),
        (ox + columns * pw, oy + columns * cr),
        (ox + rows * rr, oy + rows * ph),
        (ox + columns * pw + rows * rr, oy + columns * cr + rows * ph),
    ];
    let native_extent = bounds_of(corners.iter().copied());
    let items = summaries(&grid.items, ranges);
    let crs = geometry.crs.clone();
    let (epsg, geographic, wgs84_extent) = place(crs.as_ref(), &native_extent);
    Description {
        reader,
        layers: geometry.layers(),
        cell_size: pw.hypot(cr).min(rr.hypot(ph)),
        shape: Shape::Grid(geometry),
        items,
        times: (0..grid.time.steps())
            .filter_map(|step| grid.time.time(step))
            .collect(),
        steps: grid.time.steps(),
        crs,
        native_extent,
        wgs84_extent,
        epsg,
        geographic,
    }
}

fn describe_mesh(
    reader: &'static str,
    mesh: basin_formats::model::MeshHeader,
    ranges: &[Option<(f64, f64)>],
) -> Result<Description, SourceError> {
    let index = MeshIndex::build(&mesh.geometry)
        .map_err(|error| SourceError::NotTileable(error.to_string()))?;
    let native_extent = index.extent();
    let crs = mesh.geometry.crs.clone();
    let (epsg, geographic, wgs84_extent) = place(crs.as_ref(), &native_extent);
    Ok(Description {
        reader,
        layers: 1,
        // A quarter of an element per pixel at the finest level: elements show as
        // shapes, not as single pixels.
        cell_size: (typical_element_size(&index) / 4.0).max(f64::MIN_POSITIVE),
        shape: Shape::Mesh {
            locations: mesh
                .items
                .iter()
                .map(|item| ValueLocation::of(item.location))
                .collect(),
            index: std::sync::Arc::new(index),
        },
        items: summaries(&mesh.items, ranges),
        times: (0..mesh.time.steps())
            .filter_map(|step| mesh.time.time(step))
            .collect(),
        steps: mesh.time.steps(),
        crs,
        native_extent,
        wgs84_extent,
        epsg,
        geographic,
    })
}

/// Bytes a loaded band of `cells` values takes with its overviews (a third more).
pub(crate) fn band_bytes(cells: usize) -> usize {
    cells
        .saturating_mul(std::mem::size_of::<f32>())
        .saturating_mul(4)
        / 3
}

/// Loads one band (item, step, layer) of a grid dataset as a raster. A band larger than
/// `bytes_max` (with its overviews) is refused before anything is allocated.
pub(crate) fn load_band(
    catalogue: &Catalogue,
    description: &Description,
    file: &Path,
    band: BandKey,
    aggregation: Aggregation,
    shading: Shading,
    bytes_max: usize,
) -> Result<Band, SourceError> {
    let geometry = match &description.shape {
        Shape::Grid(geometry) => geometry,
        Shape::Mesh { index, locations } => {
            let location = locations
                .get(band.item)
                .copied()
                .unwrap_or(ValueLocation::Elements);
            return load_mesh_band(catalogue, description, file, band, index, location, shading);
        }
    };
    let needed = band_bytes(geometry.columns.saturating_mul(geometry.rows));
    if needed > bytes_max {
        return Err(SourceError::NotTileable(format!(
            "the grid of {} x {} cells needs {} MB to draw tiles from, more than the {} MB of \
             tiles.band_cache_mb",
            geometry.columns,
            geometry.rows,
            needed >> 20,
            bytes_max >> 20
        )));
    }
    let reader = reader_spec(catalogue, description)?;
    let cells = geometry
        .columns
        .checked_mul(geometry.rows)
        .ok_or_else(|| SourceError::Unreadable("the grid is too large".to_owned()))?;
    let mut sink = BandSink {
        band,
        cells: Some(cells),
        nodata: None,
        values: vec![f32::NAN; cells],
    };
    read(catalogue, reader, file, &mut sink)?;
    let raster = Raster::new(
        geometry.columns,
        geometry.rows,
        geometry.transform.to_gdal(),
        sink.values,
        aggregation,
    )
    .map_err(|error| SourceError::Unreadable(error.to_string()))?;
    Ok(Band {
        bytes: raster.approximate_bytes(),
        field: Box::new(raster),
    })
}

/// One item at one step and layer, ready to sample.
pub(crate) struct Band {
    /// What tiles sample.
    pub(crate) field: Box<dyn Field>,
    /// Bytes it holds.
    pub(crate) bytes: usize,
}

impl std::fmt::Debug for Band {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Band")
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

/// Loads one item at one step of a mesh dataset.
fn load_mesh_band(
    catalogue: &Catalogue,
    description: &Description,
    file: &Path,
    band: BandKey,
    index: &std::sync::Arc<MeshIndex>,
    location: ValueLocation,
    shading: Shading,
) -> Result<Band, SourceError> {
    let reader = reader_spec(catalogue, description)?;
    let mut sink = BandSink {
        band,
        cells: None,
        nodata: None,
        values: Vec::new(),
    };
    read(catalogue, reader, file, &mut sink)?;
    let field = MeshField::new(index.clone(), sink.values.into(), location, shading)
        .map_err(|error| SourceError::Unreadable(error.to_string()))?;
    Ok(Band {
        bytes: field.approximate_bytes(),
        field: Box::new(field),
    })
}

/// About how large a drawn element is: the side of a square of the mean element area over
/// the extent (elements rarely fill it, so this errs small, which only adds a finer level).
fn typical_element_size(index: &MeshIndex) -> f64 {
    let extent = index.extent();
    (extent.width() * extent.height() / index.element_count().max(1) as f64).sqrt()
}

fn reader_spec(
    catalogue: &Catalogue,
    description: &Description,
) -> Result<&'static basin_formats::catalogue::ReaderSpec, SourceError> {
    catalogue
        .readers()
        .map(|reader| reader.spec())
        .find(|spec| spec.name == description.reader)
        .ok_or_else(|| SourceError::NotTileable("the dataset's reader is gone".to_owned()))
}

/// Which band of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BandKey {
    /// Item index.
    pub(crate) item: usize,
    /// Step index.
    pub(crate) step: usize,
    /// Layer index (0 for 2D data).
    pub(crate) layer: usize,
}

fn reader_for(
    catalogue: &Catalogue,
    format: &str,
) -> Result<&'static basin_formats::catalogue::ReaderSpec, SourceError> {
    let spec = catalogue.reader_for_format(format).ok_or_else(|| {
        SourceError::NotTileable(format!(
            "no reader reads datasets of format {:?}, so it has no tiles",
            format
        ))
    })?;
    if !spec
        .produces
        .iter()
        .any(|kind| matches!(kind, DataKind::Grid | DataKind::Mesh))
    {
        return Err(SourceError::NotTileable(format!(
            "{} datasets hold no grid or mesh, so they have no raster tiles",
            spec.name
        )));
    }
    Ok(spec)
}

fn read(
    catalogue: &Catalogue,
    spec: &basin_formats::catalogue::ReaderSpec,
    file: &Path,
    sink: &mut dyn DatasetSink,
) -> Result<(), SourceError> {
    let reader = catalogue
        .reader(spec.name)
        .ok_or_else(|| SourceError::NotTileable(format!("no reader named {}", spec.name)))?;
    let parameters = Parameters::validate(spec.parameters, &[])?;
    reader.read(file, &parameters, &ReadContext::default(), sink)?;
    Ok(())
}

fn summaries(items: &[Item], ranges: &[Option<(f64, f64)>]) -> Vec<ItemSummary> {
    items
        .iter()
        .enumerate()
        .map(|(index, item)| ItemSummary {
            name: item.name.clone(),
            unit: item.quantity.unit.clone(),
            range: ranges.get(index).copied().flatten(),
        })
        .collect()
}

fn bounds_of(points: impl Iterator<Item = (f64, f64)>) -> Bounds {
    points.fold(
        Bounds {
            min_x: f64::INFINITY,
            min_y: f64::INFINITY,
            max_x: f64::NEG_INFINITY,
            max_y: f64::NEG_INFINITY,
        },
        |bounds, (x, y)| Bounds {
            min_x: bounds.min_x.min(x),
            min_y: bounds.min_y.min(y),
            max_x: bounds.max_x.max(x),
            max_y: bounds.max_y.max(y),
        },
    )
}

/// The EPSG code, whether geographic, and the WGS 84 extent of `extent` in `crs`: the box of
/// 21 points along each edge, transformed (projected edges bend in longitude and latitude).
fn place(crs: Option<&Crs>, extent: &Bounds) -> (Option<u32>, bool, Option<Bounds>) {
    let Some(crs) = crs else {
        return (None, false, None);
    };
    let epsg = basin_formats::crs::resolve_epsg(crs);
    let Ok(projection) = Projection::of(crs) else {
        return (epsg, false, None);
    };
    let geographic = projection.is_geographic();
    let Ok(wgs84) = Projection::epsg(4326) else {
        return (epsg, geographic, None);
    };
    let transform = CrsTransform::new(projection, wgs84);
    let mut points = Vec::with_capacity(84);
    for step in 0..=20 {
        let t = f64::from(step) / 20.0;
        let x = extent.min_x + t * extent.width();
        let y = extent.min_y + t * extent.height();
        points.extend([
            (x, extent.min_y),
            (x, extent.max_y),
            (extent.min_x, y),
            (extent.max_x, y),
        ]);
    }
    let transformed: Vec<(f64, f64)> = points
        .into_iter()
        .filter_map(|(x, y)| transform.try_apply(x, y))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if transformed.is_empty() {
        return (epsg, geographic, None);
    }
    let mut bounds = bounds_of(transformed.into_iter());
    bounds.min_x = bounds.min_x.max(-180.0);
    bounds.max_x = bounds.max_x.min(180.0);
    bounds.min_y = bounds.min_y.max(-90.0);
    bounds.max_y = bounds.max_y.min(90.0);
    (epsg, geographic, Some(bounds).filter(Bounds::is_valid))
}

/// Keeps the header and the value range of each item's first step; skips everything else.
#[derive(Default)]
struct DescribeSink {
    header: Option<Header>,
    items: Vec<Item>,
    ranges: Vec<Option<(f64, f64)>>,
}

impl DatasetSink for DescribeSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        if let Some((items, _)) = header.items_and_time() {
            self.items = items.to_vec();
            self.ranges = vec![None; items.len()];
        }
        self.header = Some(header.clone());
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        if frame.step != 0 {
            return Ok(());
        }
        let (Some(item), Some(range)) =
            (self.items.get(frame.item), self.ranges.get_mut(frame.item))
        else {
            return Ok(());
        };
        for index in 0..frame.values.len() {
            let Some(value) = frame.values.get_f64(index) else {
                continue;
            };
            if item.is_nodata(value) || !value.is_finite() {
                continue;
            }
            *range = Some(match *range {
                None => (value, value),
                Some((low, high)) => (low.min(value), high.max(value)),
            });
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }

    fn wants(&self, step: usize, _item: usize) -> bool {
        step == 0
    }
}

/// Keeps one layer of one item at one step, as `f32` with NaN for no data.
struct BandSink {
    band: BandKey,
    /// Values per layer of a grid (the buffer is allocated up front); `None` for a mesh item,
    /// whose whole step buffer is kept and grows as frames arrive.
    cells: Option<usize>,
    nodata: Option<Item>,
    values: Vec<f32>,
}

impl DatasetSink for BandSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        if let Some((items, _)) = header.items_and_time() {
            self.nodata = items.get(self.band.item).cloned();
        }
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        if frame.step != self.band.step || frame.item != self.band.item {
            return Ok(());
        }
        let (layer_start, layer_cells) = match self.cells {
            Some(cells) => (self.band.layer.saturating_mul(cells), cells),
            None => {
                let end = frame.offset.saturating_add(frame.values.len());
                if self.values.len() < end {
                    self.values.resize(end, f32::NAN);
                }
                (0, usize::MAX)
            }
        };
        for index in 0..frame.values.len() {
            let position = frame.offset + index;
            let Some(cell) = position
                .checked_sub(layer_start)
                .filter(|&cell| cell < layer_cells)
            else {
                continue;
            };
            let Some(value) = frame.values.get_f64(index) else {
                continue;
            };
            let missing = self
                .nodata
                .as_ref()
                .is_some_and(|item| item.is_nodata(value));
            if let Some(slot) = self.values.get_mut(cell) {
                *slot = if missing { f32::NAN } else { value as f32 };
            }
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        step == self.band.step && item == self.band.item
    }
}
/// Features of a dataset in EPSG:3857, with their attribute names: what vector tiles are cut
/// from. Meshes give one polygon per element with the element's values of the first step.
#[derive(Debug, Default)]
pub(crate) struct FeatureSet {
    /// Attribute names, one per value of every feature.
    pub(crate) keys: Vec<String>,
    /// The features.
    pub(crate) features: Vec<basin_formats::model::Feature>,
    /// Feature ids, when the data has them (mesh element ids).
    pub(crate) ids: Option<Vec<i64>>,
}

/// Reads the features of a feature collection (GeoJSON, Shapefile) or the elements of a mesh,
/// reprojected to EPSG:3857. Data without a coordinate system cannot be placed on the map.
pub(crate) fn read_features(
    catalogue: &Catalogue,
    format: &str,
    file: &Path,
) -> Result<FeatureSet, SourceError> {
    let spec = catalogue.reader_for_format(format).ok_or_else(|| {
        SourceError::NotTileable(format!(
            "no reader reads datasets of format {format:?}, so it has no vector tiles"
        ))
    })?;
    if !spec
        .produces
        .iter()
        .any(|kind| matches!(kind, DataKind::Features | DataKind::Mesh))
    {
        return Err(SourceError::NotTileable(format!(
            "{} datasets hold no features or mesh, so they have no vector tiles",
            spec.name
        )));
    }
    let mut collected = FeatureSink::default();
    {
        let sink = basin_formats::crs::transform_sink(Box::new(&mut collected), None, 3857)?;
        let mut sink = sink;
        read(catalogue, spec, file, sink.as_mut())?;
    }
    Ok(collected.set)
}

/// Collects features, or turns mesh elements into polygon features with their first-step
/// values.
#[derive(Default)]
struct FeatureSink {
    set: FeatureSet,
    mesh: Option<(
        std::sync::Arc<basin_formats::model::MeshGeometry>,
        Vec<Item>,
    )>,
    element_values: Vec<Vec<f64>>,
}

impl DatasetSink for &mut FeatureSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        match header {
            Header::Features(schema) => {
                self.set.keys = schema
                    .fields
                    .iter()
                    .map(|field| field.name.clone())
                    .collect();
            }
            Header::Mesh(mesh) => {
                self.set.keys = std::iter::once("elementId".to_owned())
                    .chain(mesh.items.iter().map(|item| item.name.clone()))
                    .collect();
                self.element_values = vec![Vec::new(); mesh.items.len()];
                self.mesh = Some((mesh.geometry.clone(), mesh.items.clone()));
            }
            other => {
                return Err(FormatError::Catalogue(format!(
                    "a {} has no vector tiles",
                    other.kind().name()
                )));
            }
        }
        Ok(())
    }

    fn feature(&mut self, feature: &basin_formats::model::Feature) -> FormatResult<()> {
        self.set.features.push(feature.clone());
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        if frame.step != 0 {
            return Ok(());
        }
        let Some(values) = self.element_values.get_mut(frame.item) else {
            return Ok(());
        };
        values.extend(
            (0..frame.values.len()).map(|index| frame.values.get_f64(index).unwrap_or(f64::NAN)),
        );
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        let Some((geometry, items)) = self.mesh.take() else {
            return Ok(());
        };
        // A layered mesh shows its surface: the top element of each column, with its values.
        let (ids, features) = if geometry.layers.is_some() {
            let top = basin_formats::dfs::dfsu::layers::top_layer(&geometry)?;
            let surface = Surface {
                geometry: &top.geometry,
                sources: Some(&top.elements),
                full_ids: &geometry.elements.ids,
            };
            mesh_polygons(&surface, &items, &self.element_values)
        } else {
            let surface = Surface {
                geometry: &geometry,
                sources: None,
                full_ids: &geometry.elements.ids,
            };
            mesh_polygons(&surface, &items, &self.element_values)
        };
        self.set.features = features;
        self.set.ids = Some(ids);
        Ok(())
    }

    fn wants(&self, step: usize, _item: usize) -> bool {
        step == 0
    }
}

/// The elements drawn as polygons: a 2D mesh, or the surface of a layered one with the
/// index of each surface element in the full mesh (where its values are).
struct Surface<'a> {
    geometry: &'a basin_formats::model::MeshGeometry,
    sources: Option<&'a [usize]>,
    full_ids: &'a [i64],
}

/// One polygon per 2D element (closed ring of its corner nodes) with its id and the element
/// values of each item (null for no data and for node-located items), and the element ids.
fn mesh_polygons(
    surface: &Surface<'_>,
    items: &[Item],
    values: &[Vec<f64>],
) -> (Vec<i64>, Vec<basin_formats::model::Feature>) {
    use basin_formats::model::{Coord, ElementKind, Feature, Geometry, ItemLocation, Value};
    let geometry = surface.geometry;
    let nodes = &geometry.nodes;
    let elements = &geometry.elements;
    (0..elements.len())
        .filter_map(|index| {
            let flat = matches!(
                elements.kinds.get(index)?,
                ElementKind::Triangle | ElementKind::Quad | ElementKind::Polygon
            );
            if !flat {
                return None;
            }
            let corners = elements.nodes(index)?;
            let mut ring: Vec<Coord> = corners
                .iter()
                .filter_map(|&node| {
                    let node = node as usize;
                    Some(Coord::xy(*nodes.x.get(node)?, *nodes.y.get(node)?))
                })
                .collect();
            if ring.len() < 3 || ring.len() != corners.len() {
                return None;
            }
            ring.push(*ring.first()?);
            let source = match surface.sources {
                Some(sources) => *sources.get(index)?,
                None => index,
            };
            let id = surface
                .full_ids
                .get(source)
                .copied()
                .unwrap_or(source as i64);
            let attributes = std::iter::once(Value::Integer(id))
                .chain(items.iter().zip(values).map(|(item, column)| {
                    match (item.location, column.get(source)) {
                        (ItemLocation::Cell, Some(&value))
                            if value.is_finite() && !item.is_nodata(value) =>
                        {
                            Value::Float(value)
                        }
                        _ => Value::Null,
                    }
                }))
                .collect();
            Some((
                id,
                Feature {
                    geometry: Some(Geometry::Polygon(vec![ring])),
                    values: attributes,
                },
            ))
        })
        .unzip()
}
