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
