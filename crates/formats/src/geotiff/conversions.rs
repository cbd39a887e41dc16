//! EPSG map projections ("conversions") named by `ProjectionGeoKey` (3074).
//!
//! A GeoTIFF whose projected system is user-defined may still name its projection by code:
//! GDAL writes `ProjectionGeoKey` = 16032 ("UTM zone 32N") for UTM on a datum without an EPSG
//! code, and older writers name US state plane zones this way (10101 is Alabama East on
//! NAD27). libgeotiff resolves the code through PROJ's database and fills the projection
//! method and parameters from it, unless the file states its own `ProjCoordTransGeoKey`, in
//! which case the file's keys are used alone. Basin does the same with the table
//! `conversions.txt`, generated once from PROJ's `proj.db` by `scripts/geotiff-conversions`
//! (EPSG data, (c) IOGP, under the EPSG terms of use), for the projection methods Basin reads.
//! UTM zones are computed, as libgeotiff computes them.

/// The EPSG conversions Basin reads, one a line: code, EPSG method code, then
/// `parameter=value` pairs with angles in degrees and lengths in metres.
const TABLE: &str = include_str!("conversions.txt");

/// EPSG parameter codes.
mod parameter {
    pub const LATITUDE_OF_NATURAL_ORIGIN: u16 = 8801;
    pub const LONGITUDE_OF_NATURAL_ORIGIN: u16 = 8802;
    pub const SCALE_AT_NATURAL_ORIGIN: u16 = 8805;
    pub const FALSE_EASTING: u16 = 8806;
    pub const FALSE_NORTHING: u16 = 8807;
}

/// EPSG method code of transverse Mercator.
pub(crate) const TRANSVERSE_MERCATOR: u16 = 9807;

/// A map projection by EPSG method and parameters (EPSG parameter code, value in degrees,
/// metres or as a plain scale).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Conversion {
    /// The EPSG method code (9807 transverse Mercator, 9802 Lambert conic conformal 2SP...).
    pub method: u16,
    /// The parameters.
    pub parameters: Vec<(u16, f64)>,
}

impl Conversion {
    /// A parameter's value.
    #[cfg(test)]
    pub fn parameter(&self, code: u16) -> Option<f64> {
        self.parameters
            .iter()
            .find(|(id, _)| *id == code)
            .map(|(_, value)| *value)
    }
}

/// The conversion of EPSG code `code`, `None` for a code Basin does not know or a method it
/// does not read.
pub(crate) fn conversion(code: u16) -> Option<Conversion> {
    if let Some(utm) = utm(code) {
        return Some(utm);
    }
    let wanted = code.to_string();
    let line = TABLE
        .lines()
        .find(|line| line.split(' ').next() == Some(wanted.as_str()))?;
    let mut fields = line.split(' ').skip(1);
    let method = fields.next()?.parse().ok()?;
    let parameters = fields
        .map(|field| {
            let (id, value) = field.split_once('=')?;
            Some((id.parse().ok()?, value.parse().ok()?))
        })
        .collect::<Option<Vec<(u16, f64)>>>()?;
    Some(Conversion { method, parameters })
}

/// UTM zones 1-60 north (16001-16060) and south (16101-16160).
fn utm(code: u16) -> Option<Conversion> {
    let (zone, false_northing) = match code {
        16001..=16060 => (code - 16000, 0.0),
        16101..=16160 => (code - 16100, 10_000_000.0),
        _ => return None,
    };
    Some(Conversion {
        method: TRANSVERSE_MERCATOR,
        parameters: vec![
            (parameter::LATITUDE_OF_NATURAL_ORIGIN, 0.0),
            (
                parameter::LONGITUDE_OF_NATURAL_ORIGIN,
                6.0 * f64::from(zone) - 183.0,
            ),
            (parameter::SCALE_AT_NATURAL_ORIGIN, 0.9996),
            (parameter::FALSE_EASTING, 500_000.0),
            (parameter::FALSE_NORTHING, false_northing),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utm_zones_are_computed() {
        let north = conversion(16032).unwrap();
        assert_eq!(north.method, TRANSVERSE_MERCATOR);
        assert_eq!(north.parameter(8802), Some(9.0));
        assert_eq!(north.parameter(8807), Some(0.0));
        let south = conversion(16133).unwrap();
        assert_eq!(south.parameter(8802), Some(15.0));
        assert_eq!(south.parameter(8807), Some(10_000_000.0));
        // 16061 is UPS North in the table, not a UTM zone.
        assert_eq!(utm(16061), None);
        assert_eq!(conversion(16061).unwrap().method, 9810);
    }

    #[test]
    fn state_plane_zones_come_from_the_table_in_degrees_and_metres() {
        // Alabama East on NAD27: 30d30'N, 85d50'W, 500,000 US survey feet.
        let alabama = conversion(10101).unwrap();
        assert_eq!(alabama.method, TRANSVERSE_MERCATOR);
        assert_eq!(alabama.parameter(8801), Some(30.5));
        assert!((alabama.parameter(8802).unwrap() + 85.833_333_333_333_33).abs() < 1e-12);
        assert!((alabama.parameter(8806).unwrap() - 152_400.304_800_609_6).abs() < 1e-6);
        let tennessee = conversion(15302).unwrap();
        assert_eq!(tennessee.method, 9802);
        assert_eq!(tennessee.parameter(8823), Some(35.25));
        assert_eq!(conversion(1), None);
        assert_eq!(conversion(32767), None);
    }

    #[test]
    fn every_line_of_the_table_parses() {
        for line in TABLE.lines() {
            let code: u16 = line.split(' ').next().unwrap().parse().unwrap();
            let conversion = conversion(code).unwrap();
            assert!(!conversion.parameters.is_empty(), "{line}");
            assert!(
                conversion.parameters.iter().all(|(_, v)| v.is_finite()),
                "{line}"
            );
        }
    }
}
