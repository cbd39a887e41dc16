//! Shared driver of the fuzz targets: writes the fuzzer's bytes to a file with the reader's
//! extension and reads it into a sink that checks the call order and discards the data.
//! Limits are lowered so that a header claiming huge sizes is refused quickly instead of
//! exhausting the fuzzer's memory; any panic or abort is a bug.

use std::io::Write;
use std::sync::OnceLock;

use basin_formats::Catalogue;
use basin_formats::catalogue::{ReadContext, Reader};
use basin_formats::model::{DatasetSink, Feature, Frame, Header, PointChunk};
use basin_formats::{FormatResult, NoProgress, Parameters, ReadLimits};

/// Reads `data` as a file named `input.<extension>` with `reader`, with `parameters`.
pub fn read(reader: &dyn Reader, extension: &str, parameters: &[(&str, &str)], data: &[u8]) {
    let Ok(folder) = tempfile::tempdir() else {
        return;
    };
    let path = folder.path().join(format!("input.{extension}"));
    let Ok(mut file) = std::fs::File::create(&path) else {
        return;
    };
    if file.write_all(data).is_err() {
        return;
    }
    drop(file);
    let raw: Vec<(String, String)> = parameters
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    let Ok(parameters) = Parameters::validate(reader.spec().parameters, &raw) else {
        return;
    };
    let limits = ReadLimits {
        grid_cells_max: 4_000_000,
        items_max: 64,
        time_steps_max: 64,
        mesh_nodes_max: 1_000_000,
        mesh_elements_max: 1_000_000,
        vertices_per_geometry_max: 1_000_000,
        fields_max: 256,
        line_bytes_max: 1 << 20,
        nesting_depth_max: 32,
    };
    let context = ReadContext {
        limits,
        progress: &NoProgress,
    };
    let mut sink = Discard::default();
    let _ = reader.read(&path, &parameters, &context, &mut sink);
}

/// Reads `data` like [`read`] with the catalogue's reader named `reader_name`; does nothing
/// when the catalogue has no such reader (a target written before its reader landed).
pub fn read_with(reader_name: &str, extension: &str, parameters: &[(&str, &str)], data: &[u8]) {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    let catalogue = CATALOGUE.get_or_init(Catalogue::standard);
    if let Some(reader) = catalogue.reader(reader_name) {
        read(reader, extension, parameters, data);
    }
}

/// Discards data, checking only that `begin` comes first and once.
#[derive(Default)]
struct Discard {
    begun: bool,
}

impl DatasetSink for Discard {
    fn begin(&mut self, _header: &Header) -> FormatResult<()> {
        assert!(!self.begun, "begin called twice");
        self.begun = true;
        Ok(())
    }
    fn frame(&mut self, _frame: Frame<'_>) -> FormatResult<()> {
        assert!(self.begun, "frame before begin");
        Ok(())
    }
    fn feature(&mut self, _feature: &Feature) -> FormatResult<()> {
        assert!(self.begun, "feature before begin");
        Ok(())
    }
    fn points(&mut self, _chunk: &PointChunk) -> FormatResult<()> {
        assert!(self.begun, "points before begin");
        Ok(())
    }
    fn end(&mut self) -> FormatResult<()> {
        assert!(self.begun, "end before begin");
        Ok(())
    }
}
