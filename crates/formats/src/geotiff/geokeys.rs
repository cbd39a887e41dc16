//! GeoTIFF georeferencing and GDAL's private tags, both directions: GeoKeys to and from an EPSG
//! code, the model tags to and from a [`GeoTransform`], `GDAL_NODATA` text, and band names and
//! units in `GDAL_METADATA`.
//!
//! The rules are GDAL's (3.x, default configuration), because GDAL is what users compare
//! with:
//! - `ModelPixelScale` with `ModelTiepoint` wins over `ModelTransformation`; the first tie
//!   point is used; a negative y scale is read as north-up (GDAL's default,
//!   `GTIFF_HONOUR_NEGATIVE_SCALEY=NO`); a scale of 0 makes the pair invalid.
//! - `ModelTransformation` counts only with exactly 16 values.
//! - `RasterPixelIsPoint` shifts the transform half a cell up and left so that it maps cell
//!   corners (GDAL's default, `GTIFF_POINT_GEO_IGNORE=NO`).
//! - Tie points without a scale are ground control points, which a grid cannot hold: an error.
//! - No georeferencing gives GDAL's default transform `[0, 1, 0, 0, 0, 1]`.

use quick_xml::events::{BytesStart, Event};

use super::FORMAT;
use crate::error::{FormatError, FormatResult};
use crate::model::GeoTransform;

/// GeoKey ids.
pub(crate) mod key {
    pub const MODEL_TYPE: u16 = 1024;
    pub const RASTER_TYPE: u16 = 1025;
    pub const CITATION: u16 = 1026;
    pub const GEOGRAPHIC_TYPE: u16 = 2048;
    pub const GEOGRAPHIC_CITATION: u16 = 2049;
    pub const PROJECTED_TYPE: u16 = 3072;
    pub const PCS_CITATION: u16 = 3073;
}

/// The tag of GeoDoubleParams, where double-valued GeoKeys point.
pub(crate) const GEO_DOUBLE_PARAMS: u16 = 34736;
/// The tag of GeoAsciiParams, where ASCII GeoKeys point.
pub(crate) const GEO_ASCII_PARAMS: u16 = 34737;

/// `GTModelTypeGeoKey` values.
const MODEL_PROJECTED: u16 = 1;
const MODEL_GEOGRAPHIC: u16 = 2;
const MODEL_GEOCENTRIC: u16 = 3;
/// `GTRasterTypeGeoKey` values.
const RASTER_PIXEL_IS_AREA: u16 = 1;
const RASTER_PIXEL_IS_POINT: u16 = 2;
/// The GeoKey value meaning "user-defined": the CRS is described by further keys, not a code.
pub(crate) const USER_DEFINED: u16 = 32767;

/// The GeoKeys of a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GeoKeys {
    shorts: Vec<(u16, u16)>,
    doubles: Vec<(u16, Vec<f64>)>,
    /// ASCII keys, without the `|` that ends each in GeoAsciiParams.
    texts: Vec<(u16, String)>,
}

/// What ArcGIS writes before the WKT of a system in `PCSCitationGeoKey`.
const ESRI_PE_PREFIX: &str = "ESRI PE String = ";

impl GeoKeys {
    /// Parses a `GeoKeyDirectoryTag` (SHORT values): a header of version, revision, minor
    /// revision and key count, then four values per key. `double_params` are the values of
    /// `GeoDoubleParamsTag`, `ascii_params` the text of `GeoAsciiParamsTag`, where double and
    /// ASCII keys point; a key pointing outside them is skipped.
    pub fn parse(
        directory: &[u64],
        double_params: &[f64],
        ascii_params: &str,
    ) -> FormatResult<Self> {
        let invalid = |message: &str| {
            FormatError::invalid(FORMAT, "GeoKeyDirectoryTag (34735)", message.to_owned())
        };
        let Some((header, keys)) = directory.split_first_chunk::<4>() else {
            return Err(invalid("shorter than its header"));
        };
        let [_version, _revision, _minor, count] = *header;
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        if keys.len() / 4 < count {
            return Err(invalid(&format!(
                "announces {count} keys but holds {}",
                keys.len() / 4
            )));
        }
        let entries = || keys.chunks_exact(4).take(count);
        let shorts = entries()
            .filter_map(|entry| match *entry {
                [id, 0, _, value] => Some((u16::try_from(id).ok()?, u16::try_from(value).ok()?)),
                _ => None,
            })
            .collect();
        let doubles = entries()
            .filter_map(|entry| match *entry {
                [id, location, length, offset] if location == u64::from(GEO_DOUBLE_PARAMS) => {
                    let start = usize::try_from(offset).ok()?;
                    let end = start.checked_add(usize::try_from(length).ok()?)?;
                    Some((
                        u16::try_from(id).ok()?,
                        double_params.get(start..end)?.to_vec(),
                    ))
                }
                _ => None,
            })
            .collect();
        let texts = entries()
            .filter_map(|entry| match *entry {
                [id, location, length, offset] if location == u64::from(GEO_ASCII_PARAMS) => {
                    let start = usize::try_from(offset).ok()?;
                    let end = start.checked_add(usize::try_from(length).ok()?)?;
                    let text = ascii_params.get(start..end)?;
                    let text = text.strip_suffix('|').unwrap_or(text);
                    Some((u16::try_from(id).ok()?, text.to_owned()))
                }
                _ => None,
            })
            .collect();
        Ok(Self {
            shorts,
            doubles,
            texts,
        })
    }

    /// A copy with `shorts` and `doubles` added, each only where the keys lack it.
    pub fn with_defaults(&self, shorts: &[(u16, u16)], doubles: &[(u16, f64)]) -> Self {
        let mut keys = self.clone();
        for &(id, value) in shorts {
            if keys.short(id).is_none() {
                keys.shorts.push((id, value));
            }
        }
        for &(id, value) in doubles {
            if keys.doubles(id).is_none() {
                keys.doubles.push((id, vec![value]));
            }
        }
        keys
    }

    /// An ASCII key's text.
    pub fn text(&self, id: u16) -> Option<&str> {
        self.texts
            .iter()
            .find(|(key, _)| *key == id)
            .map(|(_, text)| text.as_str())
    }

    /// A SHORT key's value.
    pub fn short(&self, id: u16) -> Option<u16> {
        self.shorts
            .iter()
            .find(|(key, _)| *key == id)
            .map(|(_, value)| *value)
    }

    /// A DOUBLE key's values.
    pub fn doubles(&self, id: u16) -> Option<&[f64]> {
        self.doubles
            .iter()
            .find(|(key, _)| *key == id)
            .map(|(_, values)| values.as_slice())
    }

    /// A DOUBLE key's first value, when finite.
    pub fn double(&self, id: u16) -> Option<f64> {
        self.doubles(id)?
            .first()
            .copied()
            .filter(|value| value.is_finite())
    }

    /// True for `RasterPixelIsPoint`.
    pub fn pixel_is_point(&self) -> bool {
        self.short(key::RASTER_TYPE) == Some(RASTER_PIXEL_IS_POINT)
    }

    /// The coordinate system the keys state.
    pub fn crs(&self) -> FileCrs {
        let is_code = |code: Option<u16>| code.filter(|&code| code != 0 && code != USER_DEFINED);
        let projected = self.short(key::PROJECTED_TYPE);
        let geographic = self.short(key::GEOGRAPHIC_TYPE);
        let code = match self.short(key::MODEL_TYPE) {
            Some(MODEL_PROJECTED) => is_code(projected),
            Some(MODEL_GEOGRAPHIC) => is_code(geographic),
            // libgeotiff takes a user-defined model with a projected code as projected (GDAL's
            // GEOTIFF_KEYS_FLAVOR=ESRI_PE writes such files).
            Some(USER_DEFINED) => is_code(projected),
            Some(_) => None,
            None => is_code(projected).or(is_code(geographic)),
        };
        // ArcGIS states a system it cannot key as its WKT in the PCS citation, with a model
        // type that is neither projected nor geographic; GDAL reads that WKT (only from this
        // key: in the other citations it is a name).
        let esri = match self.short(key::MODEL_TYPE) {
            Some(MODEL_PROJECTED | MODEL_GEOGRAPHIC | MODEL_GEOCENTRIC) => None,
            _ => self
                .text(key::PCS_CITATION)
                .and_then(|text| text.strip_prefix(ESRI_PE_PREFIX))
                .map(str::trim)
                .filter(|wkt| crate::crs::wkt::parse(wkt).is_some()),
        };
        match (code, esri) {
            (Some(code), _) => FileCrs::Epsg(u32::from(code)),
            (None, Some(wkt)) => FileCrs::Wkt(wkt.to_owned()),
            (None, None) if self.shorts.iter().any(|(id, _)| *id != key::RASTER_TYPE) => {
                match super::user_crs::wkt(self) {
                    Some(wkt) => FileCrs::Wkt(wkt),
                    None => FileCrs::UserDefined,
                }
            }
            (None, None) => FileCrs::None,
        }
    }
}

/// What a file's GeoKeys say about its coordinate system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileCrs {
    /// No GeoKeys about it.
    None,
    /// A projected or geographic system by EPSG code.
    Epsg(u32),
    /// Described by parameters (user-defined) in a way Basin can state as a WKT.
    Wkt(String),
    /// Described by parameters Basin cannot state, or geocentric: Basin needs the `SRID`
    /// parameter.
    UserDefined,
}

/// The model tags of a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ModelTags {
    /// `ModelPixelScaleTag` (33550).
    pub scale: Option<Vec<f64>>,
    /// `ModelTiepointTag` (33922).
    pub tiepoints: Option<Vec<f64>>,
    /// `ModelTransformationTag` (34264).
    pub transformation: Option<Vec<f64>>,
}

/// The geotransform the model tags give, as GDAL computes it (see the module doc).
pub(crate) fn geotransform(tags: &ModelTags, pixel_is_point: bool) -> FormatResult<GeoTransform> {
    let scale = tags.scale.as_deref().unwrap_or_default();
    let tiepoints = tags.tiepoints.as_deref().unwrap_or_default();
    let matrix = tags
        .transformation
        .as_deref()
        .filter(|values| values.len() == 16);
    let mut transform = if let [sx, sy, ..] = scale
        && *sx != 0.0
        && *sy != 0.0
    {
        let [i, j, _, x, y, _, ..] = tiepoints else {
            return Ok(default_transform());
        };
        let height = -sy.abs();
        GeoTransform {
            origin_x: x - i * sx,
            pixel_width: *sx,
            row_rotation: 0.0,
            origin_y: y - j * height,
            column_rotation: 0.0,
            pixel_height: height,
        }
    } else if let Some([a, b, _, c, d, e, _, f, ..]) = matrix {
        GeoTransform {
            origin_x: *c,
            pixel_width: *a,
            row_rotation: *b,
            origin_y: *f,
            column_rotation: *d,
            pixel_height: *e,
        }
    } else if tiepoints.len() >= 6 {
        return Err(FormatError::unsupported(
            FORMAT,
            format!(
                "georeferencing by {} ground control points; a grid needs an affine transform (gdalwarp the file first)",
                tiepoints.len() / 6
            ),
        ));
    } else {
        return Ok(default_transform());
    };
    if pixel_is_point {
        transform.origin_x -= 0.5 * (transform.pixel_width + transform.row_rotation);
        transform.origin_y -= 0.5 * (transform.column_rotation + transform.pixel_height);
    }
    let finite = transform.to_gdal().iter().all(|value| value.is_finite());
    if !finite {
        return Err(FormatError::invalid(
            FORMAT,
            "the model tags",
            "the georeferencing holds a number that is not finite",
        ));
    }
    Ok(transform)
}

/// GDAL's transform of a file without georeferencing.
pub(crate) fn default_transform() -> GeoTransform {
    GeoTransform {
        origin_x: 0.0,
        pixel_width: 1.0,
        row_rotation: 0.0,
        origin_y: 0.0,
        column_rotation: 0.0,
        pixel_height: 1.0,
    }
}

/// Parses `GDAL_NODATA` text (`-9999`, `1e+20`, `nan`, `-inf`); blank text means none.
pub(crate) fn parse_nodata(text: &str) -> FormatResult<Option<f64>> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<f64>().map(Some).map_err(|_| {
        FormatError::invalid(
            FORMAT,
            "GDAL_NODATA (tag 42113)",
            format!("{text:?} is not a number"),
        )
    })
}

/// `GDAL_NODATA` text for `value`: integers as integers, other values in the shortest form
/// that reads back to the same f64, `nan`, `inf`, `-inf`.
pub(crate) fn format_nodata(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    if value.abs() >= 1e-5 && value.abs() < 1e15 {
        return format!("{value}");
    }
    format!("{value:e}")
}

/// A band's name and unit as `GDAL_METADATA` gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BandText {
    /// `role="description"`.
    pub description: Option<String>,
    /// `role="unittype"`.
    pub unit: Option<String>,
}

/// Band names and units from `GDAL_METADATA` XML, one entry per band. XML that does not parse
/// is ignored (GDAL only warns about it), giving default names.
pub(crate) fn parse_band_text(xml: &str, bands: usize) -> Vec<BandText> {
    let mut texts = vec![BandText::default(); bands];
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut open: Option<(usize, bool, String)> = None;
    loop {
        let Ok(event) = reader.read_event() else {
            return vec![BandText::default(); bands];
        };
        match event {
            Event::Start(start) if start.local_name().as_ref() == b"Item" => {
                open = band_item(&start, bands).map(|(band, unit)| (band, unit, String::new()));
            }
            Event::Text(text) => {
                if let (Some((_, _, content)), Ok(part)) = (&mut open, text.decode()) {
                    content.push_str(&part);
                }
            }
            Event::GeneralRef(reference) => {
                if let (Some((_, _, content)), Ok(name)) = (&mut open, reference.decode()) {
                    content.push('&');
                    content.push_str(&name);
                    content.push(';');
                }
            }
            Event::End(end) if end.local_name().as_ref() == b"Item" => {
                if let Some((band, unit, content)) = open.take() {
                    let value = quick_xml::escape::unescape(&content)
                        .map(|text| text.into_owned())
                        .unwrap_or(content);
                    if let Some(text) = texts.get_mut(band) {
                        if unit {
                            text.unit = Some(value);
                        } else {
                            text.description = Some(value);
                        }
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    texts
}

/// The band and whether it is the unit, for an `<Item>` with a `sample` and a description or
/// unit role.
fn band_item(start: &BytesStart<'_>, bands: usize) -> Option<(usize, bool)> {
    let mut sample = None;
    let mut role = None;
    for attribute in start.attributes().flatten() {
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .ok()?;
        match attribute.key.local_name().as_ref() {
            b"sample" => sample = value.trim().parse::<usize>().ok(),
            b"role" => role = Some(value.into_owned()),
            _ => {}
        }
    }
    let band = sample.filter(|band| *band < bands)?;
    match role?.as_str() {
        "description" => Some((band, false)),
        "unittype" => Some((band, true)),
        _ => None,
    }
}

/// `GDAL_METADATA` XML with the band names and units given, or `None` when there are none.
pub(crate) fn band_text_xml(texts: &[BandText]) -> Option<String> {
    let mut xml = String::from("<GDALMetadata>\n");
    let mut any = false;
    for (band, text) in texts.iter().enumerate() {
        for (role, name, value) in [
            ("description", "DESCRIPTION", &text.description),
            ("unittype", "UNITTYPE", &text.unit),
        ] {
            if let Some(value) = value.as_deref().filter(|value| !value.is_empty()) {
                any = true;
                xml.push_str(&format!(
                    "  <Item name=\"{name}\" sample=\"{band}\" role=\"{role}\">{}</Item>\n",
                    quick_xml::escape::escape(value)
                ));
            }
        }
    }
    xml.push_str("</GDALMetadata>");
    any.then_some(xml)
}

/// The GeoKey directory, GeoDoubleParams and GeoAsciiParams to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeoKeyTags {
    /// `GeoKeyDirectoryTag` values.
    pub directory: Vec<u16>,
    /// `GeoDoubleParamsTag` values, empty when unused.
    pub doubles: Vec<f64>,
    /// `GeoAsciiParamsTag` text (without the final NUL), empty when unused.
    pub ascii: String,
}

/// The CRS to state in GeoKeys: by code, or described by parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CrsKeys {
    /// An EPSG code.
    Code(KeyedCrs),
    /// A system without one (see [`super::user_crs`]).
    Described(super::user_crs::DescribedCrs),
    /// A WKT 1 that neither a code nor GeoKey parameters can state (a geostationary or other
    /// projection GeoTIFF has no keys for): kept whole as an "ESRI PE String" citation with a
    /// user-defined model type, which is how GDAL stores any system it cannot map to keys
    /// and where GDAL (and Basin) read it back from.
    PeString(String),
}

/// A CRS stated by EPSG code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyedCrs {
    /// EPSG code, below 32767 or between 32768 and 65535.
    pub code: u16,
    /// Geographic (`GeographicTypeGeoKey`) rather than projected (`ProjectedCSTypeGeoKey`).
    pub geographic: bool,
    /// Name for the citation key.
    pub name: String,
}

/// GeoKeys as GDAL writes them for an EPSG code: model type, `PixelIsArea`, the code and a
/// citation; for a described system its keys, with the DOUBLE ones in GeoDoubleParams;
/// without a CRS only the raster type.
pub(crate) fn geokey_tags(crs: Option<&CrsKeys>) -> GeoKeyTags {
    let mut keys: Vec<[u16; 4]> = vec![[key::RASTER_TYPE, 0, 1, RASTER_PIXEL_IS_AREA]];
    let mut ascii = String::new();
    let mut doubles = Vec::new();
    if let Some(CrsKeys::Described(described)) = crs {
        keys.extend(
            described
                .shorts
                .iter()
                .map(|&(id, value)| [id, 0, 1, value]),
        );
        for (id, values) in &described.doubles {
            let offset = u16::try_from(doubles.len()).unwrap_or(u16::MAX);
            let count = u16::try_from(values.len()).unwrap_or(0);
            keys.push([*id, GEO_DOUBLE_PARAMS, count, offset]);
            doubles.extend_from_slice(values);
        }
    }
    if let Some(CrsKeys::PeString(wkt)) = crs {
        let text = format!("{ESRI_PE_PREFIX}{wkt}");
        if let Ok(length) = u16::try_from(text.len() + 1) {
            ascii = format!("{text}|");
            keys.push([key::MODEL_TYPE, 0, 1, USER_DEFINED]);
            keys.push([key::PCS_CITATION, GEO_ASCII_PARAMS, length, 0]);
        }
    }
    if let Some(CrsKeys::Code(crs)) = crs {
        let citation: String = crs
            .name
            .chars()
            .map(|c| {
                if c.is_ascii() && c != '|' && !c.is_ascii_control() {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let length = u16::try_from(citation.len() + 1).unwrap_or(0);
        ascii = format!("{citation}|");
        let (model, code_key, citation_key) = if crs.geographic {
            (
                MODEL_GEOGRAPHIC,
                key::GEOGRAPHIC_TYPE,
                key::GEOGRAPHIC_CITATION,
            )
        } else {
            (MODEL_PROJECTED, key::PROJECTED_TYPE, key::CITATION)
        };
        keys.push([key::MODEL_TYPE, 0, 1, model]);
        keys.push([code_key, 0, 1, crs.code]);
        if length > 1 {
            keys.push([citation_key, GEO_ASCII_PARAMS, length, 0]);
        } else {
            ascii.clear();
        }
    }
    keys.sort_by_key(|entry| entry[0]);
    let count = u16::try_from(keys.len()).unwrap_or(0);
    let mut directory = vec![1, 1, 0, count];
    directory.extend(keys.into_iter().flatten());
    GeoKeyTags {
        directory,
        doubles,
        ascii,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(scale: &[f64], tiepoints: &[f64], matrix: &[f64]) -> ModelTags {
        let some = |values: &[f64]| (!values.is_empty()).then(|| values.to_vec());
        ModelTags {
            scale: some(scale),
            tiepoints: some(tiepoints),
            transformation: some(matrix),
        }
    }

    #[test]
    fn scale_and_tiepoint_give_a_north_up_transform_and_win_over_a_matrix() {
        let matrix = [
            2.0, 0.0, 0.0, 7.0, 0.0, -2.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ];
        let transform = geotransform(
            &tags(
                &[30.0, 30.0, 0.0],
                &[1.0, 2.0, 0.0, 1000.0, 5000.0, 0.0],
                &matrix,
            ),
            false,
        )
        .unwrap();
        assert_eq!(transform.to_gdal(), [970.0, 30.0, 0.0, 5060.0, 0.0, -30.0]);
        // A negative y scale still means north-up, as GDAL reads it by default.
        let negative = geotransform(
            &tags(&[30.0, -30.0], &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], &[]),
            false,
        )
        .unwrap();
        assert_eq!(negative.pixel_height, -30.0);
    }

    #[test]
    fn pixel_is_point_moves_the_origin_half_a_cell_like_gdal() {
        // GDAL's autotest byte_point.tif: tiepoint 440720, 3751320, 60 m cells.
        let transform = geotransform(
            &tags(
                &[60.0, 60.0, 0.0],
                &[0.0, 0.0, 0.0, 440720.0, 3751320.0, 0.0],
                &[],
            ),
            true,
        )
        .unwrap();
        assert_eq!(
            transform.to_gdal(),
            [440690.0, 60.0, 0.0, 3751350.0, 0.0, -60.0]
        );
    }

    #[test]
    fn a_matrix_gives_a_rotated_transform_and_other_lengths_are_ignored() {
        let matrix = [
            2.0, 0.5, 0.0, 7.0, 0.25, -2.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ];
        let transform = geotransform(&tags(&[], &[], &matrix), false).unwrap();
        assert_eq!(transform.to_gdal(), [7.0, 2.0, 0.5, 9.0, 0.25, -2.0]);
        let short = geotransform(&tags(&[], &[], &matrix[..12]), false).unwrap();
        assert_eq!(short, default_transform());
    }

    #[test]
    fn tiepoints_without_scale_are_refused_as_control_points() {
        let gcps = [0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 10.0, 10.0, 0.0, 5.0, 6.0, 0.0];
        let error = geotransform(&tags(&[], &gcps, &[]), false).unwrap_err();
        assert!(
            error.to_string().contains("2 ground control points"),
            "{error}"
        );
        assert_eq!(
            geotransform(&tags(&[], &[], &[]), false).unwrap(),
            default_transform()
        );
    }

    #[test]
    fn geokeys_name_the_projected_or_geographic_code() {
        let directory = |keys: &[[u64; 4]]| {
            let mut all = vec![1, 1, 0, keys.len() as u64];
            all.extend(keys.iter().flatten());
            GeoKeys::parse(&all, &[], "").unwrap()
        };
        let utm = directory(&[
            [1024, 0, 1, 1],
            [1025, 0, 1, 1],
            [2048, 0, 1, 4326],
            [3072, 0, 1, 32632],
        ]);
        assert_eq!(utm.crs(), FileCrs::Epsg(32632));
        let geographic = directory(&[[1024, 0, 1, 2], [2048, 0, 1, 4326]]);
        assert_eq!(geographic.crs(), FileCrs::Epsg(4326));
        let user = directory(&[[1024, 0, 1, 1], [3072, 0, 1, 32767]]);
        assert_eq!(user.crs(), FileCrs::UserDefined);
        let none = directory(&[[1025, 0, 1, 2]]);
        assert_eq!(none.crs(), FileCrs::None);
        assert!(none.pixel_is_point());
        assert!(GeoKeys::parse(&[1, 1, 0, 5, 1024, 0, 1, 1], &[], "").is_err());
        assert!(GeoKeys::parse(&[1, 1], &[], "").is_err());
    }

    #[test]
    fn an_arcgis_wkt_counts_only_in_the_pcs_citation_of_a_user_defined_model() {
        let wkt = "GEOGCS[\"GCS_WGS_1984\",DATUM[\"D_WGS_1984\",SPHEROID[\"WGS_1984\",6378137.0,298.257223563]],PRIMEM[\"Greenwich\",0.0],UNIT[\"Degree\",0.0174532925199433]]";
        let ascii = format!("ESRI PE String = {wkt}|");
        let length = ascii.len() as u64;
        let keys = |model: u64, citation: u64| {
            let directory = [1, 1, 0, 2, 1024, 0, 1, model, citation, 34737, length, 0];
            GeoKeys::parse(&directory, &[], &ascii).unwrap()
        };
        assert_eq!(keys(32767, 3073).crs(), FileCrs::Wkt(wkt.to_owned()));
        assert_eq!(
            keys(32767, 3073).text(3073),
            Some(&ascii[..ascii.len() - 1])
        );
        // In the GT citation it is a name (GDAL makes a LOCAL_CS of it).
        assert_eq!(keys(32767, 1026).crs(), FileCrs::UserDefined);
        // A projected or geographic model goes by its keys.
        assert_eq!(keys(1, 3073).crs(), FileCrs::UserDefined);
        // A user-defined model with a projected code is that code, as in libgeotiff.
        let directory = [1, 1, 0, 2, 1024, 0, 1, 32767, 3072, 0, 1, 2229];
        assert_eq!(
            GeoKeys::parse(&directory, &[], "").unwrap().crs(),
            FileCrs::Epsg(2229)
        );
        // ASCII keys pointing outside GeoAsciiParams are skipped.
        let outside = [1, 1, 0, 2, 1024, 0, 1, 32767, 3073, 34737, 5000, 0];
        assert_eq!(
            GeoKeys::parse(&outside, &[], &ascii).unwrap().text(3073),
            None
        );
    }

    #[test]
    fn a_system_without_keys_is_written_as_a_pe_string_that_reads_back() {
        let wkt = "PROJCS[\"unnamed\",GEOGCS[\"unknown\",DATUM[\"unnamed\",SPHEROID[\"Spheroid\",6378137,298.2572221]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]],PROJECTION[\"Geostationary_Satellite\"],PARAMETER[\"central_meridian\",-75],PARAMETER[\"satellite_height\",35786023],PARAMETER[\"false_easting\",0],PARAMETER[\"false_northing\",0],UNIT[\"metre\",1]]";
        let tags = geokey_tags(Some(&CrsKeys::PeString(wkt.to_owned())));
        assert_eq!(tags.ascii, format!("ESRI PE String = {wkt}|"));
        let directory: Vec<u64> = tags.directory.iter().map(|&v| u64::from(v)).collect();
        let keys = GeoKeys::parse(&directory, &tags.doubles, &tags.ascii).unwrap();
        assert_eq!(keys.short(1024), Some(USER_DEFINED));
        assert_eq!(keys.crs(), FileCrs::Wkt(wkt.to_owned()));
    }

    #[test]
    fn written_geokeys_read_back() {
        let crs = KeyedCrs {
            code: 32632,
            geographic: false,
            name: "WGS 84 / UTM zone 32N".to_owned(),
        };
        let tags = geokey_tags(Some(&CrsKeys::Code(crs)));
        assert_eq!(tags.ascii, "WGS 84 / UTM zone 32N|");
        let directory: Vec<u64> = tags.directory.iter().map(|&v| u64::from(v)).collect();
        let keys = GeoKeys::parse(&directory, &[], "").unwrap();
        assert_eq!(keys.crs(), FileCrs::Epsg(32632));
        assert!(!keys.pixel_is_point());
        assert_eq!(geokey_tags(None).directory, vec![1, 1, 0, 1, 1025, 0, 1, 1]);
    }

    #[test]
    fn nodata_text_round_trips() {
        for value in [
            -9999.0,
            0.0,
            1e-35,
            -3.4028234663852886e38,
            0.1,
            255.0,
            1e20,
        ] {
            let text = format_nodata(value);
            assert_eq!(parse_nodata(&text).unwrap(), Some(value), "{text}");
        }
        assert_eq!(format_nodata(-9999.0), "-9999");
        assert!(parse_nodata("nan").unwrap().unwrap().is_nan());
        assert_eq!(parse_nodata("-inf").unwrap(), Some(f64::NEG_INFINITY));
        assert_eq!(parse_nodata(" ").unwrap(), None);
        assert!(parse_nodata("none").is_err());
    }

    #[test]
    fn band_names_and_units_round_trip_through_gdal_metadata() {
        let texts = vec![
            BandText {
                description: Some("depth <m> & \"more\"".to_owned()),
                unit: Some("m".to_owned()),
            },
            BandText::default(),
        ];
        let xml = band_text_xml(&texts).unwrap();
        assert_eq!(parse_band_text(&xml, 2), texts);
        assert_eq!(band_text_xml(&[BandText::default()]), None);
        assert_eq!(
            parse_band_text("<GDALMetadata><Item", 1),
            vec![BandText::default()]
        );
        let gdal = r#"<GDALMetadata>
  <Item name="STATISTICS_MAXIMUM" sample="0">5</Item>
  <Item name="DESCRIPTION" sample="1" role="description">second</Item>
  <Item name="DESCRIPTION" sample="7" role="description">no such band</Item>
</GDALMetadata>"#;
        let parsed = parse_band_text(gdal, 2);
        assert_eq!(parsed[0], BandText::default());
        assert_eq!(parsed[1].description.as_deref(), Some("second"));
    }
}
