//! Coordinate systems: the EPSG registry, resolving what files say to EPSG codes and proj4,
//! point transformations against GDAL's numbers, and the reprojection sink on every kind of
//! data (in-memory datasets through `Dataset::collect`/`replay`, so these tests need no
//! format reader).
//!
//! Reference numbers come from GDAL 3.6 (Debian gdal-bin, PROJ 9.1) on the machine that wrote
//! the tests; each test names the command.

use std::sync::Arc;

use basin_formats::crs::{
    Crs, CrsTransform, Projection, definition, definitions, is_geographic, resolve_epsg,
    validate_srids, wkt_of,
};
use basin_formats::model::DatasetSink;
use basin_formats::model::{
    Coord, Data, DataType, Dataset, ElementKind, Elements, Feature, FeatureSchema, Field,
    FieldType, GeoTransform, Geometry, GeometryKind, GridGeometry, GridHeader, Header, Item,
    MeshGeometry, MeshHeader, Nodes, PointChunk, PointHeader, Quantity, TimeAxis, TimeSeriesHeader,
    Value, Values, VerticalAxis,
};
use basin_formats::transform::{self, Transformation};
use basin_formats::{FormatError, FormatResult};

const MIKE_UTM32_WKT: &str = r#"PROJCS["UTM-32",GEOGCS["Unused",DATUM["UTM Projections",SPHEROID["WGS 1984",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000],PARAMETER["False_Northing",0],PARAMETER["Central_Meridian",9],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0],UNIT["Meter",1]]"#;

const ESRI_UTM32_WKT: &str = r#"PROJCS["WGS_1984_UTM_Zone_32N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",9.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#;

const CUSTOM_LCC_WKT: &str = r#"PROJCS["Custom_LCC",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic"],PARAMETER["False_Easting",1000000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",10.0],PARAMETER["Standard_Parallel_1",43.0],PARAMETER["Standard_Parallel_2",62.0],PARAMETER["Latitude_Of_Origin",30.0],UNIT["Meter",1.0]]"#;

const CUSTOM_TM_WKT: &str = r#"PROJCS["Local_TM",GEOGCS["GCS_International_1924",DATUM["D_International_1924",SPHEROID["International_1924",6378388.0,297.0]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",200000.0],PARAMETER["False_Northing",-5000000.0],PARAMETER["Central_Meridian",11.5],PARAMETER["Scale_Factor",0.9999],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#;

fn transform(from: &Crs, to: &Crs) -> CrsTransform {
    CrsTransform::new(Projection::of(from).unwrap(), Projection::of(to).unwrap())
}

fn assert_close(actual: (f64, f64), expected: (f64, f64), tolerance: f64) {
    let dx = (actual.0 - expected.0).abs();
    let dy = (actual.1 - expected.1).abs();
    assert!(
        dx <= tolerance && dy <= tolerance,
        "{actual:?} differs from {expected:?} by ({dx}, {dy}), tolerance {tolerance}"
    );
}

// ---------------------------------------------------------------------------------------------
// Registry and resolution

#[test]
fn the_registry_knows_names_wkt_and_proj4_of_common_codes() {
    let wgs84 = definition(4326).unwrap();
    assert_eq!(wgs84.name, "WGS 84");
    assert!(wgs84.proj4.contains("+proj=longlat"));
    assert!(wgs84.wkt.starts_with("GEOGCS[\"WGS 84\""));
    assert_eq!(definition(32632).unwrap().name, "WGS 84 / UTM zone 32N");
    assert_eq!(definition(3857).unwrap().name, "WGS 84 / Pseudo-Mercator");
    assert_eq!(definition(25832).unwrap().name, "ETRS89 / UTM zone 32N");
    assert_eq!(is_geographic(4326), Some(true));
    assert_eq!(is_geographic(32632), Some(false));
    assert_eq!(is_geographic(1), None);
}

#[test]
fn definitions_lists_every_registry_entry_by_ascending_code() {
    let all = definitions();
    assert!(all.len() > 5_000, "{}", all.len());
    assert!(all.windows(2).all(|pair| pair[0].code < pair[1].code));
    assert!(all.iter().all(|def| definition(def.code) == Some(*def)));
    for code in [4326, 25832, 32632, 3857] {
        assert!(all.iter().any(|def| def.code == code), "{code}");
    }
    assert!(std::ptr::eq(all, definitions()), "built once");
}

#[test]
fn unknown_codes_are_not_in_the_registry() {
    for code in [0, 1, 99_999, 70_000, u32::MAX] {
        assert!(definition(code).is_none(), "{code}");
    }
}

#[test]
fn validate_srids_names_the_unknown_code() {
    validate_srids(None, 4326).unwrap();
    validate_srids(Some(32632), 3857).unwrap();
    let error = validate_srids(None, 99_999).unwrap_err();
    assert!(matches!(error, FormatError::Crs(_)));
    assert!(error.to_string().contains("99999"), "{error}");
    let error = validate_srids(Some(123_456), 4326).unwrap_err();
    assert!(error.to_string().contains("123456"), "{error}");
}

#[test]
fn resolve_epsg_reads_authority_codes_of_wkt1_and_wkt2() {
    let wkt = definition(32632).unwrap().wkt;
    assert_eq!(resolve_epsg(&Crs::Wkt(wkt.to_owned())), Some(32632));
    let wkt2 = r#"PROJCRS["whatever",BASEGEOGCRS["WGS 84",ID["EPSG",4326]],ID["EPSG",25832]]"#;
    assert_eq!(resolve_epsg(&Crs::Wkt(wkt2.to_owned())), Some(25832));
}

#[test]
fn resolve_epsg_matches_esri_and_mike_names() {
    assert_eq!(
        resolve_epsg(&Crs::Wkt(ESRI_UTM32_WKT.to_owned())),
        Some(32632)
    );
    assert_eq!(
        resolve_epsg(&Crs::Wkt(MIKE_UTM32_WKT.to_owned())),
        Some(32632)
    );
    let gcs = r#"GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["Degree",0.017453292519943295]]"#;
    assert_eq!(resolve_epsg(&Crs::Wkt(gcs.to_owned())), Some(4326));
    assert_eq!(resolve_epsg(&Crs::Named("UTM-32".to_owned())), Some(32632));
    assert_eq!(resolve_epsg(&Crs::Named("UTM-29".to_owned())), Some(32629));
    assert_eq!(resolve_epsg(&Crs::Named("LONG/LAT".to_owned())), Some(4326));
    assert_eq!(
        resolve_epsg(&Crs::Named("EPSG:3857".to_owned())),
        Some(3857)
    );
    assert_eq!(resolve_epsg(&Crs::Named("NON-UTM".to_owned())), None);
    assert_eq!(resolve_epsg(&Crs::Wkt(CUSTOM_LCC_WKT.to_owned())), None);
    assert_eq!(resolve_epsg(&Crs::Wkt("not wkt at all".to_owned())), None);
    assert_eq!(
        resolve_epsg(&Crs::Proj4("+proj=longlat +datum=WGS84".to_owned())),
        None
    );
}

#[test]
fn wkt_of_gives_the_registry_wkt_for_codes_and_known_names() {
    assert_eq!(
        wkt_of(&Crs::Epsg(32632)).as_deref(),
        Some(definition(32632).unwrap().wkt)
    );
    assert_eq!(
        wkt_of(&Crs::Named("UTM-32".to_owned())).as_deref(),
        Some(definition(32632).unwrap().wkt)
    );
    assert_eq!(wkt_of(&Crs::Wkt("X".to_owned())).as_deref(), Some("X"));
    assert_eq!(wkt_of(&Crs::Named("NON-UTM".to_owned())), None);
    assert_eq!(wkt_of(&Crs::Epsg(99_999)), None);
}

#[test]
fn unresolvable_systems_are_clear_errors() {
    let error = Projection::of(&Crs::Named("NON-UTM".to_owned())).unwrap_err();
    assert!(error.to_string().contains("NON-UTM"), "{error}");
    assert!(error.to_string().contains("input-srid"), "{error}");
    let error = Projection::of(&Crs::Epsg(99_999)).unwrap_err();
    assert!(error.to_string().contains("99999"), "{error}");
    let odd = r#"PROJCS["odd",GEOGCS["g",DATUM["d",SPHEROID["s",6378137,298.257223563]]],PROJECTION["Bonne"]]"#;
    let error = Projection::of(&Crs::Wkt(odd.to_owned())).unwrap_err();
    assert!(error.to_string().contains("odd"), "{error}");
    let error = Projection::of(&Crs::Proj4("+proj=nonsense".to_owned())).unwrap_err();
    assert!(matches!(error, FormatError::Crs(_)), "{error}");
}

// ---------------------------------------------------------------------------------------------
// Point transformations against GDAL

/// `printf '9.5 47.5\n10 55\n' | gdaltransform -s_srs EPSG:4326 -t_srs EPSG:32632 -output_xy`
#[test]
fn wgs84_to_utm32_matches_gdaltransform() {
    let t = transform(&Crs::Epsg(4326), &Crs::Epsg(32632));
    assert_close(
        t.apply(9.5, 47.5).unwrap(),
        (537_656.673_956_035, 5_260_850.875_294_44),
        1e-6,
    );
    assert_close(
        t.apply(10.0, 55.0).unwrap(),
        (563_967.423_102_863, 6_095_248.708_237_82),
        1e-6,
    );
}

/// `printf '500000 6100000\n400000 5000000\n' | gdaltransform -s_srs EPSG:32632
/// -t_srs EPSG:4326 -output_xy`
#[test]
fn utm32_to_wgs84_matches_gdaltransform() {
    let t = transform(&Crs::Epsg(32632), &Crs::Epsg(4326));
    assert_close(
        t.apply(500_000.0, 6_100_000.0).unwrap(),
        (9.0, 55.046_806_304_905_6),
        1e-10,
    );
    assert_close(
        t.apply(400_000.0, 5_000_000.0).unwrap(),
        (7.727_967_039_689_77, 45.146_392_876_171_7),
        1e-10,
    );
}

/// `printf '9.5 47.5\n10 55\n' | gdaltransform -s_srs EPSG:4326 -t_srs EPSG:3857 -output_xy`
/// and `printf '537656.673956035 5260850.87529444\n' | gdaltransform -s_srs EPSG:32632
/// -t_srs EPSG:3857 -output_xy`
#[test]
fn web_mercator_matches_gdaltransform() {
    let t = transform(&Crs::Epsg(4326), &Crs::Epsg(3857));
    assert_close(
        t.apply(9.5, 47.5).unwrap(),
        (1_057_535.162_536_1, 6_024_072.119_373_78),
        1e-6,
    );
    assert_close(
        t.apply(10.0, 55.0).unwrap(),
        (1_113_194.907_932_74, 7_361_866.113_051_19),
        1e-6,
    );
    let t = transform(&Crs::Epsg(32632), &Crs::Epsg(3857));
    assert_close(
        t.apply(537_656.673_956_035, 5_260_850.875_294_44).unwrap(),
        (1_057_535.162_536_1, 6_024_072.119_373_78),
        1e-6,
    );
}

/// `printf '9.5 47.5\n' | gdaltransform -s_srs EPSG:4326 -t_srs EPSG:25832 -output_xy`:
/// GDAL shifts ETRS89 by 0.1 mm against WGS 84 (GRS80 vs WGS 84 ellipsoid), proj4rs treats
/// the two datums as identical (`+towgs84=0,0,0`), so the tolerance is 1 mm.
#[test]
fn etrs89_utm_matches_gdaltransform_within_a_millimetre() {
    let t = transform(&Crs::Epsg(4326), &Crs::Epsg(25832));
    assert_close(
        t.apply(9.5, 47.5).unwrap(),
        (537_656.673_956_372, 5_260_850.875_172_73),
        1e-3,
    );
}

/// `printf -- '-1.5 52.5\n' | gdaltransform -s_srs EPSG:4326 -t_srs EPSG:27700 -output_xy`
/// (PROJ picks the same Helmert shift as the registry's `+datum=OSGB36` here; proj4rs's
/// geocentric conversion differs from PROJ's by 3 mm, so the tolerance is 1 cm).
#[test]
fn a_datum_shift_matches_gdaltransform() {
    let t = transform(&Crs::Epsg(4326), &Crs::Epsg(27700));
    assert_close(
        t.apply(-1.5, 52.5).unwrap(),
        (434_039.457_286_059, 289_239.281_092_673),
        1e-2,
    );
}

/// `printf '12 55\n' | gdaltransform -s_srs EPSG:4326 -t_srs custom_lcc.prj -output_xy` and
/// `... -t_srs local_tm.prj` with the WKT below in the .prj files.
#[test]
fn wkt_without_code_is_built_into_a_projection_matching_gdal() {
    let t = transform(&Crs::Epsg(4326), &Crs::Wkt(CUSTOM_LCC_WKT.to_owned()));
    assert_close(
        t.apply(12.0, 55.0).unwrap(),
        (1_126_301.506_142_38, 2_802_195.701_644_49),
        1e-6,
    );
    let t = transform(&Crs::Epsg(4326), &Crs::Wkt(CUSTOM_TM_WKT.to_owned()));
    assert_close(
        t.apply(12.0, 55.0).unwrap(),
        (231_995.290_456_524, 1_096_867.576_765_77),
        1e-6,
    );
    let back = t
        .inverse()
        .apply(231_995.290_456_524, 1_096_867.576_765_77)
        .unwrap();
    assert_close(back, (12.0, 55.0), 1e-9);
}

#[test]
fn mike_and_proj4_systems_transform_like_their_epsg_codes() {
    let expected = (537_656.673_956_035, 5_260_850.875_294_44);
    for to in [
        Crs::Named("UTM-32".to_owned()),
        Crs::Wkt(MIKE_UTM32_WKT.to_owned()),
        Crs::Wkt(ESRI_UTM32_WKT.to_owned()),
        Crs::Proj4("+proj=utm +zone=32 +datum=WGS84 +units=m +no_defs".to_owned()),
    ] {
        let t = transform(&Crs::Named("LONG/LAT".to_owned()), &to);
        assert_close(t.apply(9.5, 47.5).unwrap(), expected, 1e-6);
    }
}

#[test]
fn positions_outside_the_domain_are_errors_naming_them() {
    let t = transform(&Crs::Epsg(4326), &Crs::Epsg(3857));
    let error = t.apply(0.0, 90.0).unwrap_err();
    assert!(error.to_string().contains("(0, 90)"), "{error}");
    assert!(t.apply(f64::NAN, 0.0).is_err());
    assert!(t.apply(f64::INFINITY, 0.0).is_err());
}

// ---------------------------------------------------------------------------------------------
// The reprojection sink

/// The reprojection as the pipeline installs it.
fn via_pipeline<'a>(
    sink: &'a mut dyn DatasetSink,
    input_srid: Option<u32>,
    output_srid: u32,
) -> FormatResult<Box<dyn DatasetSink + 'a>> {
    transform::apply(
        &[Transformation::Crs {
            input_srid,
            output_srid,
        }],
        sink,
    )
}

fn reproject(dataset: &Dataset, input: Option<u32>, output: u32) -> FormatResult<Dataset> {
    Dataset::collect(|sink| {
        let mut wrapped = via_pipeline(sink, input, output)?;
        dataset.replay(wrapped.as_mut())
    })
}

fn features(crs: Option<Crs>, geometries: Vec<Option<Geometry>>) -> Dataset {
    Dataset {
        header: Header::Features(FeatureSchema {
            fields: vec![Field::new("name", FieldType::Text)],
            geometry_kind: GeometryKind::Any,
            has_z: true,
            has_m: false,
            crs,
        }),
        data: Data::Features(
            geometries
                .into_iter()
                .enumerate()
                .map(|(index, geometry)| Feature {
                    geometry,
                    values: vec![Value::Text(format!("f{index}"))],
                })
                .collect(),
        ),
    }
}

#[test]
fn features_are_reprojected_keeping_z_m_and_attributes() {
    let point = Coord {
        x: 9.5,
        y: 47.5,
        z: Some(12.5),
        m: Some(3.0),
    };
    let ring = vec![
        Coord::xy(9.0, 47.0),
        Coord::xy(10.0, 47.0),
        Coord::xy(10.0, 48.0),
        Coord::xy(9.0, 47.0),
    ];
    let input = features(
        Some(Crs::Epsg(4326)),
        vec![
            Some(Geometry::Point(point)),
            Some(Geometry::Polygon(vec![ring.clone()])),
            None,
            Some(Geometry::GeometryCollection(vec![
                Geometry::MultiPoint(vec![point]),
                Geometry::MultiPolygon(vec![vec![ring.clone()]]),
                Geometry::MultiLineString(vec![ring.clone()]),
                Geometry::LineString(ring),
            ])),
        ],
    );
    let output = reproject(&input, None, 32632).unwrap();
    let Header::Features(schema) = &output.header else {
        panic!("features expected")
    };
    assert_eq!(schema.crs, Some(Crs::Epsg(32632)));
    assert_eq!(schema.fields.len(), 1);
    let Data::Features(out) = &output.data else {
        panic!("features expected")
    };
    assert_eq!(out.len(), 4);
    assert_eq!(out[1].values, vec![Value::Text("f1".into())]);
    let Some(Geometry::Point(moved)) = &out[0].geometry else {
        panic!("point expected")
    };
    assert_close(
        (moved.x, moved.y),
        (537_656.673_956_035, 5_260_850.875_294_44),
        1e-6,
    );
    assert_eq!((moved.z, moved.m), (Some(12.5), Some(3.0)));
    assert_eq!(out[2].geometry, None);
    let Some(Geometry::GeometryCollection(members)) = &out[3].geometry else {
        panic!("collection expected")
    };
    let Geometry::MultiPoint(points) = &members[0] else {
        panic!("multipoint expected")
    };
    assert_eq!(points[0], *moved);
    let Geometry::Polygon(rings) = out[1].geometry.as_ref().unwrap() else {
        panic!("polygon expected")
    };
    assert_eq!(rings[0].first(), rings[0].last(), "rings stay closed");
}

#[test]
fn input_srid_overrides_and_supplies_the_data_crs() {
    let input = features(None, vec![Some(Geometry::Point(Coord::xy(9.5, 47.5)))]);
    let error = reproject(&input, None, 32632).unwrap_err();
    assert!(
        error.to_string().contains("no coordinate system"),
        "{error}"
    );
    let output = reproject(&input, Some(4326), 32632).unwrap();
    let Data::Features(out) = &output.data else {
        panic!()
    };
    let Some(Geometry::Point(moved)) = &out[0].geometry else {
        panic!()
    };
    assert_close(
        (moved.x, moved.y),
        (537_656.673_956_035, 5_260_850.875_294_44),
        1e-6,
    );
    // The data claims UTM, the user says it is really WGS 84: the user wins.
    let wrong = features(
        Some(Crs::Epsg(32633)),
        vec![Some(Geometry::Point(Coord::xy(9.5, 47.5)))],
    );
    let output = reproject(&wrong, Some(4326), 32632).unwrap();
    let Data::Features(out) = &output.data else {
        panic!()
    };
    assert_eq!(out[0].geometry, Some(Geometry::Point(*moved)));
}

#[test]
fn unknown_output_codes_fail_before_any_data() {
    let input = features(Some(Crs::Epsg(4326)), vec![]);
    let error = reproject(&input, None, 99_999).unwrap_err();
    assert!(error.to_string().contains("99999"), "{error}");
    let error = reproject(&input, Some(99_998), 4326).unwrap_err();
    assert!(error.to_string().contains("99998"), "{error}");
}

#[test]
fn data_with_an_unusable_crs_fails_at_begin_with_advice() {
    let input = features(Some(Crs::Named("NON-UTM".to_owned())), vec![]);
    let error = reproject(&input, None, 4326).unwrap_err();
    assert!(error.to_string().contains("input-srid"), "{error}");
}

#[test]
fn untransformable_feature_positions_are_errors() {
    let input = features(
        Some(Crs::Epsg(4326)),
        vec![Some(Geometry::Point(Coord::xy(0.0, 90.0)))],
    );
    assert!(reproject(&input, None, 3857).is_err());
}

#[test]
fn points_are_reprojected_and_keep_their_values() {
    let input = Dataset {
        header: Header::Points(PointHeader {
            crs: Some(Crs::Epsg(32632)),
            z_item: Item::new("z", DataType::F64),
            items: vec![Item::new("extra", DataType::F64)],
            count: Some(2),
        }),
        data: Data::Points(PointChunk {
            x: vec![500_000.0, 400_000.0],
            y: vec![6_100_000.0, 5_000_000.0],
            z: vec![1.0, 2.0],
            items: vec![vec![7.0, 8.0]],
        }),
    };
    let output = reproject(&input, None, 4326).unwrap();
    let Header::Points(header) = &output.header else {
        panic!()
    };
    assert_eq!(header.crs, Some(Crs::Epsg(4326)));
    assert_eq!(header.count, Some(2));
    let Data::Points(chunk) = &output.data else {
        panic!()
    };
    assert_close((chunk.x[0], chunk.y[0]), (9.0, 55.046_806_304_905_6), 1e-10);
    assert_close(
        (chunk.x[1], chunk.y[1]),
        (7.727_967_039_689_77, 45.146_392_876_171_7),
        1e-10,
    );
    assert_eq!(chunk.z, vec![1.0, 2.0]);
    assert_eq!(chunk.items, vec![vec![7.0, 8.0]]);
}

fn mesh(crs: Option<Crs>) -> Dataset {
    let mut elements = Elements::default();
    elements.push(1, ElementKind::Triangle, &[0, 1, 2]);
    let geometry = MeshGeometry {
        nodes: Nodes {
            ids: vec![1, 2, 3],
            x: vec![500_000.0, 400_000.0, 500_000.0],
            y: vec![6_100_000.0, 5_000_000.0, 5_000_000.0],
            z: vec![-5.0, -6.0, -7.0],
            codes: vec![1, 0, 2],
        },
        elements,
        crs,
        z_quantity: Quantity::bathymetry(),
        layers: None,
    };
    Dataset {
        header: Header::Mesh(MeshHeader {
            geometry: Arc::new(geometry),
            items: vec![Item::new("depth", DataType::F32)],
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![vec![Values::F32(vec![4.5])]]),
    }
}

#[test]
fn mesh_nodes_are_reprojected_and_everything_else_kept() {
    let input = mesh(Some(Crs::Named("UTM-32".to_owned())));
    let output = reproject(&input, None, 4326).unwrap();
    let (Header::Mesh(before), Header::Mesh(after)) = (&input.header, &output.header) else {
        panic!()
    };
    let nodes = &after.geometry.nodes;
    assert_close((nodes.x[0], nodes.y[0]), (9.0, 55.046_806_304_905_6), 1e-10);
    assert_close(
        (nodes.x[1], nodes.y[1]),
        (7.727_967_039_689_77, 45.146_392_876_171_7),
        1e-10,
    );
    assert_eq!(nodes.z, before.geometry.nodes.z);
    assert_eq!(nodes.codes, before.geometry.nodes.codes);
    assert_eq!(after.geometry.elements, before.geometry.elements);
    assert_eq!(after.geometry.crs, Some(Crs::Epsg(4326)));
    assert_eq!(after.items, before.items);
    assert_eq!(output.data, input.data);
}

#[test]
fn mesh_without_crs_needs_an_input_srid() {
    let error = reproject(&mesh(None), None, 4326).unwrap_err();
    assert!(error.to_string().contains("input-srid"), "{error}");
    reproject(&mesh(None), Some(32632), 4326).unwrap();
}

#[test]
fn time_series_pass_through_unchanged() {
    let input = Dataset {
        header: Header::TimeSeries(TimeSeriesHeader {
            items: vec![Item::new("level", DataType::F64)],
            time: TimeAxis::Relative(vec![0.0, 60.0]),
            position: None,
        }),
        data: Data::Values(vec![
            vec![Values::F64(vec![1.0])],
            vec![Values::F64(vec![2.0])],
        ]),
    };
    assert_eq!(reproject(&input, None, 4326).unwrap(), input);
}

// ---------------------------------------------------------------------------------------------
// Grid warp against gdalwarp

fn grid(
    crs: u32,
    transform: GeoTransform,
    columns: usize,
    rows: usize,
    nodata: Option<f64>,
) -> Dataset {
    let mut item = Item::new("band", DataType::I32);
    item.nodata = nodata;
    let values: Vec<i32> = (1..=i32::try_from(columns * rows).unwrap()).collect();
    Dataset {
        header: Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns,
                rows,
                vertical: None,
                transform,
                crs: Some(Crs::Epsg(crs)),
            },
            items: vec![item],
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![vec![Values::I32(values)]]),
    }
}

fn warped(dataset: &Dataset) -> (&GridGeometry, Vec<f64>) {
    let Header::Grid(header) = &dataset.header else {
        panic!("grid expected")
    };
    let Data::Values(steps) = &dataset.data else {
        panic!("values expected")
    };
    (&header.geometry, steps[0][0].to_f64())
}

fn assert_geotransform(actual: &GeoTransform, expected: [f64; 6], relative: f64) {
    for (a, e) in actual.to_gdal().iter().zip(expected) {
        let tolerance = relative * e.abs().max(1.0);
        assert!((a - e).abs() <= tolerance, "{actual:?} vs {expected:?}");
    }
}

/// geo.asc: 10 x 8 cells of 0.2 degrees from (9, 54) to (11, 55.6), values 1..80 row by row,
/// NODATA_value -9999.
/// `gdalwarp -s_srs EPSG:4326 -t_srs EPSG:32632 -r near -of AAIGrid geo.asc out.asc`
/// (the same with `-et 0`) gives an 8 x 10 grid, geotransform
/// [500000, 17148.460670034452, 0, 6163377.116374246, 0, -17148.460670034452] and the values
/// below.
#[test]
fn a_geographic_grid_is_warped_to_utm_like_gdalwarp() {
    let input = grid(
        4326,
        GeoTransform::north_up(9.0, 55.6, 0.2, 0.2),
        10,
        8,
        Some(-9999.0),
    );
    let output = reproject(&input, None, 32632).unwrap();
    let (geometry, values) = warped(&output);
    assert_eq!((geometry.columns, geometry.rows), (8, 10));
    assert_eq!(geometry.crs, Some(Crs::Epsg(32632)));
    assert_geotransform(
        &geometry.transform,
        [
            500_000.0,
            17_148.460_670_034_452,
            0.0,
            6_163_377.116_374_246,
            0.0,
            -17_148.460_670_034_452,
        ],
        1e-9,
    );
    #[rustfmt::skip]
    let expected = [
        1., 3., 4., 5., 7., 8., 9., -9999.,
        11., 13., 14., 15., 17., 18., 19., -9999.,
        11., 13., 14., 15., 17., 18., 19., -9999.,
        21., 23., 24., 25., 27., 28., 29., -9999.,
        31., 33., 34., 35., 37., 38., 39., -9999.,
        41., 42., 44., 45., 46., 48., 49., 50.,
        41., 42., 44., 45., 46., 48., 49., 60.,
        51., 52., 54., 55., 56., 58., 59., 60.,
        61., 62., 64., 65., 66., 68., 69., 70.,
        71., 72., 74., 75., 76., 78., 79., 80.,
    ];
    assert_eq!(values, expected);
}

/// utm.asc: 7 x 6 cells of 1000 m from (500000, 6000000), values 1..42, NODATA_value -1.
/// `gdalwarp -s_srs EPSG:32632 -t_srs EPSG:4326 -r near utm.asc out.tif` gives 8 x 4 cells,
/// geotransform [9.0, 0.0130151882171944, 0, 54.202030028610956, 0, -0.0130151882171944].
#[test]
fn a_utm_grid_is_warped_to_geographic_like_gdalwarp() {
    let input = grid(
        32632,
        GeoTransform::north_up(500_000.0, 6_006_000.0, 1000.0, 1000.0),
        7,
        6,
        Some(-1.0),
    );
    let output = reproject(&input, None, 4326).unwrap();
    let (geometry, values) = warped(&output);
    assert_eq!((geometry.columns, geometry.rows), (8, 4));
    assert_geotransform(
        &geometry.transform,
        [
            9.0,
            0.013_015_188_217_194_4,
            0.0,
            54.202_030_028_610_956,
            0.0,
            -0.013_015_188_217_194_4,
        ],
        1e-9,
    );
    #[rustfmt::skip]
    let expected = [
        1., 2., 3., 3., 4., 5., 6., 7.,
        15., 16., 17., 17., 18., 19., 20., 21.,
        22., 23., 24., 24., 25., 26., 27., 28.,
        36., 37., 38., 38., 39., 40., 41., 42.,
    ];
    assert_eq!(values, expected);
}

/// `gdalwarp -s_srs EPSG:32632 -t_srs EPSG:3857 -r near utm.asc out.tif`: 7 x 6 cells,
/// geotransform [1001875.4171394621, 1707.0841072322896, 0, 7208511.591932702, 0,
/// -1707.0841072322896], values unchanged (1..42).
#[test]
fn a_utm_grid_is_warped_to_web_mercator_like_gdalwarp() {
    let input = grid(
        32632,
        GeoTransform::north_up(500_000.0, 6_006_000.0, 1000.0, 1000.0),
        7,
        6,
        Some(-1.0),
    );
    let output = reproject(&input, None, 3857).unwrap();
    let (geometry, values) = warped(&output);
    assert_eq!((geometry.columns, geometry.rows), (7, 6));
    assert_geotransform(
        &geometry.transform,
        [
            1_001_875.417_139_462_1,
            1_707.084_107_232_289_6,
            0.0,
            7_208_511.591_932_702,
            0.0,
            -1_707.084_107_232_289_6,
        ],
        1e-9,
    );
    let expected: Vec<f64> = (1..=42).map(f64::from).collect();
    assert_eq!(values, expected);
}

#[test]
fn grid_values_may_arrive_in_blocks_and_every_step_item_and_layer_is_warped() {
    let columns = 10;
    let rows = 8;
    let layers = 2;
    let cells = columns * rows * layers;
    let mut float_item = Item::new("f", DataType::F32);
    float_item.nodata = None;
    let int_item = Item::new("i", DataType::U8);
    let header = Header::Grid(GridHeader {
        geometry: GridGeometry {
            columns,
            rows,
            vertical: Some(VerticalAxis {
                origin: 0.0,
                spacing: 1.0,
                count: layers,
            }),
            transform: GeoTransform::north_up(9.0, 55.6, 0.2, 0.2),
            crs: Some(Crs::Epsg(4326)),
        },
        items: vec![float_item, int_item],
        time: TimeAxis::Relative(vec![0.0, 1.0]),
    });
    let floats: Vec<f32> = (0..cells).map(|i| i as f32).collect();
    let bytes: Vec<u8> = (0..cells).map(|i| (i % 200) as u8 + 1).collect();
    let output = Dataset::collect(|sink| {
        let mut wrapped = via_pipeline(sink, None, 32632)?;
        wrapped.begin(&header)?;
        for step in 0..2 {
            for (item, values) in [Values::F32(floats.clone()), Values::U8(bytes.clone())]
                .iter()
                .enumerate()
            {
                let all = values.to_f64();
                for (block, chunk) in all.chunks(33).enumerate() {
                    let part = match values {
                        Values::F32(_) => Values::F32(chunk.iter().map(|&v| v as f32).collect()),
                        _ => Values::U8(chunk.iter().map(|&v| v as u8).collect()),
                    };
                    wrapped.frame(basin_formats::model::Frame {
                        step,
                        item,
                        offset: block * 33,
                        values: &part,
                    })?;
                }
            }
        }
        wrapped.end()
    })
    .unwrap();
    let Data::Values(steps) = &output.data else {
        panic!()
    };
    assert_eq!(steps.len(), 2);
    // The first layer of step 0 item 0 matches the one-layer warp of the same grid:
    // gdalwarp's map (see a_geographic_grid_is_warped_to_utm_like_gdalwarp) minus one, with
    // NaN where gdalwarp has nodata because this item has no nodata value.
    let first = steps[0][0].to_f64();
    assert_eq!(first.len(), 8 * 10 * 2);
    assert_eq!(&first[..7], &[0., 2., 3., 4., 6., 7., 8.]);
    assert!(first[7].is_nan());
    // The second layer takes its values from the second input layer.
    assert_eq!(first[80], 80.0);
    let bytes_out = steps[1][1].to_f64();
    assert_eq!(
        bytes_out[7], 0.0,
        "integer items without nodata are filled with 0"
    );
    assert_eq!(bytes_out[0], 1.0);
}

#[test]
fn grid_frames_out_of_order_or_incomplete_are_errors() {
    let input = grid(
        4326,
        GeoTransform::north_up(9.0, 55.6, 0.2, 0.2),
        10,
        8,
        None,
    );
    let Header::Grid(header) = &input.header else {
        panic!()
    };
    let header = Header::Grid(header.clone());
    let values = Values::I32(vec![1; 10]);
    let result = Dataset::collect(|sink| {
        let mut wrapped = via_pipeline(sink, None, 32632)?;
        wrapped.begin(&header)?;
        wrapped.frame(basin_formats::model::Frame {
            step: 0,
            item: 0,
            offset: 5,
            values: &values,
        })?;
        wrapped.end()
    });
    assert!(result.is_err());
    let result = Dataset::collect(|sink| {
        let mut wrapped = via_pipeline(sink, None, 32632)?;
        wrapped.begin(&header)?;
        wrapped.frame(basin_formats::model::Frame {
            step: 0,
            item: 0,
            offset: 0,
            values: &values,
        })?;
        wrapped.end()
    });
    let error = result.unwrap_err();
    assert!(error.to_string().contains("complete"), "{error}");
}

#[test]
fn a_warp_to_an_absurd_size_is_refused_before_allocating() {
    // One-metre cells over a whole UTM zone's worth of longitude: far over the warp limit.
    let input = grid(
        32632,
        GeoTransform::north_up(0.0, 9_000_000.0, 1.0, 1.0),
        1,
        1,
        None,
    );
    let Header::Grid(mut header) = input.header.clone() else {
        panic!()
    };
    header.geometry.columns = 1_000_000;
    header.geometry.rows = 1_000_000;
    let result = Dataset::collect(|sink| {
        let mut wrapped = via_pipeline(sink, None, 4326)?;
        wrapped.begin(&Header::Grid(header))?;
        wrapped.end()
    });
    let error = result.unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn a_rotated_grid_becomes_north_up() {
    let transform = GeoTransform {
        origin_x: 500_000.0,
        pixel_width: 866.025_403_784_438_6,
        row_rotation: 500.0,
        origin_y: 6_006_000.0,
        column_rotation: 500.0,
        pixel_height: -866.025_403_784_438_6,
    };
    let input = grid(32632, transform, 7, 6, Some(-1.0));
    let output = reproject(&input, None, 32632).unwrap();
    let (geometry, values) = warped(&output);
    assert!(geometry.transform.is_north_up());
    assert!(
        values.iter().any(|&value| value == -1.0),
        "corners are outside"
    );
    let sampled = (1..=42)
        .filter(|value| values.contains(&f64::from(*value)))
        .count();
    assert!(
        sampled >= 35,
        "most input cells are sampled ({sampled} of 42)"
    );
}

/// EPSG:4272 (NZGD49) needs the NTv2 grid `nzgd2kgrid0005.gsb`, which proj4rs does not ship:
/// the request fails before any work if proj4rs cannot build it, or transforms if it can.
#[test]
fn registry_entries_needing_shift_grids_fail_in_validation_or_work() {
    match validate_srids(None, 4272) {
        Err(error) => assert!(error.to_string().contains("4272"), "{error}"),
        Ok(()) => {
            Projection::epsg(4272).unwrap();
        }
    }
}

/// The corpus of ESRI `.prj` definitions and what `gdalsrsinfo -e` (GDAL 3.6.2, PROJ 9.1.1)
/// identified each as (a unique 100% match, or none), and Basin's code where it deliberately
/// differs (tests/corpus/<folder>/README.md says why): `(file, gdal, basin)`.
type CorpusEntry = (std::path::PathBuf, Option<u32>, Option<u32>);

fn esri_corpus(folder: &str) -> Vec<CorpusEntry> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus")
        .join(folder);
    let table = std::fs::read_to_string(root.join("expected.tsv")).unwrap();
    table
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut columns = line.split('\t');
            let file = columns.next().unwrap();
            let gdal = columns.next().unwrap().trim().parse().ok();
            let basin = columns.next().map_or(gdal, |code| code.trim().parse().ok());
            (root.join(file), gdal, basin)
        })
        .collect()
}

#[test]
fn esri_prj_files_are_identified_as_gdalsrsinfo_identifies_them() {
    let mut failures = Vec::new();
    let mut count = 0;
    for folder in ["gdal-esri-wkt", "proj4js", "gdal-autotest", "geopandas"] {
        for (path, gdal, expected) in esri_corpus(folder) {
            count += 1;
            let wkt = std::fs::read_to_string(&path).unwrap();
            let found = resolve_epsg(&Crs::Wkt(wkt.trim().to_owned()));
            if found != expected {
                failures.push(format!(
                    "{}: GDAL {gdal:?}, expected {expected:?}, Basin {found:?}",
                    path.display()
                ));
            }
        }
    }
    assert!(count >= 40, "only {count} definitions");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An ESRI `.prj` as ArcGIS writes it (`gdalsrsinfo -o wkt_esri EPSG:<code>` gives ESRI's
/// definition of each), one line.
fn esri(
    projcs: &str,
    geogcs: &str,
    projection: &str,
    parameters: &[(&str, f64)],
    unit: (&str, f64),
) -> String {
    let parameters: String = parameters
        .iter()
        .map(|(name, value)| format!(",PARAMETER[\"{name}\",{value}]"))
        .collect();
    format!(
        "PROJCS[\"{projcs}\",{geogcs},PROJECTION[\"{projection}\"]{parameters},UNIT[\"{}\",{}]]",
        unit.0, unit.1
    )
}

const GCS_NAD83: &str = r#"GEOGCS["GCS_North_American_1983",DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]"#;
const GCS_NAD27: &str = r#"GEOGCS["GCS_North_American_1927",DATUM["D_North_American_1927",SPHEROID["Clarke_1866",6378206.4,294.9786982]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]"#;

fn california_iii(name: &str, false_easting: f64) -> String {
    esri(
        name,
        GCS_NAD83,
        "Lambert_Conformal_Conic",
        &[
            ("False_Easting", false_easting),
            ("False_Northing", 1640416.667),
            ("Central_Meridian", -120.5),
            ("Standard_Parallel_1", 38.4333333333333),
            ("Standard_Parallel_2", 37.0666666666667),
            ("Latitude_Of_Origin", 36.5),
        ],
        ("Foot_US", 0.3048006096012192),
    )
}

#[test]
fn esri_state_plane_and_datum_names_are_identified_by_their_parameters() {
    let resolve = |wkt: String| resolve_epsg(&Crs::Wkt(wkt));
    // gdalsrsinfo -e: EPSG:2227 for ESRI's own name, and Basin finds it whatever the name.
    assert_eq!(
        resolve(california_iii(
            "NAD_1983_StatePlane_California_III_FIPS_0403_Feet",
            6561666.667
        )),
        Some(2227)
    );
    assert_eq!(
        resolve(california_iii("my_local_grid", 6561666.667)),
        Some(2227)
    );
    // One parameter off by a foot is another system, which the registry does not have.
    assert_eq!(resolve(california_iii("my_local_grid", 6561667.667)), None);
    // NAD27 geographic, and NAD27 UTM zone 17N (gdalsrsinfo -e: 4267, 26717).
    let gcs = GCS_NAD27.to_owned();
    assert_eq!(resolve(gcs), Some(4267));
    let utm = esri(
        "NAD_1927_UTM_Zone_17N",
        GCS_NAD27,
        "Transverse_Mercator",
        &[
            ("False_Easting", 500000.0),
            ("False_Northing", 0.0),
            ("Central_Meridian", -81.0),
            ("Scale_Factor", 0.9996),
            ("Latitude_Of_Origin", 0.0),
        ],
        ("Meter", 1.0),
    );
    assert_eq!(resolve(utm), Some(26717));
    // The same parameters on a datum that no registry entry (and no ESRI name) knows.
    let unknown = GCS_NAD27.replace("D_North_American_1927", "D_Somewhere_1911");
    assert_eq!(resolve(unknown), None);
}

#[test]
fn esri_method_variants_map_to_epsg_methods() {
    let resolve = |wkt: &str| resolve_epsg(&Crs::Wkt(wkt.to_owned()));
    // ESRI's Lambert_Conformal_Conic with a scale factor is EPSG's 1SP (NTF Paris, grads).
    let ntf = r#"PROJCS["NTF_Paris_Lambert_Zone_II",GEOGCS["GCS_NTF_Paris",DATUM["D_NTF",SPHEROID["Clarke_1880_IGN",6378249.2,293.466021293627]],PRIMEM["Paris",2.33722917],UNIT["Grad",0.0157079632679489]],PROJECTION["Lambert_Conformal_Conic"],PARAMETER["False_Easting",600000.0],PARAMETER["False_Northing",2200000.0],PARAMETER["Central_Meridian",0.0],PARAMETER["Standard_Parallel_1",52.0],PARAMETER["Scale_Factor",0.99987742],PARAMETER["Latitude_Of_Origin",52.0],UNIT["Meter",1.0]]"#;
    assert_eq!(resolve(ntf), Some(27572));
    // Gauss_Kruger is Transverse Mercator; the ESRI name picks 31467 among identical ones.
    let dhdn = r#"PROJCS["DHDN_3_Degree_Gauss_Zone_3",GEOGCS["GCS_Deutsches_Hauptdreiecksnetz",DATUM["D_Deutsches_Hauptdreiecksnetz",SPHEROID["Bessel_1841",6377397.155,299.1528128]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Gauss_Kruger"],PARAMETER["False_Easting",3500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",9.0],PARAMETER["Scale_Factor",1.0],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#;
    assert_eq!(resolve(dhdn), Some(31467));
    // Albers with ESRI's parameter names (NAD83 / Conus Albers).
    let albers = esri(
        "NAD_1983_Contiguous_USA_Albers",
        GCS_NAD83,
        "Albers",
        &[
            ("False_Easting", 0.0),
            ("False_Northing", 0.0),
            ("Central_Meridian", -96.0),
            ("Standard_Parallel_1", 29.5),
            ("Standard_Parallel_2", 45.5),
            ("Latitude_Of_Origin", 23.0),
        ],
        ("Meter", 1.0),
    );
    assert_eq!(resolve(&albers), Some(5070));
    // ESRI's Web Mercator.
    let web = r#"PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Mercator_Auxiliary_Sphere"],PARAMETER["False_Easting",0.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",0.0],PARAMETER["Standard_Parallel_1",0.0],PARAMETER["Auxiliary_Sphere_Type",0.0],UNIT["Meter",1.0]]"#;
    assert_eq!(resolve(web), Some(3857));
}

#[test]
fn identical_registry_systems_without_a_telling_name_are_not_guessed() {
    // ETRS89 / TM35FIN(E,N) (3067) and ETRS89 / UTM zone 35N (25835) define the same thing:
    // ESRI's name for either picks it, another name leaves the system without a code (GDAL
    // gives both at 70% then).
    let tm35 = |name: &str| {
        format!(
            r#"PROJCS["{name}",GEOGCS["GCS_ETRS_1989",DATUM["D_ETRS_1989",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",27.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#
        )
    };
    assert_eq!(
        resolve_epsg(&Crs::Wkt(tm35("EUREF_FIN_TM35FIN"))),
        Some(3067)
    );
    assert_eq!(
        resolve_epsg(&Crs::Wkt(tm35("ETRS_1989_UTM_Zone_35N"))),
        Some(25835)
    );
    assert_eq!(resolve_epsg(&Crs::Wkt(tm35("Finland"))), None);
}

#[test]
fn malformed_definitions_are_not_identified() {
    let good = california_iii("x", 6561666.667);
    for bad in [
        good.replace("6378137.0", "-1"),
        good.replace("0.3048006096012192", "0"),
        good.replace("Lambert_Conformal_Conic", "Unheard_Of"),
        good.replace("Central_Meridian", "Mystery_Parameter"),
        good.replace("-120.5", "\"abc\""),
        good.replace("PROJCS", "VERTCS"),
    ] {
        assert_eq!(resolve_epsg(&Crs::Wkt(bad.clone())), None, "{bad}");
    }
}

#[test]
fn identification_is_fast_once_the_index_is_built() {
    let start = std::time::Instant::now();
    basin_formats::crs::prepare_identification();
    let build = start.elapsed();
    let wkt = california_iii(
        "NAD_1983_StatePlane_California_III_FIPS_0403_Feet",
        6561666.667,
    );
    let start = std::time::Instant::now();
    let rounds = 200u32;
    for _ in 0..rounds {
        assert_eq!(resolve_epsg(&Crs::Wkt(wkt.clone())), Some(2227));
    }
    let each = start.elapsed() / rounds;
    println!("identification index built in {build:?}; one .prj identified in {each:?}");
    // Generous bounds for a debug build on a shared machine (see docs/formats.md for numbers).
    assert!(each < std::time::Duration::from_millis(20), "{each:?}");
}
