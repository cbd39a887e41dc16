//! What several format test modules share: fixture paths and parameter sets.

use std::path::{Path, PathBuf};

use basin_formats::{ParameterSpec, Parameters};

/// A file of `tests/fixtures/<folder>/`.
pub(crate) fn fixture(folder: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(folder)
        .join(name)
}

/// The parameters `raw` checked against `specs`, as a reader or writer gets them.
pub(crate) fn params(specs: &'static [ParameterSpec], raw: &[(&str, &str)]) -> Parameters {
    let raw: Vec<(String, String)> = raw
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    Parameters::validate(specs, &raw).unwrap()
}
