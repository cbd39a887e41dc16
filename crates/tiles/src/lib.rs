#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod field;
pub mod tms;

pub use field::Field;
pub use tms::{Bounds, TileMatrix, TileMatrixSet};
