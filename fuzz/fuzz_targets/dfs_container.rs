#![no_main]

//! The generic DFS container on any bytes: opening must fail cleanly or give a header whose
//! every item of every step reads (or fails) without a panic or an allocation a header count
//! drove past the limits.

use std::io::Cursor;

use basin_formats::ReadLimits;
use basin_formats::dfs::container::DfsFile;
use basin_formats::model::{DataType, Values};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let length = data.len() as u64;
    let Ok(mut file) = DfsFile::from_reader(Cursor::new(data), length, &ReadLimits::default())
    else {
        return;
    };
    let _ = file.step_times();
    let mut values = Values::with_capacity(DataType::F32, 0);
    for step in 0..file.steps() {
        for item in 0..file.header.items.len() {
            let _ = file.read_values(step, item, &mut values);
        }
    }
});
