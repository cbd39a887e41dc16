use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use super::*;
use crate::tms::METRES_PER_DEGREE;

/// An element of a parsed document: enough of a DOM to read a capabilities document back.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn children_named<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Element> {
        let name = name.to_owned();
        self.children.iter().filter(move |child| child.name == name)
    }

    fn child(&self, name: &str) -> &Element {
        self.children_named(name)
            .next()
            .unwrap_or_else(|| panic!("{} has no {name}", self.name))
    }

    fn path(&self, names: &[&str]) -> &Element {
        names.iter().fold(self, |element, name| element.child(name))
    }

    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn text_of(&self, name: &str) -> &str {
        &self.child(name).text
    }
}

fn start(start: &BytesStart<'_>) -> Element {
    let attributes = start
        .attributes()
        .map(|attribute| {
            let attribute = attribute.unwrap();
            let key = String::from_utf8(attribute.key.as_ref().to_vec()).unwrap();
            let value = attribute
                .normalized_value(XmlVersion::Explicit1_0)
                .unwrap()
                .into_owned();
            (key, value)
        })
        .collect();
    Element {
        name: String::from_utf8(start.name().as_ref().to_vec()).unwrap(),
        attributes,
        ..Element::default()
    }
}

/// Parses with quick-xml, checking end names and that every character is one XML 1.0
/// allows; panics on anything malformed.
fn parse(xml: &str) -> Element {
    let illegal = xml.chars().find(|&character| {
        !matches!(character, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
    });
    assert_eq!(illegal, None, "a character XML 1.0 does not allow");
    let mut reader = quick_xml::Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut stack: Vec<Element> = vec![Element::default()];
    loop {
        match reader.read_event().unwrap() {
            Event::Start(tag) => stack.push(start(&tag)),
            Event::Empty(tag) => stack.last_mut().unwrap().children.push(start(&tag)),
            Event::Text(text) => {
                let text = text.xml10_content().unwrap();
                stack.last_mut().unwrap().text.push_str(&text);
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref().unwrap() {
                    Some(character) => character.to_string(),
                    None => {
                        let name = reference.decode().unwrap();
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .unwrap()
                            .to_owned()
                    }
                };
                stack.last_mut().unwrap().text.push_str(&resolved);
            }
            Event::End(_) => {
                let element = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(element);
            }
            Event::Eof => break,
            Event::Decl(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(stack.len(), 1, "elements left open");
    let mut document = stack.pop().unwrap();
    assert_eq!(document.children.len(), 1, "one root element");
    document.children.pop().unwrap()
}

fn utm_32n() -> MatrixSetCrs {
    MatrixSetCrs {
        epsg: Some(32632),
        geographic: false,
        metres_per_unit: 1.0,
    }
}

fn wgs84() -> MatrixSetCrs {
    MatrixSetCrs {
        epsg: Some(4326),
        geographic: true,
        metres_per_unit: METRES_PER_DEGREE,
    }
}

fn utm_extent() -> Bounds {
    Bounds {
        min_x: 500_000.0,
        min_y: 6_000_000.0,
        max_x: 530_000.0,
        max_y: 6_018_000.0,
    }
}

fn geographic_extent() -> Bounds {
    Bounds {
        min_x: 9.0,
        min_y: 54.0,
        max_x: 10.5,
        max_y: 55.25,
    }
}

fn layer(identifier: &str, links: Vec<LayerMatrixSet>) -> Layer {
    Layer {
        identifier: identifier.to_owned(),
        title: format!("Title of {identifier}"),
        wgs84_bounds: Some(geographic_extent()),
        styles: vec!["default".to_owned()],
        formats: vec!["image/png".to_owned()],
        resource_urls: vec![ResourceUrl {
            format: "image/png".to_owned(),
            template: "https://example.org/t/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}"
                .to_owned(),
        }],
        matrix_sets: links,
        time: None,
        dimensions: Vec::new(),
    }
}

fn link(id: &str, bounds: Bounds) -> LayerMatrixSet {
    LayerMatrixSet {
        id: id.to_owned(),
        bounds: Some(bounds),
    }
}

/// A Web Mercator set, a UTM set and a geographic set, one layer on each and one on two.
fn sample() -> Capabilities {
    let mercator = TileMatrixSet::web_mercator_quad(256, 6);
    let utm = TileMatrixSet::native("utm", utm_32n(), utm_extent(), 30.0, 256, 1).unwrap();
    let geographic =
        TileMatrixSet::native("geo", wgs84(), geographic_extent(), 0.01, 256, 0).unwrap();
    let mercator_bounds = Bounds {
        min_x: 1_000_000.0,
        min_y: 7_000_000.0,
        max_x: 1_200_000.0,
        max_y: 7_400_000.0,
    };
    Capabilities {
        title: "Sample".to_owned(),
        kvp_url: "https://example.org/wmts?".to_owned(),
        layers: vec![
            layer(
                "both",
                vec![
                    link("WebMercatorQuad", mercator_bounds),
                    link("utm", utm_extent()),
                ],
            ),
            layer("geographic", vec![link("geo", geographic_extent())]),
        ],
        matrix_sets: vec![mercator, utm, geographic],
        service_metadata_url: Some("https://example.org/1.0.0/WMTSCapabilities.xml".to_owned()),
    }
}

/// The HTTP GET of the first operation (GetCapabilities).
fn kvp_get(document: &Element) -> &Element {
    document.path(&[
        "ows:OperationsMetadata",
        "ows:Operation",
        "ows:DCP",
        "ows:HTTP",
        "ows:Get",
    ])
}

fn matrix_set<'a>(document: &'a Element, id: &str) -> &'a Element {
    document
        .child("Contents")
        .children_named("TileMatrixSet")
        .find(|set| set.text_of("ows:Identifier") == id)
        .unwrap()
}

fn layer_element<'a>(document: &'a Element, id: &str) -> &'a Element {
    document
        .child("Contents")
        .children_named("Layer")
        .find(|layer| layer.text_of("ows:Identifier") == id)
        .unwrap()
}

#[test]
fn the_document_is_well_formed_and_in_schema_order() {
    let document = parse(&capabilities_xml(&sample()).unwrap());
    assert_eq!(document.name, "Capabilities");
    assert_eq!(document.attribute("version"), Some("1.0.0"));
    assert_eq!(
        document.attribute("xmlns"),
        Some("http://www.opengis.net/wmts/1.0")
    );
    let top: Vec<&str> = document
        .children
        .iter()
        .map(|child| child.name.as_str())
        .collect();
    assert_eq!(
        top,
        [
            "ows:ServiceIdentification",
            "ows:OperationsMetadata",
            "Contents",
            "ServiceMetadataURL"
        ]
    );
    let layer = layer_element(&document, "both");
    let order: Vec<&str> = layer
        .children
        .iter()
        .map(|child| child.name.as_str())
        .collect();
    assert_eq!(
        order,
        [
            "ows:Title",
            "ows:WGS84BoundingBox",
            "ows:Identifier",
            "ows:BoundingBox",
            "ows:BoundingBox",
            "Style",
            "Format",
            "TileMatrixSetLink",
            "TileMatrixSetLink",
            "ResourceURL",
        ]
    );
    assert_eq!(layer.child("Style").attribute("isDefault"), Some("true"));
    let set = matrix_set(&document, "utm");
    let order: Vec<&str> = set
        .children
        .iter()
        .take(3)
        .map(|child| child.name.as_str())
        .collect();
    assert_eq!(
        order,
        ["ows:Identifier", "ows:BoundingBox", "ows:SupportedCRS"]
    );
}

#[test]
fn operations_and_templates_tell_kvp_and_restful_clients_where_tiles_are() {
    let document = parse(&capabilities_xml(&sample()).unwrap());
    let operations: Vec<&str> = document
        .child("ows:OperationsMetadata")
        .children
        .iter()
        .filter_map(|operation| operation.attribute("name"))
        .collect();
    assert_eq!(operations, ["GetCapabilities", "GetTile"]);
    let get = kvp_get(&document);
    assert_eq!(
        get.attribute("xlink:href"),
        Some("https://example.org/wmts?")
    );
    assert_eq!(
        get.path(&["ows:Constraint", "ows:AllowedValues", "ows:Value"])
            .text,
        "KVP"
    );
    let layer = layer_element(&document, "both");
    let resource = layer.child("ResourceURL");
    assert_eq!(resource.attribute("resourceType"), Some("tile"));
    assert_eq!(
        resource.attribute("template"),
        Some("https://example.org/t/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}")
    );
}

#[test]
fn hostile_text_is_escaped_and_reads_back_exactly() {
    let hostile = [
        "<Layer>&amp;\"quoted\" 'single' ]]> </Capabilities>",
        "line\r\nbreak\rand\ttab\nend",
        "nul\u{0} bell\u{7} escape\u{1B} nonchar\u{FFFF}",
        "Ünïcödé 水位 🌊 \u{202E}rtl\u{202C} \u{FEFF}",
        "  spaced  ",
        "",
    ];
    for text in hostile {
        let mut capabilities = sample();
        capabilities.title = text.to_owned();
        capabilities.kvp_url = format!("https://example.org/wmts?name={text}&");
        let layer = &mut capabilities.layers[0];
        layer.title = text.to_owned();
        layer.identifier = format!("id {text}");
        layer.styles = vec![text.to_owned()];
        let document = parse(&capabilities_xml(&capabilities).unwrap());
        // What XML 1.0 cannot carry becomes U+FFFD; everything else comes back as written.
        let expected: String = text
            .chars()
            .map(|character| match character {
                '\u{0}' | '\u{7}' | '\u{1B}' | '\u{FFFF}' => '\u{FFFD}',
                other => other,
            })
            .collect();
        assert_eq!(
            document
                .path(&["ows:ServiceIdentification", "ows:Title"])
                .text,
            expected
        );
        let layer = document.child("Contents").child("Layer");
        assert_eq!(layer.text_of("ows:Title"), expected);
        assert_eq!(layer.text_of("ows:Identifier"), format!("id {expected}"));
        assert_eq!(layer.child("Style").text_of("ows:Identifier"), expected);
        let get = kvp_get(&document);
        assert_eq!(
            get.attribute("xlink:href"),
            Some(format!("https://example.org/wmts?name={expected}&").as_str())
        );
    }
}

#[test]
fn corners_follow_the_epsg_axis_order() {
    let document = parse(&capabilities_xml(&sample()).unwrap());
    // EPSG:3857 and UTM zones are easting first; EPSG:4326 is latitude first.
    let cases: [(&str, &[&str], &str); 6] = [
        (
            "WebMercatorQuad",
            &["ows:SupportedCRS"],
            "urn:ogc:def:crs:EPSG::3857",
        ),
        (
            "WebMercatorQuad",
            &["TileMatrix", "TopLeftCorner"],
            "-20037508.342789244 20037508.342789244",
        ),
        ("utm", &["ows:SupportedCRS"], "urn:ogc:def:crs:EPSG::32632"),
        ("utm", &["TileMatrix", "TopLeftCorner"], "500000 6018000"),
        (
            "utm",
            &["ows:BoundingBox", "ows:LowerCorner"],
            "500000 6000000",
        ),
        ("geo", &["TileMatrix", "TopLeftCorner"], "55.25 9"),
    ];
    for (set, path, expected) in cases {
        assert_eq!(
            matrix_set(&document, set).path(path).text,
            expected,
            "{set}"
        );
    }
    let layer = layer_element(&document, "geographic");
    let bounding_box = layer.child("ows:BoundingBox");
    assert_eq!(
        bounding_box.attribute("crs"),
        Some("urn:ogc:def:crs:EPSG::4326")
    );
    assert_eq!(bounding_box.text_of("ows:LowerCorner"), "54 9");
    assert_eq!(bounding_box.text_of("ows:UpperCorner"), "55.25 10.5");
    // WGS84BoundingBox is longitude first whatever the matrix sets.
    let wgs84_box = layer.child("ows:WGS84BoundingBox");
    assert_eq!(wgs84_box.text_of("ows:LowerCorner"), "9 54");
    assert_eq!(wgs84_box.text_of("ows:UpperCorner"), "10.5 55.25");
}

#[test]
fn northing_first_systems_are_known_from_the_epsg_tables() {
    let projected = |epsg| MatrixSetCrs {
        epsg: Some(epsg),
        geographic: false,
        metres_per_unit: 1.0,
    };
    let geographic = |epsg| MatrixSetCrs {
        epsg: Some(epsg),
        geographic: true,
        metres_per_unit: METRES_PER_DEGREE,
    };
    // Easting first: Web Mercator, UTM, ETRS89 / UTM, Swiss LV95, Krovak East North.
    for code in [3857, 32632, 32701, 25832, 2056, 5514] {
        assert!(!northing_first(&projected(code)), "EPSG:{code}");
    }
    // Northing first: Gauss-Krüger zone 3, ETRS89-LAEA, SWEREF99 TM, Polish CS92, UPS North.
    for code in [31467, 3035, 3006, 2180, 32661] {
        assert!(northing_first(&projected(code)), "EPSG:{code}");
    }
    assert!(northing_first(&geographic(4326)));
    assert!(northing_first(&geographic(4258)));
    // RGF93 v1 (lon-lat) is one of the few geographic systems EPSG gives longitude first.
    assert!(!northing_first(&geographic(7084)));
    let local = MatrixSetCrs {
        epsg: None,
        geographic: false,
        metres_per_unit: 1.0,
    };
    assert!(!northing_first(&local));
    assert!(supported_crs(&local).starts_with("LOCAL_CS["));
}

#[test]
fn the_axis_tables_are_sorted_for_their_lookups() {
    let geographic = axis_tables::GEOGRAPHIC_LONGITUDE_FIRST;
    assert!(geographic.windows(2).all(|pair| pair[0] < pair[1]));
    let projected = axis_tables::PROJECTED_NORTHING_FIRST;
    assert!(projected.iter().all(|(first, last)| first <= last));
    assert!(projected.windows(2).all(|pair| pair[0].1 < pair[1].0));
}

#[test]
fn a_northing_first_projected_set_writes_northing_first() {
    let crs = MatrixSetCrs {
        epsg: Some(31467),
        geographic: false,
        metres_per_unit: 1.0,
    };
    let extent = Bounds {
        min_x: 3_500_000.0,
        min_y: 5_400_000.0,
        max_x: 3_510_000.0,
        max_y: 5_420_000.0,
    };
    let set = TileMatrixSet::native("gk3", crs, extent, 10.0, 256, 0).unwrap();
    let capabilities = Capabilities {
        title: "GK".to_owned(),
        kvp_url: "https://example.org/wmts?".to_owned(),
        layers: vec![layer("gk", vec![link("gk3", extent)])],
        matrix_sets: vec![set],
        service_metadata_url: None,
    };
    let document = parse(&capabilities_xml(&capabilities).unwrap());
    let set = matrix_set(&document, "gk3");
    assert_eq!(
        set.child("TileMatrix").text_of("TopLeftCorner"),
        "5420000 3500000"
    );
}

#[test]
fn limits_cover_the_data_and_nothing_more() {
    let capabilities = sample();
    let document = parse(&capabilities_xml(&capabilities).unwrap());
    let layer = layer_element(&document, "both");
    let links: Vec<&Element> = layer.children_named("TileMatrixSetLink").collect();
    assert_eq!(links[0].text_of("TileMatrixSet"), "WebMercatorQuad");
    let limits: Vec<&Element> = links[0]
        .child("TileMatrixSetLimits")
        .children_named("TileMatrixLimits")
        .collect();
    assert_eq!(limits.len(), 7);
    // Level 6 has 64 tiles of 626172.135... m across: x 1.0e6..1.2e6 is column 33 (33.6 to
    // 33.9 tiles from the left edge), y 7.0e6..7.4e6 row 20 (20.2 to 20.8 from the top).
    let deepest = limits[6];
    assert_eq!(deepest.text_of("TileMatrix"), "6");
    assert_eq!(deepest.text_of("MinTileCol"), "33");
    assert_eq!(deepest.text_of("MaxTileCol"), "33");
    assert_eq!(deepest.text_of("MinTileRow"), "20");
    assert_eq!(deepest.text_of("MaxTileRow"), "20");
    assert_eq!(limits[0].text_of("MaxTileRow"), "0");
    // The data fills its own native set: every tile of every level.
    let utm_set = &capabilities.matrix_sets[1];
    let utm_limits: Vec<&Element> = links[1]
        .child("TileMatrixSetLimits")
        .children_named("TileMatrixLimits")
        .collect();
    for (matrix, limit) in utm_set.matrices.iter().zip(&utm_limits) {
        assert_eq!(limit.text_of("MinTileRow"), "0");
        assert_eq!(limit.text_of("MinTileCol"), "0");
        assert_eq!(
            limit.text_of("MaxTileRow"),
            (matrix.matrix_height - 1).to_string()
        );
        assert_eq!(
            limit.text_of("MaxTileCol"),
            (matrix.matrix_width - 1).to_string()
        );
    }
    // Without bounds there are no limits and no BoundingBox in that system.
    let mut unbounded = capabilities.clone();
    unbounded.layers[1].matrix_sets[0].bounds = None;
    let document = parse(&capabilities_xml(&unbounded).unwrap());
    let layer = layer_element(&document, "geographic");
    assert_eq!(layer.children_named("ows:BoundingBox").count(), 0);
    let link = layer.child("TileMatrixSetLink");
    assert_eq!(link.children_named("TileMatrixSetLimits").count(), 0);
}

#[test]
fn numbers_read_back_as_the_same_doubles() {
    let capabilities = sample();
    let document = parse(&capabilities_xml(&capabilities).unwrap());
    for set in &capabilities.matrix_sets {
        let element = matrix_set(&document, &set.id);
        let swap = northing_first(&set.crs);
        for (matrix, written) in set
            .matrices
            .iter()
            .zip(element.children_named("TileMatrix"))
        {
            assert_eq!(written.text_of("ows:Identifier"), matrix.id);
            let scale: f64 = written.text_of("ScaleDenominator").parse().unwrap();
            assert_eq!(scale, matrix.scale_denominator);
            let corner: Vec<f64> = written
                .text_of("TopLeftCorner")
                .split(' ')
                .map(|number| number.parse().unwrap())
                .collect();
            let expected = if swap {
                [matrix.top_left_y, matrix.top_left_x]
            } else {
                [matrix.top_left_x, matrix.top_left_y]
            };
            assert_eq!(corner, expected);
            assert_eq!(
                written.text_of("MatrixWidth"),
                matrix.matrix_width.to_string()
            );
            assert_eq!(
                written.text_of("MatrixHeight"),
                matrix.matrix_height.to_string()
            );
            assert_eq!(written.text_of("TileWidth"), "256");
        }
    }
    assert_eq!(number(f64::NAN), "NaN");
    assert_eq!(number(f64::NEG_INFINITY), "-INF");
    assert_eq!(number(1e-7), "0.0000001");
}

#[test]
fn only_web_mercator_quad_with_256_pixels_is_google_maps_compatible() {
    let mut capabilities = sample();
    capabilities
        .matrix_sets
        .push(TileMatrixSet::web_mercator_quad(512, 3));
    capabilities.matrix_sets[3].id = "WebMercatorQuad512".to_owned();
    let document = parse(&capabilities_xml(&capabilities).unwrap());
    let scale_set = |id| {
        matrix_set(&document, id)
            .children_named("WellKnownScaleSet")
            .next()
            .map(|element| element.text.clone())
    };
    assert_eq!(
        scale_set("WebMercatorQuad").as_deref(),
        Some(GOOGLE_MAPS_COMPATIBLE)
    );
    assert_eq!(scale_set("WebMercatorQuad512"), None);
    assert_eq!(scale_set("utm"), None);
}

#[test]
fn time_is_a_dimension_with_its_default_and_values() {
    let mut capabilities = sample();
    let times = ["2021-03-01T12:00:00Z", "2021-03-01T13:00:00Z"];
    let layer = &mut capabilities.layers[1];
    layer.time = Some(TimeDimension {
        values: times.iter().map(|time| (*time).to_owned()).collect(),
        default: times[1].to_owned(),
    });
    layer.resource_urls[0].template =
        "https://example.org/t/{TileMatrix}/{TileRow}/{TileCol}?time={Time}".to_owned();
    let document = parse(&capabilities_xml(&capabilities).unwrap());
    let layer = layer_element(&document, "geographic");
    let dimension = layer.child("Dimension");
    assert_eq!(dimension.text_of("ows:Identifier"), "Time");
    assert_eq!(dimension.text_of("Default"), times[1]);
    let values: Vec<&str> = dimension
        .children_named("Value")
        .map(|value| value.text.as_str())
        .collect();
    assert_eq!(values, times);
    // A layer without time has no dimension.
    let other = layer_element(&document, "both");
    assert_eq!(other.children_named("Dimension").count(), 0);
}

#[test]
fn other_dimensions_follow_time_and_name_their_placeholders() {
    let mut capabilities = sample();
    let layer = &mut capabilities.layers[1];
    layer.time = Some(TimeDimension {
        values: vec!["2021-03-01T12:00:00Z".to_owned()],
        default: "2021-03-01T12:00:00Z".to_owned(),
    });
    layer.dimensions = vec![ValueDimension {
        identifier: "VerticalLayer".to_owned(),
        default: "0".to_owned(),
        values: vec!["0".to_owned(), "1".to_owned(), "2".to_owned()],
    }];
    layer.resource_urls[0].template =
        "https://example.org/t/{TileMatrix}/{TileRow}/{TileCol}?time={Time}&layer={VerticalLayer}"
            .to_owned();
    let document = parse(&capabilities_xml(&capabilities).unwrap());
    let dimensions: Vec<&Element> = layer_element(&document, "geographic")
        .children_named("Dimension")
        .collect();
    assert_eq!(dimensions.len(), 2);
    assert_eq!(dimensions[0].text_of("ows:Identifier"), "Time");
    let vertical = dimensions[1];
    assert_eq!(vertical.text_of("ows:Identifier"), "VerticalLayer");
    assert_eq!(vertical.text_of("Default"), "0");
    let values: Vec<&str> = vertical
        .children_named("Value")
        .map(|value| value.text.as_str())
        .collect();
    assert_eq!(values, ["0", "1", "2"]);

    // Without values, named like a placeholder of the address or twice: refused.
    let dimension = |identifier: &str, values: &[&str]| ValueDimension {
        identifier: identifier.to_owned(),
        default: "0".to_owned(),
        values: values.iter().map(|value| (*value).to_owned()).collect(),
    };
    for dimensions in [
        vec![dimension("VerticalLayer", &[])],
        vec![dimension("TileRow", &["0"])],
        vec![dimension("Time", &["0"])],
        vec![dimension("", &["0"])],
        vec![dimension("a}b", &["0"])],
        vec![dimension("Band", &["0"]), dimension("Band", &["1"])],
    ] {
        let mut refused = sample();
        refused.layers[1].dimensions = dimensions;
        assert!(matches!(
            capabilities_xml(&refused),
            Err(WmtsError::BadDimension { .. })
        ));
    }
    // A placeholder of a dimension the layer does not have is refused as before.
    let mut unknown = sample();
    unknown.layers[1].resource_urls[0].template =
        "https://example.org/t/{TileMatrix}/{TileRow}/{TileCol}?layer={VerticalLayer}".to_owned();
    assert!(matches!(
        capabilities_xml(&unknown),
        Err(WmtsError::Template { .. })
    ));
}

#[test]
fn empty_styles_and_formats_get_what_clients_need() {
    let mut capabilities = sample();
    capabilities.layers[0].styles.clear();
    capabilities.layers[0].formats.clear();
    let document = parse(&capabilities_xml(&capabilities).unwrap());
    let layer = layer_element(&document, "both");
    let style = layer.child("Style");
    assert_eq!(style.text_of("ows:Identifier"), "default");
    assert_eq!(style.attribute("isDefault"), Some("true"));
    assert_eq!(layer.text_of("Format"), "image/png");
}

#[test]
fn documents_that_would_mislead_clients_are_refused() {
    let refused = |change: &dyn Fn(&mut Capabilities)| {
        let mut capabilities = sample();
        change(&mut capabilities);
        capabilities_xml(&capabilities).unwrap_err()
    };
    assert!(matches!(
        refused(&|c| c.layers[1].identifier = "both".to_owned()),
        WmtsError::DuplicateIdentifier { kind: "layer", .. }
    ));
    assert!(matches!(
        refused(&|c| c.matrix_sets[1].id = "geo".to_owned()),
        WmtsError::DuplicateIdentifier {
            kind: "matrix set",
            ..
        }
    ));
    assert!(matches!(
        refused(&|c| c.layers[0].matrix_sets[0].id = "missing".to_owned()),
        WmtsError::UnknownMatrixSet { .. }
    ));
    assert!(matches!(
        refused(&|c| c.layers[0].matrix_sets.clear()),
        WmtsError::NoMatrixSet { .. }
    ));
    assert!(matches!(
        refused(&|c| c.matrix_sets[0].matrices.clear()),
        WmtsError::EmptyMatrixSet { .. }
    ));
    let template = |template: &'static str| {
        move |c: &mut Capabilities| c.layers[0].resource_urls[0].template = template.to_owned()
    };
    // Two matrix sets, one template without {TileMatrixSet}: GDAL would read the UTM tiles
    // from the Web Mercator URL.
    let problems = [
        "https://example.org/t/{TileMatrix}/{TileRow}/{TileCol}",
        "https://example.org/t/{TileMatrixSet}/{TileMatrix}/{TileRow}",
        "https://example.org/t/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}?t={Time}",
        "https://example.org/t/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}/{Other}",
        "https://example.org/t/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}}",
        "https://example.org/t/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol",
    ];
    for problem in problems {
        let error = refused(&template(problem));
        assert!(matches!(error, WmtsError::Template { .. }), "{problem}");
        assert!(error.to_string().contains("\"both\""));
    }
    assert!(matches!(
        refused(&|c| c.layers[1].time = Some(TimeDimension {
            values: Vec::new(),
            default: String::new()
        })),
        WmtsError::EmptyTimeDimension { .. }
    ));
    assert!(matches!(
        refused(&|c| c.layers[1].wgs84_bounds = Some(Bounds {
            min_x: f64::NAN,
            min_y: 0.0,
            max_x: 1.0,
            max_y: 1.0
        })),
        WmtsError::InvalidBounds { .. }
    ));
    assert!(matches!(
        refused(&|c| c.layers[1].matrix_sets[0].bounds = Some(utm_extent())),
        WmtsError::InvalidBounds { .. }
    ));
    // One matrix set needs no {TileMatrixSet}; {Style} is filled by every client.
    let mut one_set = sample();
    one_set.layers[1].resource_urls[0].template =
        "https://example.org/geo/{Style}/{TileMatrix}/{TileRow}/{TileCol}.png".to_owned();
    assert!(capabilities_xml(&one_set).is_ok());
}

#[test]
fn limits_leave_out_levels_the_data_misses() {
    let set = TileMatrixSet::web_mercator_quad(256, 2);
    let point = Bounds {
        min_x: 10.0,
        min_y: 10.0,
        max_x: 10.0,
        max_y: 10.0,
    };
    let limits = matrix_limits(&set, &point);
    assert_eq!(limits.len(), 3);
    assert_eq!(
        limits[2],
        TileMatrixLimits {
            matrix: "2".to_owned(),
            min_row: 1,
            max_row: 1,
            min_col: 2,
            max_col: 2,
        }
    );
    let outside = Bounds {
        min_x: 3.0e7,
        min_y: 0.0,
        max_x: 3.1e7,
        max_y: 1.0,
    };
    assert!(matrix_limits(&set, &outside).is_empty());
}
