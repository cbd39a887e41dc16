//! GeoTIFF: files GDAL wrote (every layout and codec the reader supports), round trips of
//! every data type through the writer, an independent decoder (the `tiff` crate) on the
//! writer's output, the writer's parameters and notes, every limit, and hostile input.

use std::path::Path;

use crate::helpers::{corpus, fixture, params};

use basin_formats::catalogue::{ReadContext, Reader, Writer, Written};
use basin_formats::crs::Crs;
use basin_formats::geotiff::{CHUNK_BYTES_MAX, GeoTiffReader, GeoTiffWriter};
use basin_formats::model::{
    Data, DataType, Dataset, GeoTransform, GridGeometry, GridHeader, Header, Item, TimeAxis,
    Values, VerticalAxis,
};
use basin_formats::{FormatError, FormatResult, ReadLimits};

fn read_with(path: &Path, raw: &[(&str, &str)], limits: ReadLimits) -> FormatResult<Dataset> {
    let parameters = params(GeoTiffReader.spec().parameters, raw);
    let context = ReadContext {
        limits,
        ..ReadContext::default()
    };
    Dataset::collect(|sink| GeoTiffReader.read(path, &parameters, &context, sink))
}

fn read(path: &Path) -> FormatResult<Dataset> {
    read_with(path, &[], ReadLimits::default())
}

fn write_with(dataset: &Dataset, path: &Path, raw: &[(&str, &str)]) -> FormatResult<Written> {
    let parameters = params(GeoTiffWriter.spec().parameters, raw);
    let mut sink = GeoTiffWriter.create(path, &parameters)?;
    dataset.replay(sink.as_mut())?;
    sink.finish()
}

fn write(dataset: &Dataset, path: &Path) -> Written {
    write_with(dataset, path, &[]).unwrap()
}

fn grid_of(dataset: &Dataset) -> &GridHeader {
    let Header::Grid(grid) = &dataset.header else {
        panic!("a grid expected, got {:?}", dataset.header.kind())
    };
    grid
}

fn steps_of(dataset: &Dataset) -> &Vec<Vec<Values>> {
    let Data::Values(steps) = &dataset.data else {
        panic!("values expected")
    };
    steps
}

/// Compares value buffers bit for bit, so that NaN equals NaN.
fn assert_same(actual: &Values, expected: &Values) {
    assert_eq!(actual.data_type(), expected.data_type());
    assert_eq!(actual.len(), expected.len());
    let bits = |values: &Values, index: usize| match values {
        Values::F32(v) => u64::from(v[index].to_bits()),
        other => other.get_f64(index).unwrap().to_bits(),
    };
    for index in 0..expected.len() {
        assert_eq!(bits(actual, index), bits(expected, index), "value {index}");
    }
}

fn utm_transform() -> GeoTransform {
    GeoTransform::north_up(500_000.0, 6_100_000.0, 25.0, 25.0)
}

fn grid_dataset(
    columns: usize,
    rows: usize,
    items: Vec<Item>,
    values: Vec<Values>,
    transform: GeoTransform,
    crs: Option<Crs>,
) -> Dataset {
    Dataset {
        header: Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns,
                rows,
                vertical: None,
                transform,
                crs,
            },
            items,
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![values]),
    }
}

/// Values of every type with its extremes, zero and, for floats, NaN and infinities.
fn sample_values(data_type: DataType, count: usize) -> Values {
    let pick = |index: usize, extremes: &[f64]| -> f64 {
        match extremes.get(index % 97) {
            Some(value) => *value,
            None => ((index * 31) % 1000) as f64 - 300.0,
        }
    };
    match data_type {
        DataType::U8 => Values::U8((0..count).map(|i| (i * 7 % 256) as u8).collect()),
        DataType::I16 => Values::I16(
            (0..count)
                .map(|i| pick(i, &[-32768.0, 32767.0, 0.0]) as i16)
                .collect(),
        ),
        DataType::U16 => Values::U16(
            (0..count)
                .map(|i| pick(i, &[65535.0, 0.0]).max(0.0) as u16)
                .collect(),
        ),
        DataType::I32 => Values::I32(
            (0..count)
                .map(|i| match i % 97 {
                    0 => i32::MIN,
                    1 => i32::MAX,
                    _ => ((i * 31) % 1000) as i32 * 1001 - 300_000,
                })
                .collect(),
        ),
        DataType::U32 => Values::U32(
            (0..count)
                .map(|i| (pick(i, &[4_294_967_295.0, 0.0]).abs()) as u32)
                .collect(),
        ),
        DataType::F32 => Values::F32(
            (0..count)
                .map(|i| match i % 97 {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    2 => f32::MIN_POSITIVE / 8.0,
                    3 => f32::MAX,
                    _ => (i as f32).sin() * 1234.5,
                })
                .collect(),
        ),
        DataType::F64 => Values::F64(
            (0..count)
                .map(|i| match i % 97 {
                    0 => f64::NAN,
                    1 => f64::NEG_INFINITY,
                    2 => 1e-310,
                    _ => (i as f64).cos() * 1e7,
                })
                .collect(),
        ),
        other => panic!("no sample values for {other:?}"),
    }
}

const ALL_TYPES: [DataType; 7] = [
    DataType::U8,
    DataType::I16,
    DataType::U16,
    DataType::I32,
    DataType::U32,
    DataType::F32,
    DataType::F64,
];

// ---------------------------------------------------------------------------------------
// Files written by GDAL (tests/fixtures/geotiff/make_fixtures.sh).

/// The fixtures' formula (see make_fixtures.sh): the integer value of a cell of a band.
fn fixture_value(column: usize, row: usize, band: usize) -> Option<i64> {
    if (column, row) == (5, 3) {
        return None;
    }
    Some((((row * 37 + column) * 7) % 1000) as i64 - 300 + band as i64 * 1000)
}

fn fixture_values(dataset: &Dataset, band: usize) -> Vec<f64> {
    steps_of(dataset)[0][band].to_f64()
}

#[test]
fn gdal_files_of_every_layout_and_codec_read_exactly() {
    for (name, data_type, divisor) in [
        ("strip_lzw_predictor2_int16.tif", DataType::I16, 1.0),
        ("tiled_deflate_predictor3_float32.tif", DataType::F32, 4.0),
        ("bigtiff_bigendian_packbits_int32.tif", DataType::I32, 1.0),
        ("pixel_is_point_float64.tif", DataType::F64, 4.0),
        ("tiled_zstd_predictor3_float32.tif", DataType::F32, 4.0),
        ("strip_zstd_predictor2_int16.tif", DataType::I16, 1.0),
    ] {
        let dataset = read(&fixture("geotiff", name)).unwrap();
        let grid = grid_of(&dataset);
        assert_eq!(
            (grid.geometry.columns, grid.geometry.rows),
            (37, 23),
            "{name}"
        );
        assert_eq!(grid.items.len(), 1);
        assert_eq!(grid.items[0].data_type, data_type, "{name}");
        assert_eq!(grid.items[0].nodata, Some(-9999.0), "{name}");
        assert_eq!(grid.items[0].name, "Band 1");
        let values = fixture_values(&dataset, 0);
        for row in 0..23 {
            for column in 0..37 {
                let expected =
                    fixture_value(column, row, 0).map_or(-9999.0, |v| v as f64 / divisor);
                assert_eq!(
                    values[row * 37 + column],
                    expected,
                    "{name} at {column}, {row}"
                );
            }
        }
    }
}

#[test]
fn gdal_georeferencing_and_crs_agree_with_gdalinfo() {
    let utm = [500000.0, 25.0, 0.0, 6000575.0, 0.0, -25.0];
    for (name, transform, code) in [
        ("strip_lzw_predictor2_int16.tif", utm, 32632),
        // gdal_translate -a_ullr 9.0 55.0 9.37 54.77 (gdalinfo -json prints 0.01, rounded).
        (
            "tiled_deflate_predictor3_float32.tif",
            [
                9.0,
                (9.37 - 9.0) / 37.0,
                0.0,
                55.0,
                0.0,
                (54.77 - 55.0) / 23.0,
            ],
            4326,
        ),
        ("bigtiff_bigendian_packbits_int32.tif", utm, 25832),
        // PixelIsPoint: the tie point names a cell centre; GDAL reports the corner.
        ("pixel_is_point_float64.tif", utm, 32632),
        (
            "rotated_uint16.tif",
            [500000.0, 25.0, 5.0, 6000575.0, 3.0, -25.0],
            32632,
        ),
    ] {
        let dataset = read(&fixture("geotiff", name)).unwrap();
        let geometry = &grid_of(&dataset).geometry;
        assert_eq!(geometry.transform.to_gdal(), transform, "{name}");
        assert_eq!(geometry.crs, Some(Crs::Epsg(code)), "{name}");
    }
}

#[test]
fn gdal_multi_band_files_give_named_items_chunky_or_planar() {
    for name in [
        "planar_tiled_3band_uint16.tif",
        "chunky_striped_3band_uint16.tif",
    ] {
        let dataset = read(&fixture("geotiff", name)).unwrap();
        let grid = grid_of(&dataset);
        let names: Vec<&str> = grid.items.iter().map(|item| item.name.as_str()).collect();
        assert_eq!(names, ["level 0", "level 1", "level 2"], "{name}");
        for (band, item) in grid.items.iter().enumerate() {
            assert_eq!(item.data_type, DataType::U16);
            assert_eq!(item.nodata, Some(65000.0));
            assert_eq!(item.quantity.unit, "m");
            let values = fixture_values(&dataset, band);
            for row in 0..23 {
                for column in 0..37 {
                    // The VRT passes the ASCII grid's -9999 through; UInt16 clamps it to 0.
                    let expected = fixture_value(column, row, band)
                        .unwrap_or(-9999)
                        .clamp(0, 65535);
                    assert_eq!(
                        values[row * 37 + column],
                        expected as f64,
                        "{name} band {band}"
                    );
                }
            }
        }
    }
}

#[test]
fn gdal_files_survive_a_round_trip_through_the_writer() {
    let folder = tempfile::tempdir().unwrap();
    for name in [
        "planar_tiled_3band_uint16.tif",
        "chunky_striped_3band_uint16.tif",
        "tiled_deflate_predictor3_float32.tif",
        "rotated_uint16.tif",
    ] {
        let original = read(&fixture("geotiff", name)).unwrap();
        let path = folder.path().join(name);
        write(&original, &path);
        assert_eq!(read(&path).unwrap(), original, "{name}");
    }
}

// ---------------------------------------------------------------------------------------
// Round trips through the writer.

#[test]
fn every_data_type_round_trips_across_partial_edge_tiles() {
    let folder = tempfile::tempdir().unwrap();
    // 300 x 270: two tiles across and down, the second ones partial.
    let (columns, rows) = (300, 270);
    for data_type in ALL_TYPES {
        let values = sample_values(data_type, columns * rows);
        let dataset = grid_dataset(
            columns,
            rows,
            vec![Item::new("value", data_type)],
            vec![values.clone()],
            utm_transform(),
            Some(Crs::Epsg(32632)),
        );
        let path = folder.path().join(format!("{}.tif", data_type.gdal_name()));
        let written = write(&dataset, &path);
        assert!(written.notes.is_empty(), "{:?}", written.notes);
        let back = read(&path).unwrap();
        assert_eq!(back.header, dataset.header, "{data_type:?}");
        assert_same(&steps_of(&back)[0][0], &values);
    }
}

#[test]
fn the_writer_parameters_round_trip_and_big_tiff_can_be_forced() {
    let folder = tempfile::tempdir().unwrap();
    for data_type in [DataType::F32, DataType::F64, DataType::I16, DataType::U8] {
        let values = sample_values(data_type, 513 * 7);
        let dataset = grid_dataset(
            513,
            7,
            vec![Item::new("value", data_type)],
            vec![values.clone()],
            utm_transform(),
            Some(Crs::Epsg(32632)),
        );
        let mut variants = vec![
            vec![("Compression", "NONE")],
            vec![("Compression", "NONE"), ("Predictor", "2")],
            vec![("Predictor", "2"), ("ZLevel", "9")],
            vec![("BigTiff", "YES")],
            vec![("BigTiff", "NO"), ("ZLevel", "1")],
        ];
        if data_type.is_float() {
            variants.push(vec![("Predictor", "3")]);
        }
        for raw in variants {
            let path = folder.path().join("variant.tif");
            write_with(&dataset, &path, &raw).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let big = raw.contains(&("BigTiff", "YES"));
            assert_eq!(bytes[2], if big { 43 } else { 42 }, "{raw:?}");
            let back = read(&path).unwrap();
            assert_same(&steps_of(&back)[0][0], &values);
        }
    }
}

#[test]
fn the_default_deflate_level_is_gdals_6_for_every_type() {
    let spec = GeoTiffWriter.spec().parameters;
    let zlevel = spec.iter().find(|spec| spec.name == "ZLevel").unwrap();
    assert_eq!(zlevel.default_value, Some("6"));
    let folder = tempfile::tempdir().unwrap();
    for data_type in [DataType::F32, DataType::I16] {
        let dataset = grid_dataset(
            513,
            300,
            vec![Item::new("value", data_type)],
            vec![sample_values(data_type, 513 * 300)],
            utm_transform(),
            Some(Crs::Epsg(32632)),
        );
        let bytes = |raw: &[(&str, &str)]| {
            let path = folder.path().join("level.tif");
            write_with(&dataset, &path, raw).unwrap();
            std::fs::read(&path).unwrap()
        };
        let default = bytes(&[]);
        assert_eq!(default, bytes(&[("ZLevel", "6")]), "{data_type:?}");
        assert_ne!(default, bytes(&[("ZLevel", "1")]), "{data_type:?}");
    }
}

#[test]
fn invalid_writer_parameters_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("x.tif");
    let zlevel = params(GeoTiffWriter.spec().parameters, &[("ZLevel", "10")]);
    let error = GeoTiffWriter.create(&path, &zlevel).err().unwrap();
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");
    let dataset = grid_dataset(
        2,
        2,
        vec![Item::new("a", DataType::I16)],
        vec![Values::I16(vec![1, 2, 3, 4])],
        utm_transform(),
        None,
    );
    let error = write_with(&dataset, &path, &[("Predictor", "3")]).unwrap_err();
    assert!(error.to_string().contains("float"), "{error}");
}

#[test]
fn several_bands_keep_names_units_and_nodata() {
    let folder = tempfile::tempdir().unwrap();
    let (columns, rows) = (20, 600);
    let mut items = Vec::new();
    let mut values = Vec::new();
    for band in 0..4 {
        let mut item = Item::new(format!("depth <{band}> & more"), DataType::F32);
        item.nodata = Some(-9999.0);
        item.quantity.unit = "m".to_owned();
        items.push(item);
        values.push(Values::F32(
            (0..columns * rows)
                .map(|i| {
                    if i % 13 == 0 {
                        -9999.0
                    } else {
                        (i + band * 1000) as f32
                    }
                })
                .collect(),
        ));
    }
    let dataset = grid_dataset(
        columns,
        rows,
        items,
        values,
        utm_transform(),
        Some(Crs::Epsg(25832)),
    );
    let path = folder.path().join("bands.tif");
    write(&dataset, &path);
    assert_eq!(read(&path).unwrap(), dataset);
}

#[test]
fn rotated_and_south_up_transforms_round_trip() {
    let folder = tempfile::tempdir().unwrap();
    for transform in [
        GeoTransform {
            origin_x: 1000.5,
            pixel_width: 10.0,
            row_rotation: 2.5,
            origin_y: 2000.25,
            column_rotation: -1.5,
            pixel_height: -10.0,
        },
        GeoTransform::north_up(10.0, 20.0, 0.5, -0.25),
    ] {
        let dataset = grid_dataset(
            3,
            2,
            vec![Item::new("a", DataType::U8)],
            vec![Values::U8(vec![1, 2, 3, 4, 5, 6])],
            transform,
            Some(Crs::Epsg(32632)),
        );
        let path = folder.path().join("rotated.tif");
        write(&dataset, &path);
        assert_eq!(grid_of(&read(&path).unwrap()).geometry.transform, transform);
    }
}

#[test]
fn crs_is_written_as_an_epsg_code_or_dropped_with_a_note() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("crs.tif");
    let make = |crs: Option<Crs>| {
        grid_dataset(
            2,
            1,
            vec![Item::new("a", DataType::U8)],
            vec![Values::U8(vec![1, 2])],
            utm_transform(),
            crs,
        )
    };
    for (crs, code) in [
        (Crs::Epsg(4326), 4326),
        (Crs::Epsg(3857), 3857),
        (Crs::Named("UTM-33".to_owned()), 32633),
        (
            Crs::Wkt(r#"PROJCS["WGS_1984_UTM_Zone_32N",GEOGCS["GCS_WGS_1984"]]"#.to_owned()),
            32632,
        ),
    ] {
        let written = write(&make(Some(crs)), &path);
        assert!(written.notes.is_empty(), "{:?}", written.notes);
        let back = read(&path).unwrap();
        assert_eq!(grid_of(&back).geometry.crs, Some(Crs::Epsg(code)));
    }
    let written = write(&make(Some(Crs::Named("NON-UTM".to_owned()))), &path);
    assert!(
        written.notes[0].contains("without one"),
        "{:?}",
        written.notes
    );
    assert_eq!(grid_of(&read(&path).unwrap()).geometry.crs, None);
    let with_srid = read_with(&path, &[("SRID", "32632")], ReadLimits::default()).unwrap();
    assert_eq!(grid_of(&with_srid).geometry.crs, Some(Crs::Epsg(32632)));
}

#[test]
fn a_user_defined_crs_is_read_as_wkt_and_written_back_as_parameters() {
    let expected = "PROJCS[\"unnamed\",GEOGCS[\"unknown\",DATUM[\"unknown\",SPHEROID[\"unknown\",6378137,298.257222101]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]],PROJECTION[\"Transverse_Mercator\"],PARAMETER[\"latitude_of_origin\",0],PARAMETER[\"central_meridian\",10.5],PARAMETER[\"scale_factor\",0.9996],PARAMETER[\"false_easting\",200000],PARAMETER[\"false_northing\",0],UNIT[\"metre\",1]]";
    let dataset = read(&fixture("geotiff", "user_defined_tm_int16.tif")).unwrap();
    assert_eq!(
        grid_of(&dataset).geometry.crs,
        Some(Crs::Wkt(expected.to_owned()))
    );
    // The SRID parameter still overrides a system that has no code.
    let with_srid = read_with(
        &fixture("geotiff", "user_defined_tm_int16.tif"),
        &[("SRID", "25832")],
        ReadLimits::default(),
    )
    .unwrap();
    assert_eq!(grid_of(&with_srid).geometry.crs, Some(Crs::Epsg(25832)));
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("again.tif");
    let written = write_with(&dataset, &path, &[]).unwrap();
    assert!(written.notes.is_empty(), "{:?}", written.notes);
    let back = read(&path).unwrap();
    assert_eq!(
        grid_of(&back).geometry.crs,
        Some(Crs::Wkt(expected.to_owned()))
    );
}

#[test]
fn a_world_file_places_a_tiff_without_georeferencing() {
    let folder = tempfile::tempdir().unwrap();
    let unplaced = GeoTransform::from_gdal([0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    let dataset = grid_dataset(
        4,
        3,
        vec![Item::new("a", DataType::I16)],
        vec![sample_values(DataType::I16, 12)],
        unplaced,
        None,
    );
    let path = folder.path().join("scan.tif");
    write_with(&dataset, &path, &[]).unwrap();
    let srid = [("SRID", "32632")];
    let placed = |path: &Path| {
        let dataset = read_with(path, &srid, ReadLimits::default()).unwrap();
        grid_of(&dataset).geometry.transform
    };
    assert_eq!(placed(&path), unplaced);
    // The centre of the upper-left cell, as world files state it.
    std::fs::write(
        folder.path().join("scan.TFW"),
        "25.0\n0.0\n0.0\n-25.0\n500012.5\n6100087.5\n",
    )
    .unwrap();
    assert_eq!(
        placed(&path),
        GeoTransform::north_up(500_000.0, 6_100_100.0, 25.0, 25.0)
    );
    std::fs::write(folder.path().join("scan.TFW"), "25.0\n0.0\n0.0\n").unwrap();
    let error = read_with(&path, &srid, ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("scan.TFW"), "{error}");
    // GDAL's .aux.xml gives the system, and its geotransform wins over the world file.
    std::fs::write(
        folder.path().join("scan.tfw"),
        "25.0\n0.0\n0.0\n-25.0\n500012.5\n6100087.5\n",
    )
    .unwrap();
    std::fs::remove_file(folder.path().join("scan.TFW")).ok();
    let srs = r#"PROJCS["ETRS89 / UTM zone 32N",AUTHORITY["EPSG","25832"]]"#;
    std::fs::write(
        folder.path().join("scan.tif.aux.xml"),
        format!("<PAMDataset><SRS>{srs}</SRS><GeoTransform>1, 2, 0, 3, 0, -2</GeoTransform></PAMDataset>"),
    )
    .unwrap();
    let dataset = read(&path).unwrap();
    assert_eq!(
        grid_of(&dataset).geometry.crs,
        Some(Crs::Wkt(srs.to_owned()))
    );
    assert_eq!(
        grid_of(&dataset).geometry.transform,
        GeoTransform::north_up(1.0, 3.0, 2.0, 2.0)
    );
    std::fs::write(
        folder.path().join("scan.tif.aux.xml"),
        "<PAMDataset><GeoTransform>1, 2",
    )
    .unwrap();
    let error = read(&path).unwrap_err();
    assert!(error.to_string().contains("scan.tif.aux.xml"), "{error}");
    // A file's own georeferencing wins over a world file.
    let own = folder.path().join("own.tif");
    std::fs::copy(fixture("geotiff", "strip_lzw_predictor2_int16.tif"), &own).unwrap();
    std::fs::write(folder.path().join("own.wld"), "1\n0\n0\n-1\n0.5\n-0.5\n").unwrap();
    assert_eq!(placed(&own).origin_x, 500_000.0);
}

#[test]
fn a_file_crs_wins_over_the_srid_parameter() {
    let dataset = read_with(
        &fixture("geotiff", "strip_lzw_predictor2_int16.tif"),
        &[("SRID", "4326")],
        ReadLimits::default(),
    )
    .unwrap();
    assert_eq!(grid_of(&dataset).geometry.crs, Some(Crs::Epsg(32632)));
}

#[test]
fn time_steps_and_layers_become_named_bands() {
    let folder = tempfile::tempdir().unwrap();
    let start = chrono::NaiveDate::from_ymd_opt(2024, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    let mut geometry = GridGeometry {
        columns: 2,
        rows: 2,
        vertical: Some(VerticalAxis {
            origin: 0.0,
            spacing: 1.0,
            count: 2,
        }),
        transform: utm_transform(),
        crs: Some(Crs::Epsg(32632)),
    };
    let dataset = Dataset {
        header: Header::Grid(GridHeader {
            geometry: geometry.clone(),
            items: vec![Item::new("t", DataType::F32)],
            time: TimeAxis::Equidistant {
                start,
                step_seconds: 3600.0,
                steps: 2,
            },
        }),
        data: Data::Values(vec![
            vec![Values::F32((0..8).map(|v| v as f32).collect())],
            vec![Values::F32((10..18).map(|v| v as f32).collect())],
        ]),
    };
    let path = folder.path().join("series.tif");
    write(&dataset, &path);
    let back = read(&path).unwrap();
    let names: Vec<&str> = grid_of(&back)
        .items
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "t @ 2024-01-01T00:00:00 layer 1",
            "t @ 2024-01-01T00:00:00 layer 2",
            "t @ 2024-01-01T01:00:00 layer 1",
            "t @ 2024-01-01T01:00:00 layer 2",
        ]
    );
    let bands: Vec<Vec<f64>> = steps_of(&back)[0].iter().map(Values::to_f64).collect();
    assert_eq!(bands[1], [4.0, 5.0, 6.0, 7.0]);
    assert_eq!(bands[2], [10.0, 11.0, 12.0, 13.0]);
    geometry.vertical = None;
    assert_eq!(grid_of(&back).geometry, geometry);
}

#[test]
fn mixed_types_and_nodata_values_are_reconciled_with_notes() {
    let folder = tempfile::tempdir().unwrap();
    let mut first = Item::new("a", DataType::U8);
    first.nodata = Some(255.0);
    let mut second = Item::new("b", DataType::I16);
    second.nodata = Some(-1.0);
    let dataset = grid_dataset(
        2,
        1,
        vec![first, second],
        vec![Values::U8(vec![255, 7]), Values::I16(vec![-300, 5])],
        utm_transform(),
        Some(Crs::Epsg(32632)),
    );
    let path = folder.path().join("mixed.tif");
    let written = write(&dataset, &path);
    assert_eq!(written.notes.len(), 2, "{:?}", written.notes);
    assert!(written.notes[0].contains("Int16"));
    assert!(written.notes[1].contains("b"));
    let back = read(&path).unwrap();
    let grid = grid_of(&back);
    assert!(
        grid.items
            .iter()
            .all(|item| item.data_type == DataType::I16)
    );
    assert!(grid.items.iter().all(|item| item.nodata == Some(255.0)));
    assert_eq!(steps_of(&back)[0][0], Values::I16(vec![255, 7]));
    assert_eq!(steps_of(&back)[0][1], Values::I16(vec![-300, 5]));
}

#[test]
fn writing_refuses_what_a_geotiff_cannot_hold() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("bad.tif");
    let no_items = grid_dataset(2, 2, Vec::new(), Vec::new(), utm_transform(), None);
    assert!(write_with(&no_items, &path, &[]).is_err());
    let mut transform = utm_transform();
    transform.origin_x = f64::NAN;
    let not_finite = grid_dataset(
        1,
        1,
        vec![Item::new("a", DataType::U8)],
        vec![Values::U8(vec![1])],
        transform,
        None,
    );
    assert!(write_with(&not_finite, &path, &[]).is_err());
    let short = grid_dataset(
        2,
        2,
        vec![Item::new("a", DataType::U8)],
        vec![Values::U8(vec![1, 2, 3])],
        utm_transform(),
        None,
    );
    let error = write_with(&short, &path, &[]).unwrap_err();
    assert!(error.to_string().contains("ended"), "{error}");
    // 65,535 bands is the most SamplesPerPixel can count; one more is refused at the header.
    let header = |items: usize| {
        Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns: 1,
                rows: 1,
                vertical: None,
                transform: utm_transform(),
                crs: None,
            },
            items: vec![Item::new("a", DataType::U8); items],
            time: TimeAxis::None,
        })
    };
    let parameters = params(GeoTiffWriter.spec().parameters, &[]);
    let mut sink = GeoTiffWriter.create(&path, &parameters).unwrap();
    assert!(sink.begin(&header(65_535)).is_ok());
    let mut sink = GeoTiffWriter.create(&path, &parameters).unwrap();
    let error = sink.begin(&header(65_536)).unwrap_err();
    assert!(error.to_string().contains("65535 bands"), "{error}");
}

#[test]
fn frames_out_of_order_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("order.tif");
    let dataset = grid_dataset(
        2,
        2,
        vec![Item::new("a", DataType::U8)],
        vec![Values::U8(vec![1, 2, 3, 4])],
        utm_transform(),
        None,
    );
    let parameters = params(GeoTiffWriter.spec().parameters, &[]);
    let mut sink = GeoTiffWriter.create(&path, &parameters).unwrap();
    sink.begin(&dataset.header).unwrap();
    let values = Values::U8(vec![1]);
    let frame = |offset| basin_formats::model::Frame {
        step: 0,
        item: 0,
        offset,
        values: &values,
    };
    sink.frame(frame(0)).unwrap();
    assert!(sink.frame(frame(2)).is_err());
}

#[test]
fn an_independent_decoder_reads_the_writers_tiles() {
    use tiff::decoder::{Decoder, DecodingResult};
    let folder = tempfile::tempdir().unwrap();
    let (columns, rows) = (300, 270);
    for (data_type, raw) in [
        (DataType::F32, vec![]),
        (DataType::I16, vec![("BigTiff", "YES")]),
        (DataType::U32, vec![("Predictor", "2")]),
        (DataType::F64, vec![("Compression", "NONE")]),
    ] {
        let values = sample_values(data_type, columns * rows);
        let dataset = grid_dataset(
            columns,
            rows,
            vec![Item::new("v", data_type)],
            vec![values.clone()],
            utm_transform(),
            Some(Crs::Epsg(32632)),
        );
        let path = folder.path().join("independent.tif");
        write_with(&dataset, &path, &raw).unwrap();
        let mut decoder = Decoder::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(decoder.dimensions().unwrap(), (300, 270));
        assert_eq!(decoder.chunk_dimensions(), (256, 256));
        let decoded = match decoder.read_image().unwrap() {
            DecodingResult::F32(v) => Values::F32(v),
            DecodingResult::F64(v) => Values::F64(v),
            DecodingResult::I16(v) => Values::I16(v),
            DecodingResult::U32(v) => Values::U32(v),
            other => panic!("unexpected {other:?}"),
        };
        assert_same(&decoded, &values);
    }
}

// ---------------------------------------------------------------------------------------
// Limits and hostile input. Files are built by hand: a classic little-endian TIFF with the
// given entries, the data after the header and the IFD after the data.

enum Value {
    Shorts(Vec<u16>),
    Longs(Vec<u32>),
    Doubles(Vec<f64>),
    Ascii(String),
}

fn tiff_bytes(entries: &[(u16, Value)], data: &[u8]) -> Vec<u8> {
    let mut entries: Vec<&(u16, Value)> = entries.iter().collect();
    entries.sort_by_key(|(tag, _)| *tag);
    let ifd_offset = (8 + data.len() + 1) & !1;
    let table = 2 + entries.len() * 12 + 4;
    let mut out = b"II".to_vec();
    out.extend_from_slice(&42u16.to_le_bytes());
    out.extend_from_slice(&(ifd_offset as u32).to_le_bytes());
    out.extend_from_slice(data);
    out.resize(ifd_offset, 0);
    let mut extra = Vec::new();
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, value) in entries {
        let (field_type, count, bytes): (u16, usize, Vec<u8>) = match value {
            Value::Shorts(v) => (3, v.len(), v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Value::Longs(v) => (4, v.len(), v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Value::Doubles(v) => (
                12,
                v.len(),
                v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ),
            Value::Ascii(text) => {
                let mut bytes = text.as_bytes().to_vec();
                bytes.push(0);
                (2, bytes.len(), bytes)
            }
        };
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&field_type.to_le_bytes());
        out.extend_from_slice(&(count as u32).to_le_bytes());
        if bytes.len() <= 4 {
            let mut inline = bytes.clone();
            inline.resize(4, 0);
            out.extend_from_slice(&inline);
        } else {
            let offset = ifd_offset + table + extra.len();
            out.extend_from_slice(&(offset as u32).to_le_bytes());
            extra.extend_from_slice(&bytes);
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&extra);
    out
}

/// A 4 x 3 Byte image in one uncompressed strip, EPSG:4326, with `changes` replacing or
/// adding entries.
fn small_tiff(changes: Vec<(u16, Value)>) -> Vec<u8> {
    let mut entries = vec![
        (256, Value::Longs(vec![4])),
        (257, Value::Longs(vec![3])),
        (258, Value::Shorts(vec![8])),
        (259, Value::Shorts(vec![1])),
        (262, Value::Shorts(vec![1])),
        (273, Value::Longs(vec![8])),
        (277, Value::Shorts(vec![1])),
        (278, Value::Longs(vec![3])),
        (279, Value::Longs(vec![12])),
        (33550, Value::Doubles(vec![0.5, 0.5, 0.0])),
        (33922, Value::Doubles(vec![0.0, 0.0, 0.0, 9.0, 55.0, 0.0])),
        (
            34735,
            Value::Shorts(vec![1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326]),
        ),
        (42113, Value::Ascii("0".to_owned())),
    ];
    for (tag, value) in changes {
        entries.retain(|(existing, _)| *existing != tag);
        entries.push((tag, value));
    }
    tiff_bytes(&entries, &(1..=12).collect::<Vec<u8>>())
}

fn read_bytes_with(
    bytes: &[u8],
    raw: &[(&str, &str)],
    limits: ReadLimits,
) -> FormatResult<Dataset> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("input.tif");
    std::fs::write(&path, bytes).unwrap();
    read_with(&path, raw, limits)
}

fn read_bytes(bytes: &[u8]) -> FormatResult<Dataset> {
    read_bytes_with(bytes, &[], ReadLimits::default())
}

fn error_of(bytes: &[u8]) -> String {
    read_bytes(bytes).unwrap_err().to_string()
}

#[test]
fn a_hand_built_file_reads_as_expected() {
    let dataset = read_bytes(&small_tiff(Vec::new())).unwrap();
    let grid = grid_of(&dataset);
    assert_eq!(
        grid.geometry.transform.to_gdal(),
        [9.0, 0.5, 0.0, 55.0, 0.0, -0.5]
    );
    assert_eq!(grid.geometry.crs, Some(Crs::Epsg(4326)));
    assert_eq!(steps_of(&dataset)[0][0], Values::U8((1..=12).collect()));
}

#[test]
fn sparse_strips_are_filled_with_nodata_and_missing_byte_counts_are_computed() {
    let sparse = small_tiff(vec![
        (42113, Value::Ascii("9".to_owned())),
        (273, Value::Longs(vec![0])),
        (279, Value::Longs(vec![0])),
    ]);
    let dataset = read_bytes(&sparse).unwrap();
    assert_eq!(steps_of(&dataset)[0][0], Values::U8(vec![9; 12]));
    let mut entries_without_counts = small_tiff(Vec::new());
    // Rename tag 279 to an unknown tag number (same position, so the order stays valid).
    let position = entries_without_counts
        .windows(4)
        .position(|w| w == [0x17, 0x01, 4, 0])
        .unwrap();
    entries_without_counts[position] = 0x18;
    let dataset = read_bytes(&entries_without_counts).unwrap();
    assert_eq!(steps_of(&dataset)[0][0], Values::U8((1..=12).collect()));
}

#[test]
fn wrong_magic_and_tiny_files_are_not_tiffs() {
    for bytes in [
        &b""[..],
        b"I",
        b"II*",
        b"PK\x03\x04 a zip file",
        b"II\x2b\x00\x04\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00",
        b"MM\x00\x2b\x00\x08\x00\x00",
        b"II\x15\x00\x08\x00\x00\x00",
    ] {
        let error = read_bytes(bytes).unwrap_err();
        assert!(
            matches!(error, FormatError::InvalidInput { .. }),
            "{bytes:?}: {error}"
        );
    }
    assert!(error_of(b"II*\0\0\0\0\0").contains("no image"));
}

#[test]
fn every_truncation_of_a_file_is_an_error_not_a_panic() {
    let folder = tempfile::tempdir().unwrap();
    let dataset = grid_dataset(
        300,
        2,
        vec![Item::new("a", DataType::F32), Item::new("b", DataType::F32)],
        vec![
            sample_values(DataType::F32, 600),
            sample_values(DataType::F32, 600),
        ],
        utm_transform(),
        Some(Crs::Epsg(32632)),
    );
    let path = folder.path().join("whole.tif");
    write(&dataset, &path);
    let whole = std::fs::read(&path).unwrap();
    for length in 0..whole.len() {
        assert!(read_bytes(&whole[..length]).is_err(), "length {length}");
    }
    let small = small_tiff(Vec::new());
    for length in 0..small.len() {
        assert!(read_bytes(&small[..length]).is_err(), "length {length}");
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let folder = tempfile::tempdir().unwrap();
    let dataset = grid_dataset(
        270,
        260,
        vec![Item::new("a", DataType::I16), Item::new("b", DataType::I16)],
        vec![
            sample_values(DataType::I16, 270 * 260),
            sample_values(DataType::I16, 270 * 260),
        ],
        utm_transform(),
        Some(Crs::Epsg(32632)),
    );
    let path = folder.path().join("whole.tif");
    write(&dataset, &path);
    let inputs = [
        std::fs::read(&path).unwrap(),
        std::fs::read(fixture("geotiff", "chunky_striped_3band_uint16.tif")).unwrap(),
        std::fs::read(fixture("geotiff", "bigtiff_bigendian_packbits_int32.tif")).unwrap(),
        small_tiff(Vec::new()),
    ];
    let limits = ReadLimits {
        grid_cells_max: 1_000_000,
        ..ReadLimits::default()
    };
    let mut state = 0x2545_f491_u32;
    for round in 0..600 {
        let mut bytes = inputs[round % inputs.len()].clone();
        for _ in 0..1 + round % 4 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            // Mostly the header and IFD (the end of our files, the start of GDAL's).
            let position = if state.is_multiple_of(2) {
                state as usize % bytes.len().min(400)
            } else {
                bytes.len() - 1 - state as usize % bytes.len().min(400)
            };
            bytes[position] = (state >> 8) as u8;
        }
        let _ = read_bytes_with(&bytes, &[("SRID", "4326")], limits);
    }
}

#[test]
fn absurd_dimensions_are_refused_before_allocation() {
    let huge = small_tiff(vec![
        (256, Value::Longs(vec![u32::MAX])),
        (257, Value::Longs(vec![u32::MAX])),
    ]);
    let error = read_bytes(&huge).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
    let zero = small_tiff(vec![(256, Value::Longs(vec![0]))]);
    assert!(error_of(&zero).contains("0 x 3"));
}

#[test]
fn the_cell_limit_applies_at_and_past_its_value() {
    let bytes = small_tiff(Vec::new());
    let at = ReadLimits {
        grid_cells_max: 12,
        ..ReadLimits::default()
    };
    assert!(read_bytes_with(&bytes, &[], at).is_ok());
    let past = ReadLimits {
        grid_cells_max: 11,
        ..ReadLimits::default()
    };
    let error = read_bytes_with(&bytes, &[], past).unwrap_err();
    assert!(
        matches!(
            error,
            FormatError::LimitExceeded {
                actual: 12,
                limit: 11,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn the_band_limit_applies_at_and_past_its_value() {
    let bytes = small_tiff(vec![
        (277, Value::Shorts(vec![3])),
        (256, Value::Longs(vec![2])),
        (257, Value::Longs(vec![2])),
        (278, Value::Longs(vec![2])),
    ]);
    let at = ReadLimits {
        items_max: 3,
        ..ReadLimits::default()
    };
    let dataset = read_bytes_with(&bytes, &[], at).unwrap();
    assert_eq!(steps_of(&dataset)[0][1], Values::U8(vec![2, 5, 8, 11]));
    let past = ReadLimits {
        items_max: 2,
        ..ReadLimits::default()
    };
    let error = read_bytes_with(&bytes, &[], past).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { actual: 3, .. }),
        "{error}"
    );
}

#[test]
fn tile_sizes_are_limited_at_and_past_chunk_bytes_max() {
    // Float64 tiles whose decoded size is exactly the limit pass the check (and then fail
    // because the tile data is not in the file); one row more is refused up front.
    let side = 4096u32;
    let rows_at = (CHUNK_BYTES_MAX / (u64::from(side) * 8)) as u32;
    let tiled = |height: u32| {
        small_tiff(vec![
            (258, Value::Shorts(vec![64])),
            (339, Value::Shorts(vec![3])),
            (256, Value::Longs(vec![4])),
            (257, Value::Longs(vec![3])),
            (322, Value::Longs(vec![side])),
            (323, Value::Longs(vec![height])),
            (324, Value::Longs(vec![8])),
            (325, Value::Longs(vec![12])),
        ])
    };
    let at = read_bytes(&tiled(rows_at)).unwrap_err();
    assert!(matches!(at, FormatError::InvalidInput { .. }), "{at}");
    let past = read_bytes(&tiled(rows_at + 1)).unwrap_err();
    assert!(matches!(past, FormatError::LimitExceeded { .. }), "{past}");
}

#[test]
fn offsets_and_counts_beyond_the_file_are_errors() {
    let beyond = small_tiff(vec![(273, Value::Longs(vec![1_000_000]))]);
    assert!(
        error_of(&beyond).contains("past the end"),
        "{}",
        error_of(&beyond)
    );
    let long = small_tiff(vec![(279, Value::Longs(vec![u32::MAX]))]);
    assert!(error_of(&long).contains("past the end"));
    let short = small_tiff(vec![(279, Value::Longs(vec![5]))]);
    assert!(
        error_of(&short).contains("ends early"),
        "{}",
        error_of(&short)
    );
    // A huge tile count whose offset array would lie far beyond the file.
    let tiles = small_tiff(vec![
        (256, Value::Longs(vec![60_000])),
        (257, Value::Longs(vec![60_000])),
        (322, Value::Longs(vec![16])),
        (323, Value::Longs(vec![16])),
        (324, Value::Longs(vec![8; 4])),
        (325, Value::Longs(vec![12; 4])),
    ]);
    assert!(
        error_of(&tiles).contains("chunk entries"),
        "{}",
        error_of(&tiles)
    );
}

#[test]
fn a_big_tiff_claiming_absurd_entry_counts_is_refused() {
    let mut bytes = b"II\x2b\x00\x08\x00\x00\x00".to_vec();
    bytes.extend_from_slice(&16u64.to_le_bytes());
    bytes.extend_from_slice(&(1u64 << 60).to_le_bytes());
    bytes.resize(64, 0);
    let error = read_bytes(&bytes).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn the_ifd_entry_limit_applies_at_and_past_its_value() {
    // A BigTIFF whose IFD holds `count` empty entries (tag 0): at the limit the entries are
    // read (and the image then lacks ImageWidth), past it the count alone is refused.
    let big_tiff = |count: u64| {
        let mut bytes = b"II\x2b\x00\x08\x00\x00\x00".to_vec();
        bytes.extend_from_slice(&16u64.to_le_bytes());
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes.resize(24 + 20 * usize::try_from(count).unwrap() + 8, 0);
        bytes
    };
    let at = read_bytes(&big_tiff(65_535)).unwrap_err();
    assert!(at.to_string().contains("ImageWidth is missing"), "{at}");
    let past = read_bytes(&big_tiff(65_536)).unwrap_err();
    assert!(
        matches!(
            past,
            FormatError::LimitExceeded {
                actual: 65_536,
                limit: 65_535,
                ..
            }
        ),
        "{past}"
    );
}

#[test]
fn metadata_text_is_limited_at_and_past_sixteen_mib() {
    let limit = basin_formats::geotiff::METADATA_BYTES_MAX as usize;
    // The text plus its NUL: at the limit it is read (not XML, so ignored), one more refused.
    let at = small_tiff(vec![(42112, Value::Ascii("x".repeat(limit - 1)))]);
    assert_eq!(grid_of(&read_bytes(&at).unwrap()).items[0].name, "Band 1");
    let past = small_tiff(vec![(42112, Value::Ascii("x".repeat(limit)))]);
    let error = read_bytes(&past).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn geokey_and_model_tag_sizes_are_limited_at_and_past_their_values() {
    let geokeys = |values: usize| {
        let mut directory = vec![1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326];
        directory.resize(values, 0);
        small_tiff(vec![(34735, Value::Shorts(directory))])
    };
    let limit = basin_formats::geotiff::GEOKEY_VALUES_MAX as usize;
    let dataset = read_bytes(&geokeys(limit)).unwrap();
    assert_eq!(grid_of(&dataset).geometry.crs, Some(Crs::Epsg(4326)));
    let error = read_bytes(&geokeys(limit + 1)).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
    let tiepoints = |values: usize| {
        let mut points = vec![0.0, 0.0, 0.0, 9.0, 55.0, 0.0];
        points.resize(values, 0.0);
        small_tiff(vec![(33922, Value::Doubles(points))])
    };
    let limit = basin_formats::geotiff::MODEL_VALUES_MAX as usize;
    let dataset = read_bytes(&tiepoints(limit)).unwrap();
    assert_eq!(grid_of(&dataset).geometry.transform.origin_x, 9.0);
    let error = read_bytes(&tiepoints(limit + 1)).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn unsupported_layouts_are_named() {
    let jpeg = small_tiff(vec![(259, Value::Shorts(vec![6]))]);
    assert!(error_of(&jpeg).contains("JPEG"));
    let int64 = small_tiff(vec![
        (258, Value::Shorts(vec![64])),
        (339, Value::Shorts(vec![2])),
    ]);
    assert!(error_of(&int64).contains("64-bit integer"));
    let mixed = small_tiff(vec![
        (277, Value::Shorts(vec![2])),
        (258, Value::Shorts(vec![8, 16])),
    ]);
    assert!(error_of(&mixed).contains("BitsPerSample"));
    let gcps = small_tiff(vec![
        (33550, Value::Doubles(vec![0.0, 0.0, 0.0])),
        (
            33922,
            Value::Doubles(vec![
                0.0, 0.0, 0.0, 9.0, 55.0, 0.0, 3.0, 2.0, 0.0, 10.0, 54.0, 0.0,
            ]),
        ),
    ]);
    assert!(
        error_of(&gcps).contains("ground control points"),
        "{}",
        error_of(&gcps)
    );
}

#[test]
fn a_file_without_crs_is_read_without_one_unless_srid_names_it() {
    let bare = small_tiff(vec![(
        34735,
        Value::Shorts(vec![1, 1, 0, 1, 1025, 0, 1, 1]),
    )]);
    let dataset = read_bytes_with(&bare, &[], ReadLimits::default()).unwrap();
    assert_eq!(grid_of(&dataset).geometry.crs, None);
    let user = small_tiff(vec![(
        34735,
        Value::Shorts(vec![1, 1, 0, 1, 3072, 0, 1, 32767]),
    )]);
    assert!(error_of(&user).contains("user-defined"));
    let dataset = read_bytes_with(&bare, &[("SRID", "25832")], ReadLimits::default()).unwrap();
    assert_eq!(grid_of(&dataset).geometry.crs, Some(Crs::Epsg(25832)));
}

#[test]
fn bad_nodata_text_is_an_error() {
    let bytes = small_tiff(vec![(42113, Value::Ascii("lots".to_owned()))]);
    assert!(error_of(&bytes).contains("GDAL_NODATA"));
}

/// The benchmark of the issue, at the writer alone: a 10,000 x 10,000 float32 grid streamed
/// row by row into GeoTiffWriter, then read back. Run with
/// `cargo test --release -p basin-formats --test geotiff -- --ignored --nocapture` under
/// `/usr/bin/time -v` for the peak memory.
#[test]
#[ignore = "a benchmark: writes 400 MB of values"]
fn a_10000_by_10000_float32_grid_is_written_streaming() {
    use basin_formats::model::Frame;
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("large.tif");
    let size = 10_000;
    let header = Header::Grid(GridHeader {
        geometry: GridGeometry {
            columns: size,
            rows: size,
            vertical: None,
            transform: utm_transform(),
            crs: Some(Crs::Epsg(32632)),
        },
        items: vec![Item::new("elevation", DataType::F32)],
        time: TimeAxis::None,
    });
    // A terrain-like surface with centimetre values, as an ASCII grid would hold.
    let value = |column: usize, row: usize| {
        let (x, y) = (column as f32, row as f32);
        let noise = ((column * 7919 + row * 104_729) % 101) as f32 * 0.01;
        (((x * 0.003).sin() * 120.0 + (y * 0.002).cos() * 80.0 + noise) * 100.0).round() / 100.0
    };
    let started = std::time::Instant::now();
    let parameters = params(GeoTiffWriter.spec().parameters, &[]);
    let mut sink = GeoTiffWriter.create(&path, &parameters).unwrap();
    sink.begin(&header).unwrap();
    let mut row_values = Values::F32(Vec::with_capacity(size));
    for row in 0..size {
        let Values::F32(values) = &mut row_values else {
            unreachable!()
        };
        values.clear();
        values.extend((0..size).map(|column| value(column, row)));
        sink.frame(Frame {
            step: 0,
            item: 0,
            offset: row * size,
            values: &row_values,
        })
        .unwrap();
    }
    sink.end().unwrap();
    sink.finish().unwrap();
    let written = started.elapsed();
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!("wrote {size} x {size} float32 in {written:.2?}: {bytes} bytes");
    let started = std::time::Instant::now();
    let parameters = params(GeoTiffReader.spec().parameters, &[]);
    let mut checker = CheckSink {
        value,
        columns: size,
        seen: 0,
    };
    GeoTiffReader
        .read(&path, &parameters, &ReadContext::default(), &mut checker)
        .unwrap();
    assert_eq!(checker.seen, size * size);
    eprintln!("read back and checked in {:.2?}", started.elapsed());
}

/// Checks streamed values against a formula without keeping them.
struct CheckSink<F> {
    value: F,
    columns: usize,
    seen: usize,
}

impl<F: Fn(usize, usize) -> f32> basin_formats::model::DatasetSink for CheckSink<F> {
    fn begin(&mut self, _header: &Header) -> FormatResult<()> {
        Ok(())
    }

    fn frame(&mut self, frame: basin_formats::model::Frame<'_>) -> FormatResult<()> {
        let Values::F32(values) = frame.values else {
            panic!("float32 expected")
        };
        for (index, value) in values.iter().enumerate() {
            let position = frame.offset + index;
            let expected = (self.value)(position % self.columns, position / self.columns);
            assert_eq!(value.to_bits(), expected.to_bits(), "cell {position}");
        }
        self.seen += values.len();
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 11: JPEG, projections named by code, ArcGIS WKT, polar stereographic and Lambert
// azimuthal equal-area.

/// The WKT a file's CRS was read as.
fn wkt_of(dataset: &Dataset) -> String {
    match &grid_of(dataset).geometry.crs {
        Some(Crs::Wkt(wkt)) => wkt.clone(),
        other => panic!("a WKT expected, got {other:?}"),
    }
}

/// The largest difference between two datasets' values, item by item, and how many differ.
fn largest_difference(ours: &Dataset, gdal: &Dataset) -> (f64, usize) {
    let (ours, gdal) = (steps_of(ours), steps_of(gdal));
    assert_eq!(ours[0].len(), gdal[0].len());
    let mut largest = 0.0_f64;
    let mut differing = 0;
    for (a, b) in ours[0].iter().zip(&gdal[0]) {
        assert_eq!(a.data_type(), DataType::U8);
        assert_eq!(a.len(), b.len());
        for index in 0..a.len() {
            let difference = (a.get_f64(index).unwrap() - b.get_f64(index).unwrap()).abs();
            largest = largest.max(difference);
            differing += usize::from(difference > 0.0);
        }
    }
    (largest, differing)
}

#[test]
fn jpeg_geotiffs_decode_as_gdal_decodes_them_to_within_one() {
    // `<name>.gdal.tif` is GDAL's (libjpeg's) decoding of `<name>.tif`, stored losslessly.
    // The inverse DCTs differ by at most 1; YCbCr's chroma is upsampled differently (zune-jpeg
    // against libjpeg's "fancy" upsampling, most at the edges of strips and tiles), which on
    // this image's noise channel costs up to 4 in tiles and 15 at the partial last strip, on
    // real imagery up to 4 (tests/python/test_geotiff_gdal_classes.py).
    for (name, bound) in [
        ("jpeg_gray_tiled", 1.0),
        ("jpeg_gray_strips", 1.0),
        ("jpeg_ycbcr_tiled", 4.0),
        ("jpeg_ycbcr_strips", 15.0),
        ("jpeg_rgb_strips", 1.0),
        ("jpeg_rgb_planar_tiled", 1.0),
    ] {
        let ours = read(&fixture("geotiff", &format!("{name}.tif"))).unwrap();
        let gdal = read(&fixture("geotiff", &format!("{name}.gdal.tif"))).unwrap();
        assert_eq!(grid_of(&ours).geometry, grid_of(&gdal).geometry, "{name}");
        assert_eq!(grid_of(&ours).items.len(), grid_of(&gdal).items.len());
        let (largest, differing) = largest_difference(&ours, &gdal);
        assert!(
            largest <= bound,
            "{name}: {differing} values differ, at most by {largest}"
        );
    }
}

#[test]
fn real_jpeg_geotiffs_with_overviews_read_as_rgb() {
    for (name, side) in [("cogeo.tif", 1024), ("goes.tif", 542)] {
        let dataset = read(&corpus("rasterio", name)).unwrap();
        let grid = grid_of(&dataset);
        assert_eq!((grid.geometry.columns, grid.geometry.rows), (side, side));
        assert_eq!(grid.items.len(), 3, "{name}");
        assert_eq!(steps_of(&dataset)[0][0].len(), side * side);
    }
}

/// A copy of `source` in `directory` whose SHORT `Compression` (259) is `code`, for a
/// little-endian classic TIFF.
fn with_compression(source: &Path, directory: &Path, code: u16) -> std::path::PathBuf {
    let mut bytes = std::fs::read(source).unwrap();
    let entry = bytes
        .windows(10)
        .position(|window| window[..8] == [0x03, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00])
        .expect("a Compression entry");
    bytes[entry + 8..entry + 10].copy_from_slice(&code.to_le_bytes());
    let path = directory.join(format!("compression_{code}.tif"));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn jpeg_variants_basin_does_not_decode_are_refused_by_name() {
    let twelve = read(&fixture("geotiff", "jpeg_12bit.tif")).unwrap_err();
    assert!(
        twelve
            .to_string()
            .contains("JPEG-compressed 12-bit samples"),
        "{twelve}"
    );
    let directory = tempfile::tempdir().unwrap();
    let source = fixture("geotiff", "jpeg_gray_strips.tif");
    for (code, name) in [(6, "old-style JPEG"), (34925, "LZMA"), (50001, "WebP")] {
        let error = read(&with_compression(&source, directory.path(), code)).unwrap_err();
        assert!(error.to_string().contains(name), "{code}: {error}");
    }
}

#[test]
fn corrupt_and_truncated_jpeg_chunks_are_errors_not_panics() {
    let directory = tempfile::tempdir().unwrap();
    for name in ["jpeg_ycbcr_tiled.tif", "jpeg_gray_strips.tif"] {
        let bytes = std::fs::read(fixture("geotiff", name)).unwrap();
        // The image data lies between the header and the directory GDAL writes at the start.
        for cut in (16..bytes.len()).step_by(97) {
            let mut broken = bytes.clone();
            for byte in broken.iter_mut().skip(cut).take(40) {
                *byte ^= 0x5A;
            }
            let path = directory.path().join("broken.tif");
            std::fs::write(&path, &broken).unwrap();
            let _ = read(&path);
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let _ = read(&path);
        }
        let path = directory.path().join("half.tif");
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(read(&path).is_err(), "{name} cut in half");
    }
}

#[test]
fn a_jpeg_chunk_claiming_more_rows_than_its_tile_is_refused_before_decoding() {
    let mut bytes = std::fs::read(fixture("geotiff", "jpeg_gray_tiled.tif")).unwrap();
    // The first frame header (SOF0: FF C0, length, precision, height, width) of a tile.
    let sof = bytes
        .windows(2)
        .position(|window| window == [0xFF, 0xC0])
        .expect("a frame header");
    bytes[sof + 5..sof + 7].copy_from_slice(&[0xFF, 0xFF]);
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("tall.tif");
    std::fs::write(&path, bytes).unwrap();
    let error = read(&path).unwrap_err().to_string();
    assert!(error.contains("65535 pixels"), "{error}");
}

#[test]
fn a_projection_named_by_code_on_a_user_defined_datum_reads_as_gdal_states_it() {
    // GDAL writes UTM on a datum without an EPSG code as ProjectionGeoKey 16032 alone.
    let dataset = read(&fixture("geotiff", "projection_code_utm_intl.tif")).unwrap();
    let wkt = wkt_of(&dataset);
    for part in [
        "SPHEROID[\"unknown\",6378388,297]",
        "PROJECTION[\"Transverse_Mercator\"]",
        "PARAMETER[\"central_meridian\",9]",
        "PARAMETER[\"scale_factor\",0.9996]",
        "PARAMETER[\"false_easting\",500000]",
        "PARAMETER[\"false_northing\",0]",
        "UNIT[\"metre\",1]",
    ] {
        assert!(wkt.contains(part), "{part} missing from {wkt}");
    }
    // rasterio's rgb-byte-tenth.tif: UTM zone 18N (16018) on the WGS 84 ellipsoid.
    let dataset = read(&corpus("rasterio", "rgb-byte-tenth.tif")).unwrap();
    let wkt = wkt_of(&dataset);
    assert!(wkt.contains("PARAMETER[\"central_meridian\",-75]"), "{wkt}");
    assert!(wkt.contains("6378137,298.257223563"), "{wkt}");
}

#[test]
fn an_arcgis_wkt_in_the_pcs_citation_is_the_crs() {
    let dataset = read(&fixture("geotiff", "esri_pe_laea.tif")).unwrap();
    let wkt = wkt_of(&dataset);
    assert!(
        wkt.starts_with("PROJCS[\"unknown\",GEOGCS[\"GCS_unknown\""),
        "{wkt}"
    );
    assert!(wkt.contains("Lambert_Azimuthal_Equal_Area"), "{wkt}");
    let dataset = read(&corpus("rasterio", "test_esri_wkt.tif")).unwrap();
    let wkt = wkt_of(&dataset);
    assert!(
        wkt.starts_with("PROJCS[\"USA_Contiguous_Albers_Equal_Area_Conic_USGS_version\""),
        "{wkt}"
    );
    // A geostationary system Basin cannot reproject is still the file's CRS.
    let dataset = read(&corpus("rasterio", "goes.tif")).unwrap();
    assert!(wkt_of(&dataset).contains("Geostationary_Satellite"));
}

#[test]
fn polar_stereographic_and_lambert_azimuthal_keys_read_and_write_back() {
    let cases = [
        (
            "polar_stereographic_variant_a.tif",
            vec![
                "PROJECTION[\"Polar_Stereographic\"]",
                "PARAMETER[\"latitude_of_origin\",-90]",
                "PARAMETER[\"central_meridian\",180]",
                "PARAMETER[\"scale_factor\",0.994]",
                "PARAMETER[\"false_easting\",5000000]",
                "PARAMETER[\"false_northing\",1000000]",
            ],
        ),
        (
            "polar_stereographic_variant_b.tif",
            vec![
                "PROJECTION[\"Polar_Stereographic\"]",
                "PARAMETER[\"latitude_of_origin\",-71]",
                "PARAMETER[\"central_meridian\",70]",
                "PARAMETER[\"false_easting\",6000000]",
            ],
        ),
        (
            "lambert_azimuthal_equal_area.tif",
            vec![
                "PROJECTION[\"Lambert_Azimuthal_Equal_Area\"]",
                "PARAMETER[\"latitude_of_center\",52]",
                "PARAMETER[\"longitude_of_center\",10]",
                "PARAMETER[\"false_easting\",4321000]",
                "PARAMETER[\"false_northing\",3210000]",
            ],
        ),
    ];
    let directory = tempfile::tempdir().unwrap();
    for (name, parts) in cases {
        let dataset = read(&corpus("libgeotiff", name)).unwrap();
        let wkt = wkt_of(&dataset);
        for part in parts {
            assert!(wkt.contains(part), "{name}: {part} missing from {wkt}");
        }
        if name.contains("variant_b") {
            assert!(!wkt.contains("scale_factor"), "{wkt}");
        }
        let again = directory.path().join(name);
        let written = write(&dataset, &again);
        assert!(written.notes.is_empty(), "{:?}", written.notes);
        // A definition that matches an EPSG system exactly is written as its code (variant A
        // here is RSRGD2000 / RSPS2000, EPSG:5482); the others keep their keys.
        let identified = basin_formats::crs::resolve_epsg(&Crs::Wkt(wkt.clone()));
        match &grid_of(&read(&again).unwrap()).geometry.crs {
            Some(Crs::Epsg(code)) => assert_eq!(Some(*code), identified, "{name}"),
            Some(Crs::Wkt(again)) => assert_eq!(again, &wkt, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}
