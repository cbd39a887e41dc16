//! Reading DFS1/DFS2/DFS3 into a grid: the geometry from the first item's axis and the
//! projection record, then the selected items of every step, rows flipped to the model's
//! north-up order and compressed cells expanded.

use std::path::Path;

use crate::catalogue::ReadContext;
use crate::error::{FormatError, FormatResult};
use crate::limits::check_limit;
use crate::model::{
    DataType, DatasetSink, GridGeometry, GridHeader, Header, Item, Values, VerticalAxis,
};

use super::super::container::{DfsFile, DfsHeader, ItemInfo, SpatialAxis};
use super::super::mapping;
use super::placement::{self, Interpretation, Placement};
use super::{Dimensions, FORMAT};

/// What a reader was asked for.
pub(crate) struct ReadOptions<'a> {
    pub dimensions: Dimensions,
    pub srid: Option<u32>,
    pub interpretation: Interpretation,
    pub parameters: &'a crate::parameters::Parameters,
}

/// Reads `input` into `sink`.
pub(crate) fn read(
    input: &Path,
    options: &ReadOptions<'_>,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let mut file = DfsFile::open(input, &context.limits)?;
    if let Ok(metadata) = std::fs::metadata(input) {
        context.progress.set_total(metadata.len());
    }
    let shape = Shape::of(&file.header, options.dimensions)?;
    let cells = shape.cells().ok_or_else(|| too_large(&shape))?;
    check_limit("grid cells", cells as u64, context.limits.grid_cells_max)?;
    let geometry = geometry_of(&file.header, &shape, options)?;
    let selected = mapping::selected_items(&file.header.items, options.parameters)?;
    let items: Vec<Item> = selected
        .iter()
        .filter_map(|index| file.header.items.get(*index))
        .map(|info| grid_item(info, &file.header))
        .collect();
    let expansion = if file.header.file.compressed != 0 {
        Some(Expansion::of(&file, &shape, &selected)?)
    } else {
        check_value_counts(&file, &selected, cells)?;
        None
    };
    let time = mapping::time_axis_of(&mut file)?;
    sink.begin(&Header::Grid(GridHeader {
        geometry,
        items,
        time,
    }))?;
    let mut scratch = Values::with_capacity(DataType::F32, 0);
    mapping::stream(
        &mut file,
        &selected,
        sink,
        context.progress,
        |item, values| match &expansion {
            Some(expansion) => expansion.expand(item, values, &mut scratch),
            None => {
                flip_rows(values, &shape, &mut scratch);
                Ok(())
            }
        },
    )?;
    sink.end()
}

/// The model item of a grid item: float items announce NaN as their nodata, so that a
/// GeoTIFF or ASCII Grid written from them declares it (DFS delete values are NaN by then).
fn grid_item(info: &ItemInfo, header: &DfsHeader) -> Item {
    let mut item = mapping::item_of(info, header);
    if item.data_type.is_float() && item.nodata.is_none() {
        item.nodata = Some(f64::NAN);
    }
    item
}

/// Every selected item of an uncompressed file stores one value per cell.
fn check_value_counts<R: std::io::BufRead + std::io::Seek>(
    file: &DfsFile<R>,
    selected: &[usize],
    cells: usize,
) -> FormatResult<()> {
    for index in selected {
        let stored = file.item_len(*index).unwrap_or(0);
        if stored != cells {
            let name = file.header.items.get(*index).map(|info| info.name.as_str());
            return Err(FormatError::invalid(
                FORMAT,
                format!("item {:?}", name.unwrap_or_default()),
                format!("{stored} values per step where its axis spans {cells} cells"),
            ));
        }
    }
    Ok(())
}

fn too_large(shape: &Shape) -> FormatError {
    FormatError::invalid(
        FORMAT,
        "item axis",
        format!(
            "a grid of {} x {} x {} cells is too large",
            shape.nx, shape.ny, shape.nz
        ),
    )
}

/// Counts, origins and spacings of the grid (the first item's axis; every item must share it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shape {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// Axis origins (x0, y0, z0), 0 where the axis has fewer dimensions.
    pub origin: [f64; 3],
    /// Axis spacings (dx, dy, dz); dy is dx for DFS1 and dz 0 below DFS3.
    pub spacing: [f64; 3],
}

impl Shape {
    fn of(header: &DfsHeader, dimensions: Dimensions) -> FormatResult<Self> {
        let Some(first) = header.items.first() else {
            return Err(FormatError::invalid(
                FORMAT,
                "items",
                format!("a {} file has no dynamic items", dimensions.name()),
            ));
        };
        for info in &header.items {
            if info.axis.tag != dimensions.axis_tag() {
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("item {:?}", info.name),
                    format!(
                        "a {} axis where a {} file has {}",
                        info.axis.name(),
                        dimensions.name(),
                        dimensions.axis_name()
                    ),
                ));
            }
            if info.axis != first.axis {
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("item {:?}", info.name),
                    format!(
                        "its axis differs from item {:?}'s; every item of a grid shares one axis",
                        first.name
                    ),
                ));
            }
        }
        shape_of_axis(&first.axis, dimensions)
    }

    fn cells(&self) -> Option<usize> {
        self.nx.checked_mul(self.ny)?.checked_mul(self.nz)
    }
}

fn shape_of_axis(axis: &SpatialAxis, dimensions: Dimensions) -> FormatResult<Shape> {
    let bad = |message: &str| FormatError::invalid(FORMAT, "item axis", message.to_owned());
    let equidistant = axis
        .equidistant()
        .ok_or_else(|| bad("the axis has no origins and spacings"))?;
    let mut counts = [1_usize; 3];
    for (slot, count) in counts.iter_mut().zip(&axis.counts) {
        *slot = usize::try_from(*count)
            .ok()
            .filter(|count| *count > 0)
            .ok_or_else(|| bad(&format!("axis count {count} is not positive")))?;
    }
    let mut origin = [0.0; 3];
    let mut spacing = [0.0; 3];
    for (index, (start, step)) in equidistant.iter().enumerate() {
        if let (Some(o), Some(s)) = (origin.get_mut(index), spacing.get_mut(index)) {
            *o = *start;
            *s = *step;
        }
    }
    let [dx, dy, dz] = spacing;
    let positive = |spacing: f64| spacing.is_finite() && spacing > 0.0;
    if !positive(dx)
        || (dimensions != Dimensions::One && !positive(dy))
        || !origin.iter().all(|value| value.is_finite())
        || !dz.is_finite()
    {
        return Err(bad(&format!(
            "the origins {origin:?} and spacings {spacing:?} do not describe a grid"
        )));
    }
    if dimensions == Dimensions::One {
        spacing[1] = dx;
    }
    let [nx, ny, nz] = counts;
    Ok(Shape {
        nx,
        ny,
        nz,
        origin,
        spacing,
    })
}

fn geometry_of(
    header: &DfsHeader,
    shape: &Shape,
    options: &ReadOptions<'_>,
) -> FormatResult<GridGeometry> {
    let (name, longitude, latitude, orientation) = match &header.file.projection {
        Some(record) => (
            record.name.as_str(),
            record.origin_longitude,
            record.origin_latitude,
            record.orientation,
        ),
        None => ("", 0.0, 0.0, 0.0),
    };
    let crs = crate::crs::from_mike_projection(name, options.srid);
    // Without a projection record, or in NON-UTM, the origin is a position as it is (in the
    // SRID's system when one is given).
    let local = header.file.projection.is_none()
        || name.trim().eq_ignore_ascii_case(crate::crs::MIKE_NON_UTM);
    let georeference = if local {
        placement::Georeference::Direct
    } else {
        placement::georeference(
            name,
            crs.as_ref(),
            "give its EPSG code with the SRID parameter",
        )?
    };
    let (origin, orientation) =
        placement::map_origin(&georeference, longitude, latitude, orientation)?;
    let [x0, y0, z0] = shape.origin;
    let [dx, dy, dz] = shape.spacing;
    let reference = placement::offset(origin, orientation, (x0, y0));
    let (dx, dy, centre) = match options.interpretation {
        Interpretation::CenterOfCell => (dx, dy, reference),
        Interpretation::BottomLeftBorder => (
            dx,
            dy,
            placement::offset(reference, orientation, (dx / 2.0, dy / 2.0)),
        ),
        Interpretation::Borders => {
            let shrink = |spacing: f64, count: usize| {
                if count > 1 {
                    spacing * (count - 1) as f64 / count as f64
                } else {
                    spacing
                }
            };
            let (dx, dy) = (shrink(dx, shape.nx), shrink(dy, shape.ny));
            (
                dx,
                dy,
                placement::offset(reference, orientation, (dx / 2.0, dy / 2.0)),
            )
        }
    };
    let placement = Placement {
        centre,
        orientation,
        dx,
        dy,
        flipped: true,
    };
    let vertical = (options.dimensions == Dimensions::Three).then_some(VerticalAxis {
        origin: z0,
        spacing: dz,
        count: shape.nz,
    });
    Ok(GridGeometry {
        columns: shape.nx,
        rows: shape.ny,
        vertical,
        transform: placement.transform(shape.ny),
        crs,
    })
}

/// Reverses the row order of every layer of `values` (`columns` x `rows` per layer), using
/// `scratch`'s allocation: the file's rows run south to north, the model's north to south.
pub(super) fn reverse_rows<T: Copy>(
    values: &mut Vec<T>,
    scratch: &mut Vec<T>,
    columns: usize,
    rows: usize,
) {
    let layer = columns * rows;
    if layer == 0 || !values.len().is_multiple_of(layer) {
        return;
    }
    scratch.clear();
    scratch.reserve(values.len());
    for layer_values in values.chunks(layer) {
        for row in layer_values.rchunks(columns) {
            scratch.extend_from_slice(row);
        }
    }
    std::mem::swap(values, scratch);
}

/// [`reverse_rows`] for any type of values.
fn flip_rows(values: &mut Values, shape: &Shape, scratch: &mut Values) {
    if shape.ny < 2 {
        return;
    }
    let (nx, ny) = (shape.nx, shape.ny);
    if scratch.data_type() != values.data_type() {
        *scratch = Values::with_capacity(values.data_type(), values.len());
    }
    match (values, scratch) {
        (Values::F32(v), Values::F32(s)) => reverse_rows(v, s, nx, ny),
        (Values::F64(v), Values::F64(s)) => reverse_rows(v, s, nx, ny),
        (Values::I32(v), Values::I32(s)) => reverse_rows(v, s, nx, ny),
        (Values::U32(v), Values::U32(s)) => reverse_rows(v, s, nx, ny),
        (Values::I16(v), Values::I16(s)) => reverse_rows(v, s, nx, ny),
        (Values::U16(v), Values::U16(s)) => reverse_rows(v, s, nx, ny),
        (Values::U8(v), Values::U8(s)) => reverse_rows(v, s, nx, ny),
        _ => {}
    }
}

/// Most cells of a compressed grid per value it stores. The expansion allocates the whole grid,
/// so a file's claim is bounded by what it holds: a MIKE 3 file stores a sizeable share of its
/// cells (mikecore-python's OresundHD one in 9), while a few bytes claiming a huge grid would
/// otherwise cost gigabytes.
const EXPANSION_MAX: usize = 4096;

/// A compressed file's encoding keys turned into model cell indexes (rows already flipped).
struct Expansion {
    /// Model index of each stored value.
    targets: Vec<usize>,
    cells: usize,
    /// Fill for cells without a value, per file item (NaN for floats, the item's nodata or 0
    /// for integers).
    fills: Vec<f64>,
}

impl Expansion {
    fn of<R: std::io::BufRead + std::io::Seek>(
        file: &DfsFile<R>,
        shape: &Shape,
        selected: &[usize],
    ) -> FormatResult<Self> {
        let header = &file.header;
        let keys: Vec<&Values> = header
            .statics
            .iter()
            .take(3)
            .map(|item| &item.values)
            .collect();
        let [Values::I32(xs), Values::I32(ys), Values::I32(zs)] = keys.as_slice() else {
            return Err(FormatError::invalid(
                FORMAT,
                "static items",
                "a compressed file must start its static items with three Int32 encoding keys \
                 (x, y, z)",
            ));
        };
        let count = xs.len();
        if ys.len() != count || zs.len() != count {
            return Err(FormatError::invalid(
                FORMAT,
                "encoding keys",
                format!(
                    "the x, y and z keys have {}, {} and {} entries; they must be equal",
                    xs.len(),
                    ys.len(),
                    zs.len()
                ),
            ));
        }
        for index in selected {
            let stored = file.item_len(*index).unwrap_or(0);
            if stored != count {
                let name = header.items.get(*index).map(|info| info.name.as_str());
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("item {:?}", name.unwrap_or_default()),
                    format!("{stored} values per step where the encoding keys give {count}"),
                ));
            }
        }
        let cells = shape.cells().unwrap_or(usize::MAX);
        if cells / EXPANSION_MAX > count {
            return Err(FormatError::invalid(
                FORMAT,
                "encoding keys",
                format!(
                    "{count} stored values for a grid of {cells} cells: more than \
                     {EXPANSION_MAX} cells per stored value is refused (the expanded grid is \
                     held in memory)"
                ),
            ));
        }
        let targets = targets_of(xs, ys, zs, shape)?;
        let fills = header
            .items
            .iter()
            .map(|info| {
                if info.data_type.is_float() {
                    f64::NAN
                } else {
                    mapping::item_of(info, header).nodata.unwrap_or(0.0)
                }
            })
            .collect();
        Ok(Self {
            targets,
            cells,
            fills,
        })
    }

    fn expand(&self, item: usize, values: &mut Values, scratch: &mut Values) -> FormatResult<()> {
        fn spread<T: Copy>(
            values: &mut Vec<T>,
            scratch: &mut Vec<T>,
            targets: &[usize],
            cells: usize,
            fill: T,
        ) {
            scratch.clear();
            scratch.resize(cells, fill);
            for (value, target) in values.iter().zip(targets) {
                if let Some(slot) = scratch.get_mut(*target) {
                    *slot = *value;
                }
            }
            std::mem::swap(values, scratch);
        }
        let fill = self.fills.get(item).copied().unwrap_or(f64::NAN);
        if scratch.data_type() != values.data_type() {
            *scratch = Values::with_capacity(values.data_type(), self.cells);
        }
        let (targets, cells) = (self.targets.as_slice(), self.cells);
        match (values, scratch) {
            (Values::F32(v), Values::F32(s)) => spread(v, s, targets, cells, fill as f32),
            (Values::F64(v), Values::F64(s)) => spread(v, s, targets, cells, fill),
            (Values::I32(v), Values::I32(s)) => spread(v, s, targets, cells, fill as i32),
            (Values::U32(v), Values::U32(s)) => spread(v, s, targets, cells, fill as u32),
            (Values::I16(v), Values::I16(s)) => spread(v, s, targets, cells, fill as i16),
            (Values::U16(v), Values::U16(s)) => spread(v, s, targets, cells, fill as u16),
            (Values::U8(v), Values::U8(s)) => spread(v, s, targets, cells, fill as u8),
            _ => {
                return Err(FormatError::Catalogue(
                    "compressed values changed type".to_owned(),
                ));
            }
        }
        Ok(())
    }
}

/// The model cell index of each stored value of a compressed file (rows flipped), from the
/// x, y and z encoding keys; a key outside the grid is an error naming it.
fn targets_of(xs: &[i32], ys: &[i32], zs: &[i32], shape: &Shape) -> FormatResult<Vec<usize>> {
    let mut targets = Vec::with_capacity(xs.len());
    for (key, ((x, y), z)) in xs.iter().zip(ys).zip(zs).enumerate() {
        let position =
            |value: i32, limit: usize| usize::try_from(value).ok().filter(|value| *value < limit);
        let (Some(x), Some(y), Some(z)) = (
            position(*x, shape.nx),
            position(*y, shape.ny),
            position(*z, shape.nz),
        ) else {
            return Err(FormatError::invalid(
                FORMAT,
                format!("encoding key {key}"),
                format!(
                    "cell ({x}, {y}, {z}) is outside the {} x {} x {} grid",
                    shape.nx, shape.ny, shape.nz
                ),
            ));
        };
        let row = shape.ny - 1 - y;
        targets.push((z * shape.ny + row) * shape.nx + x);
    }
    Ok(targets)
}
