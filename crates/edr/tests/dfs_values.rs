//! Reading DFS values where they lie gives what streaming the file gives, bit for bit: on every
//! DFS file of the corpus (the samples, MIKE IO's and mikecore's test files) and on samples
//! rewritten with every data type and every kind of delete value; files whose model values are
//! not the file's own (compressed grids, flattened spectra) and files changed since they were
//! described are streamed.

#![expect(clippy::panic, reason = "the helpers of a test fail it as a test does")]

use std::path::{Path, PathBuf};

use basin_edr::read::{Selection, pick, pick_direct, pick_streaming};
use basin_edr::{Dataset, EdrError, Space};
use basin_formats::dfs::container::{DfsFile, DfsWriter};
use basin_formats::model::{DataType, Values};
use basin_formats::{Catalogue, ReadLimits};

fn corpus(folder: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus")
        .join(folder)
}

/// Every DFS file of the corpus.
fn dfs_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in ["dfs-samples", "mikeio", "mikecore"] {
        let entries = std::fs::read_dir(corpus(folder)).unwrap_or_else(|error| panic!("{error}"));
        for entry in entries.flatten() {
            let path = entry.path();
            let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if extension.starts_with("dfs") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 30, "the DFS corpus is missing");
    files
}

fn describe(path: &Path) -> Result<Dataset, EdrError> {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    Dataset::describe(&Catalogue::standard(), &format!(".{extension}"), path)
}

/// The most values an item of `dataset` has per step.
fn values_per_step(dataset: &Dataset) -> usize {
    match &dataset.space {
        Space::Mesh { geometry, .. } => geometry.nodes.len().max(geometry.elements.len()),
        Space::Grid(grid) => grid.columns * grid.rows * grid.layers(),
        Space::Series => 1,
    }
}

/// Every item (last first), the steps `steps`, and targets at up to 300 indices spread over
/// the values, the same index in every item (past the end of the smaller ones), one past the
/// end, and a target with no values.
fn spread_selection(dataset: &Dataset, steps: Vec<usize>) -> Selection {
    let items: Vec<usize> = (0..dataset.items.len()).rev().collect();
    let count = values_per_step(dataset);
    let stride = (count / 300).max(1);
    let mut targets: Vec<Vec<Option<usize>>> = (0..count)
        .step_by(stride)
        .chain([count - 1, count])
        .map(|index| vec![Some(index); items.len()])
        .collect();
    targets.push(vec![None; items.len()]);
    targets.push(
        (0..items.len())
            .map(|slot| (slot % 2 == 0).then_some(count / 2))
            .collect(),
    );
    Selection {
        items,
        steps,
        targets,
    }
}

/// Checks both readings of `path` agree on two selections (all steps; every other step from
/// the last); returns whether the direct reading was taken and how many values were compared.
fn check_file(path: &Path) -> Result<(bool, usize), EdrError> {
    let catalogue = Catalogue::standard();
    let dataset = describe(path)?;
    let steps = dataset.time.steps();
    let mut direct_taken = false;
    let mut compared = 0;
    for steps in [
        (0..steps).collect(),
        (0..steps).rev().step_by(2).rev().collect(),
    ] {
        let selection = spread_selection(&dataset, steps);
        let streamed = pick_streaming(&catalogue, &dataset, path, &selection)?;
        let Some(direct) = pick_direct(&dataset, path, &selection)? else {
            continue;
        };
        direct_taken = true;
        let picked = pick(&catalogue, &dataset, path, &selection)?;
        for (name, values) in [("direct", &direct), ("pick", &picked)] {
            let same = bits(values) == bits(&streamed);
            assert!(same, "{}: {name} differs from streaming", path.display());
        }
        compared += bits(&direct).len();
    }
    Ok((direct_taken, compared))
}

fn bits(picked: &[Vec<Vec<f64>>]) -> Vec<u64> {
    picked
        .iter()
        .flatten()
        .flatten()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn every_corpus_file_reads_directly_what_streaming_reads() {
    let mut streamed_only = Vec::new();
    let mut undescribed = Vec::new();
    let mut compared = 0;
    for path in dfs_files() {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        match check_file(&path) {
            Ok((true, values)) => compared += values,
            Ok((false, _)) => streamed_only.push(name),
            Err(error) => undescribed.push(format!("{name}: {error}")),
        }
    }
    assert!(streamed_only.is_empty(), "{streamed_only:?}");
    // A grid in DHI's own system DKS (an SRID would be needed), and a vertical profile, which
    // has no surface to index (the position queries refuse it).
    let names: Vec<&str> = undescribed
        .iter()
        .filter_map(|text| text.split(':').next())
        .collect();
    assert_eq!(
        names,
        ["OresundHD.dfs3", "oresund_vertical_slice.dfsu"],
        "{undescribed:?}"
    );
    assert!(compared > 100_000, "{compared}");
}

#[test]
fn a_compressed_grid_is_streamed() {
    // mikecore's OresundHD.dfs3 stores 1 cell in 9; its projection DKS is renamed UTM-32 so
    // that it can be described without an SRID.
    let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let output = folder.path().join("compressed.dfs3");
    let source = corpus("mikecore").join("OresundHD.dfs3");
    let mut file = DfsFile::open(&source, &ReadLimits::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut header = file.header.clone();
    assert_eq!(header.file.compressed, 1);
    if let Some(projection) = header.file.projection.as_mut() {
        projection.name = "UTM-32".to_owned();
    }
    let mut writer = DfsWriter::create(&output, header.clone()).unwrap_or_else(|e| panic!("{e}"));
    let mut values = Values::with_capacity(DataType::F32, 0);
    for step in 0..file.steps() {
        writer.start_step(None).unwrap_or_else(|e| panic!("{e}"));
        for item in 0..header.items.len() {
            let written = file
                .read_values(step, item, &mut values)
                .and_then(|()| writer.write_item(&values));
            written.unwrap_or_else(|e| panic!("{e}"));
        }
    }
    writer.finish().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(check_file(&output).ok(), Some((false, 0)));
    let dataset = describe(&output).unwrap_or_else(|e| panic!("{e}"));
    let selection = spread_selection(&dataset, vec![4]);
    let picked = pick(&Catalogue::standard(), &dataset, &output, &selection)
        .unwrap_or_else(|e| panic!("{e}"));
    let values = bits(&picked).len();
    let missing = picked
        .iter()
        .flatten()
        .flatten()
        .filter(|v| v.is_nan())
        .count();
    assert!(missing > 0 && missing < values, "{missing} of {values}");
}

// Samples rewritten with other data types and delete values ----------------------------------

/// Rewrites `source` as `output` with item data types `types` (one per item), each value
/// `value(data type, step, index)`.
fn rewrite(
    source: &Path,
    output: &Path,
    types: &[DataType],
    value: impl Fn(&basin_formats::dfs::container::DfsHeader, DataType, usize, usize) -> Values1,
) {
    let file = DfsFile::open(source, &ReadLimits::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut header = file.header.clone();
    for (info, data_type) in header.items.iter_mut().zip(types) {
        info.data_type = *data_type;
    }
    let mut writer = DfsWriter::create(output, header.clone()).unwrap_or_else(|e| panic!("{e}"));
    for step in 0..file.steps() {
        writer.start_step(None).unwrap_or_else(|e| panic!("{e}"));
        for (item, info) in header.items.iter().enumerate() {
            let count = file.item_len(item).unwrap_or(0);
            let mut values = Values::with_capacity(info.data_type, count);
            for index in 0..count {
                value(&header, info.data_type, step, index).push_to(&mut values);
            }
            writer.write_item(&values).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    writer.finish().unwrap_or_else(|e| panic!("{e}"));
}

/// One value of any type, to push into a [`Values`] of that type.
#[derive(Debug, Clone, Copy)]
enum Values1 {
    F32(f32),
    F64(f64),
    I32(i32),
    Int(i64),
}

impl Values1 {
    fn push_to(self, values: &mut Values) {
        match (values, self) {
            (Values::F32(v), Self::F32(x)) => v.push(x),
            (Values::F64(v), Self::F64(x)) => v.push(x),
            (Values::I32(v), Self::I32(x)) => v.push(x),
            (Values::U8(v), Self::Int(x)) => v.push(x as u8),
            (Values::I16(v), Self::Int(x)) => v.push(x as i16),
            (Values::U16(v), Self::Int(x)) => v.push(x as u16),
            (Values::U32(v), Self::Int(x)) => v.push(x as u32),
            (values, value) => panic!("{value:?} into {:?}", values.data_type()),
        }
    }
}

/// Plain values and every delete value a reader must turn into NaN or keep.
fn special(
    header: &basin_formats::dfs::container::DfsHeader,
    data_type: DataType,
    step: usize,
    index: usize,
) -> Values1 {
    let plain = (step * 1000 + index) as f64 / 7.0;
    let delete = &header.file;
    let pick = (step + index) % 6;
    match data_type {
        DataType::F32 => Values1::F32(
            [
                plain as f32,
                delete.delete_float,
                f32::NAN,
                -delete.delete_float,
                -0.0,
                1e30,
            ][pick],
        ),
        DataType::F64 => Values1::F64(
            [
                plain,
                f64::from(delete.delete_float),
                delete.delete_double,
                f64::from_bits(0x7ff8_0000_dead_beef),
                f64::from(delete.delete_float) * (1.0 + f64::EPSILON),
                -0.0,
            ][pick],
        ),
        DataType::I32 => Values1::I32([index as i32, delete.delete_int, -5, i32::MIN, 0, 7][pick]),
        DataType::U8 => Values1::Int(
            [
                plain as i64 % 256,
                i64::from(delete.delete_byte),
                255,
                1,
                2,
                3,
            ][pick],
        ),
        DataType::U32 => {
            Values1::Int([index as i64, i64::from(delete.delete_uint), 0, 1, 2, 3][pick])
        }
        _ => Values1::Int([index as i64 % 300, 0, 1, 2, 255, 3][pick]),
    }
}

#[test]
fn every_data_type_and_delete_value_reads_directly_as_streaming_reads_it() {
    let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cases: [(&str, &[DataType]); 5] = [
        ("mesh2d_mixed.dfsu", &[DataType::F64, DataType::I32]),
        ("mesh2d_mixed.dfsu", &[DataType::U8, DataType::I16]),
        ("mesh2d_mixed.dfsu", &[DataType::U16, DataType::U32]),
        ("grid_utm32.dfs2", &[DataType::F64, DataType::F32]),
        ("cube.dfs3", &[DataType::F64]),
    ];
    for (index, (name, types)) in cases.into_iter().enumerate() {
        let output = folder.path().join(format!("{index}_{name}"));
        rewrite(&corpus("dfs-samples").join(name), &output, types, special);
        let checked = check_file(&output).unwrap_or_else(|e| panic!("{name} {types:?}: {e}"));
        assert!(checked.0 && checked.1 > 0, "{name} {types:?}: {checked:?}");
    }
    // The delete values are NaN both ways; a double near the widened float one is not.
    let output = folder.path().join("0_mesh2d_mixed.dfsu");
    let dataset = describe(&output).unwrap_or_else(|e| panic!("{e}"));
    let steps = (0..dataset.time.steps()).collect();
    let selection = Selection {
        items: vec![0],
        steps,
        targets: (0..6).map(|index| vec![Some(index)]).collect(),
    };
    let direct = pick_direct(&dataset, &output, &selection)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_default();
    let at_step_0: Vec<bool> = direct.iter().map(|items| items[0][0].is_nan()).collect();
    assert_eq!(at_step_0, [false, true, true, true, false, false]);
}

/// The mixed sample as an area spectrum of 2 frequencies and 3 directions: one item holding,
/// per step, a value per element, frequency and direction.
fn write_area_spectrum(output: &Path) {
    let source = corpus("dfs-samples").join("mesh2d_mixed.dfsu");
    let file = DfsFile::open(&source, &ReadLimits::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut header = file.header.clone();
    let (frequencies, directions) = (2, 3);
    let size = 6 * frequencies * directions;
    header.file.data_type = 2003;
    header.custom_blocks[0].values = Values::I32(vec![9, 6, 2, 0, 2, 3]);
    header.items.truncate(1);
    header.items[0].axis.counts = vec![size as i32];
    for (name, count) in [("Frequency", frequencies), ("Direction", directions)] {
        let mut axis = header.statics[3].clone();
        axis.info.name = name.into();
        axis.info.axis.counts = vec![count as i32];
        axis.values = Values::F32((0..count).map(|index| index as f32 * 0.1).collect());
        header.statics.push(axis);
    }
    let mut writer = DfsWriter::create(output, header).unwrap_or_else(|e| panic!("{e}"));
    for step in 0..file.steps() {
        let values = Values::F32((0..size).map(|index| (step * 100 + index) as f32).collect());
        let written = writer
            .start_step(None)
            .and_then(|()| writer.write_item(&values));
        written.unwrap_or_else(|e| panic!("{e}"));
    }
    writer.finish().unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn flattened_spectra_and_changed_files_are_streamed() {
    let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let catalogue = Catalogue::standard();
    // An area spectrum's items are split per frequency and direction: streamed.
    let spectrum = folder.path().join("spectrum.dfsu");
    write_area_spectrum(&spectrum);
    let dataset = describe(&spectrum).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dataset.items.len(), 6);
    let selection = spread_selection(&dataset, vec![1]);
    assert!(matches!(
        pick_direct(&dataset, &spectrum, &selection),
        Ok(None)
    ));
    let streamed =
        pick(&catalogue, &dataset, &spectrum, &selection).unwrap_or_else(|e| panic!("{e}"));
    // Item "… f1 d2" (the last) of element 3 at step 1: value 100 + (2 * 2 + 1) * 6 + 3.
    assert_eq!(streamed[3][0][0], 133.0);
    // A file that grew after it was described: read by streaming, which finds it broken.
    let copy = folder.path().join("grid.dfs2");
    std::fs::copy(corpus("dfs-samples").join("grid_utm32.dfs2"), &copy)
        .unwrap_or_else(|e| panic!("{e}"));
    let dataset = describe(&copy).unwrap_or_else(|e| panic!("{e}"));
    let selection = spread_selection(&dataset, vec![0, 2]);
    assert!(matches!(
        pick_direct(&dataset, &copy, &selection),
        Ok(Some(_))
    ));
    let mut bytes = std::fs::read(&copy).unwrap_or_else(|e| panic!("{e}"));
    bytes.extend_from_slice(&[0; 3]);
    std::fs::write(&copy, bytes).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(pick_direct(&dataset, &copy, &selection), Ok(None)));
    let streamed = pick(&catalogue, &dataset, &copy, &selection);
    assert!(
        matches!(streamed, Err(EdrError::Unreadable(_))),
        "{streamed:?}"
    );
    // A file gone since: the direct reading says it cannot be read.
    std::fs::remove_file(&copy).unwrap_or_else(|e| panic!("{e}"));
    let gone = pick_direct(&dataset, &copy, &selection);
    assert!(matches!(gone, Err(EdrError::Unreadable(_))), "{gone:?}");
}
