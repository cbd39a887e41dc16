//! DFSU: the generated samples against their full JSON sidecars, the MIKE IO corpus against
//! its summaries, byte-identical writing, the layered top layer, spectra, every error, and the
//! conversions and transformations on DFSU files.

use crate::helpers::corpus;
use std::io::Cursor;
use std::path::Path;

use basin_formats::catalogue::{ReadContext, Reader, Writer, Written};
use basin_formats::dfs::container::{CustomBlock, DfsFile, DfsWriter, StaticItem};
use basin_formats::dfs::dfsu::{DfsuReader, DfsuWriter};
use basin_formats::model::{
    Data, DataType, Dataset, ElementKind, Header, ItemLocation, MeshHeader, TimeAxis, Values,
};
use basin_formats::vtu::VtuReader;
use basin_formats::{Catalogue, Conversion, FormatError, FormatResult, Parameters, ReadLimits};
use serde_json::Value as Json;

fn raw(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn read_with(path: &Path, pairs: &[(&str, &str)]) -> FormatResult<Dataset> {
    let parameters = Parameters::validate(DfsuReader.spec().parameters, &raw(pairs))?;
    Dataset::collect(|sink| DfsuReader.read(path, &parameters, &ReadContext::default(), sink))
}

fn read(path: &Path) -> Dataset {
    read_with(path, &[]).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn mesh(dataset: &Dataset) -> &MeshHeader {
    let Header::Mesh(mesh) = &dataset.header else {
        panic!("a mesh expected")
    };
    mesh
}

fn steps(dataset: &Dataset) -> &Vec<Vec<Values>> {
    let Data::Values(steps) = &dataset.data else {
        panic!("values expected")
    };
    steps
}

fn sidecar(name: &str) -> Json {
    crate::helpers::python_json_file(&corpus("dfs-samples", &format!("{name}.json")))
}

fn numbers(json: &Json) -> Vec<f64> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|value| value.as_f64().unwrap_or(f64::NAN))
        .collect()
}

fn same_f32(actual: &Values, expected: &[f64], what: &str) {
    let actual = actual.to_f64();
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    for (index, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a.is_nan() && e.is_nan()) || (*a as f32) == (*e as f32),
            "{what}[{index}]: {a} != {e}"
        );
    }
}

fn times(axis: &TimeAxis) -> Vec<String> {
    (0..axis.steps())
        .map(|step| {
            axis.time(step)
                .unwrap()
                .format("%Y-%m-%dT%H:%M:%S")
                .to_string()
        })
        .collect()
}

/// The nodes, codes and elements of `geometry` against a sidecar's `geometry`.
fn check_geometry(
    name: &str,
    geometry: &basin_formats::model::MeshGeometry,
    expected_geometry: &Json,
) {
    let coordinates = expected_geometry["node_coordinates"].as_array().unwrap();
    assert_eq!(geometry.nodes.len(), coordinates.len(), "{name}");
    for (index, xyz) in coordinates.iter().enumerate() {
        let xyz = numbers(xyz);
        assert_eq!(geometry.nodes.x[index], xyz[0], "{name} x {index}");
        assert_eq!(geometry.nodes.y[index], xyz[1], "{name} y {index}");
        assert_eq!(
            geometry.nodes.z[index] as f32, xyz[2] as f32,
            "{name} z {index}"
        );
    }
    let codes: Vec<i32> = numbers(&expected_geometry["codes"])
        .into_iter()
        .map(|code| code as i32)
        .collect();
    assert_eq!(geometry.nodes.codes, codes, "{name}");
    let table = expected_geometry["element_table_0based"]
        .as_array()
        .unwrap();
    assert_eq!(geometry.elements.len(), table.len());
    for (index, nodes) in table.iter().enumerate() {
        let nodes: Vec<u32> = numbers(nodes).into_iter().map(|n| n as u32).collect();
        assert_eq!(geometry.elements.nodes(index).unwrap(), nodes.as_slice());
    }
    let kinds: Vec<ElementKind> = numbers(&expected_geometry["element_type_codes"])
        .into_iter()
        .map(|code| match code as i64 {
            21 => ElementKind::Triangle,
            25 => ElementKind::Quad,
            32 => ElementKind::Prism,
            33 => ElementKind::Hexahedron,
            other => panic!("type {other}"),
        })
        .collect();
    assert_eq!(geometry.elements.kinds, kinds);
    assert_eq!(
        geometry.crs,
        Some(basin_formats::crs::Crs::Named("UTM-32".into()))
    );
}

fn check_sample(name: &str) {
    let json = sidecar(name);
    let dataset = read(&corpus("dfs-samples", name));
    let mesh = mesh(&dataset);
    let geometry = &mesh.geometry;
    let expected_geometry = &json["geometry"];
    check_geometry(name, geometry, expected_geometry);
    let expected_times: Vec<String> = json["time"]["all"]
        .as_array()
        .unwrap()
        .iter()
        .map(|time| time.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(times(&mesh.time), expected_times, "{name}");
    let layered = expected_geometry.get("n_layers").is_some();
    let offset = usize::from(layered);
    if layered {
        let layers = geometry.layers.unwrap();
        assert_eq!(
            layers.count as u64,
            expected_geometry["n_layers"].as_u64().unwrap()
        );
        assert_eq!(
            layers.sigma_count as u64,
            expected_geometry["n_sigma_layers"].as_u64().unwrap()
        );
        let z = &mesh.items[0];
        assert_eq!(z.name, "Z coordinate");
        assert_eq!(z.location, ItemLocation::Node);
        for (step, zn) in expected_geometry["zn_dynamic"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            same_f32(&steps(&dataset)[step][0], &numbers(zn), "zn");
        }
    } else {
        assert!(geometry.layers.is_none());
    }
    check_items(name, &dataset, &json, offset);
}

/// The items after the first `offset` of `dataset` against a sidecar's items and data.
fn check_items(name: &str, dataset: &Dataset, json: &Json, offset: usize) {
    let mesh = mesh(dataset);
    let items = json["items"].as_array().unwrap();
    assert_eq!(mesh.items.len(), items.len() + offset);
    for (index, item) in items.iter().enumerate() {
        let model = &mesh.items[index + offset];
        let item_name = item["name"].as_str().unwrap();
        assert_eq!(model.name, item_name);
        assert_eq!(model.location, ItemLocation::Cell);
        assert_eq!(
            model.quantity.eum_item,
            Some(item["eum_type_code"].as_i64().unwrap() as i32)
        );
        assert_eq!(
            model.quantity.eum_unit,
            Some(item["eum_unit_code"].as_i64().unwrap() as i32)
        );
        for (step, expected) in json["data"][item_name]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            same_f32(
                &steps(dataset)[step][index + offset],
                &numbers(expected),
                &format!("{name} {item_name} step {step}"),
            );
        }
    }
}

#[test]
fn the_samples_read_as_their_sidecars_say() {
    for name in ["mesh2d_mixed.dfsu", "mesh2d_neq.dfsu", "mesh3d_sigma.dfsu"] {
        check_sample(name);
    }
}

/// Summary statistics of the values of `items` (item indices) over all steps.
fn summary(dataset: &Dataset, item: usize) -> (usize, usize, f64, f64, f64, f64, f64) {
    let mut count = 0;
    let mut nan = 0;
    let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
    let mut first = f64::NAN;
    let mut last = f64::NAN;
    for step in steps(dataset) {
        for value in step[item].to_f64() {
            count += 1;
            if value.is_nan() {
                nan += 1;
                continue;
            }
            if first.is_nan() {
                first = value;
            }
            last = value;
            min = min.min(value);
            max = max.max(value);
            sum += value;
        }
    }
    (count, nan, min, max, sum, first, last)
}

#[test]
fn the_mikeio_corpus_matches_its_summaries() {
    let folder = corpus("mikeio", "");
    let mut checked = 0;
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("dfsu") {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let expected_path = folder.join("expected").join(format!("{name}.json"));
        if !expected_path.exists() {
            // wind_north_sea has no summary beside it; it must read all the same.
            read(&path);
            continue;
        }
        let expected = crate::helpers::python_json_file(&expected_path);
        let dataset = read(&path);
        let mesh = mesh(&dataset);
        let spectral = expected["kind"] == "GeometryFMPointSpectrum";
        if !spectral {
            assert_eq!(
                mesh.geometry.nodes.len() as u64,
                expected["n_nodes"].as_u64().unwrap(),
                "{name}"
            );
            assert_eq!(
                mesh.geometry.elements.len() as u64,
                expected["n_elements"].as_u64().unwrap(),
                "{name}"
            );
        }
        if let Some(layers) = expected.get("n_layers") {
            let actual = mesh.geometry.layers.unwrap();
            assert_eq!(actual.count as u64, layers.as_u64().unwrap(), "{name}");
            assert_eq!(
                actual.sigma_count as u64,
                expected["n_sigma_layers"].as_u64().unwrap(),
                "{name}"
            );
        }
        assert_eq!(
            mesh.time.steps() as u64,
            expected["n_timesteps"].as_u64().unwrap()
        );
        let start = mesh
            .time
            .time(0)
            .unwrap()
            .format("%Y-%m-%d %H:%M:%S")
            .to_string();
        assert_eq!(start, expected["start_time"].as_str().unwrap(), "{name}");
        check_summaries(&name, &dataset, &expected);
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} corpus files checked");
}

/// The items of `dataset` (the Z coordinate aside) against MIKE IO's summaries of them.
fn check_summaries(name: &str, dataset: &Dataset, expected: &Json) {
    let mesh = mesh(dataset);
    let offset = usize::from(mesh.geometry.layers.is_some());
    let items = expected["items"].as_array().unwrap();
    assert_eq!(mesh.items.len(), items.len() + offset, "{name}");
    for (index, item) in items.iter().enumerate() {
        let model = &mesh.items[index + offset];
        assert_eq!(model.name, item["name"].as_str().unwrap());
        assert_eq!(
            model.quantity.eum_item,
            Some(item["type_code"].as_i64().unwrap() as i32)
        );
        assert_eq!(
            model.quantity.eum_unit,
            Some(item["unit_code"].as_i64().unwrap() as i32)
        );
        let (count, nan, min, max, sum, first, last) = summary(dataset, index + offset);
        let shape: u64 = numbers(&item["shape"]).iter().product::<f64>() as u64;
        assert_eq!(count as u64, shape, "{name} {}", model.name);
        assert_eq!(nan as u64, item["nan_count"].as_u64().unwrap());
        assert_eq!(min as f32, item["min"].as_f64().unwrap() as f32, "{name}");
        assert_eq!(max as f32, item["max"].as_f64().unwrap() as f32, "{name}");
        let expected_sum = item["sum"].as_f64().unwrap();
        assert!(
            (sum - expected_sum).abs() <= 1e-6 * expected_sum.abs().max(1.0),
            "{name}"
        );
        assert_eq!(first as f32, item["first_finite"].as_f64().unwrap() as f32);
        assert_eq!(last as f32, item["last_finite"].as_f64().unwrap() as f32);
    }
}

#[test]
fn a_point_spectrum_is_its_frequency_direction_plane() {
    let dataset = read(&corpus("mikeio", "pt_spectra.dfsu"));
    let mesh = mesh(&dataset);
    assert_eq!(mesh.geometry.nodes.len(), 442);
    assert_eq!(mesh.geometry.elements.len(), 400);
    assert!(mesh.geometry.crs.is_none());
    assert_eq!(steps(&dataset)[0][0].len(), 25 * 16);
}

fn write_with(dataset: &Dataset, path: &Path, pairs: &[(&str, &str)]) -> FormatResult<Written> {
    let parameters = Parameters::validate(DfsuWriter.spec().parameters, &raw(pairs))?;
    let mut sink = DfsuWriter.create(path, &parameters)?;
    dataset.replay(sink.as_mut())?;
    sink.finish()
}

fn is_timestamp(offset: usize) -> bool {
    (0x52..0x5E).contains(&offset) || (0x66..0x72).contains(&offset)
}

#[test]
fn writing_a_samples_content_gives_its_bytes() {
    let folder = tempfile::tempdir().unwrap();
    for (name, title) in [
        ("mesh2d_mixed.dfsu", "Area Series"),
        ("mesh2d_neq.dfsu", "Area Series"),
        ("mesh3d_sigma.dfsu", "3D volume series"),
    ] {
        let source = corpus("dfs-samples", name);
        let dataset = read(&source);
        let output = folder.path().join(name);
        write_with(
            &dataset,
            &output,
            &[
                ("ApplicationTitle", "mikeio"),
                ("ApplicationVersion", "220"),
            ],
        )
        .unwrap();
        let original = std::fs::read(&source).unwrap();
        let written = std::fs::read(&output).unwrap();
        assert_eq!(written.len(), original.len(), "{name}: length");
        let differences: Vec<usize> = (0..written.len())
            .filter(|offset| !is_timestamp(*offset) && written[*offset] != original[*offset])
            .collect();
        assert!(
            differences.is_empty(),
            "{name} ({title}): {} bytes differ, first at {:#x}",
            differences.len(),
            differences[0]
        );
    }
}

#[test]
fn the_writer_defaults_to_basins_titles() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.dfsu");
    let dataset = read(&corpus("dfs-samples", "mesh2d_mixed.dfsu"));
    write_with(&dataset, &output, &[("Title", "My run")]).unwrap();
    let file = DfsFile::open(&output, &ReadLimits::default()).unwrap();
    assert_eq!(file.header.file.title, "My run");
    assert_eq!(file.header.file.application, "Basin");
    assert_eq!(file.header.file.data_type, 2001);
    assert_eq!(read(&output).data, dataset.data);
}

#[test]
fn the_top_layer_of_a_layered_file_is_a_2d_mesh() {
    let json = sidecar("mesh3d_sigma.dfsu");
    let dataset = read_with(
        &corpus("dfs-samples", "mesh3d_sigma.dfsu"),
        &[("ReadFull3D", "false")],
    )
    .unwrap();
    let mesh = mesh(&dataset);
    let geometry = &mesh.geometry;
    assert!(geometry.layers.is_none());
    assert_eq!(
        geometry.elements.kinds,
        [
            ElementKind::Triangle,
            ElementKind::Triangle,
            ElementKind::Quad
        ]
    );
    assert_eq!(geometry.nodes.len(), 6);
    // As MIKE IO's 2D geometry: the columns in order, z the bathymetry at their bottom.
    assert_eq!(geometry.nodes.z, [-10.0, -12.0, -14.0, -8.0, -11.0, -13.0]);
    assert_eq!(geometry.nodes.x, [0.0, 100.0, 200.0, 0.0, 100.0, 200.0]);
    assert_eq!(
        geometry.elements.connectivity,
        [0, 1, 4, 0, 4, 3, 1, 2, 5, 4]
    );
    let names: Vec<&str> = mesh.items.iter().map(|item| item.name.as_str()).collect();
    assert_eq!(names, ["Temperature"]);
    // Top elements are 1, 3 and 5 of the full mesh (0-based).
    for (step, expected) in json["data"]["Temperature"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let expected = numbers(expected);
        same_f32(
            &steps(&dataset)[step][0],
            &[expected[1], expected[3], expected[5]],
            "top layer",
        );
    }
}

#[test]
fn the_top_layer_of_a_vertical_profile_is_a_line() {
    // A vertical profile's top layer is a line of 99 elements (MIKE IO's top_elements).
    let profile = read_with(
        &corpus("mikeio", "oresund_vertical_slice.dfsu"),
        &[("ReadFull3D", "false")],
    )
    .unwrap();
    let surface = &self::mesh(&profile).geometry;
    assert_eq!(surface.elements.len(), 99);
    assert!(
        surface
            .elements
            .kinds
            .iter()
            .all(|kind| *kind == ElementKind::Line)
    );
    let sum = |step: usize| steps(&profile)[step][0].to_f64().iter().sum::<f64>();
    assert!((sum(0) - 1_640.277_587_890_625).abs() < 1e-3, "{}", sum(0));
    assert!(
        (sum(2) - 1_594.856_079_101_562_5).abs() < 1e-3,
        "{}",
        sum(2)
    );
}

#[test]
fn the_top_layer_goes_to_a_mesh_file_and_the_full_mesh_does_not() {
    let folder = tempfile::tempdir().unwrap();
    let catalogue = Catalogue::standard();
    let input = corpus("dfs-samples", "mesh3d_sigma.dfsu");
    let error = catalogue
        .convert(
            &input,
            &folder.path().join("full.mesh"),
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(error.to_string().contains("wedge"), "{error}");
    let top = raw(&[("ReadFull3D", "false")]);
    catalogue
        .convert(
            &input,
            &folder.path().join("top.mesh"),
            &Conversion {
                reader_parameters: &top,
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap();
}

#[test]
fn allowed_item_names_keep_the_z_coordinate_of_a_layered_file() {
    let input = corpus("dfs-samples", "mesh2d_mixed.dfsu");
    let dataset = read_with(&input, &[("AllowedItemNames", "current speed")]).unwrap();
    let names: Vec<&str> = mesh(&dataset)
        .items
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, ["Current speed"]);
    let layered = read_with(
        &corpus("dfs-samples", "mesh3d_sigma.dfsu"),
        &[("AllowedItemNames", "Temperature")],
    )
    .unwrap();
    let names: Vec<&str> = mesh(&layered)
        .items
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, ["Z coordinate", "Temperature"]);
    let error = read_with(&input, &[("AllowedItemNames", "Salinity")]).unwrap_err();
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");
}

// ---------------------------------------------------------------------------------------------
// Files made wrong on purpose: the sample's header changed and written again by the container.

fn rewrite(
    source: &Path,
    output: &Path,
    change: impl FnOnce(&mut basin_formats::dfs::container::DfsHeader),
) {
    let mut file = DfsFile::open(source, &ReadLimits::default()).unwrap();
    let mut header = file.header.clone();
    change(&mut header);
    let mut writer = DfsWriter::create(output, header.clone()).unwrap();
    let mut values = Values::with_capacity(DataType::F32, 0);
    let step_times: Vec<Option<f64>> = if header.file.time.kind.is_equidistant() {
        vec![None; file.steps()]
    } else {
        file.step_times().unwrap().into_iter().map(Some).collect()
    };
    for (step, time) in step_times.into_iter().enumerate() {
        writer.start_step(time).unwrap();
        for item in 0..header.items.len() {
            file.read_values(step, item, &mut values).unwrap();
            writer.write_item(&values).unwrap();
        }
    }
    writer.finish().unwrap();
}

fn broken(change: impl FnOnce(&mut basin_formats::dfs::container::DfsHeader)) -> String {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("broken.dfsu");
    rewrite(&corpus("dfs-samples", "mesh2d_mixed.dfsu"), &output, change);
    read_with(&output, &[]).unwrap_err().to_string()
}

fn set_static(header: &mut basin_formats::dfs::container::DfsHeader, index: usize, values: Values) {
    let item: &mut StaticItem = &mut header.statics[index];
    item.info.axis.counts = vec![values.len() as i32];
    item.values = values;
}

#[test]
fn malformed_meshes_are_refused_naming_the_problem() {
    let error = broken(|header| {
        let Values::I32(connectivity) = &mut header.statics[8].values else {
            panic!()
        };
        connectivity[5] = 10;
    });
    assert!(
        error.contains("node number 10") && error.contains("outside 1..9"),
        "{error}"
    );
    let error = broken(|header| {
        header.custom_blocks[0].values = Values::I32(vec![10, 6, 2, 0, 0]);
    });
    assert!(
        error.contains("9 node ids where the MIKE_FM block announces 10"),
        "{error}"
    );
    let error = broken(|header| {
        let Values::I32(types) = &mut header.statics[6].values else {
            panic!()
        };
        types[2] = 24;
    });
    assert!(error.contains("unknown element type 24"), "{error}");
    let error = broken(|header| {
        let Values::I32(types) = &mut header.statics[6].values else {
            panic!()
        };
        types[0] = 21;
    });
    assert!(
        error.contains("has 3 nodes but the file gives it 4"),
        "{error}"
    );
    let error = broken(|header| header.custom_blocks.clear());
    assert!(error.contains("MIKE_FM block"), "{error}");
    let error = broken(|header| {
        header.custom_blocks = vec![CustomBlock {
            name: "MIKE_FM".into(),
            values: Values::F32(vec![9.0, 6.0, 2.0, 0.0, 0.0]),
        }];
    });
    assert!(error.contains("not 32-bit integers"), "{error}");
    let error = broken(|header| header.custom_blocks[0].values = Values::I32(vec![9, 6, 4, 0, 0]));
    assert!(error.contains("dimension 4"), "{error}");
    let error = broken(|header| header.custom_blocks[0].values = Values::I32(vec![9, 6, 3, 2, 2]));
    assert!(
        error.contains("in a 3-dimensional file (Dfsu3DSigma)"),
        "{error}"
    );
    let error = broken(|header| header.custom_blocks[0].values = Values::I32(vec![9, 6, 2]));
    assert!(
        error.contains("3 numbers where 4 to 6 were expected"),
        "{error}"
    );
    let error = broken(|header| header.custom_blocks[0].values = Values::I32(vec![9, -6, 2, 0, 0]));
    assert!(
        error.contains("number of elements -6 is negative"),
        "{error}"
    );
    let error = broken(|header| header.custom_blocks[0].values = Values::I32(vec![9, 6, 2, 1, 3]));
    assert!(error.contains("3 sigma layers but only 1"), "{error}");
    let error = broken(|header| set_static(header, 1, Values::I32(vec![0; 9])));
    assert!(error.contains("floats were expected"), "{error}");
    let error = broken(|header| header.statics.truncate(7));
    assert!(error.contains("the mesh needs nine"), "{error}");
    let error = broken(|header| set_static(header, 8, Values::I32(vec![1; 3])));
    assert!(error.contains("3 connectivity where"), "{error}");
    let error = broken(|header| set_static(header, 6, Values::F32(vec![21.0; 6])));
    assert!(error.contains("integers were expected"), "{error}");
}

#[test]
fn items_of_the_wrong_size_and_meshes_over_the_limits_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("sizes.dfsu");
    let file = DfsFile::open(
        &corpus("dfs-samples", "mesh2d_mixed.dfsu"),
        &ReadLimits::default(),
    )
    .unwrap();
    let mut header = file.header.clone();
    header.items.truncate(1);
    header.items[0].axis.counts = vec![7];
    let mut writer = DfsWriter::create(&output, header).unwrap();
    writer.start_step(None).unwrap();
    writer.write_item(&Values::F32(vec![0.0; 7])).unwrap();
    writer.finish().unwrap();
    let error = read_with(&output, &[]).unwrap_err().to_string();
    assert!(
        error.contains("7 values per step, 6 or 9 expected"),
        "{error}"
    );
    let parameters = Parameters::default();
    let limits = ReadLimits {
        mesh_elements_max: 5,
        ..ReadLimits::default()
    };
    let context = ReadContext {
        limits,
        ..ReadContext::default()
    };
    let input = corpus("dfs-samples", "mesh2d_mixed.dfsu");
    let error =
        Dataset::collect(|sink| DfsuReader.read(&input, &parameters, &context, sink)).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn a_truncated_file_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(corpus("dfs-samples", "mesh2d_mixed.dfsu")).unwrap();
    let path = folder.path().join("short.dfsu");
    for cut in [bytes.len() - 7, 0x700, 100] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let error = read_with(&path, &[]).unwrap_err();
        assert!(error.is_input_error(), "{cut}: {error}");
    }
}

/// The sample's mesh as an area spectrum of `frequencies` x `directions` values per element,
/// whose frequency and direction static items are the first `axes` of the two. Step `s`
/// holds `s * 100 + i` at position `i`.
fn write_area_spectrum(output: &Path, frequencies: usize, directions: usize, axes: usize) {
    let source = corpus("dfs-samples", "mesh2d_mixed.dfsu");
    let file = DfsFile::open(&source, &ReadLimits::default()).unwrap();
    let mut header = file.header.clone();
    let size = 6 * frequencies * directions;
    header.file.data_type = 2003;
    header.custom_blocks[0].values =
        Values::I32(vec![9, 6, 2, 0, frequencies as i32, directions as i32]);
    header.items.truncate(1);
    header.items[0].axis.counts = vec![size as i32];
    for (name, count) in [("Frequency", frequencies), ("Direction", directions)]
        .into_iter()
        .take(axes)
    {
        let mut axis = header.statics[3].clone();
        axis.info.name = name.into();
        axis.info.axis.counts = vec![count as i32];
        axis.values = Values::F32((0..count).map(|index| index as f32 * 0.1).collect());
        header.statics.push(axis);
    }
    let mut writer = DfsWriter::new(Cursor::new(Vec::new()), output, header).unwrap();
    for step in 0..file.steps() {
        writer.start_step(None).unwrap();
        let values: Vec<f32> = (0..size).map(|index| (step * 100 + index) as f32).collect();
        writer.write_item(&Values::F32(values)).unwrap();
    }
    std::fs::write(output, writer.finish().unwrap().into_inner()).unwrap();
}

#[test]
fn spectral_files_that_cannot_be_flattened_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("area.dfsu");
    write_area_spectrum(&output, 40, 30, 2);
    let error = read_with(&output, &[]).unwrap_err();
    assert!(matches!(error, FormatError::Unsupported { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("40 frequencies x 30 directions x 1 items would make 1200 items"),
        "{error}"
    );
    write_area_spectrum(&output, 2, 3, 1);
    let error = read_with(&output, &[]).unwrap_err().to_string();
    assert!(
        error.contains("the directions of the spectra are missing"),
        "{error}"
    );
}

#[test]
fn an_area_spectrum_is_flattened_into_items_per_frequency_and_direction() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("area.dfsu");
    // Two frequencies and three directions at each of the six elements.
    write_area_spectrum(&output, 2, 3, 2);
    let dataset = read(&output);
    let mesh = mesh(&dataset);
    assert_eq!(mesh.items.len(), 6);
    assert_eq!(mesh.items[0].name, "Surface elevation f0 d0");
    assert_eq!(mesh.items[1].name, "Surface elevation f1 d0");
    assert_eq!(mesh.items[5].name, "Surface elevation f1 d2");
    // Direction-major, then frequency, then element, as MIKE IO reshapes them.
    assert_eq!(
        steps(&dataset)[1][1],
        Values::F32((106..112).map(|v| v as f32).collect())
    );
    // Only the wanted part is sent through a filter.
    let filtered = Dataset::collect(|sink| {
        let mut filtered = basin_formats::transform::apply(
            &[basin_formats::Transformation::ItemFilter(
                basin_formats::ItemSelection {
                    indices: vec![4],
                    names: Vec::new(),
                },
            )],
            sink,
        )?;
        DfsuReader.read(
            &output,
            &Parameters::default(),
            &ReadContext::default(),
            filtered.as_mut(),
        )
    })
    .unwrap();
    assert_eq!(
        steps(&filtered)[0][0],
        Values::F32((24..30).map(|v| v as f32).collect())
    );
}

// ---------------------------------------------------------------------------------------------
// Writing what DFSU cannot hold

#[test]
fn meshes_dfsu_cannot_hold_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.dfsu");
    let mut dataset = read(&corpus("dfs-samples", "mesh2d_mixed.dfsu"));
    let Header::Mesh(mesh) = &mut dataset.header else {
        panic!()
    };
    let mut geometry = (*mesh.geometry).clone();
    geometry.elements.kinds[1] = ElementKind::Tetra;
    mesh.geometry = std::sync::Arc::new(geometry);
    let error = write_with(&dataset, &output, &[]).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("tetra (VTK 10) cells cannot be written to DFSU"),
        "{error}"
    );
    let mut layered = read(&corpus("dfs-samples", "mesh3d_sigma.dfsu"));
    let Header::Mesh(mesh) = &mut layered.header else {
        panic!()
    };
    let mut geometry = (*mesh.geometry).clone();
    geometry.layers = None;
    mesh.geometry = std::sync::Arc::new(geometry);
    let error = write_with(&layered, &output, &[]).unwrap_err();
    assert!(error.to_string().contains("needs its layers"), "{error}");
    let change = |change: &dyn Fn(&mut basin_formats::model::MeshGeometry)| {
        let mut dataset = read(&corpus("dfs-samples", "mesh2d_mixed.dfsu"));
        let Header::Mesh(mesh) = &mut dataset.header else {
            panic!()
        };
        let mut geometry = (*mesh.geometry).clone();
        change(&mut geometry);
        mesh.geometry = std::sync::Arc::new(geometry);
        write_with(&dataset, &output, &[]).unwrap_err().to_string()
    };
    let error = change(&|geometry| geometry.elements.kinds[2] = ElementKind::Line);
    assert!(
        error.contains("element 3 is a line among elements of dimension 2"),
        "{error}"
    );
    let error = change(&|geometry| geometry.nodes.y[4] = f64::NAN);
    assert!(
        error.contains("node 5 has a coordinate that is not a finite number"),
        "{error}"
    );
    let error = change(&|geometry| geometry.nodes.ids[0] = 1 << 40);
    assert!(
        error.contains("node ids beyond the 32-bit range"),
        "{error}"
    );
}

#[test]
fn values_of_the_wrong_length_and_other_kinds_of_data_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.dfsu");
    // Values of the wrong length for the mesh.
    let mut dataset = read(&corpus("dfs-samples", "mesh2d_mixed.dfsu"));
    let Data::Values(steps) = &mut dataset.data else {
        panic!()
    };
    steps[1][1] = Values::F32(vec![1.0; 5]);
    let error = write_with(&dataset, &output, &[]).unwrap_err().to_string();
    assert!(
        error.contains("\"Current speed\" has 5 values at step 1, 6 expected"),
        "{error}"
    );
    // A grid is not a mesh.
    let grid = Dataset {
        header: Header::Grid(basin_formats::model::GridHeader {
            geometry: basin_formats::model::GridGeometry {
                columns: 1,
                rows: 1,
                vertical: None,
                transform: basin_formats::model::GeoTransform::north_up(0.0, 1.0, 1.0, 1.0),
                crs: None,
            },
            items: Vec::new(),
            time: TimeAxis::None,
        }),
        data: Data::Values(Vec::new()),
    };
    let error = write_with(&grid, &output, &[]).unwrap_err().to_string();
    assert!(error.contains("a DFSU file holds a mesh"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// Conversions

fn convert(input: &Path, output: &Path, writer_parameters: &[(&str, &str)]) -> Written {
    let writer_parameters = raw(writer_parameters);
    Catalogue::standard()
        .convert(
            input,
            output,
            &Conversion {
                writer_parameters: &writer_parameters,
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap()
}

#[test]
fn a_layered_file_to_vtu_moves_the_points_with_the_z_item() {
    let json = sidecar("mesh3d_sigma.dfsu");
    let folder = tempfile::tempdir().unwrap();
    let pvd = folder.path().join("sigma.pvd");
    convert(&corpus("dfs-samples", "mesh3d_sigma.dfsu"), &pvd, &[]);
    for step in 0..3 {
        let vtu = folder
            .path()
            .join("sigma")
            .join(format!("sigma_{step:04}.vtu"));
        let dataset = Dataset::collect(|sink| {
            VtuReader.read(&vtu, &Parameters::default(), &ReadContext::default(), sink)
        })
        .unwrap();
        let mesh = mesh(&dataset);
        let zn = numbers(&json["geometry"]["zn_dynamic"][step]);
        let z: Vec<f64> = mesh.geometry.nodes.z.clone();
        same_f32(&Values::F64(z), &zn, "point z");
        let names: Vec<&str> = mesh.items.iter().map(|item| item.name.as_str()).collect();
        assert_eq!(names, ["Temperature"]);
        let kinds: Vec<u8> = mesh
            .geometry
            .elements
            .kinds
            .iter()
            .map(|k| k.vtk_type())
            .collect();
        assert_eq!(kinds, [13, 13, 13, 13, 12, 12]);
        same_f32(
            &steps(&dataset)[0][0],
            &numbers(&json["data"]["Temperature"][step]),
            "cell data",
        );
    }
}

#[test]
fn one_step_of_a_dfsu_becomes_polygons_in_geojson_and_shapefile() {
    let json = sidecar("mesh2d_mixed.dfsu");
    let folder = tempfile::tempdir().unwrap();
    let input = corpus("dfs-samples", "mesh2d_mixed.dfsu");
    for (step, parameter) in [(2, "2"), (4, "-1"), (0, "-5")] {
        let output = folder.path().join(format!("step{step}.geojson"));
        convert(&input, &output, &[("TimeStep", parameter)]);
        let document: Json =
            serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
        let features = document["features"].as_array().unwrap();
        assert_eq!(features.len(), 6);
        let expected = numbers(&json["data"]["Surface elevation"][step]);
        for (feature, value) in features.iter().zip(&expected) {
            assert_eq!(feature["geometry"]["type"], "Polygon");
            let actual = feature["properties"]["Surface elevation"].as_f64().unwrap();
            assert_eq!(actual as f32, *value as f32);
        }
    }
    let error = Catalogue::standard()
        .convert(
            &input,
            &folder.path().join("late.geojson"),
            &Conversion {
                writer_parameters: &raw(&[("TimeStep", "5")]),
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(error.to_string().contains("5 time steps"), "{error}");
    let written = convert(
        &input,
        &folder.path().join("elements.shp"),
        &[("TimeStep", "1")],
    );
    assert!(
        written
            .files
            .iter()
            .any(|file| file.extension().unwrap() == "dbf")
    );
}

#[test]
fn a_mesh_file_becomes_a_dfsu_with_a_bathymetry_item_and_back() {
    let folder = tempfile::tempdir().unwrap();
    let dfsu = folder.path().join("mesh.dfsu");
    convert(&corpus("dfs-samples", "mesh2d_mixed.mesh"), &dfsu, &[]);
    let dataset = read(&dfsu);
    let mesh = mesh(&dataset);
    assert_eq!(mesh.items.len(), 1);
    assert_eq!(mesh.items[0].name, "Bathymetry");
    assert_eq!(mesh.items[0].quantity.eum_item, Some(100_079));
    assert_eq!(mesh.time.steps(), 1);
    let geometry = &mesh.geometry;
    let means: Vec<f64> = (0..geometry.elements.len())
        .map(|element| {
            let nodes = geometry.elements.nodes(element).unwrap();
            nodes
                .iter()
                .map(|n| geometry.nodes.z[*n as usize])
                .sum::<f64>()
                / nodes.len() as f64
        })
        .collect();
    same_f32(&steps(&dataset)[0][0], &means, "bathymetry");
    let back = folder.path().join("back.mesh");
    convert(&dfsu, &back, &[]);
    let text = std::fs::read_to_string(&back).unwrap();
    assert!(text.starts_with("100079 1000 9 UTM-32"), "{text}");
}

#[test]
fn transformations_apply_to_dfsu() {
    let folder = tempfile::tempdir().unwrap();
    let input = corpus("dfs-samples", "mesh2d_mixed.dfsu");
    let run = |transformation: basin_formats::Transformation, reader: &[(&str, &str)]| {
        let output = folder.path().join("filtered.dfsu");
        let reader = raw(reader);
        Catalogue::standard()
            .convert(
                &input,
                &output,
                &Conversion {
                    reader_parameters: &reader,
                    transformations: &[transformation],
                    ..Conversion::default()
                },
                &ReadContext::default(),
            )
            .unwrap();
        read(&output)
    };
    let source = read(&input);
    let items = run(
        basin_formats::Transformation::ItemFilter(basin_formats::ItemSelection {
            indices: Vec::new(),
            names: vec!["Current speed".into()],
        }),
        &[],
    );
    assert_eq!(mesh(&items).items.len(), 1);
    assert_eq!(steps(&items)[3][0], steps(&source)[3][1]);
    let time = run(
        basin_formats::Transformation::TemporalFilter(basin_formats::TemporalFilter::IndexRange {
            from: Some(1),
            to: Some(3),
        }),
        &[],
    );
    assert_eq!(steps(&time).len(), 3);
    assert_eq!(steps(&time)[0], steps(&source)[1]);
    let moved = run(
        basin_formats::Transformation::Crs {
            input_srid: None,
            output_srid: 4326,
        },
        &[("SRID", "32632")],
    );
    let x = mesh(&moved).geometry.nodes.x[0];
    assert!((x - 9.0).abs() < 0.01, "{x}");
    assert_eq!(steps(&moved), steps(&source));
}

#[test]
fn items_and_steps_a_filter_drops_are_not_read() {
    // Step 3 of the second item is made unreadable: reading it fails, and a conversion that
    // drops it (by item, or by step) never touches it.
    let folder = tempfile::tempdir().unwrap();
    let source = corpus("dfs-samples", "mesh2d_mixed.dfsu");
    let file = DfsFile::open(&source, &ReadLimits::default()).unwrap();
    // A step: the 4-byte marker, then six float32 values of each item with a 5-byte head.
    let second_item = 4 + 5 + 6 * 4;
    let at = file.data_start() + 3 * file.step_bytes() + second_item;
    let mut bytes = std::fs::read(&source).unwrap();
    assert_eq!(bytes[at as usize], 1, "a float32 record head");
    bytes[at as usize] = 2;
    let input = folder.path().join("damaged.dfsu");
    std::fs::write(&input, &bytes).unwrap();
    let error = read_with(&input, &[]).unwrap_err();
    assert!(error.to_string().contains("step 3 item 1"), "{error}");
    let first = read_with(&input, &[("AllowedItemNames", "Surface elevation")]).unwrap();
    assert_eq!(steps(&first).len(), 5);
    let output = folder.path().join("early.dfsu");
    Catalogue::standard()
        .convert(
            &input,
            &output,
            &Conversion {
                transformations: &[basin_formats::Transformation::TemporalFilter(
                    basin_formats::TemporalFilter::IndexRange {
                        from: Some(0),
                        to: Some(2),
                    },
                )],
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap();
    assert_eq!(steps(&read(&output)).len(), 3);
}

#[test]
fn node_items_are_written_as_element_means() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("nodes.dfsu");
    let source = read(&corpus("dfs-samples", "mesh2d_mixed.dfsu"));
    let Header::Mesh(mesh) = &source.header else {
        panic!()
    };
    let geometry = mesh.geometry.clone();
    let mut depth = basin_formats::model::Item::new("depth", DataType::F64);
    depth.location = ItemLocation::Node;
    let mut node_values: Vec<f64> = (0..9).map(f64::from).collect();
    node_values[8] = f64::NAN;
    let dataset = Dataset {
        header: Header::Mesh(MeshHeader {
            geometry: geometry.clone(),
            items: vec![depth],
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![vec![Values::F64(node_values.clone())]]),
    };
    let written = write_with(&dataset, &output, &[]).unwrap();
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("mean of each element's nodes"))
    );
    let back = read(&output);
    let means: Vec<f64> = (0..geometry.elements.len())
        .map(|element| {
            let nodes = geometry.elements.nodes(element).unwrap();
            nodes.iter().map(|n| node_values[*n as usize]).sum::<f64>() / nodes.len() as f64
        })
        .collect();
    assert!(means.iter().any(|mean| mean.is_nan()));
    let Values::F64(actual) = &steps(&back)[0][0] else {
        panic!("float64 kept")
    };
    assert_eq!(actual.len(), means.len());
    for (a, e) in actual.iter().zip(&means) {
        assert!((a.is_nan() && e.is_nan()) || a == e, "{a} {e}");
    }
    assert_eq!(mesh_time_start(&back), "2000-01-01T00:00:00");
}

fn mesh_time_start(dataset: &Dataset) -> String {
    mesh(dataset)
        .time
        .time(0)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S")
        .to_string()
}

#[test]
fn every_corpus_file_reads_back_the_same_after_writing() {
    let folder = tempfile::tempdir().unwrap();
    for folder_name in ["mikeio", "dfs-samples"] {
        for entry in std::fs::read_dir(corpus(folder_name, "")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("dfsu") {
                continue;
            }
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            let original = read(&path);
            let output = folder.path().join(&name);
            write_with(&original, &output, &[]).unwrap_or_else(|error| panic!("{name}: {error}"));
            let again = read(&output);
            assert_eq!(again.data, original.data, "{name}");
            let (before, after) = (mesh(&original), mesh(&again));
            assert_eq!(after.geometry.nodes, before.geometry.nodes, "{name}");
            assert_eq!(after.geometry.elements, before.geometry.elements, "{name}");
            assert_eq!(after.geometry.layers, before.geometry.layers, "{name}");
            // No CRS (a point spectrum's frequency plane) is written as MIKE's NON-UTM.
            let no_crs = basin_formats::crs::Crs::Named("NON-UTM".into());
            let crs = before.geometry.crs.clone().unwrap_or(no_crs);
            assert_eq!(after.geometry.crs, Some(crs), "{name}");
            assert_eq!(after.items, before.items, "{name}");
            assert_eq!(after.time, before.time, "{name}");
        }
    }
}

/// A DFSU cut in two by time and appended together again (the platform's append of new
/// model output to a dataset) is the original: same times, same values.
#[test]
fn a_dfsu_split_in_time_appends_back_to_the_original() {
    split_and_append(&corpus("dfs-samples", "mesh2d_mixed.dfsu"), "dfsu", 2);
}

/// Cuts `original` after step `last_of_first`, appends the second part to the first through
/// the catalogue, and compares the result with the original.
pub(crate) fn split_and_append(original: &Path, extension: &str, last_of_first: usize) {
    use basin_formats::{Catalogue, Conversion, TemporalFilter, Transformation};
    let folder = tempfile::tempdir().unwrap();
    let part = |name: &str, from: usize, to: Option<usize>| {
        let output = folder.path().join(format!("{name}.{extension}"));
        let transformations = [Transformation::TemporalFilter(TemporalFilter::IndexRange {
            from: Some(from),
            to,
        })];
        Catalogue::standard()
            .convert(
                original,
                &output,
                &Conversion {
                    transformations: &transformations,
                    ..Conversion::default()
                },
                &ReadContext::default(),
            )
            .unwrap();
        output
    };
    let first = part("first", 0, Some(last_of_first));
    let second = part("second", last_of_first + 1, None);
    let both = folder.path().join(format!("both.{extension}"));
    Catalogue::standard()
        .append(
            &first,
            &second,
            &both,
            &basin_formats::Append::default(),
            &ReadContext::default(),
        )
        .unwrap();
    let read = |path: &Path| {
        let catalogue = Catalogue::standard();
        let reader = catalogue.reader_for_path(path).unwrap();
        Dataset::collect(|sink| {
            reader.read(path, &Parameters::default(), &ReadContext::default(), sink)
        })
        .unwrap()
    };
    let (expected, joined) = (read(original), read(&both));
    // Compared as text: NaN (a delete value) equals NaN there.
    assert_eq!(
        format!("{:?}", joined.data),
        format!("{:?}", expected.data),
        "{}",
        original.display()
    );
    let time = |dataset: &Dataset| match &dataset.header {
        Header::Mesh(mesh) => mesh.time.clone(),
        Header::Grid(grid) => grid.time.clone(),
        _ => panic!("a mesh or grid expected"),
    };
    assert_eq!(time(&joined), time(&expected), "{}", original.display());
}
