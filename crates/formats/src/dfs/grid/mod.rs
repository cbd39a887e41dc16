//! DFS1, DFS2 and DFS3: MIKE's equidistant grids of one, two and three dimensions, read into
//! the model's grid and written from it.
//!
//! What the model needs that the file does not say directly:
//! - **Placement.** The file gives the origin in its projection record (geographic
//!   longitude/latitude for projected systems, coordinates for LONG/LAT and NON-UTM), an
//!   orientation from true north, and axis offsets and spacings; `placement.rs` turns these
//!   into a GDAL-style transform as MIKE IO places the grid (origin = centre of the first
//!   cell), with `CoordinateInterpretationType` choosing another reading on DFS2.
//! - **Row order.** The file stores rows south to north (x fastest, then y, then z); the model
//!   stores a north-up grid top row first, so the reader reverses the rows of every layer and
//!   the writer reverses them back. A transform with rows running south to north was the
//!   alternative, but GeoTIFF, ASCII Grid and the CRS warp all expect north-up grids.
//! - **Compressed DFS3.** Files with the compressed flag store only some cells, located by the
//!   first three static items (x, y and z encoding keys); the reader spreads them over the
//!   grid and leaves the other cells NaN. Other static items (MIKE 21 bathymetry copies,
//!   sponge layers) are not part of the model and are ignored.
//!
//! The writers write what MIKE IO writes for the same grid (block for block, so that with the
//! same titles the bytes are identical apart from the timestamps): float items, statistics
//! type 1, data type 0, the default delete values, and the origin in the projection record
//! with the axis offsets zero (DFS2), or, for unrotated NON-UTM grids, in the axis offsets
//! (DFS1 and DFS3, as MIKE IO's `Grid1D`/`Grid3D`).

mod placement;
mod reader;
mod writer;

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::FormatResult;
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, ParameterType, Parameters, SRID, srid_parameter};

use super::container::axis;
use super::mapping::{
    ALLOWED_ITEM_NAMES_PARAMETER, APPLICATION_TITLE_PARAMETER, APPLICATION_VERSION_PARAMETER,
    Titles, title_parameter,
};

pub use placement::Interpretation;

const FORMAT: &str = "DFS grid";

/// Name of the DFS2 reader's parameter that says where the origin lies in the first cell.
pub const COORDINATE_INTERPRETATION: &str = "CoordinateInterpretationType";
const SRID_PARAMETER: ParameterSpec = srid_parameter(
    "EPSG code of the grid's coordinate system, used when the file's projection is missing or a name Basin cannot resolve (e.g. NON-UTM for local coordinates, or a MIKE name such as DKS); a WKT in the file wins",
);

const COORDINATE_INTERPRETATION_PARAMETER: ParameterSpec = ParameterSpec {
    name: COORDINATE_INTERPRETATION,
    description: "Where the file's origin lies: CenterOfCell (the centre of the first cell, as MIKE reads it and MIKE IO reads projected and geographic grids), BottomLeftBorder (the outer lower-left corner of the first cell), Borders (the origin and the last cell's point are the outer borders: cells shrink to (n-1)/n of the stored spacing)",
    data_type: ParameterType::String,
    required: false,
    default_value: Some("CenterOfCell"),
    allowed_values: &["CenterOfCell", "BottomLeftBorder", "Borders"],
};

const WRITER_PARAMETERS: &[ParameterSpec] = &[
    title_parameter("The file title; empty when not given"),
    APPLICATION_TITLE_PARAMETER,
    APPLICATION_VERSION_PARAMETER,
];

/// The number of dimensions of a DFS grid file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dimensions {
    One,
    Two,
    Three,
}

impl Dimensions {
    fn name(self) -> &'static str {
        match self {
            Self::One => "DFS1",
            Self::Two => "DFS2",
            Self::Three => "DFS3",
        }
    }

    fn axis_tag(self) -> u16 {
        match self {
            Self::One => axis::EQ_D1,
            Self::Two => axis::EQ_D2,
            Self::Three => axis::EQ_D3,
        }
    }

    fn axis_name(self) -> &'static str {
        match self {
            Self::One => "EqD1",
            Self::Two => "EqD2",
            Self::Three => "EqD3",
        }
    }
}

fn read(
    dimensions: Dimensions,
    input: &Path,
    parameters: &Parameters,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let interpretation = match parameters.string(COORDINATE_INTERPRETATION) {
        Some(name) => Interpretation::from_name(name)?,
        None => Interpretation::CenterOfCell,
    };
    let options = reader::ReadOptions {
        dimensions,
        srid: parameters.srid(SRID)?,
        interpretation,
        parameters,
    };
    reader::read(input, &options, context, sink)
}

fn create(
    dimensions: Dimensions,
    output: &Path,
    parameters: &Parameters,
) -> FormatResult<Box<dyn WriterSink>> {
    let titles = Titles::from_parameters(parameters)?;
    Ok(Box::new(writer::GridSink::new(output, dimensions, titles)))
}

macro_rules! grid_format {
    ($reader:ident, $reader_spec:ident, $writer:ident, $writer_spec:ident, $dimensions:expr,
     $extension:literal, $reader_doc:literal, $writer_doc:literal, $reader_parameters:expr) => {
        #[doc = concat!("The published description of [`", stringify!($reader), "`].")]
        pub const $reader_spec: ReaderSpec = ReaderSpec {
            name: stringify!($reader),
            description: $reader_doc,
            dataset_format: $extension,
            extensions: &[$extension],
            produces: &[DataKind::Grid],
            parameters: $reader_parameters,
        };

        #[doc = $reader_doc]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $reader;

        impl Reader for $reader {
            fn spec(&self) -> &'static ReaderSpec {
                &$reader_spec
            }

            fn read(
                &self,
                input: &Path,
                parameters: &Parameters,
                context: &ReadContext<'_>,
                sink: &mut dyn DatasetSink,
            ) -> FormatResult<()> {
                read($dimensions, input, parameters, context, sink)
            }
        }

        #[doc = concat!("The published description of [`", stringify!($writer), "`].")]
        pub const $writer_spec: WriterSpec = WriterSpec {
            name: stringify!($writer),
            description: $writer_doc,
            dataset_format: $extension,
            extensions: &[$extension],
            accepts: &[DataKind::Grid],
            parameters: WRITER_PARAMETERS,
        };

        #[doc = $writer_doc]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $writer;

        impl Writer for $writer {
            fn spec(&self) -> &'static WriterSpec {
                &$writer_spec
            }

            fn create(
                &self,
                output: &Path,
                parameters: &Parameters,
            ) -> FormatResult<Box<dyn WriterSink>> {
                create($dimensions, output, parameters)
            }
        }
    };
}

grid_format!(
    Dfs1Reader,
    DFS1_READER,
    Dfs1Writer,
    DFS1_WRITER,
    Dimensions::One,
    ".dfs1",
    "Reads a MIKE DFS1 file (an equidistant line of cells) as a grid of one row",
    "Writes a grid of one row as a MIKE DFS1 file",
    &[ALLOWED_ITEM_NAMES_PARAMETER, SRID_PARAMETER]
);

grid_format!(
    Dfs2Reader,
    DFS2_READER,
    Dfs2Writer,
    DFS2_WRITER,
    Dimensions::Two,
    ".dfs2",
    "Reads a MIKE DFS2 file (an equidistant, possibly rotated 2D grid) as a grid",
    "Writes a grid as a MIKE DFS2 file",
    &[
        ALLOWED_ITEM_NAMES_PARAMETER,
        SRID_PARAMETER,
        COORDINATE_INTERPRETATION_PARAMETER
    ]
);

grid_format!(
    Dfs3Reader,
    DFS3_READER,
    Dfs3Writer,
    DFS3_WRITER,
    Dimensions::Three,
    ".dfs3",
    "Reads a MIKE DFS3 file (an equidistant 3D grid, compressed or not) as a layered grid",
    "Writes a grid as a MIKE DFS3 file (one layer for a 2D grid)",
    &[ALLOWED_ITEM_NAMES_PARAMETER, SRID_PARAMETER]
);
