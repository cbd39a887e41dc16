//! What the time series writers (DFS0, CSV) share: a time series arrives as one frame of one
//! value per item and step, in order, and a writer that streams rows must know which frame is
//! due, refuse one that is not, and tell a complete step from an incomplete one.

use crate::error::{FormatError, FormatResult};
use crate::model::{Frame, Item};

/// The step and item the next frame of a time series must be.
pub(crate) struct SeriesCursor {
    /// The writer's name, for messages.
    writer: &'static str,
    /// The format's name, for messages.
    format: &'static str,
    items: Vec<Item>,
    step: usize,
    item: usize,
}

impl SeriesCursor {
    /// A cursor at step 0, item 0 of a series of `items`.
    pub(crate) fn new(writer: &'static str, format: &'static str, items: &[Item]) -> Self {
        Self {
            writer,
            format,
            items: items.to_vec(),
            step: 0,
            item: 0,
        }
    }

    /// The items.
    pub(crate) fn items(&self) -> &[Item] {
        &self.items
    }

    /// The step of the next frame.
    pub(crate) fn step(&self) -> usize {
        self.step
    }

    /// True when the next frame starts a step.
    pub(crate) fn at_step_start(&self) -> bool {
        self.item == 0
    }

    /// The item of `frame`, when it is the frame due and holds one value.
    pub(crate) fn check(&self, frame: &Frame<'_>) -> FormatResult<&Item> {
        if (frame.step, frame.item, frame.offset) != (self.step, self.item, 0) {
            return Err(FormatError::Catalogue(format!(
                "{}: step {} item {} arrived where step {} item {} was due",
                self.writer, frame.step, frame.item, self.step, self.item
            )));
        }
        let item = self.items.get(frame.item).ok_or_else(|| {
            FormatError::Catalogue(format!("{}: no item {}", self.writer, frame.item))
        })?;
        if frame.values.len() != 1 {
            return Err(FormatError::Incompatible {
                data: "time series",
                format: self.format,
                message: format!(
                    "item {:?} has {} values at step {}; a time series has one per item and step",
                    item.name,
                    frame.values.len(),
                    frame.step
                ),
            });
        }
        Ok(item)
    }

    /// Moves past the item just written; true when that completed its step.
    pub(crate) fn advance(&mut self) -> bool {
        self.item += 1;
        if self.item < self.items.len() {
            return false;
        }
        self.item = 0;
        self.step += 1;
        true
    }

    /// Moves past a step of a series without items (no frames come for those).
    pub(crate) fn skip_step(&mut self) {
        self.step += 1;
    }

    /// Fails when the series ended in the middle of a step.
    pub(crate) fn check_complete(&self) -> FormatResult<()> {
        if self.item == 0 {
            return Ok(());
        }
        Err(FormatError::Catalogue(format!(
            "{}: step {} ended after {} of {} items",
            self.writer,
            self.step,
            self.item,
            self.items.len()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DataType, Values};

    #[test]
    fn frames_must_come_in_order_and_steps_complete() {
        let items = [Item::new("a", DataType::F32), Item::new("b", DataType::F32)];
        let mut cursor = SeriesCursor::new("test writer", "TEST", &items);
        let one = Values::F32(vec![1.0]);
        let frame = |step, item| Frame {
            step,
            item,
            offset: 0,
            values: &one,
        };
        assert_eq!(cursor.check(&frame(0, 0)).unwrap().name, "a");
        assert!(!cursor.advance());
        let error = cursor.check(&frame(0, 0)).unwrap_err().to_string();
        assert!(error.contains("step 0 item 1 was due"), "{error}");
        assert!(cursor.check_complete().is_err());
        assert!(cursor.advance());
        assert!(cursor.at_step_start() && cursor.step() == 1);
        cursor.check_complete().unwrap();
    }
}
