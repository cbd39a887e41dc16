//! The item filter: keeps the selected items of grids, meshes and time series, or the
//! selected attribute fields of feature collections.
//!
//! The selection is resolved against the header (names and positions are only known then),
//! the filtered header goes on, and each frame of a kept item goes on with the item's new
//! index, so the items downstream are numbered 0.. without gaps, in the data's order. Frames
//! of dropped items are not passed on; nothing is buffered.

use super::{ITEM_FILTER_TRANSFORMATION, ItemSelection};
use crate::error::{FormatError, FormatResult};
use crate::model::{
    DatasetSink, Feature, FeatureSchema, Frame, GridHeader, Header, MeshHeader, PointChunk,
    TimeSeriesHeader,
};

/// The most names an error message lists, so that a dataset with thousands of items does not
/// produce a message of thousands of names.
const NAMES_LISTED_MAX: usize = 20;

/// Fails when the selection is empty: it would keep nothing.
pub(super) fn validate(selection: &ItemSelection) -> FormatResult<()> {
    if selection.indices.is_empty() && selection.names.is_empty() {
        return Err(error(
            "the item filter selects no item; give item indices or names",
        ));
    }
    Ok(())
}

fn error(message: impl Into<String>) -> FormatError {
    FormatError::transformation(ITEM_FILTER_TRANSFORMATION, message)
}

/// Passes on the selected items only.
pub(super) struct ItemFilterSink<'a> {
    inner: Box<dyn DatasetSink + 'a>,
    selection: ItemSelection,
    /// For each item (or field) of the input, its index in the output, or `None` when it is
    /// dropped. Empty before `begin`.
    output_index: Vec<Option<usize>>,
}

impl<'a> ItemFilterSink<'a> {
    pub(super) fn new(inner: Box<dyn DatasetSink + 'a>, selection: ItemSelection) -> Self {
        Self {
            inner,
            selection,
            output_index: Vec::new(),
        }
    }

    /// Resolves the selection against `names` (what the data calls its items or fields) and
    /// returns a copy of `all` with only the kept ones.
    fn keep<T: Clone>(&mut self, what: &str, names: &[&str], all: &[T]) -> FormatResult<Vec<T>> {
        let kept = resolve(&self.selection, what, names)?;
        let mut next = 0_usize;
        self.output_index = kept
            .iter()
            .map(|&keep| {
                keep.then(|| {
                    next = next.saturating_add(1);
                    next.saturating_sub(1)
                })
            })
            .collect();
        Ok(all
            .iter()
            .zip(&kept)
            .filter(|(_, keep)| **keep)
            .map(|(entry, _)| entry.clone())
            .collect())
    }
}

impl DatasetSink for ItemFilterSink<'_> {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let header = match header {
            Header::Grid(grid) => {
                let names: Vec<&str> = grid.items.iter().map(|item| item.name.as_str()).collect();
                Header::Grid(GridHeader {
                    items: self.keep("item", &names, &grid.items)?,
                    ..grid.clone()
                })
            }
            Header::Mesh(mesh) => {
                let names: Vec<&str> = mesh.items.iter().map(|item| item.name.as_str()).collect();
                Header::Mesh(MeshHeader {
                    items: self.keep("item", &names, &mesh.items)?,
                    geometry: std::sync::Arc::clone(&mesh.geometry),
                    time: mesh.time.clone(),
                })
            }
            Header::TimeSeries(series) => {
                let names: Vec<&str> = series.items.iter().map(|item| item.name.as_str()).collect();
                Header::TimeSeries(TimeSeriesHeader {
                    items: self.keep("item", &names, &series.items)?,
                    ..series.clone()
                })
            }
            Header::Features(schema) => {
                let names: Vec<&str> = schema
                    .fields
                    .iter()
                    .map(|field| field.name.as_str())
                    .collect();
                Header::Features(FeatureSchema {
                    fields: self.keep("field", &names, &schema.fields)?,
                    ..schema.clone()
                })
            }
            Header::Points(_) => {
                return Err(error("the item filter does not apply to point sets"));
            }
        };
        self.inner.begin(&header)
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        match self.output_index.get(item) {
            Some(Some(item)) => self.inner.wants(step, *item),
            Some(None) => false,
            None => true,
        }
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        match self.output_index.get(frame.item) {
            Some(Some(item)) => self.inner.frame(Frame {
                item: *item,
                ..frame
            }),
            Some(None) => Ok(()),
            None => Err(error(format!(
                "values of item {} arrived; the data has {} items",
                frame.item,
                self.output_index.len()
            ))),
        }
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        let values = feature
            .values
            .iter()
            .zip(&self.output_index)
            .filter(|(_, index)| index.is_some())
            .map(|(value, _)| value.clone())
            .collect();
        self.inner.feature(&Feature {
            geometry: feature.geometry.clone(),
            values,
        })
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        self.inner.points(chunk)
    }

    fn end(&mut self) -> FormatResult<()> {
        self.inner.end()
    }
}

/// Which of `names` the selection keeps. `what` is `item` or `field`, for messages.
fn resolve(selection: &ItemSelection, what: &str, names: &[&str]) -> FormatResult<Vec<bool>> {
    let mut kept = vec![false; names.len()];
    for &index in &selection.indices {
        let Some(keep) = kept.get_mut(index) else {
            return Err(error(format!(
                "{what} index {index} is out of range: the data has {} {what}s{}",
                names.len(),
                match names.len() {
                    0 => String::new(),
                    count => format!(" (indices 0 to {})", count.saturating_sub(1)),
                }
            )));
        };
        *keep = true;
    }
    for name in &selection.names {
        let position = position_of(name, what, names)?;
        if let Some(keep) = kept.get_mut(position) {
            *keep = true;
        }
    }
    if !kept.contains(&true) {
        return Err(error(format!("the item filter selects no {what}")));
    }
    Ok(kept)
}

/// The position of the item named `name`: exactly, or else the one that matches ignoring
/// ASCII case.
fn position_of(name: &str, what: &str, names: &[&str]) -> FormatResult<usize> {
    if let Some(position) = names.iter().position(|candidate| *candidate == name) {
        return Ok(position);
    }
    let matches: Vec<usize> = names
        .iter()
        .enumerate()
        .filter(|(_, candidate)| candidate.eq_ignore_ascii_case(name))
        .map(|(position, _)| position)
        .collect();
    match matches.as_slice() {
        [position] => Ok(*position),
        [] => Err(error(format!(
            "no {what} named {name:?}; the {what}s are {}",
            listing(names)
        ))),
        several => Err(error(format!(
            "{what} name {name:?} matches {} {what}s ignoring case ({}); give the exact name",
            several.len(),
            several
                .iter()
                .filter_map(|position| names.get(*position))
                .map(|name| format!("{name:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Names for a message, quoted, at most [`NAMES_LISTED_MAX`] of them.
fn listing(names: &[&str]) -> String {
    if names.is_empty() {
        return "none".to_owned();
    }
    let mut text = names
        .iter()
        .take(NAMES_LISTED_MAX)
        .map(|name| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMES_LISTED_MAX {
        text.push_str(&format!(
            " and {} more",
            names.len().saturating_sub(NAMES_LISTED_MAX)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(indices: &[usize], names: &[&str]) -> ItemSelection {
        ItemSelection {
            indices: indices.to_vec(),
            names: names.iter().map(|name| (*name).to_owned()).collect(),
        }
    }

    #[test]
    fn indices_and_names_select_their_union() {
        let names = ["H", "U", "V", "P"];
        let kept = resolve(&selection(&[0, 2], &["U", "v"]), "item", &names).unwrap();
        assert_eq!(kept, vec![true, true, true, false]);
    }

    #[test]
    fn exact_names_win_over_case_insensitive_ones() {
        let names = ["h", "H"];
        assert_eq!(position_of("H", "item", &names).unwrap(), 1);
        let error = position_of("x", "item", &names).unwrap_err().to_string();
        assert!(error.contains("no item named \"x\""), "{error}");
        let ambiguous = ["ab", "AB"];
        let error = position_of("Ab", "item", &ambiguous)
            .unwrap_err()
            .to_string();
        assert!(error.contains("matches 2 items"), "{error}");
    }

    #[test]
    fn out_of_range_indices_name_the_index_and_the_range() {
        let error = resolve(&selection(&[3], &[]), "field", &["a", "b"])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("field index 3 is out of range: the data has 2 fields (indices 0 to 1)"),
            "{error}"
        );
    }

    #[test]
    fn long_listings_are_cut() {
        let names: Vec<String> = (0..30).map(|index| format!("item{index}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let text = listing(&names);
        assert!(text.ends_with("and 10 more"), "{text}");
    }
}
