//! The DFS container on every DFS file of the corpus: it reads, and writing the same content
//! back gives the same bytes (apart from the two timestamps), which checks the block order,
//! the statistics and the patched header fields against the reference library's own files.

use std::io::Cursor;
use std::path::PathBuf;

use basin_formats::ReadLimits;
use basin_formats::dfs::container::{DfsFile, DfsWriter};
use basin_formats::model::{DataType, Values};

/// Every DFS file of the repository's corpus (MIKE IO test data and the generated samples).
pub fn dfs_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in ["mikeio", "mikecore", "dfs-samples"] {
        for entry in std::fs::read_dir(crate::helpers::corpus(folder, "")).unwrap() {
            let path = entry.unwrap().path();
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

/// Offsets of the two preamble timestamps, which a rewrite does not keep.
fn is_timestamp(offset: usize) -> bool {
    (0x52..0x5E).contains(&offset) || (0x66..0x72).contains(&offset)
}

#[test]
fn every_corpus_file_rewrites_to_identical_bytes() {
    let mut failures = Vec::new();
    for path in dfs_files() {
        let original = std::fs::read(&path).unwrap();
        let mut file = DfsFile::open(&path, &ReadLimits::default())
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let steps = file.steps();
        let times = if file.header.file.time.kind.is_equidistant() {
            vec![None; steps]
        } else {
            file.step_times().unwrap().into_iter().map(Some).collect()
        };
        let mut writer =
            DfsWriter::new(Cursor::new(Vec::new()), &path, file.header.clone()).unwrap();
        let mut values = Values::with_capacity(DataType::F32, 0);
        for (step, time) in times.into_iter().enumerate() {
            writer.start_step(time).unwrap();
            for item in 0..file.header.items.len() {
                file.read_values(step, item, &mut values).unwrap();
                writer.write_item(&values).unwrap();
            }
        }
        let written = writer.finish().unwrap().into_inner();
        if written.len() != original.len() {
            failures.push(format!(
                "{}: {} bytes written, {} read",
                path.display(),
                written.len(),
                original.len()
            ));
            continue;
        }
        if let Some(offset) = (0..written.len())
            .find(|offset| !is_timestamp(*offset) && written[*offset] != original[*offset])
        {
            failures.push(format!(
                "{}: first difference at byte {offset}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_value_layout_finds_every_value_the_reader_reads() {
    let mut checked = 0_usize;
    for path in dfs_files() {
        let bytes = std::fs::read(&path).unwrap();
        let mut file = DfsFile::open(&path, &ReadLimits::default()).unwrap();
        let layout = file.value_layout();
        assert_eq!(
            layout.file_len(),
            Some(bytes.len() as u64),
            "{}",
            path.display()
        );
        let mut values = Values::with_capacity(DataType::F32, 0);
        for step in 0..file.steps() {
            for item in 0..file.header.items.len() {
                file.read_values(step, item, &mut values).unwrap();
                basin_formats::dfs::mapping::delete_values_to_nan(&file.header, &mut values);
                let count = layout.item_len(item).unwrap();
                assert_eq!(count, values.len());
                let size = layout.data_type(item).unwrap().size_bytes();
                // The first and last values and about 60 between.
                let stride = (count / 60).max(1);
                for index in (0..count).step_by(stride).chain(count.checked_sub(1)) {
                    let offset = layout.offset(step, item, index).unwrap() as usize;
                    let value = layout.value(item, &bytes[offset..offset + size]).unwrap();
                    let read = values.get_f64(index).unwrap();
                    assert!(
                        value.to_bits() == read.to_bits() || (value.is_nan() && read.is_nan()),
                        "{} step {step} item {item} value {index}: {value}, read {read}",
                        path.display()
                    );
                    checked += 1;
                }
                assert_eq!(layout.offset(step, item, count), None);
            }
        }
        assert_eq!(layout.offset(file.steps(), 0, 0), None);
    }
    assert!(checked > 20_000, "{checked}");
}
