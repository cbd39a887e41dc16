//! Reading the values a query asks for: for each of a few positions, the selected items at
//! the selected steps, and nothing else kept. The catalogue's reader streams the file; it is
//! told which items and steps are wanted, so a DFS reader seeks past the rest. DFS files whose
//! values the model keeps as stored are read where the values lie instead (`dfs_values.rs`),
//! a few bytes per value rather than whole item-steps.

use std::path::Path;

use basin_formats::model::{DatasetSink, Frame, Header, Item};
use basin_formats::{Catalogue, FormatResult};

use crate::dataset::{Dataset, read_with};
use crate::error::EdrResult;

/// What to read: `items` (indices into the dataset's items) at `steps` (ascending), at each
/// target; a target has, for each of `items`, the index of its value within that item's step
/// (`None` where the target has no value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The items, in the order answers list them.
    pub items: Vec<usize>,
    /// The steps, ascending.
    pub steps: Vec<usize>,
    /// Per target, per selected item: the value's index within the item's step.
    pub targets: Vec<Vec<Option<usize>>>,
}

/// The values read: `values[target][item][step]`, NaN where there is none (outside the data,
/// or a delete value).
pub type Picked = Vec<Vec<Vec<f64>>>;

/// Reads `selection` from `file`, the content `dataset` describes: straight from where the
/// values lie when the dataset allows it ([`pick_direct`]), else by streaming the file through
/// the catalogue's reader ([`pick_streaming`]). Both give the same values.
pub fn pick(
    catalogue: &Catalogue,
    dataset: &Dataset,
    file: &Path,
    selection: &Selection,
) -> EdrResult<Picked> {
    match pick_direct(dataset, file, selection)? {
        Some(picked) => Ok(picked),
        None => pick_streaming(catalogue, dataset, file, selection),
    }
}

/// Reads `selection` at the offsets of its values, a few bytes per value (DFS files whose model
/// values are the file's own; see `dfs_values.rs`); `None` for other datasets, or when the file
/// is no longer the one described.
pub fn pick_direct(
    dataset: &Dataset,
    file: &Path,
    selection: &Selection,
) -> EdrResult<Option<Picked>> {
    match &dataset.dfs_values {
        Some(values) => values.pick(&dataset.items, file, selection),
        None => Ok(None),
    }
}

/// Reads `selection` by streaming `file` through the catalogue's reader, which is told the
/// items and steps wanted and skips the rest: the reference reading, for every format.
pub fn pick_streaming(
    catalogue: &Catalogue,
    dataset: &Dataset,
    file: &Path,
    selection: &Selection,
) -> EdrResult<Picked> {
    let total_steps = dataset.time.steps();
    let mut step_slots = vec![None; total_steps];
    for (slot, &step) in selection.steps.iter().enumerate() {
        if let Some(entry) = step_slots.get_mut(step) {
            *entry = Some(slot);
        }
    }
    let mut item_slots = vec![None; dataset.items.len()];
    for (slot, &item) in selection.items.iter().enumerate() {
        if let Some(entry) = item_slots.get_mut(item) {
            *entry = Some(slot);
        }
    }
    let mut sink = PickSink {
        items: &dataset.items,
        step_slots,
        item_slots,
        targets: &selection.targets,
        values: selection
            .targets
            .iter()
            .map(|_| {
                selection
                    .items
                    .iter()
                    .map(|_| vec![f64::NAN; selection.steps.len()])
                    .collect()
            })
            .collect(),
    };
    if !selection.steps.is_empty() && !selection.items.is_empty() {
        read_with(catalogue, dataset.reader, file, &mut sink)?;
    }
    Ok(sink.values)
}

/// Keeps the wanted values of each frame.
struct PickSink<'a> {
    items: &'a [Item],
    /// Per step of the file: its place in the selection.
    step_slots: Vec<Option<usize>>,
    /// Per item of the file: its place in the selection.
    item_slots: Vec<Option<usize>>,
    targets: &'a [Vec<Option<usize>>],
    values: Picked,
}

impl DatasetSink for PickSink<'_> {
    fn begin(&mut self, _header: &Header) -> FormatResult<()> {
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let (Some(Some(step)), Some(Some(item))) = (
            self.step_slots.get(frame.step),
            self.item_slots.get(frame.item),
        ) else {
            return Ok(());
        };
        let (step, item) = (*step, *item);
        let start = frame.offset;
        let end = start + frame.values.len();
        let described = self.items.get(frame.item);
        for (target, indices) in self.targets.iter().enumerate() {
            let Some(Some(index)) = indices.get(item) else {
                continue;
            };
            if !(start..end).contains(index) {
                continue;
            }
            let Some(value) = frame.values.get_f64(index - start) else {
                continue;
            };
            let value = if described.is_some_and(|described| described.is_nodata(value)) {
                f64::NAN
            } else {
                value
            };
            if let Some(slot) = self
                .values
                .get_mut(target)
                .and_then(|items| items.get_mut(item))
                .and_then(|steps| steps.get_mut(step))
            {
                *slot = value;
            }
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        matches!(self.step_slots.get(step), Some(Some(_)))
            && matches!(self.item_slots.get(item), Some(Some(_)))
    }
}
