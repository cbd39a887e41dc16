#![no_main]

//! WKT from .prj files and MIKE headers is user input: resolving and building a projection
//! from any text must fail cleanly, never panic.

use basin_formats::crs::{Crs, CrsTransform, Projection, resolve_epsg};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let crs = Crs::Wkt(String::from_utf8_lossy(data).into_owned());
    let _ = resolve_epsg(&crs);
    if let (Ok(projection), Ok(wgs84)) = (Projection::of(&crs), Projection::epsg(4326)) {
        let transform = CrsTransform::new(projection, wgs84);
        let _ = transform.apply(500_000.0, 6_000_000.0);
        let _ = transform.inverse().apply(9.0, 55.0);
    }
});
