//! Reading a few values of a DFS file where they lie, instead of streaming whole items.
//!
//! Why: a position query over every step of one item reads one value per step, but streaming
//! reads each selected item-step whole: 160 steps of a 200,000-element DFSU are 160 reads of
//! 800 KB for 160 values. A DFS file has no index, but every step has the same size, so the
//! offset of any value is arithmetic ([`ValueLayout`]); here each wanted value (or a run of
//! nearby ones) is one positioned read of a few bytes. On that file (519 MB, 4 items; benches/
//! position.rs, warm, a 2-core Xeon VM): 39 µs for the 160 values against 45 ms streamed, and
//! 111 µs for the whole query with its CoverageJSON.
//!
//! When: only where the model's items and values are the file's own, one for one, which
//! basin-formats' readers were read to establish:
//! - `DfsuReader` (2D, layered read in full with the "Z coordinate" node item first, point
//!   spectra): every file item in file order, its values as stored. Line and area spectra are
//!   split into items per frequency and direction, so they are streamed.
//! - `Dfs1Reader`, `Dfs2Reader`, `Dfs3Reader`: every file item, values as stored but the rows of
//!   each layer reversed (the file's rows run south to north, the model's north to south).
//!   Compressed files spread their stored values over the grid, so they are streamed.
//! - `Dfs0Reader`: every item, one value per step.
//!
//! The description is checked against the file when a dataset is described (item count,
//! names, data types, values per step), so a reader that changes falls back to streaming
//! rather than reading the wrong values, and a file whose length has changed since is streamed.
//! Values are decoded as the readers decode them (delete values NaN, then the item's nodata
//! NaN, as [`crate::read`]'s streaming sink does); tests/dfs_values.rs checks both paths give the
//! same bits on every DFS sample.

use std::fs::File;
use std::path::Path;

use basin_formats::ReadLimits;
use basin_formats::dfs::container::{DfsFile, ValueLayout};
use basin_formats::dfs::dfsu::geometry::{self, DfsuKind};
use basin_formats::dfs::mapping;
use basin_formats::model::{Item, ItemLocation};

use crate::dataset::Space;
use crate::error::{EdrError, EdrResult};
use crate::read::{Picked, Selection};

/// Wanted values closer than this many bytes are read in one run.
const RUN_GAP_BYTES: u64 = 4096;

/// Where the values of a described DFS file lie, and how model value indices map to the file's.
#[derive(Debug, Clone)]
pub struct DfsValues {
    layout: ValueLayout,
    order: ValueOrder,
}

/// How a model value index maps to the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueOrder {
    /// The same index (meshes, time series).
    AsStored,
    /// A grid whose rows are reversed in each layer.
    RowsReversed { columns: usize, rows: usize },
}

impl DfsValues {
    /// The direct reading of `file`, which the reader named `reader` described as `space` and
    /// `items`; `None` where the model's values are not provably the file's.
    pub(crate) fn describe(
        reader: &str,
        file: &Path,
        space: &Space,
        items: &[Item],
    ) -> Option<Self> {
        let dfs = DfsFile::open(file, &ReadLimits::default()).ok()?;
        if dfs.header.file.compressed != 0 {
            return None;
        }
        let order = match (reader, space) {
            ("DfsuReader", Space::Mesh { .. }) => {
                let block = geometry::fm_block(&dfs.header).ok()?;
                let kind = geometry::kind_of(dfs.header.file.data_type, &block);
                let split = matches!(kind, DfsuKind::LineSpectrum | DfsuKind::AreaSpectrum);
                (!split).then_some(ValueOrder::AsStored)?
            }
            ("Dfs1Reader" | "Dfs2Reader" | "Dfs3Reader", Space::Grid(grid)) => {
                ValueOrder::RowsReversed {
                    columns: grid.columns,
                    rows: grid.rows,
                }
            }
            ("Dfs0Reader", Space::Series) => ValueOrder::AsStored,
            _ => return None,
        };
        let mut infos = dfs.header.items.clone();
        mapping::make_names_unique(&mut infos);
        let layout = dfs.value_layout();
        let same = infos.len() == items.len()
            && layout.items() == items.len()
            && infos
                .iter()
                .zip(items)
                .enumerate()
                .all(|(index, (info, item))| {
                    info.name == item.name
                        && info.data_type == item.data_type
                        && layout.item_len(index) == Some(values_per_step(space, item))
                });
        same.then_some(Self { layout, order })
    }

    /// The file's index of model value `index`.
    fn file_index(&self, index: usize) -> Option<usize> {
        match self.order {
            ValueOrder::AsStored => Some(index),
            ValueOrder::RowsReversed { columns, rows } => {
                let layer_size = columns.checked_mul(rows)?;
                let (layer, within) = (index.checked_div(layer_size)?, index % layer_size);
                let (row, column) = (within / columns, within % columns);
                let stored_row = rows.checked_sub(1)?.checked_sub(row)?;
                layer
                    .checked_mul(layer_size)?
                    .checked_add(stored_row.checked_mul(columns)?)?
                    .checked_add(column)
            }
        }
    }

    /// Reads `selection` from `file`, whose model items are `items`; `None` when the file is
    /// no longer the one described (its length changed), for the caller to stream instead.
    pub(crate) fn pick(
        &self,
        items: &[Item],
        file: &Path,
        selection: &Selection,
    ) -> EdrResult<Option<Picked>> {
        let unreadable = |error: std::io::Error| {
            EdrError::Unreadable(format!("reading {}: {error}", file.display()))
        };
        let opened = File::open(file).map_err(unreadable)?;
        let length = opened.metadata().map_err(unreadable)?.len();
        if Some(length) != self.layout.file_len() {
            return Ok(None);
        }
        let mut picked: Picked = selection
            .targets
            .iter()
            .map(|_| vec![vec![f64::NAN; selection.steps.len()]; selection.items.len()])
            .collect();
        let mut buffer = Vec::new();
        for (slot, &item) in selection.items.iter().enumerate() {
            let Some(described) = items.get(item) else {
                continue;
            };
            let wanted = self.wanted(item, slot, &selection.targets);
            for (step_slot, &step) in selection.steps.iter().enumerate() {
                let mut store = |target: usize, value: f64| {
                    let value = if described.is_nodata(value) {
                        f64::NAN
                    } else {
                        value
                    };
                    if let Some(cell) = picked
                        .get_mut(target)
                        .and_then(|items| items.get_mut(slot))
                        .and_then(|steps| steps.get_mut(step_slot))
                    {
                        *cell = value;
                    }
                };
                self.read_step(&opened, (step, item), &wanted, &mut buffer, &mut store)
                    .map_err(unreadable)?;
            }
        }
        Ok(Some(picked))
    }

    /// The targets that want a value of `item` (at `slot` of the selection), with the file
    /// index of that value, by file index; values outside the item are left out.
    fn wanted(&self, item: usize, slot: usize, targets: &[Vec<Option<usize>>]) -> Vec<Wanted> {
        let count = self.layout.item_len(item).unwrap_or(0);
        let mut wanted: Vec<Wanted> = targets
            .iter()
            .enumerate()
            .filter_map(|(target, indices)| {
                let index = self.file_index((*indices.get(slot)?)?)?;
                (index < count).then_some(Wanted { target, index })
            })
            .collect();
        wanted.sort_unstable_by_key(|wanted| wanted.index);
        wanted
    }

    /// Reads the `wanted` values (sorted by index) of an item at a step, a run of nearby values
    /// at a time into `buffer`, and gives each target its value.
    fn read_step(
        &self,
        file: &File,
        (step, item): (usize, usize),
        wanted: &[Wanted],
        buffer: &mut Vec<u8>,
        store: &mut impl FnMut(usize, f64),
    ) -> std::io::Result<()> {
        let size = self
            .layout
            .data_type(item)
            .map_or(0, |data_type| data_type.size_bytes());
        let mut rest = wanted;
        while let Some(first) = rest.first() {
            let Some(start) = self.layout.offset(step, item, first.index) else {
                return Ok(());
            };
            let run = run_length(rest, size);
            let (run_values, after) = rest.split_at(run);
            rest = after;
            let last = run_values.last().map_or(first.index, |last| last.index);
            let span = (last - first.index + 1) * size;
            buffer.resize(span, 0);
            read_at(file, buffer, start)?;
            for wanted in run_values {
                let at = (wanted.index - first.index) * size;
                let bytes = buffer.get(at..at + size).unwrap_or_default();
                if let Some(value) = self.layout.value(item, bytes) {
                    store(wanted.target, value);
                }
            }
        }
        Ok(())
    }
}

/// A target's wanted value: its place in the selection and the value's index in the file.
#[derive(Debug, Clone, Copy)]
struct Wanted {
    target: usize,
    index: usize,
}

/// How many of `wanted` (sorted by index, the first included) lie close enough together to be
/// read at once.
fn run_length(wanted: &[Wanted], size: usize) -> usize {
    let gap = RUN_GAP_BYTES / (size.max(1) as u64);
    1 + wanted
        .windows(2)
        .take_while(|pair| match pair {
            [before, after] => ((after.index - before.index) as u64) <= gap,
            _ => false,
        })
        .count()
}

/// Values of `item` per step as the model describes it: one per node, element or cell, one for
/// a time series.
fn values_per_step(space: &Space, item: &Item) -> usize {
    match space {
        Space::Mesh { geometry, .. } => match item.location {
            ItemLocation::Node => geometry.nodes.len(),
            _ => geometry.elements.len(),
        },
        Space::Grid(grid) => grid.columns * grid.rows * grid.layers(),
        Space::Series => 1,
    }
}

#[cfg(unix)]
fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

#[cfg(not(unix))]
fn read_at(mut file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_rows_are_reversed_within_each_layer() {
        let values = DfsValues {
            layout: empty_layout(),
            order: ValueOrder::RowsReversed {
                columns: 3,
                rows: 2,
            },
        };
        // Model row 0 (north) is the file's row 1; layer 1 starts at 6.
        let mapped: Vec<Option<usize>> = (0..13).map(|index| values.file_index(index)).collect();
        let expected = [3, 4, 5, 0, 1, 2, 9, 10, 11, 6, 7, 8, 15];
        assert_eq!(mapped, expected.map(Some));
    }

    #[test]
    fn an_empty_grid_maps_nothing() {
        let values = DfsValues {
            layout: empty_layout(),
            order: ValueOrder::RowsReversed {
                columns: 0,
                rows: 2,
            },
        };
        assert_eq!(values.file_index(0), None);
    }

    #[test]
    fn nearby_values_are_read_in_one_run_and_far_ones_apart() {
        let wanted = |indices: &[usize]| -> Vec<Wanted> {
            indices
                .iter()
                .map(|&index| Wanted { target: 0, index })
                .collect()
        };
        assert_eq!(run_length(&wanted(&[5]), 4), 1);
        assert_eq!(run_length(&wanted(&[5, 6, 1029, 5000]), 4), 3);
        assert_eq!(run_length(&wanted(&[5, 1030]), 4), 1);
        assert_eq!(run_length(&wanted(&[5, 5, 517]), 8), 3);
    }

    fn empty_layout() -> ValueLayout {
        let header = basin_formats::dfs::container::DfsHeader::default();
        let mut out = std::io::Cursor::new(Vec::new());
        let written = basin_formats::dfs::container::DfsWriter::new(
            &mut out,
            Path::new("empty.dfs0"),
            header,
        )
        .and_then(basin_formats::dfs::container::DfsWriter::finish);
        assert!(written.is_ok(), "{written:?}");
        let bytes = out.into_inner();
        let length = bytes.len() as u64;
        let file =
            DfsFile::from_reader(std::io::Cursor::new(bytes), length, &ReadLimits::default());
        match file {
            Ok(file) => file.value_layout(),
            Err(error) => panic!("{error}"),
        }
    }
}
