//! Reading a .vtu file: the XML is parsed as a stream of events with quick-xml; inline data
//! arrays are decoded as they pass, appended data (ParaView's default, raw or base64) is read
//! afterwards by seeking to each array's offset. Everything of the file is needed before the
//! header can be announced (VTK puts point and cell data before the points and cells, and a
//! file may hold several pieces that make one mesh), so memory holds the geometry and one
//! step of values, as it must for a mesh.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use super::FORMAT;
use super::encoding::{self, Framing, RawArray, VtkType};
use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};

/// Where a data array sits in the piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Points,
    Cells,
    PointData,
    CellData,
    Other,
}

/// A decoded data array.
#[derive(Debug)]
pub(crate) struct Array {
    pub section: Section,
    pub name: String,
    pub components: usize,
    pub data: RawArray,
}

/// What one piece holds.
#[derive(Debug, Default)]
pub(crate) struct Piece {
    pub points: u64,
    pub cells: u64,
    pub arrays: Vec<Array>,
}

/// Most connectivity entries per cell that are not accounted for by the points: the largest
/// cell of fixed size (a triquadratic hexahedron) has 27 nodes.
const CONNECTIVITY_PER_CELL_MAX: u64 = 27;

/// An array whose data is in the `AppendedData` section.
struct Pending {
    /// Index of its piece.
    piece: usize,
    section: Section,
    name: String,
    components: usize,
    vtk_type: VtkType,
    offset: u64,
    max_bytes: u64,
}

/// The array being read inline.
struct Open {
    section: Section,
    name: String,
    components: usize,
    vtk_type: VtkType,
    binary: bool,
    max_bytes: u64,
    text: Vec<u8>,
}

struct Parser<'a> {
    path: &'a Path,
    limits: &'a ReadLimits,
    framing: Framing,
    seen_file: bool,
    /// The pieces read so far.
    pieces: Vec<Piece>,
    /// The piece being read.
    piece: Option<Piece>,
    /// Points and cells of every piece so far, checked against the limits.
    points_total: u64,
    cells_total: u64,
    section: Section,
    open: Option<Open>,
    pending: Vec<Pending>,
}

/// Reads the pieces of an UnstructuredGrid file, in file order.
pub(crate) fn read_pieces(path: &Path, limits: &ReadLimits) -> FormatResult<Vec<Piece>> {
    let file = File::open(path).map_err(|source| FormatError::read(path, source))?;
    let mut xml = quick_xml::Reader::from_reader(BufReader::new(file));
    let mut parser = Parser {
        path,
        limits,
        framing: Framing {
            wide_header: false,
            compressed: false,
        },
        seen_file: false,
        pieces: Vec::new(),
        piece: None,
        points_total: 0,
        cells_total: 0,
        section: Section::Other,
        open: None,
        pending: Vec::new(),
    };
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let position = xml.buffer_position();
        let event = xml.read_event_into(&mut buffer).map_err(|error| {
            FormatError::invalid(
                FORMAT,
                format!("byte {position}"),
                format!("bad XML: {error}"),
            )
        })?;
        match event {
            Event::Start(start) if parser.start(&start, false)? => {
                let appended = parse_appended_encoding(&start)?;
                parser.read_appended(xml.buffer_position(), appended)?;
                break;
            }
            Event::Empty(start) => {
                parser.start(&start, true)?;
            }
            Event::Text(text) => parser.text(&text)?,
            Event::CData(data) => parser.text(&data)?,
            Event::End(end) => parser.end(end.local_name().as_ref())?,
            Event::Eof => break,
            _ => {}
        }
    }
    parser.finish()
}

impl Parser<'_> {
    /// Handles a start tag; returns true at `AppendedData`, where XML parsing stops.
    fn start(&mut self, start: &BytesStart<'_>, empty: bool) -> FormatResult<bool> {
        match start.local_name().as_ref() {
            b"VTKFile" => self.file(start)?,
            b"Piece" => self.begin_piece(start, empty)?,
            b"Points" => self.section = Section::Points,
            b"Cells" => self.section = Section::Cells,
            b"PointData" => self.section = Section::PointData,
            b"CellData" => self.section = Section::CellData,
            b"FieldData" => self.section = Section::Other,
            b"DataArray" => self.data_array(start, empty)?,
            b"AppendedData" => return Ok(!empty),
            _ => {}
        }
        Ok(false)
    }

    fn file(&mut self, start: &BytesStart<'_>) -> FormatResult<()> {
        let kind = attribute(start, "type")?.unwrap_or_default();
        if kind != "UnstructuredGrid" {
            return Err(FormatError::unsupported(
                FORMAT,
                format!(
                    "VTKFile type {kind:?}; only UnstructuredGrid is read (a .pvd collection names its .vtu files)"
                ),
            ));
        }
        if attribute(start, "byte_order")?.as_deref() == Some("BigEndian") {
            return Err(FormatError::unsupported(FORMAT, "big-endian data"));
        }
        self.framing.wide_header = match attribute(start, "header_type")?.as_deref() {
            None | Some("UInt32") => false,
            Some("UInt64") => true,
            Some(other) => {
                return Err(FormatError::unsupported(
                    FORMAT,
                    format!("header_type {other:?}"),
                ));
            }
        };
        self.framing.compressed = match attribute(start, "compressor")?.as_deref() {
            None | Some("") => false,
            Some("vtkZLibDataCompressor") => true,
            Some(other) => {
                return Err(FormatError::unsupported(
                    FORMAT,
                    format!("compressor {other}; only vtkZLibDataCompressor is read"),
                ));
            }
        };
        self.seen_file = true;
        Ok(())
    }

    fn begin_piece(&mut self, start: &BytesStart<'_>, empty: bool) -> FormatResult<()> {
        self.end_piece();
        let points = count_attribute(start, "NumberOfPoints")?;
        let cells = count_attribute(start, "NumberOfCells")?;
        self.points_total = self.points_total.saturating_add(points);
        self.cells_total = self.cells_total.saturating_add(cells);
        check_limit(
            "VTU point count",
            self.points_total,
            self.limits.mesh_nodes_max,
        )?;
        check_limit(
            "VTU cell count",
            self.cells_total,
            self.limits.mesh_elements_max,
        )?;
        let piece = Piece {
            points,
            cells,
            arrays: Vec::new(),
        };
        if empty {
            self.pieces.push(piece);
        } else {
            self.piece = Some(piece);
        }
        Ok(())
    }

    /// Moves the piece being read, if any, to the pieces read.
    fn end_piece(&mut self) {
        if let Some(piece) = self.piece.take() {
            self.pieces.push(piece);
        }
    }

    fn data_array(&mut self, start: &BytesStart<'_>, empty: bool) -> FormatResult<()> {
        if self.section == Section::Other {
            // FieldData (ParaView's TimeValue, string arrays) carries nothing the model holds.
            return Ok(());
        }
        let Some(piece) = &self.piece else {
            return Err(FormatError::invalid(
                FORMAT,
                "DataArray",
                "a DataArray outside a Piece",
            ));
        };
        let name = attribute(start, "Name")?.unwrap_or_default();
        if self.section == Section::Cells
            && !matches!(name.as_str(), "connectivity" | "offsets" | "types")
        {
            // Polyhedra's `faces` and `faceoffsets`: polyhedra are refused by their cell type,
            // with a clearer message than a failed size check here would give.
            return Ok(());
        }
        let type_name = attribute(start, "type")?.unwrap_or_default();
        let Some(vtk_type) = VtkType::parse(&type_name) else {
            return Err(FormatError::unsupported(
                FORMAT,
                format!("DataArray {name:?} of type {type_name:?}"),
            ));
        };
        let components = components_of(start, &name)?;
        let max_bytes = max_values(self.section, &name, piece, components)
            .saturating_mul(vtk_type.size() as u64);
        let format = attribute(start, "format")?.unwrap_or_else(|| "ascii".to_owned());
        match format.as_str() {
            "appended" => {
                let offset = count_attribute(start, "offset")?;
                self.pending.push(Pending {
                    piece: self.pieces.len(),
                    section: self.section,
                    name,
                    components,
                    vtk_type,
                    offset,
                    max_bytes,
                });
            }
            "ascii" | "binary" if !empty => {
                self.open = Some(Open {
                    section: self.section,
                    name,
                    components,
                    vtk_type,
                    binary: format == "binary",
                    max_bytes,
                    text: Vec::new(),
                });
            }
            "ascii" | "binary" => self.push(
                self.section,
                name,
                components,
                RawArray {
                    vtk_type,
                    bytes: Vec::new(),
                },
            ),
            other => {
                return Err(FormatError::unsupported(
                    FORMAT,
                    format!("DataArray {name:?} format {other:?}"),
                ));
            }
        }
        Ok(())
    }

    fn text(&mut self, text: &[u8]) -> FormatResult<()> {
        if let Some(open) = &mut self.open {
            let max_text = open.max_bytes.saturating_mul(40).saturating_add(64);
            if (open.text.len() as u64).saturating_add(text.len() as u64) > max_text {
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("DataArray {:?}", open.name),
                    "more text than the piece's counts allow",
                ));
            }
            open.text.extend_from_slice(text);
        }
        Ok(())
    }

    fn end(&mut self, name: &[u8]) -> FormatResult<()> {
        match name {
            b"DataArray" => {
                let Some(open) = self.open.take() else {
                    return Ok(());
                };
                let data = if open.binary {
                    let bytes = encoding::decode_base64(&open.text, &open.name)?;
                    let raw = encoding::decode_framed(
                        &mut bytes.as_slice(),
                        self.framing,
                        open.max_bytes,
                        &open.name,
                    )?;
                    RawArray {
                        vtk_type: open.vtk_type,
                        bytes: raw,
                    }
                } else {
                    let text = String::from_utf8_lossy(&open.text);
                    let max = open.max_bytes / open.vtk_type.size() as u64;
                    encoding::decode_ascii(&text, open.vtk_type, max, &open.name)?
                };
                self.push(open.section, open.name, open.components, data);
            }
            b"Piece" => self.end_piece(),
            b"Points" | b"Cells" | b"PointData" | b"CellData" | b"FieldData" => {
                self.section = Section::Other;
            }
            _ => {}
        }
        Ok(())
    }

    /// Adds an array to the piece being read.
    fn push(&mut self, section: Section, name: String, components: usize, data: RawArray) {
        if section == Section::Other {
            return;
        }
        if let Some(piece) = &mut self.piece {
            piece.arrays.push(Array {
                section,
                name,
                components,
                data,
            });
        }
    }

    /// Adds an appended array to the piece it was declared in (every piece has ended).
    fn push_to(
        &mut self,
        index: usize,
        section: Section,
        name: String,
        components: usize,
        data: RawArray,
    ) {
        if section == Section::Other {
            return;
        }
        if let Some(piece) = self.pieces.get_mut(index) {
            piece.arrays.push(Array {
                section,
                name,
                components,
                data,
            });
        }
    }

    /// Reads the arrays whose data is appended, from `position` (just after the
    /// `<AppendedData ...>` tag).
    fn read_appended(&mut self, position: u64, base64: bool) -> FormatResult<()> {
        let mut file =
            File::open(self.path).map_err(|source| FormatError::read(self.path, source))?;
        let base = find_underscore(&mut file, position, self.path)?;
        self.end_piece();
        let pending = std::mem::take(&mut self.pending);
        for array in pending {
            let start = base.checked_add(array.offset).ok_or_else(|| {
                FormatError::invalid(
                    FORMAT,
                    format!("DataArray {:?}", array.name),
                    "absurd offset",
                )
            })?;
            file.seek(SeekFrom::Start(start))
                .map_err(|source| FormatError::read(self.path, source))?;
            let mut source = BufReader::new(&mut file);
            let bytes = if base64 {
                let text = read_base64_text(&mut source, array.max_bytes, self.path)?;
                let decoded = encoding::decode_base64(&text, &array.name)?;
                appended_base64(&decoded, self.framing, array.max_bytes, &array.name)?
            } else {
                encoding::decode_framed(&mut source, self.framing, array.max_bytes, &array.name)?
            };
            let data = RawArray {
                vtk_type: array.vtk_type,
                bytes,
            };
            self.push_to(
                array.piece,
                array.section,
                array.name,
                array.components,
                data,
            );
        }
        Ok(())
    }

    fn finish(mut self) -> FormatResult<Vec<Piece>> {
        if !self.pending.is_empty() {
            return Err(FormatError::invalid(
                FORMAT,
                "AppendedData",
                "arrays refer to appended data, but the file has no AppendedData section",
            ));
        }
        if !self.seen_file {
            return Err(FormatError::invalid(
                FORMAT,
                "byte 0",
                "not a VTK XML file (no VTKFile element)",
            ));
        }
        self.end_piece();
        if self.pieces.is_empty() {
            return Err(FormatError::invalid(
                FORMAT,
                "UnstructuredGrid",
                "the file has no Piece",
            ));
        }
        Ok(self.pieces)
    }
}

/// The most values an array of `section` may hold in `piece`. Connectivity: 27 nodes per cell
/// (the largest cell of fixed size), plus one per point for polygons and poly-lines larger
/// than that.
fn max_values(section: Section, name: &str, piece: &Piece, components: usize) -> u64 {
    let per = match section {
        Section::Points | Section::PointData => piece.points,
        Section::Cells if name == "connectivity" => piece
            .cells
            .saturating_mul(CONNECTIVITY_PER_CELL_MAX)
            .saturating_add(piece.points),
        Section::Cells | Section::CellData => piece.cells,
        Section::Other => 0,
    };
    per.saturating_mul(components as u64)
}

/// Appended base64 data: VTK encodes the header and the data of each array separately, so
/// the decoded bytes are the framed array.
fn appended_base64(
    decoded: &[u8],
    framing: Framing,
    max_bytes: u64,
    name: &str,
) -> FormatResult<Vec<u8>> {
    let mut source: &[u8] = decoded;
    encoding::decode_framed(&mut source, framing, max_bytes, name)
}

fn find_underscore(file: &mut File, position: u64, path: &Path) -> FormatResult<u64> {
    file.seek(SeekFrom::Start(position))
        .map_err(|source| FormatError::read(path, source))?;
    let mut reader = BufReader::new(file);
    let mut offset = position;
    for _ in 0..4096 {
        let mut byte = [0u8; 1];
        if reader
            .read(&mut byte)
            .map_err(|source| FormatError::read(path, source))?
            == 0
        {
            break;
        }
        offset = offset.saturating_add(1);
        match byte {
            [b'_'] => return Ok(offset),
            [byte] if byte.is_ascii_whitespace() => {}
            _ => break,
        }
    }
    Err(FormatError::invalid(
        FORMAT,
        format!("byte {position}"),
        "AppendedData must start with '_'",
    ))
}

/// The base64 text of one appended array: up to the first byte that is not base64.
fn read_base64_text(
    source: &mut impl BufRead,
    max_bytes: u64,
    path: &Path,
) -> FormatResult<Vec<u8>> {
    let max_chars = max_bytes.saturating_add(1024).saturating_mul(4) / 3 + 64;
    let mut text = Vec::new();
    loop {
        let buffer = source
            .fill_buf()
            .map_err(|source| FormatError::read(path, source))?;
        if buffer.is_empty() {
            break;
        }
        let taken = buffer
            .iter()
            .position(|byte| !(byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=')))
            .unwrap_or(buffer.len());
        text.extend_from_slice(buffer.get(..taken).unwrap_or_default());
        let stop = taken < buffer.len();
        source.consume(taken);
        if stop || text.len() as u64 > max_chars {
            break;
        }
    }
    Ok(text)
}

fn parse_appended_encoding(start: &BytesStart<'_>) -> FormatResult<bool> {
    match attribute(start, "encoding")?.as_deref() {
        None | Some("raw") => Ok(false),
        Some("base64") => Ok(true),
        Some(other) => Err(FormatError::unsupported(
            FORMAT,
            format!("AppendedData encoding {other:?}"),
        )),
    }
}

/// The `NumberOfComponents` of a data array: 1 when absent, at most 64.
fn components_of(start: &BytesStart<'_>, name: &str) -> FormatResult<usize> {
    let Some(text) = attribute(start, "NumberOfComponents")? else {
        return Ok(1);
    };
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|count| (1..=64).contains(count))
        .ok_or_else(|| {
            FormatError::invalid(
                FORMAT,
                format!("DataArray {name:?}"),
                format!("NumberOfComponents {text:?} is not 1 to 64"),
            )
        })
}

fn attribute(start: &BytesStart<'_>, name: &str) -> FormatResult<Option<String>> {
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|error| {
            FormatError::invalid(FORMAT, "attribute", format!("bad XML attribute: {error}"))
        })?;
        if attribute.key.local_name().as_ref() == name.as_bytes() {
            let value = attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|error| {
                    FormatError::invalid(FORMAT, name.to_owned(), error.to_string())
                })?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

fn count_attribute(start: &BytesStart<'_>, name: &'static str) -> FormatResult<u64> {
    let text = attribute(start, name)?.unwrap_or_else(|| "0".to_owned());
    text.trim()
        .parse()
        .map_err(|_| FormatError::invalid(FORMAT, name, format!("{text:?} is not a whole number")))
}
