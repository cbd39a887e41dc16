//! The catalogue: what the reader and writer lists publish, which writers each reader can
//! feed (docs/conversion.md#conversions-every-catalogue-offers), parameter validation before
//! any work, the plain copy, and the pipeline's clean-up after a failed conversion.

use std::collections::HashSet;
use std::path::Path;

use basin_formats::catalogue::ReaderSpec;
use basin_formats::model::DataKind;
use basin_formats::summary::DataSize;
use basin_formats::{
    Catalogue, Conversion, FormatError, ParameterSpec, Parameters, ReadContext, Transformation,
};

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn reader_spec(catalogue: &Catalogue, name: &str) -> &'static ReaderSpec {
    catalogue.reader(name).unwrap().spec()
}

#[test]
fn reader_and_writer_names_are_unique_case_insensitively() {
    let catalogue = Catalogue::standard();
    let mut names = HashSet::new();
    for reader in catalogue.readers() {
        assert!(
            names.insert(reader.spec().name.to_ascii_lowercase()),
            "{}",
            reader.spec().name
        );
        assert!(reader.spec().name.ends_with("Reader"));
    }
    let mut names = HashSet::new();
    for writer in catalogue.writers() {
        assert!(
            names.insert(writer.spec().name.to_ascii_lowercase()),
            "{}",
            writer.spec().name
        );
        assert!(writer.spec().name.ends_with("Writer"));
    }
}

#[test]
fn extensions_are_lower_case_dotted_and_pick_one_format() {
    let catalogue = Catalogue::standard();
    let mut seen = HashSet::new();
    for reader in catalogue.readers() {
        for extension in reader.spec().extensions {
            assert!(extension.starts_with('.'), "{extension}");
            assert_eq!(*extension, extension.to_ascii_lowercase());
            assert!(seen.insert(*extension), "two readers claim {extension}");
        }
    }
    let mut seen = HashSet::new();
    for writer in catalogue.writers() {
        for extension in writer.spec().extensions {
            assert!(extension.starts_with('.'), "{extension}");
            assert_eq!(*extension, extension.to_ascii_lowercase());
            assert!(seen.insert(*extension), "two writers claim {extension}");
        }
    }
}

fn check_parameters(owner: &str, specs: &[ParameterSpec]) {
    let mut names = HashSet::new();
    for spec in specs {
        assert!(
            names.insert(spec.name.to_ascii_lowercase()),
            "{owner}: {} twice",
            spec.name
        );
        assert!(!spec.description.is_empty(), "{owner}: {}", spec.name);
        assert!(
            !(spec.required && spec.default_value.is_some()),
            "{owner}: {} is required and has a default",
            spec.name
        );
        if let Some(default) = spec.default_value {
            // The default must pass the parameter's own validation.
            Parameters::validate(std::slice::from_ref(spec), &pairs(&[(spec.name, default)]))
                .unwrap_or_else(|error| panic!("{owner}: default of {}: {error}", spec.name));
        }
    }
    // With only the required parameters given (any value of the right type), validation
    // applies every default.
    let minimal: Vec<(String, String)> = specs
        .iter()
        .filter(|spec| spec.required)
        .map(|spec| {
            let value = spec
                .allowed_values
                .first()
                .copied()
                .unwrap_or(match spec.data_type {
                    basin_formats::ParameterType::Integer => "1",
                    basin_formats::ParameterType::Double => "1.5",
                    basin_formats::ParameterType::Boolean => "true",
                    _ => "x",
                });
            (spec.name.to_owned(), value.to_owned())
        })
        .collect();
    let parameters = Parameters::validate(specs, &minimal).unwrap();
    for spec in specs.iter().filter(|spec| spec.default_value.is_some()) {
        assert!(
            parameters.get(spec.name).is_some(),
            "{owner}: {}",
            spec.name
        );
    }
}

#[test]
fn parameters_are_well_formed() {
    let catalogue = Catalogue::standard();
    for reader in catalogue.readers() {
        check_parameters(reader.spec().name, reader.spec().parameters);
        assert!(!reader.spec().description.is_empty());
        assert!(!reader.spec().dataset_format.is_empty());
    }
    for writer in catalogue.writers() {
        check_parameters(writer.spec().name, writer.spec().parameters);
        assert!(!writer.spec().description.is_empty());
        assert!(!writer.spec().dataset_format.is_empty());
    }
}

/// The conversions every catalogue offers that need no DFS
/// (docs/conversion.md#conversions-every-catalogue-offers).
#[test]
fn readers_feed_the_writers_of_the_required_conversions() {
    let catalogue = Catalogue::standard();
    let required = [
        ("AsciiGridReader", "GeoTiffWriter"),
        ("GeoTiffReader", "AsciiGridWriter"),
        ("ShpReader", "GeoJsonWriter"),
        ("GeoJsonReader", "ShpWriter"),
        ("ShpReader", "MeshFileWriter"),
        ("MeshFileReader", "ShpWriter"),
        ("VtuReader", "ShpWriter"),
        ("XyzReader", "VtuWriter"),
    ];
    for (reader, writer) in required {
        let writers = catalogue.writers_for(reader_spec(&catalogue, reader));
        assert!(
            writers.contains(&writer),
            "{reader} -> {writer}: {writers:?}"
        );
    }
    // Every format round-trips through its own writer.
    for (reader, writer) in [
        ("AsciiGridReader", "AsciiGridWriter"),
        ("GeoTiffReader", "GeoTiffWriter"),
        ("ShpReader", "ShpWriter"),
        ("GeoJsonReader", "GeoJsonWriter"),
        ("MeshFileReader", "MeshFileWriter"),
        ("VtuReader", "VtuWriter"),
    ] {
        let writers = catalogue.writers_for(reader_spec(&catalogue, reader));
        assert!(
            writers.contains(&writer),
            "{reader} -> {writer}: {writers:?}"
        );
    }
}

#[test]
fn the_plain_copy_pair_only_combines_with_itself() {
    let catalogue = Catalogue::standard();
    assert_eq!(
        catalogue.writers_for(reader_spec(&catalogue, "FileReader")),
        vec!["FileWriter"]
    );
    for reader in catalogue.readers() {
        let writers = catalogue.writers_for(reader.spec());
        assert!(!writers.is_empty(), "{} feeds nothing", reader.spec().name);
        if reader.spec().name != "FileReader" {
            assert!(!writers.contains(&"FileWriter"), "{}", reader.spec().name);
        }
    }
    // Grids and features do not mix.
    let grid_writers = catalogue.writers_for(reader_spec(&catalogue, "GeoTiffReader"));
    assert!(!grid_writers.contains(&"GeoJsonWriter"));
}

#[test]
fn names_resolve_case_insensitively_and_extensions_infer_formats() {
    let catalogue = Catalogue::standard();
    assert_eq!(
        catalogue.reader("geotiffreader").unwrap().spec().name,
        "GeoTiffReader"
    );
    assert_eq!(
        catalogue.writer("SHPWRITER").unwrap().spec().name,
        "ShpWriter"
    );
    let by_path = |path: &str| {
        catalogue
            .reader_for_path(Path::new(path))
            .map(|reader| reader.spec().name)
    };
    assert_eq!(by_path("a/b/grid.ASC"), Some("AsciiGridReader"));
    assert_eq!(by_path("x.tiff"), Some("GeoTiffReader"));
    assert_eq!(by_path("x.shp"), Some("ShpReader"));
    assert_eq!(by_path("x.unknown"), None);
    assert_eq!(by_path("no_extension"), None);
    assert_eq!(
        catalogue
            .writer_for_path(Path::new("out.geojson"))
            .map(|writer| writer.spec().name),
        Some("GeoJsonWriter")
    );
}

/// `prepare` must find every request error without touching a file: the input here does not
/// exist, so any attempt to open it would give an I/O error instead.
fn prepare_error(conversion: &Conversion<'_>, input: &str, output: &str) -> FormatError {
    let catalogue = Catalogue::standard();
    let error = catalogue
        .prepare(Path::new(input), Path::new(output), conversion)
        .err()
        .unwrap();
    assert!(error.is_input_error(), "{error}");
    error
}

#[test]
fn unknown_names_and_uninferable_formats_fail_in_prepare() {
    let missing = "/nonexistent/in.asc";
    let error = prepare_error(
        &Conversion {
            reader: Some("NoSuchReader"),
            ..Conversion::default()
        },
        missing,
        "/nonexistent/out.tif",
    );
    assert!(error.to_string().contains("NoSuchReader"), "{error}");
    let error = prepare_error(
        &Conversion {
            writer: Some("NoSuchWriter"),
            ..Conversion::default()
        },
        missing,
        "/nonexistent/out.tif",
    );
    assert!(error.to_string().contains("NoSuchWriter"), "{error}");
    let error = prepare_error(&Conversion::default(), "/nonexistent/in.what", "out.tif");
    assert!(error.to_string().contains("--reader"), "{error}");
    let error = prepare_error(&Conversion::default(), missing, "/nonexistent/out.what");
    assert!(error.to_string().contains("--writer"), "{error}");
    let error = prepare_error(&Conversion::default(), missing, "/nonexistent/out.geojson");
    assert!(
        error.to_string().contains("cannot feed") && error.to_string().contains("GeoTiffWriter"),
        "{error}"
    );
}

#[test]
fn parameter_errors_fail_in_prepare_naming_the_parameter() {
    let missing = "/nonexistent/in.asc";
    let unknown = pairs(&[("Colour", "red")]);
    let error = prepare_error(
        &Conversion {
            reader_parameters: &unknown,
            ..Conversion::default()
        },
        missing,
        "/nonexistent/out.tif",
    );
    assert!(
        matches!(&error, FormatError::Parameter { name, .. } if name == "Colour"),
        "{error}"
    );
    let error = prepare_error(
        &Conversion {
            writer_parameters: &unknown,
            ..Conversion::default()
        },
        missing,
        "/nonexistent/out.tif",
    );
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");
    let bad = pairs(&[("SRID", "not a number")]);
    let error = prepare_error(
        &Conversion {
            reader_parameters: &bad,
            ..Conversion::default()
        },
        missing,
        "/nonexistent/out.tif",
    );
    assert!(error.to_string().contains("SRID"), "{error}");
    let twice = pairs(&[("SRID", "4326"), ("srid", "4326")]);
    let error = prepare_error(
        &Conversion {
            reader_parameters: &twice,
            ..Conversion::default()
        },
        missing,
        "/nonexistent/out.tif",
    );
    assert!(error.to_string().contains("more than once"), "{error}");
}

#[test]
fn missing_required_parameters_fail_in_prepare() {
    let catalogue = Catalogue::standard();
    for reader in catalogue.readers() {
        for spec in reader.spec().parameters.iter().filter(|spec| spec.required) {
            let error = Parameters::validate(reader.spec().parameters, &[]).unwrap_err();
            assert!(error.to_string().contains(spec.name), "{error}");
        }
    }
    for writer in catalogue.writers() {
        for spec in writer.spec().parameters.iter().filter(|spec| spec.required) {
            let error = Parameters::validate(writer.spec().parameters, &[]).unwrap_err();
            assert!(error.to_string().contains(spec.name), "{error}");
        }
    }
}

#[test]
fn unknown_srids_fail_in_prepare() {
    let transformations = [Transformation::Crs {
        input_srid: None,
        output_srid: 99_999,
    }];
    let error = prepare_error(
        &Conversion {
            transformations: &transformations,
            ..Conversion::default()
        },
        "/nonexistent/in.asc",
        "/nonexistent/out.tif",
    );
    assert!(matches!(error, FormatError::Crs(_)), "{error}");
    assert!(error.to_string().contains("99999"), "{error}");
    let transformations = [Transformation::Crs {
        input_srid: Some(12),
        output_srid: 4326,
    }];
    let error = prepare_error(
        &Conversion {
            transformations: &transformations,
            ..Conversion::default()
        },
        "/nonexistent/in.asc",
        "/nonexistent/out.tif",
    );
    assert!(error.to_string().contains("12"), "{error}");
}

#[test]
fn the_plain_copy_copies_bytes_and_refuses_transformations() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("anything.bin");
    let output = dir.path().join("copy.bin");
    let bytes: Vec<u8> = (0..=255).cycle().take(10_000).collect();
    std::fs::write(&input, &bytes).unwrap();
    let catalogue = Catalogue::standard();
    let conversion = Conversion {
        reader: Some("FileReader"),
        writer: Some("FileWriter"),
        ..Conversion::default()
    };
    let written = catalogue
        .convert(&input, &output, &conversion, &ReadContext::default())
        .unwrap();
    assert_eq!(written.files, vec![output.clone()]);
    assert_eq!(std::fs::read(&output).unwrap(), bytes);

    let transformations = [Transformation::Crs {
        input_srid: None,
        output_srid: 4326,
    }];
    let error = catalogue
        .prepare(
            &input,
            &output,
            &Conversion {
                transformations: &transformations,
                ..conversion.clone()
            },
        )
        .err()
        .unwrap();
    assert!(error.to_string().contains("plain copy"), "{error}");
}

#[test]
fn a_conversion_onto_its_own_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("same.bin");
    std::fs::write(&input, b"precious").unwrap();
    let conversion = Conversion {
        reader: Some("FileReader"),
        writer: Some("FileWriter"),
        ..Conversion::default()
    };
    let error = Catalogue::standard()
        .convert(&input, &input, &conversion, &ReadContext::default())
        .unwrap_err();
    assert!(error.to_string().contains("is the input"), "{error}");
    assert_eq!(std::fs::read(&input).unwrap(), b"precious");
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Whatever stage fails (the reader on a broken input, or a writer or transformation), the
/// pipeline leaves no output behind, and keeps files it did not write.
#[test]
fn failed_conversions_leave_no_output() {
    let catalogue = Catalogue::standard();
    let cases = [
        ("broken.asc", "this is not an ASCII grid\n", "out.tif"),
        ("broken.asc", "ncols 2\nnrows 2\n", "out.asc"),
        (
            "broken.geojson",
            "{\"type\": \"FeatureCollection\", \"feat",
            "out.shp",
        ),
        ("broken.geojson", "[1, 2", "out.zip"),
        ("broken.xyz", "1 2 3\n4 5\n", "out.vtu"),
        ("broken.mesh", "garbage", "out.shp"),
    ];
    for (input_name, content, output_name) in cases {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join(input_name);
        std::fs::write(&input, content).unwrap();
        // A file of the user's with the output's stem that the conversion must not remove.
        let keep = dir.path().join("out.prj");
        std::fs::write(&keep, "mine").unwrap();
        let output = dir.path().join(output_name);
        let result = catalogue.convert(
            &input,
            &output,
            &Conversion::default(),
            &ReadContext::default(),
        );
        assert!(result.is_err(), "{input_name} -> {output_name} succeeded");
        assert_eq!(
            listing(dir.path()),
            vec![input_name.to_owned(), "out.prj".to_owned()],
            "{input_name} -> {output_name}"
        );
    }
}

/// The summary describes what the writer got: after the kind adapter, a mesh written as a
/// Shapefile is a feature collection of its elements.
#[test]
fn conversions_summarise_what_they_wrote() {
    let catalogue = Catalogue::standard();
    let dir = tempfile::tempdir().unwrap();
    let input = crate::helpers::fixture("meshes", "quad_tri.mesh");
    let as_mesh = catalogue
        .convert(
            &input,
            &dir.path().join("copy.mesh"),
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap()
        .summary
        .unwrap();
    assert_eq!(as_mesh.kind, DataKind::Mesh);
    let DataSize::Mesh { elements, .. } = as_mesh.size else {
        panic!("{:?}", as_mesh.size)
    };
    assert_eq!(as_mesh.steps, Some(1));
    assert_eq!(as_mesh.time, None);
    let as_features = catalogue
        .convert(
            &input,
            &dir.path().join("elements.shp"),
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap()
        .summary
        .unwrap();
    assert_eq!(as_features.kind, DataKind::Features);
    assert_eq!(
        as_features.size,
        DataSize::Features {
            count: elements as u64
        }
    );
    assert_eq!(as_features.extent, as_mesh.extent);
    assert!(as_mesh.extent.is_some());

    // The plain copy does not look at the data.
    let copied = catalogue
        .convert(
            &input,
            &dir.path().join("plain.bin"),
            &Conversion {
                reader: Some("FileReader"),
                writer: Some("FileWriter"),
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap();
    assert_eq!(copied.summary, None);
}

#[test]
fn a_stored_file_can_be_summarised_without_writing() {
    let catalogue = Catalogue::standard();
    let input = crate::helpers::fixture("geotiff", "strip_lzw_predictor2_int16.tif");
    let summary = catalogue
        .summarize(&input, None, &[], &ReadContext::default())
        .unwrap();
    assert_eq!(summary.kind, DataKind::Grid);
    assert_eq!(summary.srid, Some(32632));
    assert!(summary.wkt.is_some());
    let DataSize::Grid { columns, rows, .. } = summary.size else {
        panic!("{:?}", summary.size)
    };
    assert_eq!((columns, rows), (37, 23));
    let [min_x, min_y, max_x, max_y] = summary.extent.unwrap();
    assert!(min_x < max_x && min_y < max_y);
    let error = catalogue
        .summarize(&input, Some("FileReader"), &[], &ReadContext::default())
        .unwrap_err();
    assert!(error.to_string().contains("plain copy"), "{error}");
}

/// Cancels once `after` units of input were read.
struct CancelAfter {
    after: u64,
    read: std::sync::atomic::AtomicU64,
}

impl basin_formats::Progress for CancelAfter {
    fn set_total(&self, _units: u64) {}

    fn advance(&self, units: u64) {
        self.read
            .fetch_add(units, std::sync::atomic::Ordering::Relaxed);
    }

    fn cancelled(&self) -> bool {
        self.read.load(std::sync::atomic::Ordering::Relaxed) >= self.after
    }
}

#[test]
fn a_cancelled_conversion_stops_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.asc");
    let mut text = String::from(
        "ncols 400\nnrows 400\nxllcorner 0\nyllcorner 0\ncellsize 1\nNODATA_value -9999\n",
    );
    for row in 0..400 {
        let line: Vec<String> = (0..400).map(|column| (row + column).to_string()).collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    std::fs::write(&input, &text).unwrap();
    let catalogue = Catalogue::standard();
    let output = dir.path().join("out.tif");
    // The reader scans the whole file once before it hands on values, so the cancel, already
    // requested by then, stops the conversion at the first block of values.
    let progress = CancelAfter {
        after: 100_000,
        read: std::sync::atomic::AtomicU64::new(0),
    };
    let context = ReadContext {
        progress: &progress,
        ..ReadContext::default()
    };
    let error = catalogue
        .convert(&input, &output, &Conversion::default(), &context)
        .unwrap_err();
    assert!(matches!(error, FormatError::Cancelled), "{error}");
    assert!(!output.exists(), "{} was left behind", output.display());
}
