//! GDAL's side file `<file>.aux.xml` (its "persistent auxiliary metadata"), where GDAL keeps
//! the coordinate system and geotransform of a TIFF that cannot hold them itself, for example
//! one written with `-co PROFILE=BASELINE`. Basin reads the two, as GDAL does, for a file that
//! states neither itself; band statistics and the rest are ignored.

use std::fs::File;
use std::path::{Path, PathBuf};

use quick_xml::events::Event;

use super::FORMAT;
use crate::error::{FormatError, FormatResult};
use crate::model::GeoTransform;

/// Largest side file read: GDAL's files with histograms stay far below.
const PAM_BYTES_MAX: u64 = 4 * 1024 * 1024;

/// What the side file says.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Pam {
    /// `<SRS>`: a WKT.
    pub srs: Option<String>,
    /// `<GeoTransform>`: six numbers, GDAL's order.
    pub transform: Option<GeoTransform>,
}

/// The side file of `tiff`, when there is one.
pub(crate) fn find(tiff: &Path) -> Option<PathBuf> {
    let mut name = tiff.file_name()?.to_os_string();
    name.push(".aux.xml");
    let path = tiff.with_file_name(name);
    path.is_file().then_some(path)
}

/// Reads the side file at `path`.
pub(crate) fn read(path: &Path) -> FormatResult<Pam> {
    let mut bytes = Vec::new();
    let file = File::open(path).map_err(|source| FormatError::read(path, source))?;
    std::io::Read::read_to_end(&mut std::io::Read::take(file, PAM_BYTES_MAX), &mut bytes)
        .map_err(|source| FormatError::read(path, source))?;
    parse(&String::from_utf8_lossy(&bytes)).map_err(|message| {
        FormatError::invalid(FORMAT, format!("side file {}", path.display()), message)
    })
}

fn parse(xml: &str) -> Result<Pam, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut depth = 0usize;
    let mut open: Option<(Vec<u8>, String)> = None;
    let mut pam = Pam::default();
    loop {
        let event = reader
            .read_event()
            .map_err(|error| format!("not XML: {error}"))?;
        match event {
            Event::Start(start) => {
                depth += 1;
                let name = start.local_name().as_ref().to_vec();
                if depth == 2 && (name == b"SRS" || name == b"GeoTransform") {
                    open = Some((name, String::new()));
                }
            }
            Event::Text(text) => {
                if let (Some((_, content)), Ok(part)) = (&mut open, text.decode()) {
                    content.push_str(&part);
                }
            }
            Event::GeneralRef(reference) => {
                if let (Some((_, content)), Ok(name)) = (&mut open, reference.decode()) {
                    let resolved = quick_xml::escape::unescape(&format!("&{name};"))
                        .map(|text| text.into_owned())
                        .unwrap_or_default();
                    content.push_str(&resolved);
                }
            }
            Event::End(_) => {
                if depth == 2
                    && let Some((name, content)) = open.take()
                {
                    let content = content.trim();
                    if name == b"SRS" {
                        pam.srs = (!content.is_empty()).then(|| content.to_owned());
                    } else {
                        pam.transform = Some(geotransform(content)?);
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Event::Eof if depth > 0 => return Err("it ends before its elements close".into()),
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(pam)
}

fn geotransform(text: &str) -> Result<GeoTransform, String> {
    let numbers: Vec<f64> = text
        .split(',')
        .map(|part| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|value| value.is_finite())
        })
        .collect::<Option<_>>()
        .ok_or_else(|| format!("GeoTransform {text:?} is not six numbers"))?;
    let coefficients: [f64; 6] = numbers
        .try_into()
        .map_err(|_| format!("GeoTransform {text:?} is not six numbers"))?;
    Ok(GeoTransform::from_gdal(coefficients))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srs_and_geotransform_are_read_and_the_rest_ignored() {
        let pam = parse(
            r#"<PAMDataset>
  <SRS dataAxisToSRSAxisMapping="1,2">PROJCS["ETRS89 / UTM zone 32N",AUTHORITY["EPSG","25832"]]</SRS>
  <GeoTransform>  5.0e+05,  2.5e+01,  0.0,  6.00005e+06,  0.0, -2.5e+01</GeoTransform>
  <Metadata><MDI key="SRS">ignored</MDI></Metadata>
  <PAMRasterBand band="1"><SRS>not this one</SRS></PAMRasterBand>
</PAMDataset>"#,
        )
        .unwrap();
        assert_eq!(
            pam.srs.as_deref(),
            Some(r#"PROJCS["ETRS89 / UTM zone 32N",AUTHORITY["EPSG","25832"]]"#)
        );
        assert_eq!(
            pam.transform,
            Some(GeoTransform::north_up(500_000.0, 6_000_050.0, 25.0, 25.0))
        );
        assert_eq!(parse("<PAMDataset/>").unwrap(), Pam::default());
    }

    #[test]
    fn broken_side_files_are_errors() {
        assert!(parse("<PAMDataset><GeoTransform>1,2,3</GeoTransform></PAMDataset>").is_err());
        assert!(
            parse("<PAMDataset><GeoTransform>1,2,3,4,5,x</GeoTransform></PAMDataset>").is_err()
        );
        assert!(parse("<PAMDataset><SRS>a</GeoTransform>").is_err());
        assert!(parse("<PAMDataset><GeoTransform>1, 2").is_err());
    }
}
