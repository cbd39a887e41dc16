//! DFS data is read lazily: what a filter downstream drops is never read. Proven with a file
//! whose data is broken exactly where the filter drops it.

use std::path::Path;

use basin_formats::dfs::container::{DfsFile, DfsHeader, DfsWriter, ItemInfo, SpatialAxis};
use basin_formats::dfs::mapping;
use basin_formats::model::{DatasetSink, Frame, Header, Values};
use basin_formats::{FormatResult, NoProgress, ReadLimits};

const STEPS: usize = 5;
const ITEMS: usize = 3;

/// A DFS0-like file of 3 float items over 5 steps; returns the offset of step 3 item 1's
/// record head.
fn write_file(path: &Path) -> u64 {
    let mut header = DfsHeader::default();
    header.file.application = "test".to_owned();
    header.items = (0..ITEMS)
        .map(|item| ItemInfo::new(format!("item {item}"), 999, 0, SpatialAxis::eq_d0()))
        .collect();
    let mut writer = DfsWriter::create(path, header).unwrap();
    for step in 0..STEPS {
        writer.start_step(None).unwrap();
        for item in 0..ITEMS {
            writer
                .write_item(&Values::F32(vec![(step * 10 + item) as f32]))
                .unwrap();
        }
    }
    writer.finish().unwrap();
    let file = DfsFile::open(path, &ReadLimits::default()).unwrap();
    // Each step: a 4-byte marker, then per item a 5-byte head and one float.
    file.data_start() + 3 * file.step_bytes() + 4 + 9
}

/// Keeps what `wanted` says and records the frames it got.
struct Picky {
    wanted: fn(usize, usize) -> bool,
    got: Vec<(usize, usize, f64)>,
}

impl DatasetSink for Picky {
    fn begin(&mut self, _header: &Header) -> FormatResult<()> {
        Ok(())
    }
    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        self.got
            .push((frame.step, frame.item, frame.values.get_f64(0).unwrap()));
        Ok(())
    }
    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }
    fn wants(&self, step: usize, item: usize) -> bool {
        (self.wanted)(step, item)
    }
}

fn stream(path: &Path, wanted: fn(usize, usize) -> bool) -> FormatResult<Vec<(usize, usize, f64)>> {
    let mut file = DfsFile::open(path, &ReadLimits::default())?;
    let mut sink = Picky {
        wanted,
        got: Vec::new(),
    };
    mapping::stream(&mut file, &[0, 1, 2], &mut sink, &NoProgress, |_, _| Ok(()))?;
    Ok(sink.got)
}

#[test]
fn data_a_filter_drops_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("series.dfs0");
    let broken_at = write_file(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    // Step 3 item 1 claims to be a double: reading it is an error.
    bytes[usize::try_from(broken_at).unwrap()] = 2;
    std::fs::write(&path, bytes).unwrap();

    let error = stream(&path, |_, _| true).unwrap_err().to_string();
    assert!(error.contains("step 3 item 1"), "{error}");

    let got = stream(&path, |step, item| !(step == 3 && item == 1)).unwrap();
    assert_eq!(got.len(), STEPS * ITEMS - 1);
    assert!(got.contains(&(4, 2, 42.0)));

    let got = stream(&path, |step, item| step == 2 && item == 0).unwrap();
    assert_eq!(got, vec![(2, 0, 20.0)]);
}
