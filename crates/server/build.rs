//! Lists the console's files (`console/`, flat) for `include_bytes!`, so that the binary carries
//! the whole console with no build step of its own and any change to a file rebuilds the crate.
//! Hashing and reference rewriting happen at start-up (`src/console/assets.rs`), where the same
//! code also serves a folder during development.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR")?;
    let console = Path::new(&manifest_dir).join("console");
    println!("cargo:rerun-if-changed={}", console.display());
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&console)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            return Err(format!("{}: the console folder is flat", entry.path().display()).into());
        }
        let name = entry
            .file_name()
            .into_string()
            .map_err(|name| format!("{}: not UTF-8", Path::new(&name).display()))?;
        if name.starts_with('.') {
            continue;
        }
        files.push((name, entry.path()));
    }
    files.sort();
    let mut source = String::from("pub(crate) static CONSOLE_FILES: &[(&str, &[u8])] = &[\n");
    for (name, path) in &files {
        writeln!(source, "    ({name:?}, include_bytes!({path:?})),")?;
    }
    source.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR")?;
    std::fs::write(Path::new(&out_dir).join("console_files.rs"), source)?;
    Ok(())
}
