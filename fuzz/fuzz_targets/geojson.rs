#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    basin_formats_fuzz::read(
        &basin_formats::geo_json::GeoJsonReader,
        "geojson",
        &[],
        data,
    );
});
