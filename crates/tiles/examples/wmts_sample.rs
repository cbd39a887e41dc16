//! Writes sample WMTS capabilities documents and a manifest of their inputs, for
//! `tests/python/test_wmts_capabilities_library.py`, which reads the documents with OWSLib and
//! GDAL's WMTS driver and compares what those clients see with the manifest.
//!
//! Usage: `cargo run -p basin-tiles --example wmts_sample -- <output directory>`
//!
//! Documents: a WebMercatorQuad layer; a layer in a UTM zone (easting first) and one in
//! Gauss-Krüger zone 3 (northing first); an EPSG:4326 layer (latitude first); a layer with
//! time; a layer readable in two matrix sets; hostile titles and identifiers.

use std::error::Error;
use std::path::{Path, PathBuf};

use basin_tiles::tms::{Bounds, METRES_PER_DEGREE, MatrixSetCrs, TileMatrixSet};
use basin_tiles::wmts::{
    self, Capabilities, Layer, LayerMatrixSet, ResourceUrl, TimeDimension, capabilities_xml,
};
use serde_json::{Value, json};

/// The server's URLs of a dataset `abc`.
const KVP_URL: &str = "https://tiles.example.org/api/tiles/dataset/abc/wmts?";
const TILES_BASE: &str = "https://tiles.example.org/api/tiles/dataset/abc/scheme";
const RESTFUL_CAPABILITIES: &str =
    "https://tiles.example.org/api/tiles/dataset/abc/wmts100/1.0.0/WMTSCapabilities.xml";

fn main() -> Result<(), Box<dyn Error>> {
    let directory = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: wmts_sample <output directory>")?;
    std::fs::create_dir_all(&directory)?;
    let samples = [
        ("mercator", mercator()?),
        ("utm", utm()?),
        ("gauss_kruger", gauss_kruger()?),
        ("wgs84", wgs84()?),
        ("time", time()?),
        ("two_sets", two_sets()?),
        ("hostile", hostile()?),
    ];
    let mut documents = Vec::new();
    for (name, capabilities) in &samples {
        let file = format!("{name}.xml");
        std::fs::write(directory.join(&file), capabilities_xml(capabilities)?)?;
        documents.push(manifest(&file, capabilities));
    }
    write_json(
        &directory.join("manifest.json"),
        &json!({ "documents": documents }),
    )
}

fn write_json(path: &Path, value: &Value) -> Result<(), Box<dyn Error>> {
    std::fs::write(path, serde_json::to_string_pretty(value)?)?;
    Ok(())
}

fn projected(epsg: u32) -> MatrixSetCrs {
    MatrixSetCrs {
        epsg: Some(epsg),
        geographic: false,
        metres_per_unit: 1.0,
    }
}

fn geographic(epsg: u32) -> MatrixSetCrs {
    MatrixSetCrs {
        epsg: Some(epsg),
        geographic: true,
        metres_per_unit: METRES_PER_DEGREE,
    }
}

fn bounds(min_x: f64, min_y: f64, max_x: f64, max_y: f64) -> Bounds {
    Bounds {
        min_x,
        min_y,
        max_x,
        max_y,
    }
}

/// A layer named `identifier` in one matrix set, with the template of the scheme endpoint.
fn layer(identifier: &str, wgs84_bounds: Bounds, set: &str, data: Bounds) -> Layer {
    Layer {
        identifier: identifier.to_owned(),
        title: format!("Water level ({identifier})"),
        wgs84_bounds: Some(wgs84_bounds),
        styles: vec!["default".to_owned()],
        formats: vec!["image/png".to_owned()],
        resource_urls: vec![ResourceUrl {
            format: "image/png".to_owned(),
            template: format!(
                "{TILES_BASE}/{{TileMatrixSet}}/{{TileMatrix}}/{{TileRow}}/{{TileCol}}"
            ),
        }],
        matrix_sets: vec![LayerMatrixSet {
            id: set.to_owned(),
            bounds: Some(data),
        }],
        time: None,
        dimensions: Vec::new(),
    }
}

fn document(title: &str, layers: Vec<Layer>, matrix_sets: Vec<TileMatrixSet>) -> Capabilities {
    Capabilities {
        title: title.to_owned(),
        kvp_url: KVP_URL.to_owned(),
        layers,
        matrix_sets,
        service_metadata_url: Some(RESTFUL_CAPABILITIES.to_owned()),
    }
}

/// Copenhagen to Malmö in Web Mercator, levels 0 to 12.
fn mercator() -> Result<Capabilities, Box<dyn Error>> {
    let set = TileMatrixSet::web_mercator_quad(256, 12);
    let data = bounds(1_380_000.0, 7_450_000.0, 1_460_000.0, 7_520_000.0);
    let wgs84_bounds = bounds(12.396_6, 55.503_6, 13.115_3, 55.859_3);
    let layer = layer("item-0", wgs84_bounds, &set.id, data);
    Ok(document("Øresund in Web Mercator", vec![layer], vec![set]))
}

/// One layer in a matrix set of its own system: `extent` in `cell`-sized cells, with
/// `extra_levels` finer than the data.
fn native(
    title: &str,
    crs: MatrixSetCrs,
    extent: Bounds,
    cell: f64,
    extra_levels: u8,
    wgs84_bounds: Bounds,
) -> Result<Capabilities, Box<dyn Error>> {
    let set = TileMatrixSet::native("wmts-0", crs, extent, cell, 256, extra_levels)
        .ok_or_else(|| format!("no matrix set for {title}"))?;
    let layer = layer("item-0", wgs84_bounds, &set.id, extent);
    Ok(document(title, vec![layer], vec![set]))
}

/// 1000 x 600 cells of 30 m in UTM zone 32N, two levels finer than the data.
fn utm() -> Result<Capabilities, Box<dyn Error>> {
    let extent = bounds(500_000.0, 6_000_000.0, 530_000.0, 6_018_000.0);
    let wgs84_bounds = bounds(9.0, 54.14, 9.47, 54.31);
    native(
        "UTM 32N grid",
        projected(32632),
        extent,
        30.0,
        2,
        wgs84_bounds,
    )
}

/// DHDN / 3-degree Gauss-Kruger zone 3 (EPSG:31467), northing first in EPSG.
fn gauss_kruger() -> Result<Capabilities, Box<dyn Error>> {
    let extent = bounds(3_500_000.0, 5_400_000.0, 3_520_000.0, 5_430_000.0);
    let wgs84_bounds = bounds(8.99, 48.74, 9.28, 49.02);
    native(
        "Gauss-Krüger zone 3 grid",
        projected(31467),
        extent,
        25.0,
        0,
        wgs84_bounds,
    )
}

/// 150 x 125 cells of 0.01 degree in EPSG:4326 (latitude first in EPSG).
fn wgs84() -> Result<Capabilities, Box<dyn Error>> {
    let extent = bounds(9.0, 54.0, 10.5, 55.25);
    native("Geographic grid", geographic(4326), extent, 0.01, 1, extent)
}

/// Three hourly steps; the template takes the time as a query parameter, as the server's.
fn time() -> Result<Capabilities, Box<dyn Error>> {
    let mut capabilities = utm()?;
    let times = [
        "2021-03-01T12:00:00Z",
        "2021-03-01T13:00:00Z",
        "2021-03-01T14:00:00Z",
    ];
    for layer in &mut capabilities.layers {
        layer.time = Some(TimeDimension {
            values: times.iter().map(|time| (*time).to_owned()).collect(),
            default: times[0].to_owned(),
        });
        for url in &mut layer.resource_urls {
            url.template.push_str("?timeStep={Time}");
        }
    }
    capabilities.title = "Grid with time".to_owned();
    Ok(capabilities)
}

/// One layer readable in Web Mercator and in its own UTM system: one template for both.
fn two_sets() -> Result<Capabilities, Box<dyn Error>> {
    let mut capabilities = utm()?;
    let mercator = TileMatrixSet::web_mercator_quad(256, 14);
    let data = bounds(1_001_875.4, 7_197_000.0, 1_054_000.0, 7_229_000.0);
    for layer in &mut capabilities.layers {
        layer.matrix_sets.insert(
            0,
            LayerMatrixSet {
                id: mercator.id.clone(),
                bounds: Some(data),
            },
        );
    }
    capabilities.matrix_sets.insert(0, mercator);
    capabilities.title = "Two matrix sets".to_owned();
    Ok(capabilities)
}

/// Titles and identifiers a user could type: markup, quotes, entities, line breaks, controls,
/// right-to-left marks, emoji.
fn hostile() -> Result<Capabilities, Box<dyn Error>> {
    let mut capabilities = wgs84()?;
    capabilities.title =
        "</ows:Title><Layer>&amp; \"all\" 'of' ]]> it\r\n\tnext\u{0}line".to_owned();
    let first = capabilities
        .layers
        .first_mut()
        .ok_or("the geographic sample has a layer")?;
    first.identifier = "Vand & Land <2>".to_owned();
    first.title =
        "<b>Wasser</b> & \"Land\" 'x' ]]> 水位 🌊 \u{202E}ltr\u{202C} bell\u{7}".to_owned();
    first.styles = vec!["Ramp \"blue\" & <red>".to_owned()];
    let mut second = first.clone();
    second.identifier = "Zweite Ebene: Wasserstand/Höhe".to_owned();
    second.title = "Line one\nline two\r\nline three".to_owned();
    capabilities.layers.push(second);
    Ok(capabilities)
}

fn corners(bounds: &Bounds) -> Value {
    json!([bounds.min_x, bounds.min_y, bounds.max_x, bounds.max_y])
}

/// The inputs of one document, as the Python test compares them with what clients read.
fn manifest(file: &str, capabilities: &Capabilities) -> Value {
    let sets: Vec<Value> = capabilities
        .matrix_sets
        .iter()
        .map(|set| {
            let matrices: Vec<Value> = set
                .matrices
                .iter()
                .map(|matrix| {
                    json!({
                        "id": matrix.id,
                        "scale_denominator": matrix.scale_denominator,
                        "cell_size": matrix.cell_size,
                        "top_left": [matrix.top_left_x, matrix.top_left_y],
                        "tile_width": matrix.tile_width,
                        "tile_height": matrix.tile_height,
                        "matrix_width": matrix.matrix_width,
                        "matrix_height": matrix.matrix_height,
                    })
                })
                .collect();
            json!({
                "id": set.id,
                "epsg": set.crs.epsg,
                "geographic": set.crs.geographic,
                "supported_crs": wmts::supported_crs(&set.crs),
                "bounds": corners(&set.bounds),
                "matrices": matrices,
            })
        })
        .collect();
    let layers: Vec<Value> = capabilities
        .layers
        .iter()
        .map(|layer| layer_manifest(layer, &capabilities.matrix_sets))
        .collect();
    json!({
        "file": file,
        "title": capabilities.title,
        "kvp_url": capabilities.kvp_url,
        "layers": layers,
        "matrix_sets": sets,
    })
}

fn layer_manifest(layer: &Layer, sets: &[TileMatrixSet]) -> Value {
    let links: Vec<Value> = layer
        .matrix_sets
        .iter()
        .map(|link| {
            let limits: Vec<Value> = sets
                .iter()
                .find(|set| set.id == link.id)
                .zip(link.bounds.as_ref())
                .map(|(set, bounds)| wmts::matrix_limits(set, bounds))
                .unwrap_or_default()
                .iter()
                .map(|limit| {
                    json!([
                        limit.matrix,
                        limit.min_row,
                        limit.max_row,
                        limit.min_col,
                        limit.max_col
                    ])
                })
                .collect();
            json!({
                "matrix_set": link.id,
                "bounds": link.bounds.as_ref().map(corners),
                "limits": limits,
            })
        })
        .collect();
    json!({
        "identifier": layer.identifier,
        "title": layer.title,
        "wgs84_bounds": layer.wgs84_bounds.as_ref().map(corners),
        "styles": layer.styles,
        "formats": layer.formats,
        "templates": layer.resource_urls.iter().map(|url| &url.template).collect::<Vec<_>>(),
        "time": layer.time.as_ref().map(|time| json!({"values": time.values, "default": time.default})),
        "links": links,
    })
}
