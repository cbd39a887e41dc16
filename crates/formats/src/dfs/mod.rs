//! MIKE DFS files (DFS0 time series, DFS1/DFS2/DFS3 grids, DFSU flexible meshes), read and
//! written in pure Rust.
//!
//! The reference implementation is a closed native library for x86-64 only; this is the first
//! open one, and runs wherever Rust builds. The byte layout was worked out empirically and
//! verified bit for bit against the reference library
//! (docs/formats.md#dfs-files-dfs0-dfs1-dfs2-dfs3-dfsu). [`container`] is the generic layer all
//! five share; the format modules map it to the model (grids, meshes, time series) and back.

pub mod container;
pub mod dfs0;
pub mod dfsu;
pub mod eum;
#[rustfmt::skip]
mod eum_tables;
pub mod grid;
pub mod mapping;
