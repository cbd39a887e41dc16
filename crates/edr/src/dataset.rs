//! A dataset described for queries: where its values are in space (a grid, a mesh or
//! nowhere), its items, its time axis and its coordinate system, read once from the file's
//! header; and the lookup of a position in it.

use std::path::Path;
use std::sync::Arc;

use basin_formats::crs::Crs;
use basin_formats::model::{
    DataKind, DatasetSink, GridGeometry, Header, Item, ItemLocation, MeshGeometry, TimeAxis,
};
use basin_formats::{Catalogue, FormatResult, Parameters, ReadContext};
use basin_tiles::mesh::MeshIndex;

use crate::error::{EdrError, EdrResult};

/// Where a dataset's values are in space.
#[derive(Debug, Clone)]
pub enum Space {
    /// A raster grid (one or more layers).
    Grid(GridGeometry),
    /// A flexible mesh, its elements indexed (the surface of a layered mesh).
    Mesh {
        /// Nodes and elements.
        geometry: Arc<MeshGeometry>,
        /// The index of the 2D elements (the top of each column of a layered mesh).
        index: Arc<MeshIndex>,
        /// The 2D elements (the surface of a layered mesh): centres, areas, and which element
        /// of the geometry each is.
        surface: Arc<Surface>,
    },
    /// Nowhere: a time series (DFS0, CSV), whose items are its locations.
    Series,
}

/// The 2D elements of a mesh (the top layer of a layered one), for queries over a region.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surface {
    /// The centre of each element: the mean of its corners, as MIKE IO's element coordinates.
    pub centres: Vec<(f64, f64)>,
    /// The horizontal area of each element.
    pub areas: Vec<f64>,
    /// The element of the geometry each is (a 3D element's index in a layered mesh).
    pub elements: Vec<usize>,
    /// The centres, indexed for the nearest ones to a point.
    pub nearest: crate::nearest::CentreIndex,
}

impl Surface {
    /// The surface of `geometry`.
    pub fn of(geometry: &MeshGeometry) -> EdrResult<Self> {
        if geometry.layers.is_some() {
            let top = basin_formats::dfs::dfsu::layers::top_layer(geometry)?;
            let mut surface = Self::of_plane(&top.geometry);
            surface.elements = top.elements;
            return Ok(surface);
        }
        Ok(Self::of_plane(geometry))
    }

    fn of_plane(plane: &MeshGeometry) -> Self {
        let count = plane.elements.len();
        let mut surface = Self {
            centres: Vec::with_capacity(count),
            areas: Vec::with_capacity(count),
            elements: (0..count).collect(),
            nearest: crate::nearest::CentreIndex::default(),
        };
        for element in 0..count {
            let corners: Vec<(f64, f64)> = plane
                .elements
                .nodes(element)
                .unwrap_or_default()
                .iter()
                .filter_map(|&node| {
                    let node = node as usize;
                    Some((*plane.nodes.x.get(node)?, *plane.nodes.y.get(node)?))
                })
                .collect();
            let n = corners.len().max(1) as f64;
            let (sum_x, sum_y) = corners
                .iter()
                .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
            surface.centres.push((sum_x / n, sum_y / n));
            surface.areas.push(shoelace(&corners));
        }
        surface.nearest = crate::nearest::CentreIndex::build(&surface.centres);
        surface
    }

    /// Bytes it holds, roughly.
    fn approximate_bytes(&self) -> usize {
        self.centres.len() * 64
    }
}

/// The area of a polygon given by its corners in order, computed from the first corner so
/// that large map coordinates (northings of millions of metres) lose no digits.
fn shoelace(corners: &[(f64, f64)]) -> f64 {
    let Some(&(x0, y0)) = corners.first() else {
        return 0.0;
    };
    let relative: Vec<(f64, f64)> = corners.iter().map(|(x, y)| (x - x0, y - y0)).collect();
    let twice: f64 = relative
        .iter()
        .zip(relative.iter().cycle().skip(1))
        .map(|((xa, ya), (xb, yb))| xa * yb - xb * ya)
        .sum();
    (twice / 2.0).abs()
}

/// What queries need to know of a dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The name of the reader that reads it.
    pub reader: &'static str,
    /// Grid, mesh or series.
    pub space: Space,
    /// Items, in the reader's order.
    pub items: Vec<Item>,
    /// When the steps are.
    pub time: TimeAxis,
    /// The coordinate system, when the file says.
    pub crs: Option<Crs>,
    /// Where the values of a DFS file lie, when they can be read there directly.
    pub(crate) dfs_values: Option<crate::dfs_values::DfsValues>,
}

/// The place of a position in a dataset's space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Location {
    /// A grid cell: column and row from the grid's first (top-left) cell.
    Cell {
        /// Column.
        column: usize,
        /// Row.
        row: usize,
    },
    /// A mesh element (of a layered mesh: the top element of the column).
    Element(usize),
}

impl Dataset {
    /// Reads the header of `file`, a dataset of `format`, with the reader the catalogue has
    /// for it. Only the header is read: readers that can skip data (DFS) read no values.
    pub fn describe(catalogue: &Catalogue, format: &str, file: &Path) -> EdrResult<Self> {
        let spec = catalogue.reader_for_format(format).ok_or_else(|| {
            EdrError::NotSupported(format!("no reader reads datasets of format {format:?}"))
        })?;
        if !spec
            .produces
            .iter()
            .any(|kind| matches!(kind, DataKind::Grid | DataKind::Mesh | DataKind::TimeSeries))
        {
            return Err(EdrError::NotSupported(format!(
                "{} datasets hold no grid, mesh or time series",
                spec.name
            )));
        }
        let mut sink = HeaderSink::default();
        read_with(catalogue, spec.name, file, &mut sink)?;
        let header = sink
            .header
            .ok_or_else(|| EdrError::Unreadable("the reader produced no data".to_owned()))?;
        let (space, items, time, crs) = match header {
            Header::Grid(grid) => {
                let crs = grid.geometry.crs.clone();
                (Space::Grid(grid.geometry), grid.items, grid.time, crs)
            }
            Header::Mesh(mesh) => {
                let index = MeshIndex::build(&mesh.geometry)
                    .map_err(|error| EdrError::Unreadable(error.to_string()))?;
                let crs = mesh.geometry.crs.clone();
                let surface = Surface::of(&mesh.geometry)?;
                let space = Space::Mesh {
                    geometry: mesh.geometry,
                    index: Arc::new(index),
                    surface: Arc::new(surface),
                };
                (space, mesh.items, mesh.time, crs)
            }
            Header::TimeSeries(series) => (Space::Series, series.items, series.time, None),
            other => {
                return Err(EdrError::NotSupported(format!(
                    "a {} holds no grid, mesh or time series",
                    other.kind().name()
                )));
            }
        };
        let dfs_values = crate::dfs_values::DfsValues::describe(spec.name, file, &space, &items);
        Ok(Self {
            reader: spec.name,
            space,
            items,
            time,
            crs,
            dfs_values,
        })
    }

    /// Bytes this description holds, roughly (for a cache's budget).
    pub fn approximate_bytes(&self) -> usize {
        let space = match &self.space {
            Space::Grid(_) | Space::Series => 0,
            Space::Mesh {
                geometry,
                index,
                surface,
            } => {
                index.approximate_bytes()
                    + surface.approximate_bytes()
                    + geometry.nodes.len() * 40
                    + geometry.elements.len() * 24
            }
        };
        let times = match &self.time {
            TimeAxis::Calendar(times) => times.len() * 12,
            TimeAxis::Relative(offsets) => offsets.len() * 8,
            _ => 0,
        };
        1024 + self.items.len() * 256 + times + space
    }

    /// Where `(x, y)`, in the dataset's own coordinates, lies: the grid cell or mesh element
    /// holding it, or `None` outside the data (and for a time series, which has no space).
    pub fn locate(&self, x: f64, y: f64) -> Option<Location> {
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        match &self.space {
            Space::Grid(grid) => grid_cell(grid, x, y),
            Space::Mesh { index, .. } => index.element_at(x, y).map(Location::Element),
            Space::Series => None,
        }
    }

    /// The vertical levels of a grid with several layers (DFS3): the z of each layer, from
    /// its vertical axis; `None` for data with one level (a layered mesh answers for its
    /// surface).
    pub fn levels(&self) -> Option<Vec<f64>> {
        match &self.space {
            Space::Grid(grid) => grid
                .vertical
                .as_ref()
                .filter(|axis| axis.count > 1)
                .map(|axis| {
                    (0..axis.count)
                        .map(|layer| axis.origin + axis.spacing * layer as f64)
                        .collect()
                }),
            Space::Mesh { .. } | Space::Series => None,
        }
    }

    /// Vertical layers of the values (1 for 2D data and series).
    pub fn layers(&self) -> usize {
        match &self.space {
            Space::Grid(grid) => grid.layers(),
            Space::Mesh { .. } | Space::Series => 1,
        }
    }

    /// The index, in item `item`'s values of one step, of the value at `location` (layer
    /// `layer` of a grid; the element itself, or its corner node nearest to `(x, y)` for an
    /// item on nodes, of a mesh, which answers for one level).
    pub fn value_index(
        &self,
        item: usize,
        location: Location,
        (x, y): (f64, f64),
        layer: usize,
    ) -> Option<usize> {
        match (&self.space, location) {
            (Space::Grid(grid), Location::Cell { column, row }) => {
                (layer < grid.layers()).then(|| grid.index(column, row, layer))
            }
            (Space::Mesh { geometry, .. }, Location::Element(element)) => {
                match self.items.get(item)?.location {
                    ItemLocation::Node => nearest_corner(geometry, element, x, y),
                    _ => Some(element),
                }
            }
            _ => None,
        }
    }
}

/// The cell of `grid` holding `(x, y)`: the inverse of its affine transform, cells half-open
/// (a point on the edge between two cells is in the one to its right or below).
fn grid_cell(grid: &GridGeometry, x: f64, y: f64) -> Option<Location> {
    let transform = &grid.transform;
    let (pixel_width, row_rotation) = (transform.pixel_width, transform.row_rotation);
    let (column_rotation, pixel_height) = (transform.column_rotation, transform.pixel_height);
    let determinant = pixel_width * pixel_height - row_rotation * column_rotation;
    if determinant == 0.0 || !determinant.is_finite() {
        return None;
    }
    let dx = x - transform.origin_x;
    let dy = y - transform.origin_y;
    let column = (dx * pixel_height - dy * row_rotation) / determinant;
    let row = (dy * pixel_width - dx * column_rotation) / determinant;
    if !(column >= 0.0 && row >= 0.0) {
        return None;
    }
    let (column, row) = (column.floor(), row.floor());
    if column >= grid.columns as f64 || row >= grid.rows as f64 {
        return None;
    }
    Some(Location::Cell {
        column: column as usize,
        row: row as usize,
    })
}

/// The corner of `element` nearest to `(x, y)` (the last of equally near ones: a layered
/// element lists its bottom face then its top face, the top node above each bottom node, so a
/// position takes the surface, as it takes the top element of the column).
fn nearest_corner(geometry: &MeshGeometry, element: usize, x: f64, y: f64) -> Option<usize> {
    let nodes = &geometry.nodes;
    geometry
        .elements
        .nodes(element)?
        .iter()
        .map(|&node| node as usize)
        .filter_map(|node| {
            let distance = (nodes.x.get(node)? - x).hypot(nodes.y.get(node)? - y);
            Some((node, distance))
        })
        .fold(
            None,
            |best: Option<(usize, f64)>, (node, distance)| match best {
                Some((_, nearest)) if nearest < distance => best,
                _ => Some((node, distance)),
            },
        )
        .map(|(node, _)| node)
}

/// Runs the reader named `reader` over `file` into `sink`, with its default parameters.
pub(crate) fn read_with(
    catalogue: &Catalogue,
    reader: &str,
    file: &Path,
    sink: &mut dyn DatasetSink,
) -> EdrResult<()> {
    let reader = catalogue
        .reader(reader)
        .ok_or_else(|| EdrError::Unreadable(format!("no reader named {reader}")))?;
    let parameters = Parameters::validate(reader.spec().parameters, &[])?;
    reader.read(file, &parameters, &ReadContext::default(), sink)?;
    Ok(())
}

/// Keeps the header and asks for no values.
#[derive(Default)]
struct HeaderSink {
    header: Option<Header>,
}

impl DatasetSink for HeaderSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        self.header = Some(header.clone());
        Ok(())
    }

    fn frame(&mut self, _frame: basin_formats::model::Frame<'_>) -> FormatResult<()> {
        Ok(())
    }

    fn feature(&mut self, _feature: &basin_formats::model::Feature) -> FormatResult<()> {
        Ok(())
    }

    fn points(&mut self, _chunk: &basin_formats::model::PointChunk) -> FormatResult<()> {
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }

    fn wants(&self, _step: usize, _item: usize) -> bool {
        false
    }
}
