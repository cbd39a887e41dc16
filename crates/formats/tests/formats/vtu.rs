//! VTU: round trips (ascii and binary, time series as .pvd and zip), the encodings ParaView
//! and meshio write (UInt64 headers, zlib, appended raw and base64), and every error.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use crate::helpers::{corpus, fixture, params};

use base64::Engine;
use basin_formats::catalogue::{ReadContext, Reader, Writer, Written};
use basin_formats::crs::Crs;
use basin_formats::mesh_file::MeshFileReader;
use basin_formats::model::{
    Data, DataType, Dataset, ElementKind, Elements, Header, Item, ItemLocation, MeshGeometry,
    MeshHeader, Nodes, TimeAxis, Values,
};
use basin_formats::vtu::{VtuReader, VtuWriter};
use basin_formats::{FormatError, FormatResult, Parameters, ReadLimits};

fn read_with(path: &Path, limits: ReadLimits) -> FormatResult<Dataset> {
    let parameters = params(VtuReader.spec().parameters, &[]);
    let context = ReadContext {
        limits,
        ..ReadContext::default()
    };
    Dataset::collect(|sink| VtuReader.read(path, &parameters, &context, sink))
}

fn read(path: &Path) -> FormatResult<Dataset> {
    read_with(path, ReadLimits::default())
}

fn write(dataset: &Dataset, path: &Path, format: &str) -> FormatResult<Written> {
    let parameters = params(VtuWriter.spec().parameters, &[("Format", format)]);
    let mut sink = VtuWriter.create(path, &parameters)?;
    dataset.replay(sink.as_mut())?;
    sink.finish()
}

fn mesh_of(dataset: &Dataset) -> &MeshHeader {
    let Header::Mesh(mesh) = &dataset.header else {
        panic!("a mesh expected")
    };
    mesh
}

/// The mixed sample mesh with three items (cell f32 with a nodata value, node f64, cell i32)
/// over `steps` steps.
fn sample(steps: usize) -> Dataset {
    let mesh = Dataset::collect(|sink| {
        MeshFileReader.read(
            &fixture("meshes", "mesh2d_mixed.mesh"),
            &Parameters::default(),
            &ReadContext::default(),
            sink,
        )
    })
    .unwrap();
    let geometry = Arc::clone(&mesh_of(&mesh).geometry);
    let items = vec![
        Item {
            nodata: Some(-1e-35),
            ..Item::new("water level", DataType::F32)
        },
        Item {
            location: ItemLocation::Node,
            ..Item::new("speed <m/s> & more", DataType::F64)
        },
        Item::new("code", DataType::I32),
    ];
    let data = (0..steps)
        .map(|step| {
            let s = step as f32;
            vec![
                Values::F32(vec![0.5 + s, -1e-35, 1.25, f32::MIN_POSITIVE, 3.0e7, -s]),
                Values::F64((0..9).map(|node| 0.1 * node as f64 + step as f64).collect()),
                Values::I32(vec![1, -2, 3, i32::MAX, i32::MIN, step as i32]),
            ]
        })
        .collect();
    let time = if steps == 1 {
        TimeAxis::None
    } else {
        TimeAxis::Relative((0..steps).map(|step| step as f64 * 1800.0).collect())
    };
    Dataset {
        header: Header::Mesh(MeshHeader {
            geometry,
            items,
            time,
        }),
        data: Data::Values(data),
    }
}

/// What a VTU round trip keeps: geometry (ids renumbered 1..n, no CRS, no z quantity), items
/// by name, type and location, float nodata as NaN.
fn assert_same_step(read_back: &Dataset, source: &Dataset, step: usize) {
    let (back, original) = (mesh_of(read_back), mesh_of(source));
    assert_eq!(back.geometry.nodes.x, original.geometry.nodes.x);
    assert_eq!(back.geometry.nodes.y, original.geometry.nodes.y);
    assert_eq!(back.geometry.nodes.z, original.geometry.nodes.z);
    assert_eq!(back.geometry.nodes.codes, original.geometry.nodes.codes);
    assert_eq!(
        back.geometry.elements.kinds,
        original.geometry.elements.kinds
    );
    assert_eq!(
        back.geometry.elements.connectivity,
        original.geometry.elements.connectivity
    );
    assert_eq!(back.items.len(), original.items.len());
    let Data::Values(back_steps) = &read_back.data else {
        panic!()
    };
    let Data::Values(steps) = &source.data else {
        panic!()
    };
    // VTU groups point data before cell data, so items come back in that order.
    for (index, original_item) in original.items.iter().enumerate() {
        let back_index = back
            .items
            .iter()
            .position(|item| item.name == original_item.name)
            .unwrap();
        let item = &back.items[back_index];
        assert_eq!(item.data_type, original_item.data_type);
        assert_eq!(item.location, original_item.location);
        let expected: Vec<f64> = steps[step][index]
            .to_f64()
            .into_iter()
            .map(|value| {
                if original_item.is_nodata(value) {
                    f64::NAN
                } else {
                    value
                }
            })
            .collect();
        let actual = back_steps[0][back_index].to_f64();
        assert_eq!(actual.len(), expected.len());
        for (a, e) in actual.iter().zip(&expected) {
            assert!(
                a.to_bits() == e.to_bits() || (a.is_nan() && e.is_nan()),
                "{a} vs {e}"
            );
        }
    }
}

#[test]
fn single_step_round_trips_in_binary_and_ascii() {
    let folder = tempfile::tempdir().unwrap();
    let source = sample(1);
    for format in ["binary", "ascii"] {
        let output = folder.path().join(format!("{format}.vtu"));
        let written = write(&source, &output, format).unwrap();
        assert_eq!(written.files, vec![output.clone()]);
        let text = std::fs::read_to_string(&output).unwrap();
        assert!(text.contains(&format!("format=\"{format}\"")));
        let back = read(&output).unwrap();
        assert_same_step(&back, &source, 0);
    }
}

#[test]
fn a_mesh_without_items_round_trips_through_vtu_and_back_to_mesh() {
    let folder = tempfile::tempdir().unwrap();
    let mesh = Dataset::collect(|sink| {
        MeshFileReader.read(
            &fixture("meshes", "quad_tri.mesh"),
            &Parameters::default(),
            &ReadContext::default(),
            sink,
        )
    })
    .unwrap();
    let output = folder.path().join("quad_tri.vtu");
    write(&mesh, &output, "binary").unwrap();
    let back = read(&output).unwrap();
    let (a, b) = (&mesh_of(&back).geometry, &mesh_of(&mesh).geometry);
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(a.elements, b.elements);
}

#[test]
fn several_steps_become_a_zip_with_a_pvd() {
    let folder = tempfile::tempdir().unwrap();
    let source = sample(3);
    let output = folder.path().join("series.vtu");
    let written = write(&source, &output, "binary").unwrap();
    let zip_path = folder.path().join("series.zip");
    assert_eq!(written.files, vec![zip_path.clone()]);
    assert!(
        written.notes[0].contains("3 time steps"),
        "{:?}",
        written.notes
    );
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&zip_path).unwrap()).unwrap();
    let mut names: Vec<String> = archive
        .file_names()
        .map(|name| name.unwrap().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "series.pvd",
            "series_0000.vtu",
            "series_0001.vtu",
            "series_0002.vtu"
        ]
    );
    let mut pvd = String::new();
    archive
        .by_name("series.pvd")
        .unwrap()
        .read_to_string(&mut pvd)
        .unwrap();
    assert!(
        pvd.contains(
            "<DataSet timestep=\"1800.0\" group=\"\" part=\"0\" file=\"series_0001.vtu\"/>"
        ),
        "{pvd}"
    );
    for step in 0..3 {
        let name = format!("series_{step:04}.vtu");
        let mut bytes = Vec::new();
        archive
            .by_name(&name)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        let path = folder.path().join(&name);
        std::fs::write(&path, bytes).unwrap();
        assert_same_step(&read(&path).unwrap(), &source, step);
    }
}

/// The names of the files in `folder`, sorted.
fn names_in(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Issue 33: a .pvd output keeps its steps in a folder beside it, which the .pvd names.
#[test]
fn a_pvd_output_writes_the_steps_in_a_folder_beside_it() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("loose.pvd");
    let steps = folder.path().join("loose");
    let written = write(&sample(3), &output, "ascii").unwrap();
    assert_eq!(
        written.files,
        vec![
            output.clone(),
            steps.join("loose_0000.vtu"),
            steps.join("loose_0001.vtu"),
            steps.join("loose_0002.vtu"),
        ]
    );
    assert!(written.notes.is_empty(), "{:?}", written.notes);
    assert_eq!(names_in(folder.path()), ["loose", "loose.pvd"]);
    assert_eq!(
        names_in(&steps),
        ["loose_0000.vtu", "loose_0001.vtu", "loose_0002.vtu"]
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "<?xml version=\"1.0\"?>\n\
         <VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n\
         \x20 <Collection>\n\
         \x20   <DataSet timestep=\"0.0\" group=\"\" part=\"0\" file=\"loose/loose_0000.vtu\"/>\n\
         \x20   <DataSet timestep=\"1800.0\" group=\"\" part=\"0\" file=\"loose/loose_0001.vtu\"/>\n\
         \x20   <DataSet timestep=\"3600.0\" group=\"\" part=\"0\" file=\"loose/loose_0002.vtu\"/>\n\
         \x20 </Collection>\n\
         </VTKFile>\n"
    );
    for step in 0..3 {
        let path = steps.join(format!("loose_{step:04}.vtu"));
        assert_same_step(&read(&path).unwrap(), &sample(3), step);
    }
    // One step to a .pvd is a collection of one; a second run writes over the first.
    let written = write(&sample(1), &output, "binary").unwrap();
    assert_eq!(written.files.len(), 2);
    assert!(
        std::fs::read_to_string(&output)
            .unwrap()
            .contains("file=\"loose/loose_0000.vtu\"")
    );
}

#[test]
fn a_pvd_output_needs_its_folder_and_no_file_in_place_of_the_steps_folder() {
    let folder = tempfile::tempdir().unwrap();
    let missing = folder.path().join("absent").join("b.pvd");
    let error = write(&sample(2), &missing, "binary").unwrap_err();
    assert!(matches!(error, FormatError::Io { .. }), "{error}");
    assert!(!folder.path().join("absent").exists(), "not created");
    std::fs::write(folder.path().join("c"), "a file").unwrap();
    let error = write(&sample(2), &folder.path().join("c.pvd"), "binary").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("a file has the name of the folder"),
        "{error}"
    );
}

#[test]
fn a_zip_output_zips_even_one_step() {
    let folder = tempfile::tempdir().unwrap();
    let zipped = folder.path().join("one.zip");
    let written = write(&sample(1), &zipped, "binary").unwrap();
    assert_eq!(written.files, vec![zipped.clone()]);
    let archive = zip::ZipArchive::new(std::fs::File::open(&zipped).unwrap()).unwrap();
    assert_eq!(archive.len(), 2);
}

#[test]
fn the_writer_refuses_items_of_the_wrong_length_and_other_kinds() {
    let folder = tempfile::tempdir().unwrap();
    let mut source = sample(1);
    let Data::Values(steps) = &mut source.data else {
        panic!()
    };
    steps[0][0] = Values::F32(vec![1.0]);
    let error = write(&source, &folder.path().join("bad.vtu"), "binary").unwrap_err();
    assert!(error.to_string().contains("water level"), "{error}");
    let mut sink = VtuWriter
        .create(&folder.path().join("x.vtu"), &Parameters::default())
        .unwrap();
    let features = Header::Features(basin_formats::model::FeatureSchema {
        fields: Vec::new(),
        geometry_kind: basin_formats::model::GeometryKind::Polygon,
        has_z: false,
        has_m: false,
        crs: None,
    });
    assert!(matches!(
        sink.begin(&features),
        Err(FormatError::Incompatible { .. })
    ));
}

#[test]
fn the_format_parameter_accepts_only_ascii_and_binary() {
    let raw = vec![("Format".to_owned(), "base85".to_owned())];
    assert!(Parameters::validate(VtuWriter.spec().parameters, &raw).is_err());
}

#[test]
fn srid_parameter_sets_the_crs() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("a.vtu");
    write(&sample(1), &output, "binary").unwrap();
    let parameters = params(VtuReader.spec().parameters, &[("SRID", "32632")]);
    let dataset = Dataset::collect(|sink| {
        VtuReader.read(&output, &parameters, &ReadContext::default(), sink)
    })
    .unwrap();
    assert_eq!(mesh_of(&dataset).geometry.crs, Some(Crs::Epsg(32632)));
}

// ---- hand-made files in the encodings other writers use ----

/// Two triangles on four points with one cell array and one 3-component point array.
struct Arrays {
    points: Vec<f64>,
    connectivity: Vec<i32>,
    offsets: Vec<i32>,
    types: Vec<u8>,
    cell_values: Vec<f32>,
    vectors: Vec<f64>,
}

fn arrays() -> Arrays {
    Arrays {
        points: vec![0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.0, 1.0, 3.0],
        connectivity: vec![0, 1, 2, 0, 2, 3],
        offsets: vec![3, 6],
        types: vec![5, 5],
        cell_values: vec![1.5, f32::NAN],
        vectors: (0..12).map(f64::from).collect(),
    }
}

fn le<T: Copy>(values: &[T], to: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
    values.iter().flat_map(|&value| to(value)).collect()
}

fn payloads(a: &Arrays) -> Vec<(&'static str, &'static str, &'static str, usize, Vec<u8>)> {
    vec![
        (
            "Points",
            "",
            "Float64",
            3,
            le(&a.points, |v: f64| v.to_le_bytes().to_vec()),
        ),
        (
            "Cells",
            "connectivity",
            "Int32",
            1,
            le(&a.connectivity, |v: i32| v.to_le_bytes().to_vec()),
        ),
        (
            "Cells",
            "offsets",
            "Int32",
            1,
            le(&a.offsets, |v: i32| v.to_le_bytes().to_vec()),
        ),
        ("Cells", "types", "UInt8", 1, a.types.clone()),
        (
            "CellData",
            "value",
            "Float32",
            1,
            le(&a.cell_values, |v: f32| v.to_le_bytes().to_vec()),
        ),
        (
            "PointData",
            "velocity",
            "Float64",
            3,
            le(&a.vectors, |v: f64| v.to_le_bytes().to_vec()),
        ),
    ]
}

fn header_bytes(value: usize, wide: bool) -> Vec<u8> {
    if wide {
        (value as u64).to_le_bytes().to_vec()
    } else {
        (value as u32).to_le_bytes().to_vec()
    }
}

/// Frames `data` as VTK does: a byte count, or zlib blocks of `block` bytes with their header.
fn framed(data: &[u8], wide: bool, compressed: bool, block: usize) -> (Vec<u8>, Vec<u8>) {
    if !compressed {
        return (header_bytes(data.len(), wide), data.to_vec());
    }
    let blocks: Vec<&[u8]> = data.chunks(block).collect();
    let compressed_blocks: Vec<Vec<u8>> = blocks
        .iter()
        .map(|chunk| {
            let mut encoder =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(chunk).unwrap();
            encoder.finish().unwrap()
        })
        .collect();
    let last = blocks.last().map_or(0, |chunk| chunk.len());
    let mut header = header_bytes(blocks.len(), wide);
    header.extend(header_bytes(block, wide));
    header.extend(header_bytes(if last == block { 0 } else { last }, wide));
    for compressed in &compressed_blocks {
        header.extend(header_bytes(compressed.len(), wide));
    }
    (header, compressed_blocks.concat())
}

#[derive(Clone, Copy)]
enum Layout {
    InlineJoint,
    InlineSeparate,
    AppendedRaw,
    AppendedBase64,
}

fn make_vtu(a: &Arrays, wide: bool, compressed: bool, layout: Layout) -> Vec<u8> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut xml = format!(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"{}\"{}>\n<UnstructuredGrid>\n<Piece NumberOfPoints=\"4\" NumberOfCells=\"2\">\n",
        if wide { "UInt64" } else { "UInt32" },
        if compressed { " compressor=\"vtkZLibDataCompressor\"" } else { "" }
    )
    .into_bytes();
    let mut appended = Vec::new();
    let mut section = "";
    for (tag, name, vtk_type, components, data) in payloads(a) {
        if tag != section {
            if !section.is_empty() {
                xml.extend(format!("</{section}>\n").bytes());
            }
            xml.extend(format!("<{tag}>\n").bytes());
            section = tag;
        }
        let (head, body) = framed(&data, wide, compressed, 16);
        let attributes =
            format!("type=\"{vtk_type}\" Name=\"{name}\" NumberOfComponents=\"{components}\"");
        match layout {
            Layout::InlineJoint | Layout::InlineSeparate => {
                let text = if matches!(layout, Layout::InlineJoint) {
                    b64(&[head, body].concat())
                } else {
                    format!("{}\n  {}", b64(&head), b64(&body))
                };
                xml.extend(
                    format!("<DataArray {attributes} format=\"binary\">\n{text}\n</DataArray>\n")
                        .bytes(),
                );
            }
            Layout::AppendedRaw | Layout::AppendedBase64 => {
                xml.extend(
                    format!(
                        "<DataArray {attributes} format=\"appended\" offset=\"{}\"/>\n",
                        appended.len()
                    )
                    .bytes(),
                );
                if matches!(layout, Layout::AppendedRaw) {
                    appended.extend(head);
                    appended.extend(body);
                } else {
                    appended.extend(b64(&head).bytes());
                    appended.extend(b64(&body).bytes());
                }
            }
        }
    }
    xml.extend(format!("</{section}>\n</Piece>\n</UnstructuredGrid>\n").bytes());
    if matches!(layout, Layout::AppendedRaw | Layout::AppendedBase64) {
        let encoding = if matches!(layout, Layout::AppendedRaw) {
            "raw"
        } else {
            "base64"
        };
        xml.extend(format!("<AppendedData encoding=\"{encoding}\">\n   _").bytes());
        xml.extend(appended);
        xml.extend(b"\n</AppendedData>\n");
    }
    xml.extend(b"</VTKFile>\n");
    xml
}

fn read_bytes(bytes: &[u8]) -> FormatResult<Dataset> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("input.vtu");
    std::fs::write(&path, bytes).unwrap();
    read(&path)
}

fn check_arrays(dataset: &Dataset) {
    let a = arrays();
    let mesh = mesh_of(dataset);
    let nodes = &mesh.geometry.nodes;
    let points: Vec<f64> = (0..4)
        .flat_map(|i| [nodes.x[i], nodes.y[i], nodes.z[i]])
        .collect();
    assert_eq!(points, a.points);
    assert_eq!(mesh.geometry.elements.connectivity, vec![0, 1, 2, 0, 2, 3]);
    assert_eq!(mesh.geometry.elements.kinds, vec![ElementKind::Triangle; 2]);
    let names: Vec<&str> = mesh.items.iter().map(|item| item.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["value", "velocity_x", "velocity_y", "velocity_z"]
    );
    let Data::Values(steps) = &dataset.data else {
        panic!()
    };
    let Values::F32(values) = &steps[0][0] else {
        panic!("f32 expected")
    };
    assert_eq!(values[0], 1.5);
    assert!(values[1].is_nan());
    assert_eq!(steps[0][2], Values::F64(vec![1.0, 4.0, 7.0, 10.0]));
    assert_eq!(mesh.items[1].location, ItemLocation::Node);
}

#[test]
fn every_binary_encoding_reads() {
    let a = arrays();
    for wide in [false, true] {
        for compressed in [false, true] {
            for layout in [
                Layout::InlineJoint,
                Layout::InlineSeparate,
                Layout::AppendedRaw,
                Layout::AppendedBase64,
            ] {
                if compressed && matches!(layout, Layout::InlineJoint) {
                    continue;
                }
                let bytes = make_vtu(&a, wide, compressed, layout);
                let dataset = read_bytes(&bytes).unwrap_or_else(|error| {
                    panic!(
                        "wide {wide} compressed {compressed}: {error}\n{}",
                        String::from_utf8_lossy(&bytes)
                    )
                });
                check_arrays(&dataset);
            }
        }
    }
}

fn inline_ascii(points: &str, connectivity: &str, offsets: &str, types: &str) -> String {
    format!(
        "<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"3\" NumberOfCells=\"1\">\
<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">{points}</DataArray></Points>\
<Cells><DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">{connectivity}</DataArray>\
<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">{offsets}</DataArray>\
<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">{types}</DataArray></Cells>\
</Piece></UnstructuredGrid></VTKFile>"
    )
}

const POINTS: &str = "0 0 0 1 0 0 0 1 0";

#[test]
fn hand_written_ascii_reads() {
    let dataset = read_bytes(inline_ascii(POINTS, "0 1 2", "3", "5").as_bytes()).unwrap();
    assert_eq!(mesh_of(&dataset).geometry.elements.len(), 1);
}

#[test]
fn field_data_before_the_piece_is_ignored() {
    let text = inline_ascii(POINTS, "0 1 2", "3", "5").replace(
        "<UnstructuredGrid>",
        "<UnstructuredGrid><FieldData><DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">3.5 4.5 5.5 6.5 7.5 8.5 9.5 10.5 11.5 12.5 13.5 14.5</DataArray><DataArray type=\"String\" Name=\"note\" format=\"ascii\">104 105</DataArray></FieldData>",
    );
    let dataset = read_bytes(text.as_bytes()).unwrap();
    assert!(mesh_of(&dataset).items.is_empty());
}

#[test]
fn hostile_and_broken_files_are_errors() {
    let cases: Vec<(String, &str)> = vec![
        ("".into(), "no VTKFile"),
        ("not xml at all".into(), "no VTKFile"),
        ("<VTKFile type=\"PolyData\"></VTKFile>".into(), "only UnstructuredGrid"),
        ("<VTKFile type=\"UnstructuredGrid\" byte_order=\"BigEndian\"></VTKFile>".into(), "big-endian"),
        ("<VTKFile type=\"UnstructuredGrid\" header_type=\"UInt16\"></VTKFile>".into(), "header_type"),
        ("<VTKFile type=\"UnstructuredGrid\" compressor=\"vtkLZ4DataCompressor\"></VTKFile>".into(), "compressor"),
        ("<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid></UnstructuredGrid></VTKFile>".into(), "no Piece"),
        ("<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"60000000\" NumberOfCells=\"0\"/><Piece NumberOfPoints=\"60000000\" NumberOfCells=\"0\"/></UnstructuredGrid></VTKFile>".into(), "over the limit"),
        ("<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"99999999999\" NumberOfCells=\"0\"/></UnstructuredGrid></VTKFile>".into(), "over the limit"),
        ("<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"-1\"/></UnstructuredGrid></VTKFile>".into(), "not a whole number"),
        ("<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"1\" NumberOfCells=\"0\"></Piece></UnstructuredGrid></VTKFile>".into(), "no points array"),
        (inline_ascii(POINTS, "0 1 2", "3", "42"), "VTK cell type 42 (polyhedron"),
        (inline_ascii(POINTS, "0 1 7", "3", "5"), "point index 7"),
        (inline_ascii(POINTS, "0 1 2", "4", "5"), "outside the connectivity"),
        (inline_ascii(POINTS, "0 1 2", "3", "9"), "a quad (VTK 9) cell with 3 nodes; it has 4"),
        (inline_ascii(POINTS, "0 1 2", "3 3", "5"), "more than the 1 values"),
        (inline_ascii("0 0 0 1 0 0", "0 1 2", "3", "5"), "6 coordinates"),
        (inline_ascii("0 0 zero 1 0 0 0 1 0", "0 1 2", "3", "5"), "\"zero\" is not a valid Float64"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("Float64", "Float128"), "Float128"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("format=\"ascii\">0 1 2<", "format=\"appended\" offset=\"0\">0 1 2<"), "no AppendedData"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("format=\"ascii\">0 1 2<", "format=\"binary\">AAAA!!<"), "bad base64"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("format=\"ascii\">0 1 2<", "format=\"binary\">/////w==<"), "claims 4294967295 bytes"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("format=\"ascii\">0 1 2<", "format=\"binary\">GAAAAA==<"), "ends early"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("format=\"ascii\">0 1 2<", "format=\"base85\">0 1 2<"), "base85"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("NumberOfComponents=\"3\"", "NumberOfComponents=\"0\""), "NumberOfComponents"),
        (inline_ascii(POINTS, "0 1 2", "3", "5").replace("<Points>", "<Points><DataArray"), "bad XML"),
    ];
    for (text, expected) in cases {
        let message = read_bytes(text.as_bytes()).unwrap_err().to_string();
        assert!(message.contains(expected), "{text}: {message}");
    }
}

#[test]
fn compressed_headers_that_lie_are_errors() {
    let a = arrays();
    let mut bytes = make_vtu(&a, false, true, Layout::AppendedRaw);
    // The first array's block size (second header word) grows to 2^31: more than 4 points.
    let start = bytes.windows(2).position(|w| w == b" _").unwrap() + 2;
    bytes[start + 4..start + 8].copy_from_slice(&0x8000_0000u32.to_le_bytes());
    let message = read_bytes(&bytes).unwrap_err().to_string();
    assert!(message.contains("compression header claims"), "{message}");

    let mut truncated = make_vtu(&a, false, false, Layout::AppendedRaw);
    let end = truncated
        .windows(16)
        .position(|w| w == b"\n</AppendedData>")
        .unwrap();
    truncated.truncate(end - 20);
    assert!(read_bytes(&truncated).is_err());
}

#[test]
fn limits_are_checked_before_reading_data() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("big.vtu");
    std::fs::write(&path, inline_ascii(POINTS, "0 1 2", "3", "5")).unwrap();
    let limits = ReadLimits {
        mesh_nodes_max: 2,
        ..ReadLimits::default()
    };
    let error = read_with(&path, limits).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn all_supported_cell_types_round_trip() {
    let folder = tempfile::tempdir().unwrap();
    let mut elements = Elements::default();
    elements.push(1, ElementKind::Vertex, &[0]);
    elements.push(2, ElementKind::Line, &[0, 1]);
    elements.push(3, ElementKind::Triangle, &[0, 1, 2]);
    elements.push(4, ElementKind::Quad, &[0, 1, 2, 3]);
    elements.push(5, ElementKind::Prism, &[0, 1, 2, 4, 5, 6]);
    elements.push(6, ElementKind::Hexahedron, &[0, 1, 2, 3, 4, 5, 6, 7]);
    let x = vec![0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0];
    let y = vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0];
    let z = vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
    let dataset = Dataset {
        header: Header::Mesh(MeshHeader {
            geometry: Arc::new(MeshGeometry {
                nodes: Nodes {
                    ids: (1..=8).collect(),
                    x,
                    y,
                    z,
                    codes: vec![0; 8],
                },
                elements,
                ..MeshGeometry::default()
            }),
            items: Vec::new(),
            time: TimeAxis::None,
        }),
        data: Data::Values(Vec::new()),
    };
    let output = folder.path().join("cells.vtu");
    write(&dataset, &output, "ascii").unwrap();
    let back = read(&output).unwrap();
    assert_eq!(
        mesh_of(&back).geometry.elements,
        mesh_of(&dataset).geometry.elements
    );
}

// Every VTK cell kind, multi-piece files and the real files of VTK's test data (issue 11) ------

fn every_kind_dataset() -> Dataset {
    let mut elements = Elements::default();
    let mut element = 0;
    let mut code = 0u8;
    while code < 100 {
        code += 1;
        let Some(kind) = ElementKind::from_vtk_type(code) else {
            continue;
        };
        // A kind of any size gets one node more than its least.
        let count = if kind.takes_nodes(kind.node_count() + 1) {
            kind.node_count() + 1
        } else {
            kind.node_count()
        };
        let nodes: Vec<u32> = (0..count as u32).collect();
        element += 1;
        elements.push(element, kind, &nodes);
    }
    let count = 27;
    let nodes = Nodes {
        ids: (1..=count as i64).collect(),
        x: (0..count).map(|i| (i % 3) as f64).collect(),
        y: (0..count).map(|i| (i / 3 % 3) as f64).collect(),
        z: (0..count).map(|i| (i / 9) as f64).collect(),
        codes: vec![0; count],
    };
    let cells = elements.len();
    Dataset {
        header: Header::Mesh(MeshHeader {
            geometry: Arc::new(MeshGeometry {
                nodes,
                elements,
                ..MeshGeometry::default()
            }),
            items: vec![Item::new("cell number", DataType::F64)],
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![vec![Values::F64(
            (0..cells).map(|cell| cell as f64).collect(),
        )]]),
    }
}

#[test]
fn every_vtk_cell_kind_round_trips_in_every_encoding() {
    let folder = tempfile::tempdir().unwrap();
    let dataset = every_kind_dataset();
    assert_eq!(mesh_of(&dataset).geometry.elements.len(), 31);
    for format in ["ascii", "binary"] {
        let output = folder.path().join(format!("kinds_{format}.vtu"));
        write(&dataset, &output, format).unwrap();
        let back = read(&output).unwrap();
        assert_eq!(
            mesh_of(&back).geometry.elements,
            mesh_of(&dataset).geometry.elements,
            "{format}"
        );
        assert_eq!(back.data, dataset.data);
    }
    // The same cells in the encodings other writers use: zlib, UInt64 headers, appended.
    let geometry = &mesh_of(&dataset).geometry;
    let arrays = geometry_arrays(geometry);
    for wide in [false, true] {
        for compressed in [false, true] {
            for appended in [false, true] {
                let text = vtu_of(
                    &arrays,
                    geometry.nodes.len(),
                    geometry.elements.len(),
                    wide,
                    compressed,
                    appended,
                );
                let back = read_bytes(&text).unwrap();
                assert_eq!(
                    mesh_of(&back).geometry.elements,
                    geometry.elements,
                    "wide {wide} compressed {compressed} appended {appended}"
                );
            }
        }
    }
}

/// The points and cells arrays of `geometry`, as raw little-endian bytes.
fn geometry_arrays(geometry: &MeshGeometry) -> [Payload; 4] {
    let to_bytes = |values: &[i64]| le(values, |v: i64| v.to_le_bytes().to_vec());
    let connectivity: Vec<i64> = geometry
        .elements
        .connectivity
        .iter()
        .map(|&n| i64::from(n))
        .collect();
    let offsets: Vec<i64> = geometry.elements.offsets[1..]
        .iter()
        .map(|&o| o as i64)
        .collect();
    let types: Vec<u8> = geometry
        .elements
        .kinds
        .iter()
        .map(|kind| kind.vtk_type())
        .collect();
    let points: Vec<f64> = (0..geometry.nodes.len())
        .flat_map(|i| {
            [
                geometry.nodes.x[i],
                geometry.nodes.y[i],
                geometry.nodes.z[i],
            ]
        })
        .collect();
    [
        (
            "Points",
            "",
            "Float64",
            3,
            le(&points, |v: f64| v.to_le_bytes().to_vec()),
        ),
        ("Cells", "connectivity", "Int64", 1, to_bytes(&connectivity)),
        ("Cells", "offsets", "Int64", 1, to_bytes(&offsets)),
        ("Cells", "types", "UInt8", 1, types),
    ]
}

type Payload = (&'static str, &'static str, &'static str, usize, Vec<u8>);

/// A one-piece file of `arrays` in base64 inline or raw appended data.
fn vtu_of(
    arrays: &[Payload],
    points: usize,
    cells: usize,
    wide: bool,
    compressed: bool,
    appended: bool,
) -> Vec<u8> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut xml = format!(
        "<VTKFile type=\"UnstructuredGrid\" header_type=\"{}\"{}><UnstructuredGrid><Piece NumberOfPoints=\"{points}\" NumberOfCells=\"{cells}\">",
        if wide { "UInt64" } else { "UInt32" },
        if compressed { " compressor=\"vtkZLibDataCompressor\"" } else { "" }
    )
    .into_bytes();
    let mut data = Vec::new();
    for (tag, name, vtk_type, components, bytes) in arrays {
        let (head, body) = framed(bytes, wide, compressed, 64);
        let attributes =
            format!("type=\"{vtk_type}\" Name=\"{name}\" NumberOfComponents=\"{components}\"");
        let array = if appended {
            let array = format!(
                "<DataArray {attributes} format=\"appended\" offset=\"{}\"/>",
                data.len()
            );
            data.extend(head);
            data.extend(body);
            array
        } else {
            format!(
                "<DataArray {attributes} format=\"binary\">{}</DataArray>",
                b64(&[head, body].concat())
            )
        };
        xml.extend(format!("<{tag}>{array}</{tag}>").bytes());
    }
    xml.extend(b"</Piece></UnstructuredGrid>");
    if appended {
        xml.extend(b"<AppendedData encoding=\"raw\">_");
        xml.extend(data);
        xml.extend(b"</AppendedData>");
    }
    xml.extend(b"</VTKFile>");
    xml
}

fn two_pieces(second_arrays: &str) -> String {
    format!(
        "<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid>\
<Piece NumberOfPoints=\"4\" NumberOfCells=\"1\">\
<PointData><DataArray type=\"Float32\" Name=\"h\" format=\"ascii\">1 2 3 4</DataArray></PointData>\
<CellData><DataArray type=\"Int32\" Name=\"id\" format=\"ascii\">7</DataArray></CellData>\
<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">0 0 0 1 0 0 0 1 0 0 0 1</DataArray></Points>\
<Cells><DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">0 1 2 3</DataArray>\
<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">4</DataArray>\
<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">10</DataArray></Cells></Piece>\
<Piece NumberOfPoints=\"5\" NumberOfCells=\"2\">{second_arrays}\
<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">5 5 5 6 5 5 6 6 5 5 6 5 5.5 5.5 6</DataArray></Points>\
<Cells><DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">0 1 2 3 4 0 1 4</DataArray>\
<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">5 8</DataArray>\
<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">14 5</DataArray></Cells></Piece>\
</UnstructuredGrid></VTKFile>"
    )
}

#[test]
fn the_pieces_of_a_file_are_joined_with_their_node_numbers_offset() {
    let text = two_pieces(
        "<PointData><DataArray type=\"Float32\" Name=\"h\" format=\"ascii\">5 6 7 8 9</DataArray></PointData>\
<CellData><DataArray type=\"Int32\" Name=\"id\" format=\"ascii\">8 9</DataArray></CellData>",
    );
    let dataset = read_bytes(text.as_bytes()).unwrap();
    let mesh = mesh_of(&dataset);
    let geometry = &mesh.geometry;
    assert_eq!(geometry.nodes.len(), 9);
    assert_eq!(geometry.nodes.ids, (1..=9).collect::<Vec<i64>>());
    assert_eq!(geometry.nodes.x[4..], [5.0, 6.0, 6.0, 5.0, 5.5]);
    assert_eq!(
        geometry.elements.kinds,
        vec![
            ElementKind::Tetra,
            ElementKind::Pyramid,
            ElementKind::Triangle
        ]
    );
    assert_eq!(
        geometry.elements.connectivity,
        vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 4, 5, 8]
    );
    assert_eq!(geometry.elements.ids, vec![1, 2, 3]);
    let Data::Values(steps) = &dataset.data else {
        panic!()
    };
    assert_eq!(
        steps[0],
        vec![
            Values::F32(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
            Values::I32(vec![7, 8, 9]),
        ]
    );
}

#[test]
fn pieces_with_different_arrays_are_an_error_naming_the_piece() {
    let missing = two_pieces(
        "<PointData><DataArray type=\"Float32\" Name=\"h\" format=\"ascii\">5 6 7 8 9</DataArray></PointData>",
    );
    let message = read_bytes(missing.as_bytes()).unwrap_err().to_string();
    assert!(message.contains("Piece 2"), "{message}");
    assert!(
        message.contains("differ from those of piece 1"),
        "{message}"
    );
    let retyped = two_pieces(
        "<PointData><DataArray type=\"Float64\" Name=\"h\" format=\"ascii\">5 6 7 8 9</DataArray></PointData>\
<CellData><DataArray type=\"Int32\" Name=\"id\" format=\"ascii\">8 9</DataArray></CellData>",
    );
    let message = read_bytes(retyped.as_bytes()).unwrap_err().to_string();
    assert!(message.contains("Piece 2"), "{message}");
}

#[test]
fn appended_arrays_go_to_the_piece_that_declared_them() {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let block = |bytes: Vec<u8>| {
        let (head, body) = framed(&bytes, false, false, 16);
        b64(&[head, body].concat())
    };
    let points = |offset: f64| {
        le(
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, offset],
            |v: f64| v.to_le_bytes().to_vec(),
        )
    };
    let ints = |values: &[i32]| le(values, |v: i32| v.to_le_bytes().to_vec());
    let payloads = [
        block(points(0.0)),
        block(ints(&[0, 1, 2])),
        block(ints(&[3])),
        block(vec![5]),
        block(points(2.0)),
        block(ints(&[2, 1, 0])),
        block(ints(&[3])),
        block(vec![7]),
    ];
    let mut offsets = Vec::new();
    let mut appended = String::new();
    for payload in &payloads {
        offsets.push(appended.len());
        appended.push_str(payload);
    }
    let piece = |first: usize| {
        format!(
            "<Piece NumberOfPoints=\"3\" NumberOfCells=\"1\">\
<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"appended\" offset=\"{}\"/></Points>\
<Cells><DataArray type=\"Int32\" Name=\"connectivity\" format=\"appended\" offset=\"{}\"/>\
<DataArray type=\"Int32\" Name=\"offsets\" format=\"appended\" offset=\"{}\"/>\
<DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" offset=\"{}\"/></Cells></Piece>",
            offsets[first],
            offsets[first + 1],
            offsets[first + 2],
            offsets[first + 3]
        )
    };
    let text = format!(
        "<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid>{}{}</UnstructuredGrid>\
<AppendedData encoding=\"base64\">_{appended}</AppendedData></VTKFile>",
        piece(0),
        piece(4)
    );
    let dataset = read_bytes(text.as_bytes()).unwrap();
    let geometry = &mesh_of(&dataset).geometry;
    assert_eq!(geometry.nodes.z, vec![0.0, 0.0, 0.0, 0.0, 0.0, 2.0]);
    assert_eq!(geometry.elements.connectivity, vec![0, 1, 2, 5, 4, 3]);
    assert_eq!(
        geometry.elements.kinds,
        vec![ElementKind::Triangle, ElementKind::Polygon]
    );
}

#[test]
fn cells_of_the_wrong_size_or_unknown_type_are_errors_naming_the_type() {
    let cases = [
        (
            inline_ascii(POINTS, "0 1 2", "3", "10"),
            "a tetra (VTK 10) cell with 3 nodes; it has 4",
        ),
        (
            inline_ascii(POINTS, "0 1", "2", "7"),
            "a polygon (VTK 7) cell with 2 nodes; it has at least 3",
        ),
        (
            inline_ascii(POINTS, "0 1 2", "3", "69"),
            "VTK cell type 69 (an arbitrary-order Lagrange",
        ),
        (
            inline_ascii(POINTS, "0 1 2", "3", "17"),
            "VTK cell type 17; Basin reads types 1, 2, 3",
        ),
    ];
    for (text, expected) in cases {
        let message = read_bytes(text.as_bytes()).unwrap_err().to_string();
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn writers_of_2d_meshes_refuse_3d_cells_naming_the_type() {
    use basin_formats::mesh_file::MeshFileWriter;
    let folder = tempfile::tempdir().unwrap();
    let dataset = read(&corpus("vtk-data", "Tetra.vtu")).unwrap();
    let output = folder.path().join("out.mesh");
    let mut sink = MeshFileWriter
        .create(&output, &Parameters::default())
        .unwrap();
    let error = dataset.replay(sink.as_mut()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("tetra (VTK 10) cells cannot be written to .mesh, which holds triangles and quadrilaterals"),
        "{error}"
    );
    let error = Dataset::collect(|sink| {
        let mut adapter =
            basin_formats::adapt::for_writer(basin_formats::model::DataKind::Features, sink);
        dataset.replay(adapter.as_mut())
    })
    .unwrap_err();
    assert!(error.to_string().contains("tetra (VTK 10)"), "{error}");
}

/// A VTK test file: `vtk-cells/<name>` from the fixtures (cells meshio cannot read), any other
/// name from `tests/corpus/vtk-data`.
fn vtk_file(name: &str) -> std::path::PathBuf {
    match name.strip_prefix("vtk-cells/") {
        Some(name) => fixture("vtk-cells", name),
        None => corpus("vtk-data", name),
    }
}

#[test]
fn vtks_test_files_of_every_cell_type_read_and_round_trip() {
    let folder = tempfile::tempdir().unwrap();
    let cases: &[(&str, ElementKind, usize)] = &[
        ("Vertex.vtu", ElementKind::Vertex, 1),
        ("PolyVertex.vtu", ElementKind::PolyVertex, 1),
        ("Line.vtu", ElementKind::Line, 1),
        ("PolyLine.vtu", ElementKind::PolyLine, 1),
        ("Triangle.vtu", ElementKind::Triangle, 1),
        ("TriangleStrip.vtu", ElementKind::TriangleStrip, 1),
        ("Polygon.vtu", ElementKind::Polygon, 1),
        ("vtk-cells/Pixel.vtu", ElementKind::Pixel, 1),
        ("Quad.vtu", ElementKind::Quad, 1),
        ("Tetra.vtu", ElementKind::Tetra, 1),
        ("Voxel.vtu", ElementKind::Voxel, 1),
        ("Hexahedron.vtu", ElementKind::Hexahedron, 1),
        ("Wedge.vtu", ElementKind::Prism, 1),
        ("Pyramid.vtu", ElementKind::Pyramid, 1),
        (
            "vtk-cells/PentagonalPrism.vtu",
            ElementKind::PentagonalPrism,
            1,
        ),
        (
            "vtk-cells/HexagonalPrism.vtu",
            ElementKind::HexagonalPrism,
            1,
        ),
    ];
    for &(name, kind, count) in cases {
        let dataset = read(&vtk_file(name)).unwrap_or_else(|error| panic!("{name}: {error}"));
        let elements = &mesh_of(&dataset).geometry.elements;
        assert_eq!(elements.kinds, vec![kind; count], "{name}");
        let output = folder.path().join(name.replace('/', "_"));
        write(&dataset, &output, "binary").unwrap();
        let back = read(&output).unwrap();
        assert_eq!(mesh_of(&back).geometry.elements, *elements, "{name}");
        assert_eq!(
            mesh_of(&back).geometry.nodes,
            mesh_of(&dataset).geometry.nodes,
            "{name}"
        );
    }
    for name in [
        "QuadraticTetra.vtu",
        "vtk-cells/QuadraticPyramid.vtu",
        "vtk-cells/QuadraticWedge.vtu",
        "TriQuadraticHexahedron.vtu",
        "Tetrahedron.vtu",
        "quadraticTetra01.vtu",
        "ex-blow_5_1_4.vtu",
        "Disc_BiQuadraticQuads_0_0.vtu",
    ] {
        let dataset = read(&vtk_file(name)).unwrap_or_else(|error| panic!("{name}: {error}"));
        let output = folder.path().join(name.replace('/', "_"));
        write(&dataset, &output, "binary").unwrap();
        let back = read(&output).unwrap();
        assert_eq!(back, dataset, "{name}");
    }
    let message = read(&corpus("vtk-data", "polyhedron2pieces.vtu"))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("VTK cell type 42 (polyhedron"),
        "{message}"
    );
}
