//! Writing .vtu files (and a .pvd collection for time series).
//!
//! The geometry arrives in the header; values arrive step by step, so the sink keeps one
//! step of values and writes that step's .vtu as soon as the next step starts. Binary arrays
//! are base64-encoded while they are written, never held as text.
//!
//! Where the files go: a single step to `x.vtu` is that one file; `x.pvd` gives `x.pvd` plus
//! a folder `x/` beside it holding `x_0000.vtu`, ..., which the .pvd names as `x/x_0000.vtu`;
//! `x.zip` (or `x.vtu` with several steps, which becomes `x.zip`) gives one zip holding `x.pvd`
//! and the steps. The folder keeps a long series from burying the .pvd among its steps, and
//! moving `x.pvd` with `x/` keeps the collection whole (ParaView resolves the names from the
//! .pvd's folder). The writer creates `x/` but not the folder of `x.pvd`: a missing output
//! folder is the caller's mistake, not something to create silently.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD;
use base64::write::EncoderWriter;

use super::encoding::VtkType;
use super::{BOUNDARY_CODE_ARRAY, FORMAT};
use crate::catalogue::{WriterSink, Written};
use crate::error::{FormatError, FormatResult};
use crate::model::{DatasetSink, Frame, Header, Item, ItemLocation, MeshHeader, Values};

/// Where the .vtu files go.
enum Target {
    /// One .vtu file.
    Single(PathBuf),
    /// A .pvd at `pvd` and the steps in `folder` beside it (named after the .pvd's stem):
    /// `folder/stem_NNNN.vtu`.
    Loose { pvd: PathBuf, folder: PathBuf },
    /// Steps and a .pvd inside a zip.
    Zip {
        path: PathBuf,
        zip: Box<zip::ZipWriter<File>>,
    },
}

/// Receives a mesh dataset and writes VTU.
pub(crate) struct VtuSink {
    output: PathBuf,
    binary: bool,
    header: Option<MeshHeader>,
    target: Option<Target>,
    stem: String,
    digits: usize,
    step: usize,
    buffers: Vec<Values>,
    pending: bool,
    steps_written: Vec<(f64, String)>,
    files: Vec<PathBuf>,
    notes: Vec<String>,
    ended: bool,
}

impl VtuSink {
    /// A sink writing to `output`; `binary` selects base64 over ascii arrays.
    pub(crate) fn new(output: &Path, binary: bool) -> Self {
        let stem = output
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mesh".to_owned());
        Self {
            output: output.to_owned(),
            binary,
            header: None,
            target: None,
            stem,
            digits: 4,
            step: 0,
            buffers: Vec::new(),
            pending: false,
            steps_written: Vec::new(),
            files: Vec::new(),
            notes: Vec::new(),
            ended: false,
        }
    }

    fn open_target(&mut self, steps: usize) -> FormatResult<Target> {
        let extension = self
            .output
            .extension()
            .map(|extension| extension.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if extension == "pvd" {
            let folder = steps_folder(&self.output);
            create_folder(&folder)?;
            return Ok(Target::Loose {
                pvd: self.output.clone(),
                folder,
            });
        }
        if extension != "zip" && steps <= 1 {
            return Ok(Target::Single(self.output.clone()));
        }
        let path = self.output.with_extension("zip");
        if extension != "zip" {
            self.notes.push(format!(
                "{steps} time steps: written as {} holding {}.pvd and one .vtu per step",
                path.display(),
                self.stem
            ));
        }
        let file = File::create(&path).map_err(|source| FormatError::write(&path, source))?;
        Ok(Target::Zip {
            path,
            zip: Box::new(zip::ZipWriter::new(file)),
        })
    }

    /// Writes the step held in the buffers.
    fn flush_step(&mut self) -> FormatResult<()> {
        let (Some(header), Some(target)) = (&self.header, &mut self.target) else {
            return Err(FormatError::Catalogue(
                "values arrived before the header".into(),
            ));
        };
        for (item, buffer) in header.items.iter().zip(&self.buffers) {
            let expected = expected_len(header, item);
            if buffer.len() != expected {
                return Err(FormatError::Incompatible {
                    data: "mesh",
                    format: FORMAT,
                    message: format!(
                        "item {:?} has {} values at step {}, {expected} expected",
                        item.name,
                        buffer.len(),
                        self.step
                    ),
                });
            }
        }
        let name = format!(
            "{}_{:0width$}.vtu",
            self.stem,
            self.step,
            width = self.digits
        );
        let time = header
            .time
            .offset_seconds(self.step)
            .unwrap_or(self.step as f64);
        let binary = self.binary;
        let content = |out: &mut dyn Write| write_vtu(out, header, &self.buffers, binary);
        match target {
            Target::Single(path) => {
                write_file(path, content)?;
                self.files.push(path.clone());
            }
            Target::Loose { folder, .. } => {
                let path = folder.join(&name);
                write_file(&path, content)?;
                self.files.push(path);
            }
            Target::Zip { path, zip } => {
                zip.start_file(name.as_str(), zip_options())
                    .map_err(|error| zip_error(path, error))?;
                content(zip.as_mut()).map_err(|source| FormatError::write(path.clone(), source))?;
            }
        }
        let listed = match target {
            Target::Loose { .. } => format!("{}/{name}", self.stem),
            _ => name,
        };
        self.steps_written.push((time, listed));
        for buffer in &mut self.buffers {
            buffer.clear();
        }
        self.pending = false;
        Ok(())
    }

    fn finish_target(&mut self) -> FormatResult<()> {
        let pvd = pvd_text(&self.steps_written);
        match self.target.take() {
            Some(Target::Single(_)) | None => {}
            Some(Target::Loose { pvd: path, .. }) => {
                write_file(&path, |out| out.write_all(pvd.as_bytes()))?;
                self.files.insert(0, path);
            }
            Some(Target::Zip { path, mut zip }) => {
                zip.start_file(format!("{}.pvd", self.stem), zip_options())
                    .map_err(|error| zip_error(&path, error))?;
                zip.write_all(pvd.as_bytes())
                    .map_err(|source| FormatError::write(&path, source))?;
                zip.finish().map_err(|error| zip_error(&path, error))?;
                self.files.push(path);
            }
        }
        Ok(())
    }
}

impl DatasetSink for VtuSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::Mesh(mesh) = header else {
            return Err(FormatError::Incompatible {
                data: header.kind().name(),
                format: FORMAT,
                message: "VTU holds meshes and point sets".to_owned(),
            });
        };
        let steps = mesh.time.steps();
        self.digits = steps.saturating_sub(1).to_string().len().max(4);
        self.target = Some(self.open_target(steps)?);
        self.buffers = mesh
            .items
            .iter()
            .map(|item| Values::with_capacity(item.data_type, 0))
            .collect();
        self.header = Some(mesh.clone());
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        if frame.step != self.step {
            if self.pending {
                self.flush_step()?;
            }
            self.step = frame.step;
        }
        let Some(buffer) = self.buffers.get_mut(frame.item) else {
            return Err(FormatError::Catalogue(format!("no item {}", frame.item)));
        };
        if buffer.len() != frame.offset || !buffer.extend_from(frame.values) {
            return Err(FormatError::Catalogue(
                "values arrived out of order or with a changed type".into(),
            ));
        }
        self.pending = true;
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        if self.pending || self.steps_written.is_empty() {
            self.flush_step()?;
        }
        self.finish_target()?;
        self.ended = true;
        Ok(())
    }
}

impl WriterSink for VtuSink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.ended {
            return Err(FormatError::Catalogue(
                "the VTU output was not completed".into(),
            ));
        }
        Ok(Written {
            files: self.files,
            notes: self.notes,
            summary: None,
        })
    }
}

/// The folder of a .pvd output's steps: beside it, named after its stem (`out/b.pvd` ->
/// `out/b`).
pub(crate) fn steps_folder(pvd: &Path) -> PathBuf {
    let stem = pvd
        .file_stem()
        .unwrap_or_else(|| std::ffi::OsStr::new("mesh"));
    pvd.with_file_name(stem)
}

/// Creates the steps folder, or uses it when it exists; its parent must exist.
fn create_folder(folder: &Path) -> FormatResult<()> {
    match std::fs::create_dir(folder) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && folder.is_dir() => {
            Ok(())
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(FormatError::write(
            folder,
            std::io::Error::other("a file has the name of the folder for the time steps"),
        )),
        Err(error) => Err(FormatError::write(folder, error)),
    }
}

fn expected_len(header: &MeshHeader, item: &Item) -> usize {
    match item.location {
        ItemLocation::Node => header.geometry.nodes.len(),
        ItemLocation::Cell => header.geometry.elements.len(),
    }
}

fn zip_options() -> zip::write::SimpleFileOptions {
    zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true)
}

fn zip_error(path: &Path, error: zip::result::ZipError) -> FormatError {
    FormatError::write(path, std::io::Error::other(error))
}

fn write_file(
    path: &Path,
    content: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> FormatResult<()> {
    let file = File::create(path).map_err(|source| FormatError::write(path, source))?;
    let mut out = BufWriter::new(file);
    content(&mut out)
        .and_then(|()| out.flush())
        .map_err(|source| FormatError::write(path, source))
}

/// The .pvd collection naming each step's file with its time in seconds from step 0.
fn pvd_text(steps: &[(f64, String)]) -> String {
    let mut text = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
    );
    for (time, file) in steps {
        text.push_str(&format!(
            "    <DataSet timestep=\"{time:?}\" group=\"\" part=\"0\" file=\"{}\"/>\n",
            quick_xml::escape::escape(file.as_str())
        ));
    }
    text.push_str("  </Collection>\n</VTKFile>\n");
    text
}

fn write_vtu(
    out: &mut dyn Write,
    header: &MeshHeader,
    buffers: &[Values],
    binary: bool,
) -> std::io::Result<()> {
    let geometry = &header.geometry;
    let nodes = &geometry.nodes;
    let elements = &geometry.elements;
    let wide = nodes.len().saturating_mul(24) > u32::MAX as usize
        || elements.connectivity.len().saturating_mul(8) > u32::MAX as usize;
    let arrays = Arrays { binary, wide };
    writeln!(out, "<?xml version=\"1.0\"?>")?;
    writeln!(
        out,
        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"{}\">",
        if wide { "UInt64" } else { "UInt32" }
    )?;
    writeln!(out, "<UnstructuredGrid>")?;
    writeln!(
        out,
        "<Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">",
        nodes.len(),
        elements.len()
    )?;
    writeln!(out, "<Points>")?;
    let coordinates = point_coordinates(header, buffers);
    arrays.write(
        out,
        "Points",
        VtkType::Float64,
        3,
        nodes.len() * 3,
        coordinates.map(Scalar::F64),
    )?;
    writeln!(out, "</Points>")?;
    writeln!(out, "<Cells>")?;
    let connectivity = elements
        .connectivity
        .iter()
        .map(|&node| Scalar::I64(i64::from(node)));
    arrays.write(
        out,
        "connectivity",
        VtkType::Int64,
        1,
        elements.connectivity.len(),
        connectivity,
    )?;
    let offsets = elements
        .offsets
        .iter()
        .skip(1)
        .map(|&end| Scalar::I64(end as i64));
    arrays.write(out, "offsets", VtkType::Int64, 1, elements.len(), offsets)?;
    let types = elements
        .kinds
        .iter()
        .map(|kind| Scalar::U8(kind.vtk_type()));
    arrays.write(out, "types", VtkType::UInt8, 1, elements.len(), types)?;
    writeln!(out, "</Cells>")?;
    write_data(out, &arrays, header, buffers, ItemLocation::Node)?;
    write_data(out, &arrays, header, buffers, ItemLocation::Cell)?;
    writeln!(out, "</Piece>")?;
    writeln!(out, "</UnstructuredGrid>")?;
    writeln!(out, "</VTKFile>")
}

fn write_data(
    out: &mut dyn Write,
    arrays: &Arrays,
    header: &MeshHeader,
    buffers: &[Values],
    location: ItemLocation,
) -> std::io::Result<()> {
    let codes = &header.geometry.nodes.codes;
    let with_codes = location == ItemLocation::Node && codes.iter().any(|&code| code != 0);
    let moving_z = z_item(header);
    let items: Vec<(&Item, &Values)> = header
        .items
        .iter()
        .zip(buffers)
        .enumerate()
        .filter(|(index, (item, _))| item.location == location && Some(*index) != moving_z)
        .map(|(_, pair)| pair)
        .collect();
    if items.is_empty() && !with_codes {
        return Ok(());
    }
    let tag = match location {
        ItemLocation::Node => "PointData",
        ItemLocation::Cell => "CellData",
    };
    writeln!(out, "<{tag}>")?;
    if with_codes {
        let values = codes.iter().map(|&code| Scalar::I32(code));
        arrays.write(
            out,
            BOUNDARY_CODE_ARRAY,
            VtkType::Int32,
            1,
            codes.len(),
            values,
        )?;
    }
    for (item, values) in items {
        let vtk_type = VtkType::of(values.data_type());
        let scalars = (0..values.len()).map(|index| scalar_of(item, values, index));
        arrays.write(out, &item.name, vtk_type, 1, values.len(), scalars)?;
    }
    writeln!(out, "</{tag}>")
}

/// The x, y, z of every point, z from the layered mesh's Z coordinate item where it has one.
fn point_coordinates<'a>(
    header: &'a MeshHeader,
    buffers: &'a [Values],
) -> impl Iterator<Item = f64> + 'a {
    let nodes = &header.geometry.nodes;
    let moving_z = z_item(header).and_then(|index| buffers.get(index));
    nodes
        .x
        .iter()
        .zip(&nodes.y)
        .zip(&nodes.z)
        .enumerate()
        .flat_map(move |(index, ((x, y), z))| {
            let z = moving_z
                .and_then(|values| values.get_f64(index))
                .unwrap_or(*z);
            [*x, *y, z]
        })
}

/// The index of the item that gives the points' z at each step: in a layered mesh (DFSU 3D,
/// vertical profiles and columns) the node item "Z coordinate" (EUM 100188), which MIKE
/// engines write because the nodes move with the water level. It is geometry, so it moves the
/// points instead of becoming point data.
fn z_item(header: &MeshHeader) -> Option<usize> {
    header.geometry.layers?;
    header
        .items
        .iter()
        .position(crate::dfs::dfsu::geometry::is_z_coordinate)
}

/// The value at `index` as written: float nodata values become NaN.
fn scalar_of(item: &Item, values: &Values, index: usize) -> Scalar {
    let nodata = |value: f64| item.is_nodata(value);
    match values {
        Values::U8(v) => Scalar::U8(v.get(index).copied().unwrap_or_default()),
        Values::I16(v) => Scalar::I16(v.get(index).copied().unwrap_or_default()),
        Values::U16(v) => Scalar::U16(v.get(index).copied().unwrap_or_default()),
        Values::I32(v) => Scalar::I32(v.get(index).copied().unwrap_or_default()),
        Values::U32(v) => Scalar::U32(v.get(index).copied().unwrap_or_default()),
        Values::F32(v) => {
            let value = v.get(index).copied().unwrap_or(f32::NAN);
            Scalar::F32(if nodata(f64::from(value)) {
                f32::NAN
            } else {
                value
            })
        }
        _ => {
            let value = values.get_f64(index).unwrap_or(f64::NAN);
            Scalar::F64(if nodata(value) { f64::NAN } else { value })
        }
    }
}

/// One value to write.
#[derive(Clone, Copy)]
enum Scalar {
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Scalar {
    fn write_le(self, out: &mut impl Write) -> std::io::Result<()> {
        match self {
            Self::U8(v) => out.write_all(&v.to_le_bytes()),
            Self::I16(v) => out.write_all(&v.to_le_bytes()),
            Self::U16(v) => out.write_all(&v.to_le_bytes()),
            Self::I32(v) => out.write_all(&v.to_le_bytes()),
            Self::U32(v) => out.write_all(&v.to_le_bytes()),
            Self::I64(v) => out.write_all(&v.to_le_bytes()),
            Self::F32(v) => out.write_all(&v.to_le_bytes()),
            Self::F64(v) => out.write_all(&v.to_le_bytes()),
        }
    }

    fn write_text(self, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Self::U8(v) => write!(out, "{v}"),
            Self::I16(v) => write!(out, "{v}"),
            Self::U16(v) => write!(out, "{v}"),
            Self::I32(v) => write!(out, "{v}"),
            Self::U32(v) => write!(out, "{v}"),
            Self::I64(v) => write!(out, "{v}"),
            Self::F32(v) => write!(out, "{v:?}"),
            Self::F64(v) => write!(out, "{v:?}"),
        }
    }
}

/// How data arrays are written.
struct Arrays {
    binary: bool,
    wide: bool,
}

impl Arrays {
    fn write(
        &self,
        out: &mut dyn Write,
        name: &str,
        vtk_type: VtkType,
        components: usize,
        count: usize,
        values: impl Iterator<Item = Scalar>,
    ) -> std::io::Result<()> {
        // Like VTK, state the components only when there are several: meshio turns an
        // explicit NumberOfComponents="1" into (n, 1) arrays.
        let components = if components > 1 {
            format!(" NumberOfComponents=\"{components}\"")
        } else {
            String::new()
        };
        writeln!(
            out,
            "<DataArray type=\"{}\" Name=\"{}\"{components} format=\"{}\">",
            vtk_type.name(),
            quick_xml::escape::escape(name),
            if self.binary { "binary" } else { "ascii" }
        )?;
        if self.binary {
            let bytes = count.saturating_mul(vtk_type.size()) as u64;
            {
                let mut encoder = EncoderWriter::new(&mut *out, &STANDARD);
                let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut encoder);
                if self.wide {
                    buffered.write_all(&bytes.to_le_bytes())?;
                } else {
                    let bytes = u32::try_from(bytes).map_err(std::io::Error::other)?;
                    buffered.write_all(&bytes.to_le_bytes())?;
                }
                for value in values {
                    value.write_le(&mut buffered)?;
                }
                buffered.flush()?;
                drop(buffered);
                encoder.finish()?;
            }
            writeln!(out)?;
        } else {
            for (index, value) in values.enumerate() {
                value.write_text(out)?;
                out.write_all(if index % 9 == 8 { b"\n" } else { b" " })?;
            }
            writeln!(out)?;
        }
        writeln!(out, "</DataArray>")
    }
}
