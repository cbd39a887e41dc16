//! The list of every reader and writer, in the order the interface's lists show them.
//! Adding a format means adding its module and one line in each list here.

use std::path::Path;

use crate::catalogue::{Reader, Writer};

/// Every reader.
pub fn readers() -> Vec<Box<dyn Reader>> {
    vec![
        Box::new(crate::file_copy::FileReader),
        Box::new(crate::ascii_grid::AsciiGridReader),
        Box::new(crate::geotiff::GeoTiffReader),
        Box::new(crate::geo_json::GeoJsonReader),
        Box::new(crate::shp::ShpReader),
        Box::new(crate::xyz::XyzReader),
        Box::new(crate::mesh_file::MeshFileReader),
        Box::new(crate::vtu::VtuReader),
        Box::new(crate::dfs::dfs0::Dfs0Reader),
        Box::new(crate::dfs::grid::Dfs1Reader),
        Box::new(crate::dfs::grid::Dfs2Reader),
        Box::new(crate::dfs::grid::Dfs3Reader),
        Box::new(crate::dfs::dfsu::DfsuReader),
    ]
}

/// Every writer.
pub fn writers() -> Vec<Box<dyn Writer>> {
    vec![
        Box::new(crate::file_copy::FileWriter),
        Box::new(crate::ascii_grid::AsciiGridWriter),
        Box::new(crate::geotiff::GeoTiffWriter),
        Box::new(crate::geo_json::GeoJsonWriter),
        Box::new(crate::shp::ShpWriter),
        Box::new(crate::mesh_file::MeshFileWriter),
        Box::new(crate::vtu::VtuWriter),
        Box::new(crate::dfs::dfs0::Dfs0Writer),
        Box::new(crate::dfs::grid::Dfs1Writer),
        Box::new(crate::dfs::grid::Dfs2Writer),
        Box::new(crate::dfs::grid::Dfs3Writer),
        Box::new(crate::dfs::dfsu::DfsuWriter),
        Box::new(crate::csv::CsvWriter),
    ]
}

/// True for files a writer may create beside its main output (Shapefile parts, .prj, VTU
/// steps), which the pipeline removes after a failed conversion.
pub fn is_side_file(path: &Path) -> bool {
    const SIDE_EXTENSIONS: [&str; 8] = ["shp", "shx", "dbf", "prj", "cpg", "vtu", "pvd", "zip"];
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            SIDE_EXTENSIONS
                .iter()
                .any(|side| side.eq_ignore_ascii_case(extension))
        })
}
