//! Tiles (docs/tiles.md): tiling metadata, scheme tiles checked pixel by pixel
//! against the source, the empty tile, WMTS key-value requests, caching headers, and every
//! refusal.

pub(crate) mod pyramids;

use basin_formats::crs::{Crs, CrsTransform, Projection};
use basin_formats::model::{
    Data, DataType, Dataset, GeoTransform, GridGeometry, GridHeader, Header, Item, TimeAxis, Values,
};
use basin_formats::{Catalogue, Parameters};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// Colours of the default ramp (docs/tiles.md), to compute expected pixels independently.
const RAMP: [[u8; 3]; 7] = [
    [0x0b, 0x2a, 0x6f],
    [0x1f, 0x6f, 0xb2],
    [0x37, 0xb3, 0xc9],
    [0x9b, 0xd8, 0x7f],
    [0xf4, 0xe3, 0x5c],
    [0xf5, 0x9a, 0x3b],
    [0xc8, 0x35, 0x2b],
];

/// The documented colour formula.
fn expected_colour(value: f32, min: f64, max: f64) -> [u8; 4] {
    if value.is_nan() {
        return [0, 0, 0, 0];
    }
    let last = (RAMP.len() - 1) as f64;
    let t = ((f64::from(value) - min) / (max - min)).clamp(0.0, 1.0) * last;
    let i = (t.floor() as usize).min(RAMP.len() - 1);
    let f = t - i as f64;
    let low = RAMP[i];
    let high = RAMP[(i + 1).min(RAMP.len() - 1)];
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    [
        mix(low[0], high[0]),
        mix(low[1], high[1]),
        mix(low[2], high[2]),
        255,
    ]
}

/// A test grid: `columns` x `rows` cells of `cell` metres from (x0, y0) at the top left,
/// value of cell (c, r) = c + 1000 r (cell (0, 0) no data when `hole`).
pub(crate) struct Grid {
    pub(crate) columns: usize,
    pub(crate) rows: usize,
    pub(crate) x0: f64,
    pub(crate) y0: f64,
    pub(crate) cell: f64,
    pub(crate) epsg: u32,
}

impl Grid {
    fn value(&self, column: usize, row: usize) -> f32 {
        if column == 0 && row == 0 {
            -9999.0
        } else {
            (column + 1000 * row) as f32
        }
    }

    /// The value at (x, y) in the grid's system, NaN outside or on no data.
    fn sample(&self, x: f64, y: f64) -> f32 {
        let column = ((x - self.x0) / self.cell).floor();
        let row = ((self.y0 - y) / self.cell).floor();
        if !(column >= 0.0 && row >= 0.0) {
            return f32::NAN;
        }
        let (column, row) = (column as usize, row as usize);
        if column >= self.columns || row >= self.rows {
            return f32::NAN;
        }
        let value = self.value(column, row);
        if value == -9999.0 { f32::NAN } else { value }
    }

    fn range(&self) -> (f64, f64) {
        (1.0, (self.columns - 1 + 1000 * (self.rows - 1)) as f64)
    }

    pub(crate) fn geotiff(&self) -> Vec<u8> {
        let mut item = Item::new("depth", DataType::F32);
        item.nodata = Some(-9999.0);
        let values: Vec<f32> = (0..self.rows)
            .flat_map(|row| (0..self.columns).map(move |column| (column, row)))
            .map(|(column, row)| self.value(column, row))
            .collect();
        let dataset = Dataset {
            header: Header::Grid(GridHeader {
                geometry: GridGeometry {
                    columns: self.columns,
                    rows: self.rows,
                    vertical: None,
                    transform: GeoTransform::north_up(self.x0, self.y0, self.cell, self.cell),
                    crs: Some(Crs::Epsg(self.epsg)),
                },
                items: vec![item],
                time: TimeAxis::None,
            }),
            data: Data::Values(vec![vec![Values::F32(values)]]),
        };
        written(&dataset, "GeoTiffWriter", "grid.tif")
    }
}

/// The bytes of `dataset` written by basin-formats' `writer` to a file named `file_name`.
fn written(dataset: &Dataset, writer: &str, file_name: &str) -> Vec<u8> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join(file_name);
    let catalogue = Catalogue::standard();
    let writer = catalogue.writer(writer).unwrap();
    let parameters = Parameters::validate(writer.spec().parameters, &[]).unwrap();
    let mut sink = writer.create(&path, &parameters).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap();
    std::fs::read(path).unwrap()
}

/// 300 x 200 cells of 25 m in UTM 32N, near 10.46 E 52.30 N.
pub(crate) fn utm_grid() -> Grid {
    Grid {
        columns: 300,
        rows: 200,
        x0: 600_000.0,
        y0: 5_800_000.0,
        cell: 25.0,
        epsg: 32632,
    }
}

pub(crate) async fn uploaded(app: &TestApp, grid: &Grid, name: &str) -> (String, String) {
    let project = app.create_project(As::Key, "maps", json!({})).await;
    let project = id_str(&project).to_owned();
    let response = app.upload_file(&project, name, grid.geotiff()).await;
    let dataset = expect_status(response, StatusCode::CREATED).await;
    (project, id_str(&dataset).to_owned())
}

/// Uploads tests/corpus/dfs-samples/`sample` as `name` into a new project `project`; the
/// dataset id.
async fn uploaded_sample(app: &TestApp, project: &str, name: &str, sample: &str) -> String {
    let project = app.create_project(As::Key, project, json!({})).await;
    let response = app
        .upload_file(id_str(&project), name, dfs_sample(sample))
        .await;
    let dataset = expect_status(response, StatusCode::CREATED).await;
    id_str(&dataset).to_owned()
}

/// The API key of the Owner of another tenant.
pub(crate) async fn outsider_key(app: &TestApp) -> String {
    let other_tenant = app.create_tenant("elsewhere").await;
    app.create_api_key(other_tenant, "Owner").await.1
}

/// A request with another tenant's API key.
pub(crate) fn as_outsider(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
) -> reqwest::RequestBuilder {
    app.anonymous(method, path).header("svc-open-api-key", key)
}

/// `GET path` as written, with the bootstrap API key: for the tests of raw paths (malformed
/// ids and numbers, unknown schemes, paths built by a closure).
pub(crate) async fn get(app: &TestApp, path: &str) -> Reply {
    Reply::of(app.with_key(Method::GET, path).send().await.unwrap()).await
}

fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buffer.truncate(info.buffer_size());
    (info.width, info.height, buffer)
}

fn scheme<'a>(metadata: &'a Value, id: &str) -> &'a Value {
    metadata["tilingSchemes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|scheme| scheme["schemeId"] == id)
        .unwrap_or_else(|| panic!("no scheme {id} in {metadata}"))
}

api_test!(metadata_describes_extents_schemes_times_and_layers, |app| {
    let grid = utm_grid();
    let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
    let response = app.tiles(&dataset).metadata().await;
    assert_eq!(response.headers()["api-supported-versions"], "1.0");
    let metadata = expect_status(response, StatusCode::OK).await;
    assert_eq!(
        metadata["nativeExtent"],
        json!({"xMin": 600000.0, "yMin": 5795000.0, "xMax": 607500.0, "yMax": 5800000.0})
    );
    let wgs84 = &metadata["wgS84Extent"];
    assert!(
        (wgs84["xMin"].as_f64().unwrap() - 10.46).abs() < 0.02,
        "{wgs84}"
    );
    assert!(
        (wgs84["yMax"].as_f64().unwrap() - 52.33).abs() < 0.02,
        "{wgs84}"
    );
    assert_eq!(metadata["timeStamps"], json!([]));
    assert_eq!(metadata["layerIds"], json!([0]));
    assert_eq!(metadata["tileStorageSizeKB"], 0);

    let xyz = scheme(&metadata, "xyz-0");
    let (min, max) = grid.range();
    assert_eq!(xyz["schemeType"], "XYZ");
    assert_eq!(xyz["itemName"], "depth");
    assert_eq!(xyz["outputType"], "PNG");
    assert_eq!(xyz["aggregationMethod"], "Mean");
    assert_eq!(xyz["tileWidth"], 256);
    assert_eq!(xyz["srid"], 3857);
    assert_eq!(xyz["sridAuthName"], "EPSG");
    assert_eq!(xyz["minValue"], min);
    assert_eq!(xyz["maxValue"], max);
    assert_eq!(xyz["renderValuesOutOfRangeAsTransparent"], "None");
    assert_eq!(xyz["colors"][0], "#0b2a6f");
    assert_eq!(xyz["itemBandMapping"][0]["itemName"], "depth");
    assert_eq!(xyz["hasLayers"], false);
    // 25 m cells at 52.3 N are 40.9 Web Mercator metres: level 12 (38.2 m) plus two.
    let levels = xyz["zoomLevels"].as_array().unwrap();
    assert_eq!(levels.last().unwrap(), 14);
    assert_eq!(xyz["matrixWidths"][3], 8);
    assert!((xyz["resolutions"][0].as_f64().unwrap() - 156_543.033_928_041).abs() < 1e-6);
    assert!((xyz["scaleDenominators"][0].as_f64().unwrap() - 559_082_264.028_717_8).abs() < 1e-3);

    let wmts = scheme(&metadata, "wmts-0");
    assert_eq!(wmts["schemeType"], "WMTS");
    assert_eq!(wmts["srid"], 32632);
    assert_eq!(wmts["topLeftCorner"], json!([600000.0, 5800000.0]));
    // 300 cells need 2 tiles of 256 at full resolution: levels 0 and 1, plus two more.
    assert_eq!(wmts["zoomLevels"], json!([0, 1, 2, 3]));
    assert_eq!(wmts["resolutions"][1], 25.0);
    assert_eq!(wmts["matrixWidths"], json!([1, 2, 3, 5]));
    assert!(
        wmts["tileUrlTemplate"]
            .as_str()
            .unwrap()
            .ends_with(&routes::scheme_tile(
                &dataset,
                "wmts-0",
                "{TileMatrix}",
                "{TileRow}",
                "{TileCol}"
            ))
    );
});

api_test!(native_tiles_show_each_cell_with_the_ramp_colour, |app| {
    let grid = utm_grid();
    let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
    let (min, max) = grid.range();
    // Level 1 of wmts-0 is the data's resolution: tile (0, 1) holds columns 256..300.
    let response = app.tiles(&dataset).scheme("wmts-0").tile(1, 0, 1).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "image/png");
    let (width, height, pixels) = decode_png(response.bytes());
    assert_eq!((width, height), (256, 256));
    for row in 0..256_usize {
        for column in 0..256_usize {
            let x = 600_000.0 + (256.0 + column as f64 + 0.5) * 25.0;
            let y = 5_800_000.0 - (row as f64 + 0.5) * 25.0;
            let expected = expected_colour(grid.sample(x, y), min, max);
            let at = (row * 256 + column) * 4;
            assert_eq!(pixels[at..at + 4], expected, "pixel ({column}, {row})");
        }
    }
    // The cell without data is transparent in tile (0, 0).
    let response = app.tiles(&dataset).scheme("wmts-0").tile(1, 0, 0).await;
    let (_, _, pixels) = decode_png(response.bytes());
    assert_eq!(pixels[..4], [0, 0, 0, 0]);
    assert_eq!(pixels[4..8], expected_colour(1.0, min, max));
});

api_test!(
    web_mercator_tiles_sample_the_utm_grid_at_pixel_centres,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let (min, max) = grid.range();
        let to_utm = CrsTransform::new(
            Projection::epsg(4326).unwrap(),
            Projection::epsg(32632).unwrap(),
        );
        let half = std::f64::consts::PI * 6_378_137.0;
        let level = 13;
        let cell = 2.0 * half / (256.0 * f64::from(1 << level));
        // The tile holding the grid's top-left corner area, and its neighbour to the east.
        let (lon, lat) = (10.47_f64, 52.32_f64);
        let mx = 6_378_137.0 * lon.to_radians();
        let my = 6_378_137.0 * lat.to_radians().tan().asinh();
        let col = ((mx + half) / (256.0 * cell)) as u32;
        let row = ((half - my) / (256.0 * cell)) as u32;
        let mut drawn = 0;
        for (tile_row, tile_col) in [(row, col), (row, col + 1), (row + 1, col)] {
            let xyz = app.tiles(&dataset).scheme("xyz-0");
            let response = xyz.tile(level, tile_row, tile_col).await;
            assert_eq!(response.status(), StatusCode::OK);
            let (_, _, pixels) = decode_png(response.bytes());
            for v in 0..256_u32 {
                for u in 0..256_u32 {
                    let x = -half + (f64::from(tile_col * 256 + u) + 0.5) * cell;
                    let y = half - (f64::from(tile_row * 256 + v) + 0.5) * cell;
                    let longitude = (x / 6_378_137.0).to_degrees();
                    let latitude = (y / 6_378_137.0).sinh().atan().to_degrees();
                    let (ux, uy) = to_utm.apply(longitude, latitude).unwrap();
                    // A centre within a millimetre of a cell edge may fall either side.
                    let near_edge = |value: f64, origin: f64| {
                        let offset = ((value - origin) / 25.0).rem_euclid(1.0);
                        !(4e-5..=1.0 - 4e-5).contains(&offset)
                    };
                    if near_edge(ux, 600_000.0) || near_edge(uy, 5_800_000.0) {
                        continue;
                    }
                    let expected = expected_colour(grid.sample(ux, uy), min, max);
                    let at = ((v * 256 + u) * 4) as usize;
                    assert_eq!(
                        pixels[at..at + 4],
                        expected,
                        "tile {tile_row}/{tile_col} pixel ({u}, {v})"
                    );
                    drawn += usize::from(expected[3] == 255);
                }
            }
        }
        assert!(drawn > 10_000, "the tiles hold data: {drawn} pixels");
    }
);

api_test!(tiles_beside_the_data_are_the_empty_tile, |app| {
    let grid = utm_grid();
    let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
    let empty = app.tiles(&dataset).scheme("xyz-0").empty_tile().await;
    assert_eq!(empty.status(), StatusCode::OK);
    assert_eq!(empty.headers()["content-type"], "image/png");
    let empty_tag = empty.headers()["etag"].to_str().unwrap().to_owned();
    let empty = empty.bytes();
    let (_, _, pixels) = decode_png(empty);
    assert!(pixels.iter().all(|&byte| byte == 0));
    // Level 1 tiles in the southern hemisphere are far from the data.
    let far = app.tiles(&dataset).scheme("xyz-0").tile(1, 1, 0).await;
    assert_eq!(far.status(), StatusCode::OK);
    assert_eq!(far.headers()["etag"].to_str().unwrap(), empty_tag);
    assert!(far.bytes() == empty);
    // At level 8 (611 m pixels) the 7.5 km grid is a dozen pixels of tile 84/135.
    let near = app.tiles(&dataset).scheme("xyz-0").tile(8, 84, 135).await;
    assert_ne!(near.headers()["etag"].to_str().unwrap(), empty_tag);
    let (_, _, pixels) = decode_png(near.bytes());
    let shown = pixels.chunks(4).filter(|pixel| pixel[3] == 255).count();
    assert!((100..400).contains(&shown), "{shown} pixels drawn");
    // A tile that touches the data's extent but whose pixel centres all miss it is empty too.
    let world = app.tiles(&dataset).scheme("xyz-0").tile(0, 0, 0).await;
    assert_eq!(world.headers()["etag"].to_str().unwrap(), empty_tag);
});

api_test!(tiles_carry_validators_and_answer_304, |app| {
    let grid = utm_grid();
    let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
    let scheme = app.tiles(&dataset).scheme("wmts-0");
    let first = scheme.tile(0, 0, 0).await;
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(first.headers()["cache-control"], "private, max-age=60");
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'));
    let bytes = first.bytes();
    let again = scheme.tile(0, 0, 0).await;
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(again.bytes(), bytes, "the cached tile is the same");
    let path = routes::scheme_tile(&dataset, "wmts-0", 0, 0, 0);
    let unchanged = app
        .with_key(Method::GET, &path)
        .header("if-none-match", format!("W/\"other\", {etag}"))
        .send()
        .await
        .unwrap();
    assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(unchanged.headers()["etag"].to_str().unwrap(), etag);
});

api_test!(wmts_key_value_requests_match_the_scheme_tiles, |app| {
    let grid = utm_grid();
    let (project, dataset) = uploaded(&app, &grid, "depth.tif").await;
    let rest = app.tiles(&dataset).scheme("wmts-0").tile(1, 0, 1).await;
    let rest = rest.bytes();
    let kvp = app
        .with_key(
            Method::GET,
            &format!(
                "{}?service=WMTS&Request=GetTile&VERSION=1.0.0\
                 &layer=item-0&style=default&format=image/png&TileMatrixSet=wmts-0\
                 &TILEMATRIX=1&TileRow=0&tilecol=1",
                routes::wmts(&dataset)
            ),
        )
        .header("svc-project-id", &project)
        .header("svc-dataset-id", &dataset)
        .header("svc-service-id", "tiles")
        .header("api-version", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(kvp.status(), StatusCode::OK);
    assert_eq!(kvp.bytes().await.unwrap(), rest);
    let wmts100 = app
        .tiles(&dataset)
        .wmts100_tile("wmts-0", 1, 0, 1, "")
        .await;
    assert_eq!(wmts100.bytes(), rest);

    let capabilities = app.tiles(&dataset).wmts("").await;
    let capabilities = expect_status(capabilities, StatusCode::OK).await;
    assert_eq!(capabilities["title"], "depth.tif");
    let layer = &capabilities["layers"][0];
    assert_eq!(layer["identifier"], "item-0");
    assert_eq!(layer["tileMatrixSetLinks"], json!(["xyz-0", "wmts-0"]));
    let sets = capabilities["tileMatrixSets"].as_array().unwrap();
    assert_eq!(sets[1]["supportedCrs"], "urn:ogc:def:crs:EPSG::32632");
    assert_eq!(sets[0]["tileMatrices"][2]["matrixWidth"], 4);
});

/// The little-endian `f32` values of a `RawData` tile.
fn raw_values(bytes: &[u8]) -> Vec<f32> {
    assert_eq!(bytes.len() % 4, 0);
    bytes
        .chunks_exact(4)
        .map(|chunk| f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
        .collect()
}

api_test!(
    output_type_in_the_query_encodes_one_answer_another_way,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let (min, max) = grid.range();
        let wmts = app.tiles(&dataset).scheme("wmts-0");
        let png = wmts.tile(1, 0, 1).await;
        assert_eq!(png.headers()["content-type"], "image/png");
        let png_tag = png.headers()["etag"].to_str().unwrap().to_owned();
        let png = png.bytes();

        // RawData: the exact value of the cell under each pixel centre, NaN where there is none.
        let raw = wmts.tile_with(1, 0, 1, "outputType=RawData").await;
        assert_eq!(raw.status(), StatusCode::OK);
        assert_eq!(raw.headers()["content-type"], "application/octet-stream");
        let raw_tag = raw.headers()["etag"].to_str().unwrap().to_owned();
        assert_ne!(raw_tag, png_tag);
        let raw = raw.bytes();
        let values = raw_values(raw);
        assert_eq!(values.len(), 256 * 256);
        for row in 0..256_usize {
            for column in 0..256_usize {
                let x = 600_000.0 + (256.0 + column as f64 + 0.5) * 25.0;
                let y = 5_800_000.0 - (row as f64 + 0.5) * 25.0;
                let expected = grid.sample(x, y);
                let value = values[row * 256 + column];
                assert!(
                    value == expected || (value.is_nan() && expected.is_nan()),
                    "pixel ({column}, {row}): {value} and not {expected}"
                );
            }
        }
        // The cell without data is NaN in tile (0, 0).
        let first = wmts.tile_with(1, 0, 0, "outputtype=rawdata").await;
        let first = raw_values(first.bytes());
        assert!(first[0].is_nan());
        assert_eq!(first[1], 1.0);

        // Each encoding is cached on its own: the scheme's PNG is still the PNG, in any order.
        let again = wmts.tile(1, 0, 1).await;
        assert_eq!(again.headers()["etag"].to_str().unwrap(), png_tag);
        assert_eq!(again.bytes(), png);
        let named = wmts.tile_with(1, 0, 1, "outputType=png").await;
        assert_eq!(named.bytes(), png);
        let raw_again = wmts.tile_with(1, 0, 1, "outputType=RAWDATA").await;
        assert_eq!(raw_again.bytes(), raw);
        let path = routes::scheme_tile(&dataset, "wmts-0", 1, 0, 1);
        let unchanged = app
            .with_key(Method::GET, &format!("{path}?outputType=RawData"))
            .header("if-none-match", &raw_tag)
            .send()
            .await
            .unwrap();
        assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);
        let blank = wmts.tile_with(1, 0, 1, "outputType=").await;
        assert_eq!(blank.bytes(), png);

        // The other encodings.
        let webp = wmts.tile_with(1, 0, 1, "outputType=WEBP").await;
        assert_eq!(webp.headers()["content-type"], "image/webp");
        assert_eq!(&webp.bytes()[8..12], b"WEBP");
        let binned = wmts.tile_with(1, 0, 1, "outputType=BinnedData256").await;
        assert_eq!(binned.headers()["content-type"], "image/png");
        let binned = binned.bytes();
        assert!(binned.starts_with(b"\x89PNG"));
        assert_ne!(binned, png);
        let (_, _, pixels) = decode_png(png);
        let x = 600_000.0 + (256.0 + 10.5) * 25.0;
        let y = 5_800_000.0 - 20.5 * 25.0;
        assert_eq!(
            pixels[(20 * 256 + 10) * 4..(20 * 256 + 10) * 4 + 4],
            expected_colour(grid.sample(x, y), min, max)
        );

        // Tiles beside the data: the empty tile of the asked encoding, all NaN for RawData.
        let empty = app
            .tiles(&dataset)
            .scheme("xyz-0")
            .tile_with(1, 1, 0, "outputType=RawData")
            .await;
        assert_eq!(empty.headers()["content-type"], "application/octet-stream");
        let empty = raw_values(empty.bytes());
        assert_eq!(empty.len(), 256 * 256);
        assert!(empty.iter().all(|value| value.is_nan()));
        let empty_png = app.tiles(&dataset).scheme("xyz-0").tile(1, 1, 0).await;
        assert_eq!(empty_png.headers()["content-type"], "image/png");

        // The same tiles on the wmts100 path and through GetTile (`OUTPUTTYPE`, any case).
        let wmts100 = app
            .tiles(&dataset)
            .wmts100_tile("wmts-0", 1, 0, 1, "outputType=RawData")
            .await;
        assert_eq!(wmts100.bytes(), raw);
        let kvp = app
            .tiles(&dataset)
            .wmts(
                "REQUEST=GetTile&LAYER=item-0\
             &TILEMATRIXSET=wmts-0&TILEMATRIX=1&TILEROW=0&TILECOL=1&OutputType=rawData",
            )
            .await;
        assert_eq!(kvp.headers()["content-type"], "application/octet-stream");
        assert_eq!(kvp.bytes(), raw);

        // Anything else is 400 naming the parameter, on every path.
        for bad in [
            format!("{path}?outputType=JPEG"),
            format!(
                "{}?outputType=raw",
                routes::wmts100_tile(&dataset, "wmts-0", 1, 0, 1)
            ),
            format!(
                "{}?REQUEST=GetTile&LAYER=item-0\
             &TILEMATRIXSET=wmts-0&TILEMATRIX=1&TILEROW=0&TILECOL=1&OUTPUTTYPE=tiff",
                routes::wmts(&dataset)
            ),
        ] {
            let problem =
                expect_problem(get(&app, &bad).await, StatusCode::BAD_REQUEST, "validation").await;
            assert!(
                problem["errors"].get("outputType").is_some(),
                "{bad}: {problem}"
            );
        }
    }
);

api_test!(wmts_key_value_mistakes_are_400, |app| {
    let grid = utm_grid();
    let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
    let tiles = app.tiles(&dataset);
    let cases = [
        ("SERVICE=WMS", "SERVICE"),
        ("VERSION=2.0.0", "VERSION"),
        ("REQUEST=GetFeatureInfo", "REQUEST"),
        (
            "REQUEST=GetTile&LAYER=item-0&TILEMATRIXSET=wmts-0&TILEMATRIX=0&TILEROW=0",
            "TILECOL",
        ),
        (
            "REQUEST=GetTile&LAYER=item-0&TILEMATRIXSET=wmts-0&TILEMATRIX=0&TILEROW=x&TILECOL=0",
            "invalid-path",
        ),
        (
            "REQUEST=GetTile&LAYER=item-9&TILEMATRIXSET=wmts-0&TILEMATRIX=0&TILEROW=0&TILECOL=0",
            "LAYER",
        ),
        (
            "REQUEST=GetTile&LAYER=item-0%00&TILEMATRIXSET=wmts-0&TILEMATRIX=0&TILEROW=0&TILECOL=0",
            "query",
        ),
    ];
    for (query, field) in cases {
        let response = tiles.wmts(query).await;
        let problem = expect_status(response, StatusCode::BAD_REQUEST).await;
        let named = problem["errors"].get(field).is_some()
            || problem["type"].as_str().unwrap().ends_with(field);
        assert!(named, "{query}: {problem}");
    }
});

api_test!(
    tile_requests_outside_the_scheme_are_404_and_bad_ones_400,
    |app| {
        let grid = utm_grid();
        let (project, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let base = format!("/api/tiles/dataset/{dataset}");
        for path in [
            format!("{base}/scheme/nope/0/0/0"),
            format!("{base}/scheme/wmts-0/4/0/0"),
            format!("{base}/scheme/wmts-0/1/1/0"),
            format!("{base}/scheme/wmts-0/1/0/2"),
            format!("{base}/scheme/xyz-0/15/0/0"),
            format!("{base}/scheme/nope/emptyTile"),
        ] {
            expect_problem(get(&app, &path).await, StatusCode::NOT_FOUND, "not-found").await;
        }
        for (path, kind) in [
            (format!("{base}/scheme/wmts-0/0/-1/0"), "invalid-path"),
            (
                format!("{base}/scheme/wmts-0/0/0/4294967296"),
                "invalid-path",
            ),
            (format!("{base}/scheme/wmts-0/0/0/0?layer=1"), "validation"),
            (format!("{base}/scheme/wmts-0/0/0/0?layer=x"), "validation"),
            (
                format!("{base}/scheme/wmts-0/0/0/0?timeStep=2020-01-01T00:00:00"),
                "validation",
            ),
            (
                format!("{base}/scheme/wmts-0/0/0/0?timeStep=1"),
                "validation",
            ),
        ] {
            expect_problem(get(&app, &path).await, StatusCode::BAD_REQUEST, kind).await;
        }
        // The one step of undated data is step 0.
        let first = get(
            &app,
            &format!("{base}/scheme/wmts-0/0/0/0?timeStep=0&layer=0"),
        )
        .await;
        assert_eq!(first.status(), StatusCode::OK);
        // The request headers must agree with the path (docs/tiles.md#request-headers).
        let other = uuid::Uuid::new_v4().to_string();
        for (name, value) in [
            ("svc-dataset-id", other.as_str()),
            ("svc-project-id", other.as_str()),
            ("svc-project-id", "not-a-uuid"),
        ] {
            let response = app
                .with_key(Method::GET, &format!("{base}/metadata"))
                .header(name, value)
                .send()
                .await
                .unwrap();
            let problem = expect_status(response, StatusCode::BAD_REQUEST).await;
            assert!(problem["errors"].get(name).is_some(), "{problem}");
        }
        let response = app
            .with_key(Method::GET, &format!("{base}/metadata"))
            .header("svc-project-id", &project)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let response = app
            .with_key(Method::GET, &format!("{base}/metadata"))
            .header("api-version", "3")
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
    }
);

api_test!(datasets_without_a_map_or_readable_data_are_refused, |app| {
    let project = app.create_project(As::Key, "files", json!({})).await;
    let project = id_str(&project).to_owned();
    for (name, bytes, kind) in [
        ("notes.txt", b"hello".to_vec(), "not-tileable"),
        ("broken.tif", b"II*\0garbage".to_vec(), "dataset-unreadable"),
        ("series.dfs0", dfs_sample("ts_eq.dfs0"), "not-tileable"),
    ] {
        let response = app.upload_file(&project, name, bytes).await;
        let dataset = expect_status(response, StatusCode::CREATED).await;
        let tiles = app.tiles(id_str(&dataset));
        for response in [
            tiles.metadata().await,
            tiles.scheme("xyz-0").tile(0, 0, 0).await,
            tiles.wmts("").await,
        ] {
            expect_problem(response, StatusCode::UNPROCESSABLE_ENTITY, kind).await;
        }
    }
});

api_test!(tiles_need_read_content_on_the_dataset_project, |app| {
    let grid = utm_grid();
    let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
    let paths = [
        routes::tiles_metadata(&dataset),
        routes::scheme_tile(&dataset, "wmts-0", 0, 0, 0),
        routes::empty_tile(&dataset, "wmts-0"),
        routes::wmts(&dataset),
    ];
    let outsider = outsider_key(&app).await;
    for path in &paths {
        let anonymous = app.anonymous(Method::GET, path).send().await.unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED, "{path}");
        let foreign = as_outsider(&app, Method::GET, path, &outsider)
            .send()
            .await
            .unwrap();
        expect_problem(foreign, StatusCode::NOT_FOUND, "not-found").await;
    }
    let missing = uuid::Uuid::new_v4();
    let response = app.tiles(missing).metadata().await;
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    let response = get(&app, "/api/tiles/dataset/not-a-uuid/metadata").await;
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-path").await;
    // A deleted dataset has no tiles.
    let response = app.dataset(&dataset).delete().await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let tile = app.tiles(&dataset).scheme("wmts-0").tile(0, 0, 0).await;
    expect_problem(tile, StatusCode::NOT_FOUND, "not-found").await;
});

/// Colours of a whole tile of `scheme` at `level`, row 0, column 0, with `query` (empty for
/// none).
async fn tile_pixels(
    app: &TestApp,
    dataset: &str,
    scheme: &str,
    level: u32,
    query: &str,
) -> Vec<u8> {
    let scheme = app.tiles(dataset).scheme(scheme);
    let response = scheme.tile_with(level, 0, 0, query).await;
    assert_eq!(response.status(), StatusCode::OK, "{query}");
    decode_png(response.bytes()).2
}

api_test!(time_steps_of_a_dfs2_are_chosen_by_time_or_index, |app| {
    // 5 x 4 cells of 100 m x 200 m, three steps ten minutes apart; H = 1000 t + 10 j + i with
    // j counted from the south (tests/corpus/dfs-samples/grid_utm32.dfs2.json).
    let dataset = uploaded_sample(&app, "model", "grid.dfs2", "grid_utm32.dfs2").await;
    let dataset = dataset.as_str();
    let metadata = app.tiles(dataset).metadata().await;
    let metadata = expect_status(metadata, StatusCode::OK).await;
    assert_eq!(
        metadata["timeStamps"],
        json!([
            "2021-03-01T12:00:00.0000000",
            "2021-03-01T12:10:00.0000000",
            "2021-03-01T12:20:00.0000000"
        ])
    );
    let ids: Vec<&str> = metadata["tilingSchemes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|scheme| scheme["schemeId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["xyz-0", "wmts-0", "xyz-1", "wmts-1"]);
    let wmts = scheme(&metadata, "wmts-0");
    assert_eq!(wmts["itemName"], "H");
    assert_eq!(wmts["minValue"], 0.0);
    assert_eq!(wmts["maxValue"], 34.0);
    // The finest level draws the 100 m side of a cell with one pixel.
    let level = wmts["zoomLevels"].as_array().unwrap().len() - 1 - 2;
    assert_eq!(wmts["resolutions"][level], 100.0);
    let level = level as u32;
    let first = tile_pixels(&app, dataset, "wmts-0", level, "").await;
    for row in 0..8_usize {
        for column in 0..5_usize {
            let j = 3 - row / 2;
            let value = (10 * j + column) as f32;
            let at = (row * 256 + column) * 4;
            assert_eq!(
                first[at..at + 4],
                expected_colour(value, 0.0, 34.0),
                "({column}, {row})"
            );
        }
    }
    assert_eq!(
        first[(5 * 4)..(5 * 4 + 4)],
        [0, 0, 0, 0],
        "east of the grid"
    );
    let by_time = tile_pixels(
        &app,
        dataset,
        "wmts-0",
        level,
        "timeStep=2021-03-01T12:20:00Z",
    )
    .await;
    let by_index = tile_pixels(&app, dataset, "wmts-0", level, "timeStep=2").await;
    let by_wire = tile_pixels(
        &app,
        dataset,
        "wmts-0",
        level,
        "timeStep=2021-03-01T12:20:00.0000000",
    )
    .await;
    assert_eq!(by_time, by_index);
    assert_eq!(by_time, by_wire);
    // Step 2 holds 2000 and more: all above the range, drawn with the last colour.
    assert_eq!(by_time[..4], expected_colour(2000.0, 0.0, 34.0));
    assert_ne!(by_time, first);
    let response = app
        .tiles(dataset)
        .scheme("wmts-0")
        .tile_with(level, 0, 0, "timeStep=2021-03-01T12:05:00")
        .await;
    expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
});

api_test!(
    layers_of_a_dfs3_are_chosen_by_index_and_local_grids_have_only_wmts,
    |app| {
        // 4 x 3 x 2 cells of 10 m x 20 m, no projection: Salinity = 10000 t + 100 k + 10 j + i + 0.5.
        let dataset = uploaded_sample(&app, "cube", "cube.dfs3", "cube.dfs3").await;
        let dataset = dataset.as_str();
        let metadata = app.tiles(dataset).metadata().await;
        let metadata = expect_status(metadata, StatusCode::OK).await;
        assert_eq!(metadata["layerIds"], json!([0, 1]));
        assert_eq!(metadata["wgS84Extent"], Value::Null);
        let schemes = metadata["tilingSchemes"].as_array().unwrap();
        assert_eq!(
            schemes.len(),
            1,
            "no XYZ scheme without a coordinate system"
        );
        let wmts = &schemes[0];
        assert_eq!(wmts["hasLayers"], true);
        assert_eq!(wmts["srid"], Value::Null);
        let (min, max) = (0.5, 123.5);
        assert_eq!(wmts["minValue"], min);
        assert_eq!(wmts["maxValue"], max);
        let level = (wmts["zoomLevels"].as_array().unwrap().len() - 3) as u32;
        assert_eq!(wmts["resolutions"][level as usize], 10.0);
        for layer in 0..2_usize {
            let pixels =
                tile_pixels(&app, dataset, "wmts-0", level, &format!("layer={layer}")).await;
            for row in 0..6_usize {
                for column in 0..4_usize {
                    let j = 2 - row / 2;
                    let value = (100 * layer + 10 * j + column) as f32 + 0.5;
                    let at = (row * 256 + column) * 4;
                    assert_eq!(
                        pixels[at..at + 4],
                        expected_colour(value, min, max),
                        "layer {layer} ({column}, {row})"
                    );
                }
            }
        }
        let response = app
            .tiles(dataset)
            .scheme("wmts-0")
            .tile_with(level, 0, 0, "layer=2")
            .await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    }
);

api_test_with!(
    grids_too_large_for_the_band_budget_are_refused_before_loading,
    |config| config.tiles.band_cache_mb = 0,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let tiles = app.tiles(&dataset);
        let metadata = tiles.metadata().await;
        assert_eq!(metadata.status(), StatusCode::OK);
        let tile = tiles.scheme("wmts-0").tile(0, 0, 0).await;
        let problem = expect_problem(tile, StatusCode::UNPROCESSABLE_ENTITY, "not-tileable").await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("tiles.band_cache_mb"),
            "{problem}"
        );
        // Tiles beside the data never need it.
        let far = tiles.scheme("xyz-0").tile(1, 1, 0).await;
        assert_eq!(far.status(), StatusCode::OK);
    }
);

pub(crate) async fn define(app: &TestApp, dataset: &str, body: Value) -> Reply {
    app.tiles(dataset).define(&body).await
}

/// Defines `body` over `dataset` and expects 400 `validation` naming `field`.
pub(crate) async fn refused(app: &TestApp, dataset: &str, body: Value, field: &str) {
    let response = define(app, dataset, body).await;
    let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    assert!(problem["errors"].get(field).is_some(), "{field}: {problem}");
}

pub(crate) async fn datasets_in(app: &TestApp, project: &str) -> usize {
    let response = app.datasets_of(project).list("").await;
    response.expect(StatusCode::OK)["data"]
        .as_array()
        .unwrap()
        .len()
}

api_test!(
    defined_schemes_make_a_tiles_dataset_drawn_from_the_source,
    |app| {
        let grid = utm_grid();
        let (project, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let body = json!({
            "name": "depth, raw",
            "description": "values for the web client",
            "tilingSchemes": [
                {"schemeId": "raw", "schemeType": "wmts", "itemName": "DEPTH", "minValue": 0,
                 "maxValue": 1500, "outputType": "RawData",
                 "renderValuesOutOfRangeAsTransparent": "Above", "zoomLevels": [0, 1]},
                {"schemeType": "XYZ", "colors": ["#ffffff", "#000000"], "tileWidth": 512,
                 "tileHeight": 512, "aggregationMethod": "Max", "zoomLevels": [10],
                 "resolutions": [1, 2, 3]}
            ]
        });
        let response = define(&app, &dataset, body).await;
        let created = expect_status(response, StatusCode::CREATED).await;
        assert_eq!(created["datasetType"], "tiles");
        assert_eq!(created["datasetFormat"], ".tiles");
        assert_eq!(created["name"], "depth, raw");
        assert_eq!(created["description"], "values for the web client");
        assert_eq!(created["projectId"], project.as_str());
        let tiles = id_str(&created).to_owned();

        let metadata = app.tiles(&tiles).metadata().await;
        let metadata = expect_status(metadata, StatusCode::OK).await;
        let schemes = metadata["tilingSchemes"].as_array().unwrap();
        assert_eq!(schemes.len(), 2);
        assert_eq!(schemes[0]["schemeId"], "raw");
        assert_eq!(schemes[0]["outputType"], "RawData");
        assert_eq!(schemes[0]["zoomLevels"], json!([0, 1]));
        assert_eq!(schemes[0]["renderValuesOutOfRangeAsTransparent"], "Above");
        assert_eq!(schemes[1]["schemeId"], "scheme-1");
        assert_eq!(schemes[1]["tileWidth"], 512);
        assert_eq!(schemes[1]["aggregationMethod"], "Max");
        assert_eq!(schemes[1]["colors"], json!(["#ffffff", "#000000"]));
        assert_eq!(schemes[1]["zoomLevels"].as_array().unwrap().len(), 11);
        assert_eq!(metadata["nativeExtent"]["xMin"], 600000.0);

        // RawData tiles are the source's values: NaN for no data and for values above 1500.
        let response = app.tiles(&tiles).scheme("raw").tile(1, 0, 0).await;
        assert_eq!(
            response.headers()["content-type"],
            "application/octet-stream"
        );
        let bytes = response.bytes();
        assert_eq!(bytes.len(), 256 * 256 * 4);
        let values: Vec<f32> = bytes
            .chunks(4)
            .map(|chunk| f32::from_le_bytes(chunk.try_into().unwrap()))
            .collect();
        for row in 0..200_usize {
            for column in 0..256_usize {
                let value = values[row * 256 + column];
                let source = grid.value(column, row);
                if source == -9999.0 || source > 1500.0 {
                    assert!(value.is_nan(), "({column}, {row}): {value}");
                } else {
                    assert_eq!(value, source, "({column}, {row})");
                }
            }
        }
        assert!(values[200 * 256].is_nan(), "below the grid");
        let response = app.tiles(&tiles).scheme("scheme-1").tile(9, 167, 270).await;
        assert_eq!(response.status(), StatusCode::OK);
        let (width, _, _) = decode_png(response.bytes());
        assert_eq!(width, 512);
        // The source's own schemes are not the tiles dataset's.
        let response = app.tiles(&tiles).scheme("wmts-0").tile(0, 0, 0).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        assert_eq!(datasets_in(&app, &project).await, 2);
    }
);

api_test!(
    scheme_definitions_are_checked_field_by_field_and_create_nothing_when_wrong,
    |app| {
        let grid = utm_grid();
        let (project, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let scheme = |extra: Value| with_fields(json!({"schemeType": "WMTS"}), extra);
        let cases = [
            (json!({"schemeType": "TMS"}), "tilingSchemes[0].schemeType"),
            (
                scheme(json!({"schemeId": "a b"})),
                "tilingSchemes[0].schemeId",
            ),
            (
                scheme(json!({"schemeId": "emptyTile"})),
                "tilingSchemes[0].schemeId",
            ),
            (
                scheme(json!({"schemeId": "x".repeat(65)})),
                "tilingSchemes[0].schemeId",
            ),
            (
                scheme(json!({"itemName": "speed"})),
                "tilingSchemes[0].itemName",
            ),
            (
                scheme(json!({"minValue": 5, "maxValue": 1})),
                "tilingSchemes[0].minValue",
            ),
            (scheme(json!({"colors": []})), "tilingSchemes[0].colors"),
            (
                scheme(json!({"colors": ["#12345g"]})),
                "tilingSchemes[0].colors",
            ),
            (
                scheme(json!({"colors": vec!["#000000"; 257]})),
                "tilingSchemes[0].colors",
            ),
            (
                scheme(json!({"outputType": "JPEG"})),
                "tilingSchemes[0].outputType",
            ),
            (
                scheme(json!({"tileWidth": 300})),
                "tilingSchemes[0].tileWidth",
            ),
            (
                scheme(json!({"tileWidth": 256, "tileHeight": 512})),
                "tilingSchemes[0].tileWidth",
            ),
            (
                scheme(json!({"zoomLevels": [0, 9]})),
                "tilingSchemes[0].zoomLevels",
            ),
            (
                json!({"schemeType": "XYZ", "zoomLevels": [25]}),
                "tilingSchemes[0].zoomLevels",
            ),
            (
                scheme(json!({"renderValuesOutOfRangeAsTransparent": "Sideways"})),
                "tilingSchemes[0].renderValuesOutOfRangeAsTransparent",
            ),
            (
                scheme(json!({"aggregationMethod": "Median"})),
                "tilingSchemes[0].aggregationMethod",
            ),
        ];
        for (scheme, field) in cases {
            let body = json!({"name": "tiles", "tilingSchemes": [scheme]});
            refused(&app, &dataset, body, field).await;
        }
        let duplicate = json!({"name": "tiles", "tilingSchemes": [
        {"schemeId": "a", "schemeType": "WMTS"}, {"schemeId": "a", "schemeType": "XYZ"}]});
        refused(&app, &dataset, duplicate, "tilingSchemes[1].schemeId").await;
        for schemes in [json!([]), json!(vec![json!({"schemeType": "WMTS"}); 33])] {
            let body = json!({"name": "tiles", "tilingSchemes": schemes});
            refused(&app, &dataset, body, "tilingSchemes").await;
        }
        for name in ["", "a/b", "bad\u{0}name"] {
            let body = json!({"name": name, "tilingSchemes": [{"schemeType": "WMTS"}]});
            let response = define(&app, &dataset, body).await;
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{name:?}");
        }
        let response = define(
            &app,
            &dataset,
            json!({"tilingSchemes": [{"schemeType": "WMTS"}]}),
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(datasets_in(&app, &project).await, 1, "nothing was created");
    }
);

api_test!(
    tiles_datasets_follow_their_source_and_its_permissions,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let body =
            json!({"name": "tiles", "tilingSchemes": [{"schemeId": "s", "schemeType": "WMTS"}]});
        let created = expect_status(
            define(&app, &dataset, body.clone()).await,
            StatusCode::CREATED,
        )
        .await;
        let tiles = id_str(&created).to_owned();
        // Another tenant sees neither.
        let outsider = outsider_key(&app).await;
        let path = routes::tiles_definition(&dataset);
        let response = as_outsider(&app, Method::POST, &path, &outsider)
            .json(&body)
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        // Schemes cannot be defined over a tiles dataset.
        let response = define(&app, &tiles, body.clone()).await;
        expect_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "not-tileable").await;
        // The source in the recycle bin: its tiles datasets have no tiles; restored, they do.
        let of_tiles = app.tiles(&tiles);
        assert_eq!(of_tiles.metadata().await.status(), StatusCode::OK);
        let response = app.dataset(&dataset).delete().await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        let gone = of_tiles.metadata().await;
        expect_problem(gone, StatusCode::NOT_FOUND, "not-found").await;
        let response = app.recycle_bin().dataset(&dataset).restore().await;
        assert!(response.status().is_success(), "{}", response.status());
        assert_eq!(of_tiles.metadata().await.status(), StatusCode::OK);
        let tile = app.tiles(&tiles).scheme("s").tile(0, 0, 0).await;
        assert_eq!(tile.status(), StatusCode::OK);
    }
);

/// `GET` the vector tile path `tile` (`{zoom}/{col}/{row}.vector.pbf`) of `dataset` as
/// written: for the tests of malformed tile paths.
async fn vector(app: &TestApp, dataset: &str, tile: &str) -> Reply {
    get(app, &format!("/api/vectortiles/dataset/{dataset}/{tile}")).await
}

api_test!(
    vector_tiles_of_features_and_meshes_and_their_refusals,
    |app| {
        let project = app.create_project(As::Key, "vectors", json!({})).await;
        let project = id_str(&project).to_owned();
        let collection = json!({"type": "FeatureCollection", "features": [
            {"type": "Feature", "properties": {"name": "pond"},
             "geometry": {"type": "Polygon", "coordinates": [[[5.0, 52.0], [5.01, 52.0], [5.01, 52.01], [5.0, 52.0]]]}}
        ]});
        let response = app
            .upload_file(
                &project,
                "water.geojson",
                collection.to_string().into_bytes(),
            )
            .await;
        let dataset = expect_status(response, StatusCode::CREATED).await;
        let dataset = id_str(&dataset).to_owned();
        // 5.005 E 52.005 N is in tile 14/8419/5411.
        let shown = app.tiles(&dataset).vector_tile(14, 8419, 5411).await;
        assert_eq!(shown.status(), StatusCode::OK);
        assert_eq!(
            shown.headers()["content-type"],
            "application/vnd.mapbox-vector-tile"
        );
        let etag = shown.headers()["etag"].to_str().unwrap().to_owned();
        let bytes = shown.bytes();
        assert!(
            bytes.len() > 20 && bytes[0] == 0x1a,
            "one layer (field 3, bytes)"
        );
        let again = app
            .with_key(Method::GET, &routes::vector_tile(&dataset, 14, 8419, 5411))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        let far = app.tiles(&dataset).vector_tile(14, 0, 0).await;
        assert_eq!(far.status(), StatusCode::OK);
        assert!(far.bytes().is_empty(), "a tile without features is empty");
        for (tile, status, kind) in [
            ("25/0/0.vector.pbf", StatusCode::NOT_FOUND, "not-found"),
            ("3/8/0.vector.pbf", StatusCode::NOT_FOUND, "not-found"),
            ("3/0/8.vector.pbf", StatusCode::NOT_FOUND, "not-found"),
            ("3/0/0.png", StatusCode::NOT_FOUND, "not-found"),
            ("3/0/x.vector.pbf", StatusCode::BAD_REQUEST, "invalid-path"),
            ("x/0/0.vector.pbf", StatusCode::BAD_REQUEST, "invalid-path"),
            ("3/-1/0.vector.pbf", StatusCode::BAD_REQUEST, "invalid-path"),
        ] {
            expect_problem(vector(&app, &dataset, tile).await, status, kind).await;
        }
        // Meshes give their elements; grids and time series have no vector tiles.
        let response = app
            .upload_file(&project, "mesh.dfsu", dfs_sample("mesh2d_mixed.dfsu"))
            .await;
        let mesh = expect_status(response, StatusCode::CREATED).await;
        // Its 200 m of elements near 9.0 E 55.05 N fill part of tile 12/2150/1294; at level 0
        // they are smaller than a tile unit and vanish.
        let close = app.tiles(id_str(&mesh)).vector_tile(12, 2150, 1294).await;
        assert_eq!(close.status(), StatusCode::OK);
        assert!(!close.bytes().is_empty());
        let whole = app.tiles(id_str(&mesh)).vector_tile(0, 0, 0).await;
        assert!(whole.bytes().is_empty());
        let grid = utm_grid();
        let (_, raster) = uploaded(&app, &grid, "depth.tif").await;
        let response = app
            .upload_file(&project, "series.dfs0", dfs_sample("ts_eq.dfs0"))
            .await;
        let series = expect_status(response, StatusCode::CREATED).await;
        for id in [raster.as_str(), id_str(&series)] {
            let response = app.tiles(id).vector_tile(0, 0, 0).await;
            expect_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "not-tileable").await;
        }
        // Only readers of the project see them.
        let path = routes::vector_tile(&dataset, 0, 0, 0);
        let anonymous = app.anonymous(Method::GET, &path).send().await.unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
        let outsider = outsider_key(&app).await;
        let foreign = as_outsider(&app, Method::GET, &path, &outsider)
            .send()
            .await
            .unwrap();
        expect_problem(foreign, StatusCode::NOT_FOUND, "not-found").await;
    }
);

api_test!(mesh_tiles_show_each_element_value_flat_or_smooth, |app| {
    // Six elements over 200 m x 200 m of UTM 32N; Surface elevation at step 0 is 0.0, 0.1,
    // ..., 0.5 by element (tests/corpus/dfs-samples/mesh2d_mixed.dfsu.json).
    let project = app.create_project(As::Key, "mesh", json!({})).await;
    let response = app
        .upload_file(
            id_str(&project),
            "mesh.dfsu",
            dfs_sample("mesh2d_mixed.dfsu"),
        )
        .await;
    let mesh = expect_status(response, StatusCode::CREATED).await;
    let mesh = id_str(&mesh).to_owned();
    let metadata = app.tiles(&mesh).metadata().await;
    let metadata = expect_status(metadata, StatusCode::OK).await;
    assert_eq!(
        metadata["nativeExtent"],
        json!({"xMin": 500000.0, "yMin": 6100000.0, "xMax": 500200.0, "yMax": 6100200.0})
    );
    assert_eq!(metadata["timeStamps"].as_array().unwrap().len(), 5);
    let wmts = scheme(&metadata, "wmts-0");
    assert_eq!(wmts["shading"], "Flat");
    assert_eq!(
        (wmts["minValue"].as_f64(), wmts["maxValue"].as_f64()),
        (Some(0.0), Some(0.5))
    );
    // Raw values at the finest WMTS level: the pixel over each element centre holds its value.
    let body = json!({"name": "raw", "tilingSchemes": [
        {"schemeId": "flat", "schemeType": "WMTS", "outputType": "RawData"},
        {"schemeId": "smooth", "schemeType": "WMTS", "outputType": "RawData", "shading": "smooth",
         "minValue": -10, "maxValue": 10}]});
    let created = expect_status(define(&app, &mesh, body).await, StatusCode::CREATED).await;
    let raw = id_str(&created).to_owned();
    let metadata = app.tiles(&raw).metadata().await;
    let metadata = expect_status(metadata, StatusCode::OK).await;
    let flat = scheme(&metadata, "flat");
    let level = flat["zoomLevels"].as_array().unwrap().len() - 1;
    let cell = flat["resolutions"][level].as_f64().unwrap();
    let values = |bytes: &[u8]| -> Vec<f32> {
        bytes
            .chunks(4)
            .map(|chunk| f32::from_le_bytes(chunk.try_into().unwrap()))
            .collect()
    };
    let response = app.tiles(&raw).scheme("flat").tile(level, 0, 0).await;
    let flat_values = values(response.bytes());
    let centres = [
        (500050.0, 6100050.0),
        (500166.67, 6100033.33),
        (500133.33, 6100066.67),
        (500066.67, 6100133.33),
        (500033.33, 6100166.67),
        (500150.0, 6100150.0),
    ];
    for (element, (x, y)) in centres.iter().enumerate() {
        let column = ((x - 500000.0) / cell) as usize;
        let row = ((6100200.0 - y) / cell) as usize;
        let value = flat_values[row * 256 + column];
        assert!(
            (value - 0.1 * element as f32).abs() < 1e-6,
            "element {element}: {value}"
        );
    }
    assert!(
        flat_values[255].is_nan() || 256.0 * cell <= 200.0,
        "east of the mesh"
    );
    // Smooth: at node 4 (500100, 6100100), shared by five elements, a weighted mean of theirs.
    let response = app.tiles(&raw).scheme("smooth").tile(level, 0, 0).await;
    let smooth = values(response.bytes());
    let column = (100.0 / cell) as usize;
    let at_node = smooth[column * 256 + column];
    assert!(at_node > 0.0 && at_node < 0.5, "{at_node}");
    assert_ne!(smooth, flat_values);
    // Step 3 by time.
    let response = app
        .tiles(&raw)
        .scheme("flat")
        .tile_with(level, 0, 0, "timeStep=3")
        .await;
    let later = values(response.bytes());
    let (x, y) = centres[0];
    let first = later[((6100200.0 - y) / cell) as usize * 256 + ((x - 500000.0) / cell) as usize];
    assert!((first - 3.0).abs() < 1e-6, "{first}");
    let bad = json!({"name": "x", "tilingSchemes": [{"schemeType": "WMTS", "shading": "Gouraud"}]});
    refused(&app, &mesh, bad, "tilingSchemes[0].shading").await;
});

/// An indented XML document on one line, without the indentation.
fn flat(xml: &str) -> String {
    xml.lines().map(str::trim).collect()
}

/// The WMTS capabilities of `dataset` with `accept` (none when `None`): status, content type
/// and body.
async fn capabilities(app: &TestApp, dataset: &str, accept: Option<&str>) -> (String, String) {
    let mut request = app.with_key(
        Method::GET,
        &format!(
            "{}?SERVICE=WMTS&REQUEST=GetCapabilities",
            routes::wmts(dataset)
        ),
    );
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{accept:?}");
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    (content_type, response.text().await.unwrap())
}

api_test!(
    wmts_capabilities_are_xml_when_asked_for_and_json_otherwise,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let xml = [
            "application/xml",
            "text/xml",
            "application/json;q=0.5, application/xml",
            "text/xml, application/json",
        ];
        for accept in xml {
            let (content_type, body) = capabilities(&app, &dataset, Some(accept)).await;
            assert_eq!(content_type, "application/xml", "{accept}");
            assert!(body.starts_with("<?xml"), "{accept}");
        }
        let json = [
            None,
            Some("*/*"),
            Some("application/json"),
            Some("application/json, application/xml;q=0.5"),
            Some("application/xml;q=0"),
        ];
        for accept in json {
            let (content_type, body) = capabilities(&app, &dataset, accept).await;
            assert!(content_type.starts_with("application/json"), "{accept:?}");
            let capabilities: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(capabilities["layers"][0]["identifier"], "item-0");
        }
        // The RESTful address is always XML, the same document.
        let (_, kvp) = capabilities(&app, &dataset, Some("application/xml")).await;
        let restful = app.tiles(&dataset).wmts_capabilities().await;
        assert_eq!(restful.status(), StatusCode::OK);
        assert_eq!(restful.headers()["content-type"], "application/xml");
        assert_eq!(restful.text(), kvp);
    }
);

api_test!(
    wmts_xml_capabilities_lead_clients_to_the_scheme_tiles,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let (_, xml) = capabilities(&app, &dataset, Some("application/xml")).await;
        let base = app.url(&format!("/api/tiles/dataset/{dataset}"));
        let expected = [
            "<ows:Title>depth.tif</ows:Title>".to_owned(),
            "<ows:Identifier>item-0</ows:Identifier>".to_owned(),
            "<ows:Title>depth</ows:Title>".to_owned(),
            format!("<ows:Get xlink:href=\"{base}/wmts?\">"),
            format!(
                "<ServiceMetadataURL xlink:href=\"{base}/wmts100/1.0.0/WMTSCapabilities.xml\"/>"
            ),
            "<TileMatrixSet>xyz-0</TileMatrixSet>".to_owned(),
            "<TileMatrixSet>wmts-0</TileMatrixSet>".to_owned(),
            "<ows:SupportedCRS>urn:ogc:def:crs:EPSG::3857</ows:SupportedCRS>".to_owned(),
            "<WellKnownScaleSet>urn:ogc:def:wkss:OGC:1.0:GoogleMapsCompatible</WellKnownScaleSet>"
                .to_owned(),
            "<ows:SupportedCRS>urn:ogc:def:crs:EPSG::32632</ows:SupportedCRS>".to_owned(),
            "<TopLeftCorner>600000 5800000</TopLeftCorner>".to_owned(),
            // Level 3 of wmts-0 is 5 x 4 tiles of 1600 m: the data covers them all.
            "<TileMatrix>3</TileMatrix><MinTileRow>0</MinTileRow><MaxTileRow>3</MaxTileRow>\
         <MinTileCol>0</MinTileCol><MaxTileCol>4</MaxTileCol>"
                .to_owned(),
        ];
        let flat = flat(&xml);
        for text in &expected {
            assert!(flat.contains(text.as_str()), "{text} not in\n{xml}");
        }
        assert!(
            !xml.contains("<Dimension>"),
            "no time dimension without times"
        );
        // One template for both matrix sets; filled in, it is the scheme tile.
        let template = format!(
            "template=\"{base}/scheme/{{TileMatrixSet}}/{{TileMatrix}}/{{TileRow}}/{{TileCol}}\""
        );
        assert_eq!(xml.matches(&template).count(), 1, "{xml}");
        let scheme_tile = app.tiles(&dataset).scheme("wmts-0").tile(1, 0, 1).await;
        let scheme_tile = scheme_tile.bytes();
        let filled = format!("{base}/scheme/wmts-0/1/0/1");
        let through_template = app
            .client
            .get(&filled)
            .header("svc-open-api-key", &app.bootstrap.api_key)
            .send()
            .await
            .unwrap();
        assert_eq!(through_template.bytes().await.unwrap(), scheme_tile);
    }
);

api_test!(wmts_xml_capabilities_of_a_dfs2_announce_its_times, |app| {
    let dataset = uploaded_sample(&app, "model", "grid.dfs2", "grid_utm32.dfs2").await;
    let dataset = dataset.as_str();
    let (_, xml) = capabilities(&app, dataset, Some("text/xml")).await;
    let times = [
        "2021-03-01T12:00:00Z",
        "2021-03-01T12:10:00Z",
        "2021-03-01T12:20:00Z",
    ];
    let dimension = format!(
        "<Dimension><ows:Identifier>Time</ows:Identifier><ows:UOM>ISO8601</ows:UOM>\
         <Default>{}</Default><Value>{}</Value><Value>{}</Value><Value>{}</Value></Dimension>",
        times[0], times[0], times[1], times[2]
    );
    // Two items, two layers, each with the times.
    assert_eq!(flat(&xml).matches(&dimension).count(), 2, "{xml}");
    assert!(xml.contains("<TileMatrixSet>wmts-1</TileMatrixSet>"));
    let template = "/scheme/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}?timeStep={Time}\"";
    assert!(xml.contains(template), "{xml}");
    // The template filled with the second time is the second step.
    let by_index = tile_pixels(&app, dataset, "wmts-0", 0, "timeStep=1").await;
    let by_template = tile_pixels(
        &app,
        dataset,
        "wmts-0",
        0,
        &format!("timeStep={}", times[1]),
    )
    .await;
    assert_eq!(by_template, by_index);
});

api_test!(
    wmts_xml_capabilities_of_a_local_grid_name_no_epsg_system,
    |app| {
        let dataset = uploaded_sample(&app, "cube", "cube.dfs3", "cube.dfs3").await;
        let (_, xml) = capabilities(&app, &dataset, Some("application/xml")).await;
        assert!(
            xml.contains("<ows:SupportedCRS>LOCAL_CS[&quot;Unknown&quot;"),
            "{xml}"
        );
        assert!(!xml.contains("WGS84BoundingBox"), "{xml}");
        assert!(!xml.contains("xyz-0"), "{xml}");
    }
);

api_test!(
    a_dfs3_s_vertical_layers_are_a_wmts_dimension_that_templates_and_get_tile_name,
    |app| {
        let dataset = uploaded_sample(&app, "cube", "cube.dfs3", "cube.dfs3").await;
        let (_, xml) = capabilities(&app, &dataset, Some("application/xml")).await;
        let compact: String = xml.split_whitespace().collect();
        assert!(
            compact.contains(
                "<Dimension><ows:Identifier>VerticalLayer</ows:Identifier><Default>0</Default>\
                 <Value>0</Value><Value>1</Value></Dimension>"
            ),
            "{xml}"
        );
        assert!(xml.contains("layer={VerticalLayer}"), "{xml}");
        let (_, text) = capabilities(&app, &dataset, None).await;
        let json: Value = serde_json::from_str(&text).unwrap();
        let layer = &json["layers"][0];
        assert_eq!(layer["layerIds"], json!([0, 1]), "{json}");
        assert!(
            layer["resourceUrls"][0]["template"]
                .as_str()
                .unwrap()
                .ends_with("timeStep={Time}&layer={VerticalLayer}"),
            "{json}"
        );
        let kvp = |dimension: &str| {
            format!(
                "SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0\
                 &LAYER=item-0&STYLE=default&FORMAT=image/png&TILEMATRIXSET=wmts-0&TILEMATRIX=0\
                 &TILEROW=0&TILECOL=0{dimension}"
            )
        };
        let tiles = app.tiles(&dataset);
        let wmts = tiles.scheme("wmts-0");
        let bytes = |response: Reply| {
            assert_eq!(response.status(), StatusCode::OK);
            response.bytes().to_vec()
        };
        let second = bytes(wmts.tile_with(0, 0, 0, "layer=1").await);
        assert!(second != bytes(wmts.tile_with(0, 0, 0, "layer=0").await));
        for dimension in ["&VerticalLayer=1", "&VERTICALLAYER=1", "&DIM_LAYER=1"] {
            let tile = bytes(tiles.wmts(&kvp(dimension)).await);
            assert!(tile == second, "{dimension}");
        }
        let response = tiles.wmts(&kvp("&VerticalLayer=2")).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        // 2D data has no such dimension.
        let (_, utm) = uploaded(&app, &utm_grid(), "depth.tif").await;
        let (_, xml) = capabilities(&app, &utm, Some("application/xml")).await;
        assert!(!xml.contains("VerticalLayer"), "{xml}");
    }
);

api_test!(
    a_tiles_dataset_reusing_a_default_scheme_id_draws_its_own_tiles,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let own = app.tiles(&dataset).scheme("wmts-0").tile(1, 0, 0).await;
        let own = own.bytes();
        let body = json!({"name": "grey", "tilingSchemes": [
        {"schemeId": "wmts-0", "schemeType": "WMTS", "colors": ["#000000", "#ffffff"]}]});
        let created = expect_status(define(&app, &dataset, body).await, StatusCode::CREATED).await;
        let grey = app
            .tiles(id_str(&created))
            .scheme("wmts-0")
            .tile(1, 0, 0)
            .await;
        let grey = grey.bytes();
        assert!(
            grey != own,
            "the tiles dataset's scheme is not served from the source's cache"
        );
        let (_, _, pixels) = decode_png(grey);
        assert_eq!(pixels[4], pixels[5], "grey: red equals green");
        let again = app.tiles(&dataset).scheme("wmts-0").tile(1, 0, 0).await;
        assert!(again.bytes() == own);
    }
);

api_test!(
    wmts_get_tile_reaches_the_schemes_of_a_tiles_dataset,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let body =
            json!({"name": "blue", "tilingSchemes": [{"schemeId": "blue", "schemeType": "WMTS"}]});
        let created = expect_status(define(&app, &dataset, body).await, StatusCode::CREATED).await;
        let tiles = id_str(&created);
        let rest = app.tiles(tiles).scheme("blue").tile(0, 0, 0).await;
        let rest = rest.bytes();
        let kvp = |layer: &str| {
            format!(
                "REQUEST=GetTile&LAYER={layer}&TILEMATRIXSET=blue\
             &TILEMATRIX=0&TILEROW=0&TILECOL=0"
            )
        };
        let of_tiles = app.tiles(tiles);
        let answer = of_tiles.wmts(&kvp("item-0")).await;
        assert_eq!(answer.status(), StatusCode::OK);
        assert!(answer.bytes() == rest);
        let problem =
            expect_status(of_tiles.wmts(&kvp("item-1")).await, StatusCode::BAD_REQUEST).await;
        assert!(problem["errors"].get("LAYER").is_some(), "{problem}");
        let problem =
            expect_status(of_tiles.wmts(&kvp("blue")).await, StatusCode::BAD_REQUEST).await;
        assert!(problem["errors"].get("LAYER").is_some(), "{problem}");
    }
);

/// A zipped Shapefile of one square parcel near 5.005 E 52.005 N, in WGS 84, written by
/// basin-formats' Shapefile writer.
fn parcel_shapefile() -> Vec<u8> {
    use basin_formats::model::{
        Coord, Feature, FeatureSchema, Field, FieldType, Geometry, GeometryKind, Value,
    };
    let ring = vec![
        Coord::xy(5.0, 52.0),
        Coord::xy(5.0, 52.01),
        Coord::xy(5.01, 52.01),
        Coord::xy(5.01, 52.0),
        Coord::xy(5.0, 52.0),
    ];
    let dataset = Dataset {
        header: Header::Features(FeatureSchema {
            fields: vec![Field::new("owner", FieldType::Text)],
            geometry_kind: GeometryKind::Polygon,
            has_z: false,
            has_m: false,
            crs: Some(Crs::Epsg(4326)),
        }),
        data: Data::Features(vec![Feature {
            geometry: Some(Geometry::Polygon(vec![ring])),
            values: vec![Value::Text("water board".into())],
        }]),
    };
    written(&dataset, "ShpWriter", "parcels.zip")
}

api_test!(
    shapefiles_give_vector_tiles_and_ascii_grids_raster_tiles,
    |app| {
        let project = app.create_project(As::Key, "gis", json!({})).await;
        let project = id_str(&project).to_owned();
        let response = app
            .upload_file(&project, "parcels.zip", parcel_shapefile())
            .await;
        let parcels = expect_status(response, StatusCode::CREATED).await;
        let tile = app
            .tiles(id_str(&parcels))
            .vector_tile(14, 8419, 5411)
            .await;
        assert_eq!(tile.status(), StatusCode::OK);
        let bytes = tile.bytes();
        assert!(
            bytes.windows(11).any(|window| window == b"water board"),
            "the attribute is in the tile"
        );
        let far = app.tiles(id_str(&parcels)).vector_tile(14, 0, 0).await;
        assert!(far.bytes().is_empty());
        // An ASCII Grid without a .prj: a WMTS scheme in its own coordinates only.
        let text = "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 10\nNODATA_value -1\n1 2 3\n4 -1 6\n";
        let response = app
            .upload_file(&project, "dem.asc", text.as_bytes().to_vec())
            .await;
        let dem = expect_status(response, StatusCode::CREATED).await;
        let dem = id_str(&dem);
        let metadata = app.tiles(dem).metadata().await;
        let metadata = expect_status(metadata, StatusCode::OK).await;
        let schemes: Vec<&str> = metadata["tilingSchemes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|scheme| scheme["schemeId"].as_str().unwrap())
            .collect();
        assert_eq!(schemes, ["wmts-0"]);
        let wmts = scheme(&metadata, "wmts-0");
        assert_eq!(
            (wmts["minValue"].as_f64(), wmts["maxValue"].as_f64()),
            (Some(1.0), Some(6.0))
        );
        let pixels = tile_pixels(&app, dem, "wmts-0", 0, "").await;
        // The 3 x 2 cells fit one tile at their own 10 m: level 0 is the data's resolution.
        assert_eq!(wmts["zoomLevels"][0], 0);
        assert_eq!(wmts["resolutions"][0], 10.0);
        assert_eq!(pixels[..4], expected_colour(1.0, 1.0, 6.0));
    }
);
