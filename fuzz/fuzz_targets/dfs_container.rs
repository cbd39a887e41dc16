#![no_main]

//! The generic DFS container on any bytes: opening must fail cleanly or give a header whose
//! every item of every step reads (or fails) without a panic or an allocation a header count
//! drove past the limits. A file that reads completely is also written again (as the
//! byte-identical rewrite test does), which runs the writer and its statistics on hostile
//! headers and values; only files whose items hold as many values per step as their axes
//! span are rewritten, since the writer sizes its per-element statistics by the axes, which a
//! caller builds from data it holds rather than from untrusted bytes.

use std::io::Cursor;
use std::path::Path;

use basin_formats::ReadLimits;
use basin_formats::dfs::container::{DfsFile, DfsWriter};
use basin_formats::model::{DataType, Values};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let length = data.len() as u64;
    let Ok(mut file) = DfsFile::from_reader(Cursor::new(data), length, &ReadLimits::default())
    else {
        return;
    };
    let times = file.step_times();
    let mut steps = Vec::new();
    for step in 0..file.steps() {
        let mut items = Vec::new();
        for item in 0..file.header.items.len() {
            let mut values = Values::with_capacity(DataType::F32, 0);
            if file.read_values(step, item, &mut values).is_ok() {
                items.push(values);
            }
        }
        steps.push(items);
    }
    let consistent = file.header.items.iter().enumerate().all(|(index, item)| {
        item.axis.size() == file.item_len(index) && file.header.file.compressed == 0
    });
    let Ok(times) = times else {
        return;
    };
    let complete = steps
        .iter()
        .all(|items| items.len() == file.header.items.len());
    if !(consistent && complete) {
        return;
    }
    let equidistant = file.header.file.time.kind.is_equidistant();
    let Ok(mut writer) =
        DfsWriter::new(Cursor::new(Vec::new()), Path::new("fuzz.dfs"), file.header.clone())
    else {
        return;
    };
    for (step, items) in steps.iter().enumerate() {
        let time = if equidistant { None } else { times.get(step).copied() };
        if writer.start_step(time).is_err() {
            return;
        }
        for values in items {
            if writer.write_item(values).is_err() {
                return;
            }
        }
    }
    let _ = writer.finish();
});
