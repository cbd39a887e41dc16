#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod adapt;
pub mod append;
pub mod catalogue;
pub mod crs;
pub mod error;
pub mod inspect;
pub mod limits;
pub mod model;
pub mod parameters;
pub mod progress;
pub mod registry;
mod series;
mod side_files;
pub mod summary;
mod text;
pub mod transform;
mod triangulate;
pub mod wkt;

pub mod ascii_grid;
pub mod csv;
pub mod dfs;
pub mod file_copy;
pub mod geo_json;
pub mod geotiff;
pub mod mesh_file;
pub mod shp;
pub mod vtu;
pub mod xyz;

pub use catalogue::{
    Append, Catalogue, Conversion, ReadContext, Reader, Writer, WriterSink, Written,
};
pub use error::{FormatError, FormatResult};
pub use limits::ReadLimits;
pub use parameters::{ParameterSpec, ParameterType, Parameters};
pub use progress::{NoProgress, Progress};
pub use summary::DataSummary;
pub use transform::{ItemSelection, TemporalFilter, Transformation};
