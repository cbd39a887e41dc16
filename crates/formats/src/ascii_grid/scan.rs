//! The first pass over the values: validates them and finds the narrowest type that keeps
//! every value as written (see [`Width`]).
//!
//! The pass is built to be cheap: while every value so far is an integer it only splits tokens
//! into digits; after that it converts each value with the fast path of [`super::number`] and
//! decides Float32 from the digits where it can (six significant digits or fewer always fit;
//! seven to nine are compared with the float32's neighbours; a float32 written out in full, as
//! GDAL writes them, is recognised in integer arithmetic), so that the general parser and
//! printing are left for the rare values those cannot decide.
//!
//! Values equal to the nodata value do not count: a nodata value such as `-3.402823466e+38`
//! stands for "no value" and only has to match itself in the chosen type, which
//! [`crate::model::Item::is_nodata`] does in float32. Once a value needs Float64 nothing can
//! change the answer, so the pass stops there and the second pass finds any later error.

use std::io::Read;

use super::FORMAT;
use super::header::GridFileHeader;
use super::number::{Decimal, Width, decimal_number, special_number};
use super::tokens::{Fault, Step, Tokens};
use crate::error::{FormatError, FormatResult};

/// The type of the values, after reading them all (or up to the first that needs Float64).
pub(crate) fn data_width<R: Read>(
    tokens: &mut Tokens<'_, R>,
    header: &GridFileHeader,
) -> FormatResult<Width> {
    let cells = header.cells;
    let nodata = header.nodata.map(|nodata| nodata.value);
    let mut width = header.nodata.map_or(Width::Int32, |nodata| nodata.width);
    let mut count: u64 = 0;
    tokens.for_each(|token| {
        if count >= cells {
            return Err(Fault::Token(too_many(cells)));
        }
        count += 1;
        let number = match Decimal::scan(token) {
            Some(decimal) => {
                if width == Width::Int32 && decimal.int32().is_some() {
                    return Ok(Step::Continue);
                }
                if decimal.digits > 15 && decimal.is_float32_written_out() {
                    width = width.max(Width::Float32);
                    return Ok(Step::Continue);
                }
                decimal_number(decimal, token)
            }
            None => special_number(token),
        }
        .map_err(|error| Fault::Token(error.message(token)))?;
        if nodata.is_some_and(|nodata| same(nodata, number.value)) {
            return Ok(Step::Continue);
        }
        width = width.max(number.width());
        if width == Width::Float64 {
            return Ok(Step::Stop);
        }
        Ok(Step::Continue)
    })?;
    if width != Width::Float64 && count < cells {
        return Err(too_few(tokens.last_token_line(), count, cells));
    }
    Ok(width)
}

/// True for equal values, and for two NaNs.
pub(crate) fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// The message for a value past the last cell.
pub(crate) fn too_many(cells: u64) -> String {
    format!("more values than ncols x nrows = {cells}")
}

/// The error for an input that ends after `count` of `cells` values.
pub(crate) fn too_few(line: u64, count: u64, cells: u64) -> FormatError {
    FormatError::invalid(
        FORMAT,
        format!("line {line}"),
        format!("the file ends after {count} of ncols x nrows = {cells} values (truncated?)"),
    )
}
