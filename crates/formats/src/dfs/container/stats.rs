//! The statistics a DFS writer keeps while data streams in, to patch into the header on close:
//! every item's max, min and number of deleted values, and with statistics type 2 or 3 nine
//! numbers per element over time (max, min, sum, sum of squares, sum of products of
//! consecutive valid values, value at the latest step, valid count, consecutive valid pairs, deleted
//! count), exactly as the reference library computes them.

use crate::model::{DataType, Values};

use super::DfsHeader;

/// What the reference library writes for max and min when nothing valid was written.
pub(crate) const NO_VALUE: f64 = -1e-255;

/// Running statistics of one item.
#[derive(Debug, Clone)]
pub struct ItemStatistics {
    max: f64,
    min: f64,
    any_valid: bool,
    deleted: u64,
    /// Nine numbers per element, when the file keeps them.
    per_element: Option<Vec<f64>>,
    /// Each element's value at the previous step, NaN when it was deleted or there was none.
    previous: Vec<f64>,
    /// Integer types the reference library keeps no range for.
    untracked: bool,
}

impl ItemStatistics {
    /// Statistics for an item of `data_type` with `elements` values per step; `per_element`
    /// when the file's statistics type is 2 or more.
    pub fn new(data_type: DataType, elements: usize, per_element: bool) -> Self {
        let per_element = per_element.then(|| {
            let mut numbers = vec![0.0; elements * 9];
            for element in numbers.chunks_exact_mut(9) {
                if let [max, min, _, _, _, last, ..] = element {
                    *max = NO_VALUE;
                    *min = NO_VALUE;
                    *last = NO_VALUE;
                }
            }
            numbers
        });
        Self {
            max: NO_VALUE,
            min: NO_VALUE,
            any_valid: false,
            deleted: 0,
            previous: if per_element.is_some() {
                vec![f64::NAN; elements]
            } else {
                Vec::new()
            },
            per_element,
            untracked: matches!(data_type, DataType::I16 | DataType::U16),
        }
    }

    /// Takes in one step's values of the item.
    pub fn add(&mut self, header: &DfsHeader, values: &Values) {
        let data_type = values.data_type();
        if self.untracked {
            self.deleted += values.len() as u64;
            return;
        }
        for index in 0..values.len() {
            let Some(value) = values.get_f64(index) else {
                continue;
            };
            let deleted = value.is_nan() || header.is_delete_value(data_type, value);
            if deleted {
                self.deleted += 1;
            } else if self.any_valid {
                self.max = self.max.max(value);
                self.min = self.min.min(value);
            } else {
                self.max = value;
                self.min = value;
                self.any_valid = true;
            }
            let Some(numbers) = self.per_element.as_mut() else {
                continue;
            };
            let start = index * 9;
            let (Some(element), Some(previous)) = (
                numbers.get_mut(start..start + 9),
                self.previous.get_mut(index),
            ) else {
                continue;
            };
            let [
                max,
                min,
                sum,
                squares,
                products,
                last,
                valid,
                pairs,
                dropped,
            ] = element
            else {
                continue;
            };
            if deleted {
                // The "last" number is the value at the latest step, unset when it was deleted.
                *dropped += 1.0;
                *previous = f64::NAN;
                *last = NO_VALUE;
                continue;
            }
            if *valid == 0.0 {
                *max = value;
                *min = value;
            } else {
                *max = max.max(value);
                *min = min.min(value);
            }
            *sum += value;
            *squares += value * value;
            if !previous.is_nan() {
                *products += *previous * value;
                *pairs += 1.0;
            }
            *last = value;
            *valid += 1.0;
            *previous = value;
        }
    }

    /// `[max, min, number deleted]` for the item definition.
    pub fn range(&self) -> [f64; 3] {
        [self.max, self.min, self.deleted as f64]
    }

    /// The per-element statistics block, when kept.
    pub fn per_element(&self) -> Option<&[f64]> {
        self.per_element.as_deref()
    }
}
