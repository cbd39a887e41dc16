#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod encode;
pub mod field;
pub mod mesh;
pub mod ramp;
pub mod raster;
pub mod render;
pub mod tms;
pub mod vector;
pub mod wmts;

pub use encode::OutputType;
pub use field::Field;
pub use mesh::{MeshError, MeshField, MeshIndex, Shading, ValueLocation};
pub use ramp::{OutOfRange, Ramp, Rgb};
pub use raster::{Aggregation, Raster};
pub use render::{Reprojection, TileValues};
pub use tms::{Bounds, TileMatrix, TileMatrixSet};
