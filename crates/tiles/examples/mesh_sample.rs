//! Samples a mesh file (DFSU, .mesh, VTU) the way mesh tiles do, at points read from stdin:
//! the independent check of tests/python/test_mesh_sampling_mikeio.py, which compares the
//! output with MIKE IO's element lookup and values.
//!
//! ```text
//! cargo run -p basin-tiles --example mesh_sample -- FILE [--item N] [--step N]
//!     [--shading flat|smooth] [--node-values FILE] [--node-z] [--reader-parameter NAME=VALUE]...
//! ```
//!
//! Each stdin line holds `x y`; each output line holds the element that holds the point
//! (0-based, in the file's element order, -1 for none) and the sampled value (`NaN` for
//! none). Values are item `--item` (0-based, default 0) at step `--step` (default 0), with
//! the item's own location (elements or nodes); `--node-values` instead reads one value per
//! node from a file, one per line, for checking the interpolation alone, and `--node-z` takes
//! the node z (the bathymetry of a .mesh file) as node values.

use std::error::Error;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use basin_formats::model::{Data, Dataset, Header, MeshGeometry};
use basin_formats::{Catalogue, Parameters, ReadContext};
use basin_tiles::Field;
use basin_tiles::mesh::{MeshField, MeshIndex, Shading, ValueLocation};

#[derive(Debug, Default)]
struct Options {
    file: PathBuf,
    item: usize,
    step: usize,
    shading: Shading,
    node_values: Option<PathBuf>,
    node_z: bool,
    reader_parameters: Vec<(String, String)>,
}

fn options() -> Result<Options, Box<dyn Error>> {
    let mut options = Options::default();
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut value = || arguments.next().ok_or(format!("{argument} needs a value"));
        match argument.as_str() {
            "--item" => options.item = value()?.parse()?,
            "--step" => options.step = value()?.parse()?,
            "--shading" => {
                let name = value()?;
                options.shading = Shading::parse(&name).ok_or(format!("no shading {name}"))?;
            }
            "--node-values" => options.node_values = Some(value()?.into()),
            "--node-z" => options.node_z = true,
            "--reader-parameter" => {
                let pair = value()?;
                let (name, text) = pair.split_once('=').ok_or("NAME=VALUE expected")?;
                options
                    .reader_parameters
                    .push((name.to_owned(), text.to_owned()));
            }
            _ if options.file.as_os_str().is_empty() => options.file = argument.into(),
            _ => return Err(format!("unexpected argument {argument}").into()),
        }
    }
    if options.file.as_os_str().is_empty() {
        return Err(
            "usage: mesh_sample FILE [--item N] [--step N] [--shading flat|smooth] \
                    [--node-values FILE] [--node-z] [--reader-parameter NAME=VALUE]"
                .into(),
        );
    }
    Ok(options)
}

fn read(path: &Path, parameters: &[(String, String)]) -> Result<Dataset, Box<dyn Error>> {
    let catalogue = Catalogue::standard();
    let reader = catalogue
        .reader_for_path(path)
        .ok_or("no reader for this file")?;
    let parameters = Parameters::validate(reader.spec().parameters, parameters)?;
    let context = ReadContext::default();
    Ok(Dataset::collect(|sink| {
        reader.read(path, &parameters, &context, sink)
    })?)
}

/// What to draw: the mesh, and values with their location.
struct Drawn {
    geometry: Arc<MeshGeometry>,
    values: Arc<[f32]>,
    location: ValueLocation,
}

fn values(options: &Options, dataset: &Dataset) -> Result<Drawn, Box<dyn Error>> {
    let Header::Mesh(header) = &dataset.header else {
        return Err("not a mesh".into());
    };
    if let Some(path) = &options.node_values {
        let text = std::fs::read_to_string(path)?;
        let values = text
            .split_whitespace()
            .map(str::parse::<f32>)
            .collect::<Result<Arc<[f32]>, _>>()?;
        return Ok(Drawn {
            geometry: header.geometry.clone(),
            values,
            location: ValueLocation::Nodes,
        });
    }
    if options.node_z {
        return Ok(Drawn {
            geometry: header.geometry.clone(),
            values: header.geometry.nodes.z.iter().map(|z| *z as f32).collect(),
            location: ValueLocation::Nodes,
        });
    }
    let item = header.items.get(options.item).ok_or("no such item")?;
    let Data::Values(steps) = &dataset.data else {
        return Err("no values".into());
    };
    let buffer = steps
        .get(options.step)
        .and_then(|items| items.get(options.item))
        .ok_or("no such step")?;
    let values = (0..buffer.len())
        .map(|index| buffer.get_f64(index).map_or(f32::NAN, |value| value as f32))
        .collect();
    Ok(Drawn {
        geometry: header.geometry.clone(),
        values,
        location: ValueLocation::of(item.location),
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let options = options()?;
    let dataset = read(&options.file, &options.reader_parameters)?;
    let drawn = values(&options, &dataset)?;
    let index = Arc::new(MeshIndex::build(&drawn.geometry)?);
    let field = MeshField::new(index.clone(), drawn.values, drawn.location, options.shading)?;

    let mut points = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut numbers = line.split_whitespace().map(str::parse::<f64>);
        if let (Some(x), Some(y)) = (numbers.next(), numbers.next()) {
            points.push([x?, y?]);
        }
    }
    let mut sampled = vec![0.0; points.len()];
    field.sample(&points, 1.0, &mut sampled);

    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (point, value) in points.iter().zip(&sampled) {
        let element = index
            .element_at(point[0], point[1])
            .map_or(-1, |element| element as i64);
        writeln!(out, "{element} {value}")?;
    }
    out.flush()?;
    Ok(())
}
