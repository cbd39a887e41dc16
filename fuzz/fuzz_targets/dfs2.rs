#![no_main]

//! The Dfs2Reader through the shared harness. The reader is looked up by name so that this target
//! builds before it exists; until then every input is skipped.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    basin_formats_fuzz::read_with("Dfs2Reader", "dfs2", &[], data);
});
