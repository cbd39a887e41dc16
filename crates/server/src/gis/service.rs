//! GIS rules: searching the EPSG registry for the coordinate-system list, and reprojecting WKT
//! geometries between two registry systems.
//!
//! The registry is basin-formats' (the `crs-definitions` crate, EPSG only), the same one the
//! conversions use, so the ids the list shows are those a `crsTransformation` accepts (both
//! refuse the few whose proj4 needs a datum grid proj4rs lacks). Nothing here touches the
//! database: the registry is compiled in.
//!
//! Searching: the list is 6,184 entries and 4.8 MB of WKT and proj4 text. Each entry's text is
//! lower-cased once, on first use, into a search index (6 MB of memory), so a request
//! only lower-cases its own search text and runs substring searches: a full-text search that
//! reads every entry answers in about 1 ms through HTTP in a release build, against 0.5 ms for
//! the liveness probe (docs/gis.md). A database table would buy nothing for a fixed list.

use std::sync::LazyLock;

use basin_formats::crs::{self, CrsDefinition, CrsTransform, Projection};
use basin_formats::wkt::{self, WktError};

use crate::limits::{CRS_SEARCH_TEXT_CHARS_MAX, REPROJECT_GEOMETRIES_MAX, REPROJECT_POSITIONS_MAX};

/// The only authority in the registry.
pub(crate) const AUTHORITY: &str = "EPSG";

/// What can go wrong in the GIS area. Every variant is the caller's input (400), but
/// [`GisError::Worker`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum GisError {
    /// A search text of the list is longer than [`CRS_SEARCH_TEXT_CHARS_MAX`].
    #[error("{field} is longer than {max} characters")]
    SearchTextTooLong {
        /// `nametext` or `fulltext`.
        field: &'static str,
        /// The limit.
        max: usize,
    },
    /// An SRID that is not in the registry.
    #[error("unknown SRID {srid}: EPSG:{srid} is not in Basin's EPSG registry")]
    UnknownSrid {
        /// `inputSrid` or `outputSrid`.
        field: &'static str,
        /// What the request said.
        srid: i64,
    },
    /// A registry entry proj4rs cannot build (e.g. one that needs a datum grid).
    #[error("EPSG:{srid} cannot be used for reprojection: {reason}")]
    UnusableSrid {
        /// `inputSrid` or `outputSrid`.
        field: &'static str,
        /// The code.
        srid: u32,
        /// What proj4rs said.
        reason: String,
    },
    /// More geometries than [`GisLimits::geometries_max`].
    #[error("{count} geometries exceed the limit of {max} per request")]
    TooManyGeometries {
        /// How many were sent.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// More positions, all geometries together, than [`GisLimits::positions_max`].
    #[error(
        "the geometries hold more than {max} positions (the limit per request); \
         geometry {index} goes past it"
    )]
    TooManyPositions {
        /// The geometry that went past the limit.
        index: usize,
        /// The limit.
        max: usize,
    },
    /// A geometry is not WKT this service reads.
    #[error("not a WKT geometry: {error}")]
    Malformed {
        /// Which geometry.
        index: usize,
        /// Why.
        error: WktError,
    },
    /// A position outside the domain of either system.
    #[error("the position ({x} {y}) cannot be transformed from {from} to {to}")]
    NotTransformable {
        /// Which geometry.
        index: usize,
        /// The position as sent.
        x: f64,
        /// The position as sent.
        y: f64,
        /// `EPSG:<input>`.
        from: String,
        /// `EPSG:<output>`.
        to: String,
    },
    /// The blocking task that did the work failed (a bug: it panicked).
    #[error("the reprojection task failed")]
    Worker(#[source] tokio::task::JoinError),
}

/// Result of the GIS rules.
pub(crate) type GisResult<T> = Result<T, GisError>;

/// Bounds of one reprojection request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GisLimits {
    /// Geometries per request.
    pub(crate) geometries_max: usize,
    /// Positions per request, all geometries together.
    pub(crate) positions_max: usize,
}

impl Default for GisLimits {
    fn default() -> Self {
        Self {
            geometries_max: REPROJECT_GEOMETRIES_MAX,
            positions_max: REPROJECT_POSITIONS_MAX,
        }
    }
}

/// The GIS operations. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct GisService {
    limits: GisLimits,
}

/// A checked search of the coordinate-system list. Texts are lower-cased; `None` is no filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CrsFilter {
    name_text: Option<String>,
    full_text: Option<String>,
    /// False when the request names an authority other than EPSG: nothing matches.
    authority_matches: bool,
}

impl CrsFilter {
    /// Checks the raw filters: an empty text is no filter, a text over
    /// [`CRS_SEARCH_TEXT_CHARS_MAX`] characters is an error, and an authority other than
    /// `EPSG` (any case) matches nothing, as the registry holds EPSG codes only.
    pub(crate) fn parse(
        name_text: Option<&str>,
        full_text: Option<&str>,
        authority: Option<&str>,
    ) -> GisResult<Self> {
        let text = |field: &'static str, raw: Option<&str>| -> GisResult<Option<String>> {
            let Some(raw) = raw.filter(|raw| !raw.is_empty()) else {
                return Ok(None);
            };
            if raw.chars().nth(CRS_SEARCH_TEXT_CHARS_MAX).is_some() {
                return Err(GisError::SearchTextTooLong {
                    field,
                    max: CRS_SEARCH_TEXT_CHARS_MAX,
                });
            }
            Ok(Some(raw.to_lowercase()))
        };
        Ok(Self {
            name_text: text("nametext", name_text)?,
            full_text: text("fulltext", full_text)?,
            authority_matches: authority
                .map(str::trim)
                .is_none_or(|raw| raw.is_empty() || raw.eq_ignore_ascii_case(AUTHORITY)),
        })
    }

    fn matches(&self, entry: &SearchEntry) -> bool {
        self.name_text
            .as_deref()
            .is_none_or(|text| entry.name.contains(text))
            && self.full_text.as_deref().is_none_or(|text| {
                entry.name.contains(text)
                    || entry.code.contains(text)
                    || entry.proj4.contains(text)
                    || entry.wkt.contains(text)
            })
    }
}

/// One page of the coordinate-system list.
#[derive(Debug, Clone)]
pub(crate) struct CrsPage {
    /// The entries of the page, by ascending code.
    pub(crate) rows: Vec<&'static CrsDefinition>,
    /// Entries matching the filter, on all pages.
    pub(crate) total: u64,
}

/// A reprojection as the rules take it.
#[derive(Debug, Clone)]
pub(crate) struct ReprojectInput {
    /// The SRID of the geometries as sent (not yet checked).
    pub(crate) input_srid: i64,
    /// The SRID wanted (not yet checked).
    pub(crate) output_srid: i64,
    /// WKT geometries.
    pub(crate) geometries: Vec<String>,
}

/// Reprojected geometries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reprojected {
    /// The input system.
    pub(crate) input_srid: u32,
    /// The output system.
    pub(crate) output_srid: u32,
    /// WKT in the output system, in the order sent.
    pub(crate) geometries: Vec<String>,
}

impl GisService {
    /// A service with the given limits.
    pub(crate) fn new(limits: GisLimits) -> Self {
        Self { limits }
    }

    /// The registry entries matching `filter`, by ascending code, `limit` of them after
    /// skipping `offset`.
    pub(crate) fn list(&self, filter: &CrsFilter, offset: u32, limit: u32) -> CrsPage {
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        if !filter.authority_matches {
            return CrsPage {
                rows: Vec::new(),
                total: 0,
            };
        }
        let mut total: u64 = 0;
        let mut rows = Vec::new();
        for entry in SEARCH_INDEX.iter().filter(|entry| filter.matches(entry)) {
            let index = usize::try_from(total).unwrap_or(usize::MAX);
            if index >= offset && rows.len() < limit {
                rows.push(entry.definition);
            }
            total += 1;
        }
        CrsPage { rows, total }
    }

    /// The registry entry of `srid`.
    pub(crate) fn get(&self, srid: u32) -> Option<&'static CrsDefinition> {
        let all = crs::definitions();
        all.binary_search_by_key(&srid, |definition| definition.code)
            .ok()
            .and_then(|index| all.get(index))
    }

    /// Reprojects `input` on a blocking thread: a request may hold a million positions, which
    /// would hold up the async workers for a noticeable time.
    pub(crate) async fn reproject(&self, input: ReprojectInput) -> GisResult<Reprojected> {
        let limits = self.limits;
        tokio::task::spawn_blocking(move || reproject(&input, limits))
            .await
            .map_err(GisError::Worker)?
    }
}

/// Checks the SRIDs, then the counts and the WKT of every geometry, and only then transforms,
/// so that a bad request costs no transformation work.
fn reproject(input: &ReprojectInput, limits: GisLimits) -> GisResult<Reprojected> {
    let (input_srid, from) = projection("inputSrid", input.input_srid)?;
    let (output_srid, to) = projection("outputSrid", input.output_srid)?;
    if input.geometries.len() > limits.geometries_max {
        return Err(GisError::TooManyGeometries {
            count: input.geometries.len(),
            max: limits.geometries_max,
        });
    }
    let mut positions_left = limits.positions_max;
    let mut geometries = Vec::with_capacity(input.geometries.len());
    for (index, text) in input.geometries.iter().enumerate() {
        let geometry = wkt::parse(text, &mut positions_left).map_err(|error| match error {
            WktError::PositionBudget => GisError::TooManyPositions {
                index,
                max: limits.positions_max,
            },
            error @ WktError::Syntax { .. } => GisError::Malformed { index, error },
        })?;
        geometries.push(geometry);
    }
    let transform = CrsTransform::new(from, to);
    let mut output = Vec::with_capacity(geometries.len());
    for (index, mut geometry) in geometries.into_iter().enumerate() {
        geometry.try_for_each_position(|position| {
            let (x, y) = transform.try_apply(position.x, position.y).ok_or_else(|| {
                GisError::NotTransformable {
                    index,
                    x: position.x,
                    y: position.y,
                    from: transform.from().label().to_owned(),
                    to: transform.to().label().to_owned(),
                }
            })?;
            position.x = x;
            position.y = y;
            Ok(())
        })?;
        output.push(geometry.to_string());
    }
    Ok(Reprojected {
        input_srid,
        output_srid,
        geometries: output,
    })
}

/// The registry code and the proj4rs projection of a requested SRID.
fn projection(field: &'static str, srid: i64) -> GisResult<(u32, Projection)> {
    let code = u32::try_from(srid)
        .ok()
        .filter(|code| crs::definition(*code).is_some())
        .ok_or(GisError::UnknownSrid { field, srid })?;
    let projection = Projection::epsg(code).map_err(|error| GisError::UnusableSrid {
        field,
        srid: code,
        reason: error.to_string(),
    })?;
    Ok((code, projection))
}

/// A registry entry with its text lower-cased for searching.
struct SearchEntry {
    definition: &'static CrsDefinition,
    name: String,
    code: String,
    proj4: String,
    wkt: String,
}

/// Built on first use, in about 5 ms in a release build, and kept.
static SEARCH_INDEX: LazyLock<Vec<SearchEntry>> = LazyLock::new(|| {
    crs::definitions()
        .iter()
        .map(|definition| SearchEntry {
            definition,
            name: definition.name.to_lowercase(),
            code: definition.code.to_string(),
            proj4: definition.proj4.to_lowercase(),
            wkt: definition.wkt.to_lowercase(),
        })
        .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    fn input(from: i64, to: i64, geometries: &[&str]) -> ReprojectInput {
        ReprojectInput {
            input_srid: from,
            output_srid: to,
            geometries: geometries.iter().map(|text| (*text).to_owned()).collect(),
        }
    }

    const SMALL: GisLimits = GisLimits {
        geometries_max: 3,
        positions_max: 5,
    };

    #[test]
    fn the_geometry_limit_holds_at_the_limit_and_fails_one_past_it() {
        let three = ["POINT (9 56)"; 3];
        assert_eq!(
            reproject(&input(4326, 4326, &three), SMALL)
                .unwrap()
                .geometries
                .len(),
            3
        );
        let four = ["POINT (9 56)"; 4];
        let error = reproject(&input(4326, 4326, &four), SMALL).unwrap_err();
        assert!(
            matches!(error, GisError::TooManyGeometries { count: 4, max: 3 }),
            "{error}"
        );
    }

    #[test]
    fn the_position_limit_counts_every_geometry_together() {
        let five = ["LINESTRING (1 2, 3 4, 5 6)", "MULTIPOINT (1 2, 3 4)"];
        reproject(&input(4326, 3857, &five), SMALL).unwrap();
        let six = [
            "LINESTRING (1 2, 3 4, 5 6)",
            "POINT EMPTY",
            "MULTIPOINT (1 2, 3 4, 5 6)",
        ];
        let error = reproject(&input(4326, 3857, &six), SMALL).unwrap_err();
        assert!(
            matches!(error, GisError::TooManyPositions { index: 2, max: 5 }),
            "{error}"
        );
    }

    #[test]
    fn srids_are_checked_before_anything_else() {
        for (from, to, field) in [
            (99_999, 4326, "inputSrid"),
            (4326, -1, "outputSrid"),
            (4326, i64::MAX, "outputSrid"),
            (0, 4326, "inputSrid"),
        ] {
            match reproject(&input(from, to, &["not wkt"; 10]), SMALL) {
                Err(GisError::UnknownSrid { field: got, .. }) => assert_eq!(got, field),
                other => panic!("{from} {to}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_registry_entry_proj4rs_cannot_build_is_named() {
        let Some(unusable) = crs::definitions()
            .iter()
            .find(|definition| Projection::epsg(definition.code).is_err())
        else {
            return;
        };
        let code = i64::from(unusable.code);
        let error = reproject(&input(4326, code, &[]), SMALL).unwrap_err();
        assert!(
            matches!(
                error,
                GisError::UnusableSrid {
                    field: "outputSrid",
                    ..
                }
            ),
            "{error}"
        );
    }

    #[test]
    fn a_position_outside_the_domain_names_its_geometry() {
        let error =
            reproject(&input(4326, 3857, &["POINT (9 56)", "POINT (0 90)"]), SMALL).unwrap_err();
        assert!(
            matches!(error, GisError::NotTransformable { index: 1, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("(0 90)"), "{error}");
        assert!(
            error.to_string().contains("EPSG:4326 to EPSG:3857"),
            "{error}"
        );
    }

    #[test]
    fn filters_search_names_text_and_codes_ignoring_case() {
        let service = GisService::default();
        let all = service.list(&CrsFilter::parse(None, None, None).unwrap(), 0, 10);
        assert_eq!(all.total, u64::try_from(crs::definitions().len()).unwrap());
        assert_eq!(all.rows.len(), 10);
        let utm = CrsFilter::parse(Some("wgs 84 / UTM ZONE 32n"), None, Some("epsg")).unwrap();
        let page = service.list(&utm, 0, 10);
        assert_eq!(page.total, 1);
        assert_eq!(page.rows.first().map(|row| row.code), Some(32632));
        let code = CrsFilter::parse(None, Some("25832"), None).unwrap();
        assert!(
            service
                .list(&code, 0, 100)
                .rows
                .iter()
                .any(|row| row.code == 25832)
        );
        let other = CrsFilter::parse(None, None, Some("ESRI")).unwrap();
        assert_eq!(service.list(&other, 0, 10).total, 0);
        let long = "x".repeat(CRS_SEARCH_TEXT_CHARS_MAX);
        CrsFilter::parse(Some(&long), None, None).unwrap();
        let longer = "x".repeat(CRS_SEARCH_TEXT_CHARS_MAX + 1);
        assert!(CrsFilter::parse(None, Some(&longer), None).is_err());
    }

    #[test]
    fn get_finds_registry_codes_only() {
        let service = GisService::default();
        assert_eq!(service.get(4326).map(|def| def.name), Some("WGS 84"));
        assert!(service.get(0).is_none());
        assert!(service.get(99_999).is_none());
    }
}
