#![no_main]

//! The Dfs0Reader through the shared harness. The reader is looked up by name so that this target
//! builds before it exists; until then every input is skipped.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    basin_formats_fuzz::read_with("Dfs0Reader", "dfs0", &[], data);
});
