//! Just enough of OGC WKT (version 1 as in ESRI .prj files and MIKE files, plus the `ID[...]`
//! of WKT2) to tell which coordinate system a definition means.
//!
//! The parser builds a small tree of `KEYWORD[arg, ...]` nodes. It does not validate the WKT
//! grammar: it only needs the outermost name, the outermost authority code, and for WKT1
//! definitions without a code the projection method, its parameters and the ellipsoid, from
//! which it builds a proj4 string. Nesting is bounded so that a hostile string cannot exhaust
//! the stack.

/// Deepest nesting accepted; real definitions nest about five levels.
const NESTING_DEPTH_MAX: usize = 32;

/// One argument of a WKT node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    /// A quoted string.
    Text(String),
    /// A number.
    Number(f64),
    /// An unquoted word such as `EAST`.
    Word(String),
    /// A nested node.
    Node(Node),
}

/// A `KEYWORD[args]` node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// The keyword in upper case (`PROJCS`, `GEOGCS`, `PARAMETER`, ...).
    pub keyword: String,
    /// The arguments in order.
    pub args: Vec<Arg>,
}

impl Node {
    /// The first argument when it is a quoted string (the name of most nodes).
    pub fn name(&self) -> Option<&str> {
        match self.args.first()? {
            Arg::Text(text) => Some(text),
            _ => None,
        }
    }

    /// Child nodes with `keyword` (upper case).
    pub fn children<'a>(&'a self, keyword: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.args.iter().filter_map(move |arg| match arg {
            Arg::Node(node) if node.keyword == keyword => Some(node),
            _ => None,
        })
    }

    /// The first child node with `keyword`.
    pub fn child<'a>(&'a self, keyword: &'a str) -> Option<&'a Node> {
        self.children(keyword).next()
    }

    /// The `index`-th argument as a number.
    pub fn number(&self, index: usize) -> Option<f64> {
        let value = match self.args.get(index)? {
            Arg::Number(value) => *value,
            Arg::Text(text) => text.trim().parse().ok()?,
            _ => return None,
        };
        value.is_finite().then_some(value)
    }

    /// The EPSG code of this node's own `AUTHORITY["EPSG","n"]` or `ID["EPSG",n]`.
    pub fn epsg(&self) -> Option<u32> {
        let authority = self.child("AUTHORITY").or_else(|| self.child("ID"))?;
        if !authority.name()?.eq_ignore_ascii_case("EPSG") {
            return None;
        }
        let code = authority.number(1)?;
        (code.fract() == 0.0 && code > 0.0 && code <= f64::from(u32::MAX)).then_some(code as u32)
    }

    /// The value of `PARAMETER[name, value]`, matching names case-insensitively.
    pub fn parameter(&self, names: &[&str]) -> Option<f64> {
        self.children("PARAMETER")
            .find(|parameter| {
                parameter.name().is_some_and(|name| {
                    names.iter().any(|wanted| name.eq_ignore_ascii_case(wanted))
                })
            })
            .and_then(|parameter| parameter.number(1))
    }
}

/// Parses a WKT definition into its outermost node; `None` when it is not WKT.
pub(crate) fn parse(text: &str) -> Option<Node> {
    let mut parser = Parser {
        chars: text.char_indices().peekable(),
    };
    let node = parser.node(0)?;
    parser.skip_space();
    parser.chars.peek().is_none().then_some(node)
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    }

    fn word(&mut self) -> String {
        let mut word = String::new();
        while let Some((_, c)) = self
            .chars
            .next_if(|(_, c)| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+'))
        {
            word.push(c);
        }
        word
    }

    fn node(&mut self, depth: usize) -> Option<Node> {
        self.skip_space();
        let keyword = self.word();
        self.skip_space();
        self.node_body(keyword, depth)
    }

    /// The bracketed arguments of a node whose keyword was just read.
    fn node_body(&mut self, keyword: String, depth: usize) -> Option<Node> {
        if depth > NESTING_DEPTH_MAX
            || keyword.is_empty()
            || keyword
                .chars()
                .any(|c| !c.is_ascii_alphanumeric() && c != '_')
        {
            return None;
        }
        let close = match self.chars.next()? {
            (_, '[') => ']',
            (_, '(') => ')',
            _ => return None,
        };
        let mut args = Vec::new();
        loop {
            self.skip_space();
            if self.chars.next_if(|(_, c)| *c == close).is_some() {
                break;
            }
            args.push(self.arg(depth)?);
            self.skip_space();
            match self.chars.next()? {
                (_, ',') => {}
                (_, c) if c == close => break,
                _ => return None,
            }
        }
        Some(Node {
            keyword: keyword.to_ascii_uppercase(),
            args,
        })
    }

    fn arg(&mut self, depth: usize) -> Option<Arg> {
        if self.chars.next_if(|(_, c)| *c == '"').is_some() {
            return self.quoted().map(Arg::Text);
        }
        let word = self.word();
        if word.is_empty() {
            return None;
        }
        self.skip_space();
        if matches!(self.chars.peek(), Some((_, '[' | '('))) {
            return self.node_body(word, depth + 1).map(Arg::Node);
        }
        Some(match word.parse::<f64>() {
            Ok(number) => Arg::Number(number),
            Err(_) => Arg::Word(word),
        })
    }

    /// A quoted string after its opening quote; `""` stands for one quote.
    fn quoted(&mut self) -> Option<String> {
        let mut text = String::new();
        loop {
            let (_, c) = self.chars.next()?;
            if c == '"' {
                if self.chars.next_if(|(_, c)| *c == '"').is_some() {
                    text.push('"');
                    continue;
                }
                return Some(text);
            }
            text.push(c);
        }
    }
}

/// A proj4 string for a WKT1 `PROJCS` or `GEOGCS` without an EPSG code, for the projection
/// methods listed in docs/formats.md; `None` for anything else.
pub(crate) fn to_proj4(node: &Node) -> Option<String> {
    match node.keyword.as_str() {
        "GEOGCS" => Some(format!("+proj=longlat {} +no_defs", datum_of(node)?)),
        "PROJCS" => {
            let geographic = node.child("GEOGCS")?;
            let to_meter = node.child("UNIT").and_then(|unit| unit.number(1));
            let method = projection_of(node, to_meter.unwrap_or(1.0))?;
            let units = match to_meter {
                Some(factor) if (factor - 1.0).abs() > 1e-12 => format!(" +to_meter={factor}"),
                _ => " +units=m".to_owned(),
            };
            Some(format!(
                "{method} {}{units} +no_defs",
                datum_of(geographic)?
            ))
        }
        _ => None,
    }
}

/// The proj4 `+proj=...` part with parameters of a PROJCS whose linear unit is `to_meter`
/// metres: WKT states false easting and northing in that unit, proj4 always in metres.
fn projection_of(node: &Node, to_meter: f64) -> Option<String> {
    let name = normalise(node.child("PROJECTION")?.name()?);
    let p = |names: &[&str], default: f64| node.parameter(names).unwrap_or(default);
    let lat_0 = p(&["latitude_of_origin", "latitude_of_center"], 0.0);
    let lon_0 = p(
        &[
            "central_meridian",
            "longitude_of_origin",
            "longitude_of_center",
        ],
        0.0,
    );
    let k = p(&["scale_factor"], 1.0);
    let x_0 = p(&["false_easting"], 0.0) * to_meter;
    let y_0 = p(&["false_northing"], 0.0) * to_meter;
    let common = format!("+lat_0={lat_0} +lon_0={lon_0} +x_0={x_0} +y_0={y_0}");
    Some(match name.as_str() {
        "transversemercator" | "gausskruger" => format!("+proj=tmerc {common} +k={k}"),
        "mercator1sp" | "mercator2sp" | "mercator" => {
            let lat_ts = p(&["standard_parallel_1"], 0.0);
            if lat_ts == 0.0 {
                format!("+proj=merc +lon_0={lon_0} +x_0={x_0} +y_0={y_0} +k={k}")
            } else {
                format!("+proj=merc +lon_0={lon_0} +x_0={x_0} +y_0={y_0} +lat_ts={lat_ts}")
            }
        }
        "lambertconformalconic2sp" | "lambertconformalconic" => {
            let lat_1 = p(&["standard_parallel_1"], lat_0);
            let lat_2 = p(&["standard_parallel_2"], lat_1);
            format!("+proj=lcc +lat_1={lat_1} +lat_2={lat_2} {common}")
        }
        "lambertconformalconic1sp" => format!("+proj=lcc +lat_1={lat_0} {common} +k_0={k}"),
        "albersconicequalarea" | "albers" => {
            let lat_1 = p(&["standard_parallel_1"], 0.0);
            let lat_2 = p(&["standard_parallel_2"], lat_1);
            format!("+proj=aea +lat_1={lat_1} +lat_2={lat_2} {common}")
        }
        "obliquestereographic" | "doublestereographic" => {
            format!("+proj=sterea {common} +k={k}")
        }
        // GDAL's WKT 1 states both EPSG variants as one method: at a pole with a scale
        // (variant A), or with the latitude of true scale as the latitude of origin and no
        // scale (variant B).
        "polarstereographic" if lat_0.abs() == 90.0 => {
            format!("+proj=stere {common} +k={k}")
        }
        "polarstereographic" => {
            let pole = if lat_0 < 0.0 { -90.0 } else { 90.0 };
            format!(
                "+proj=stere +lat_0={pole} +lat_ts={lat_0} +lon_0={lon_0} +x_0={x_0} +y_0={y_0} +k={k}"
            )
        }
        // ESRI's names for variant B: the standard parallel is the latitude of true scale.
        "stereographicnorthpole" | "stereographicsouthpole" => {
            let pole = if name == "stereographicsouthpole" {
                -90.0
            } else {
                90.0
            };
            let lat_ts = p(&["standard_parallel_1"], pole);
            format!(
                "+proj=stere +lat_0={pole} +lat_ts={lat_ts} +lon_0={lon_0} +x_0={x_0} +y_0={y_0} +k={k}"
            )
        }
        "lambertazimuthalequalarea" => format!("+proj=laea {common}"),
        _ => return None,
    })
}

/// The proj4 datum or ellipsoid part of a GEOGCS.
fn datum_of(geographic: &Node) -> Option<String> {
    let datum = geographic.child("DATUM")?;
    let name = normalise(datum.name().unwrap_or_default());
    if matches!(name.as_str(), "wgs1984" | "dwgs1984" | "wgs84") {
        return Some("+datum=WGS84".to_owned());
    }
    let spheroid = datum
        .child("SPHEROID")
        .or_else(|| datum.child("ELLIPSOID"))?;
    let a = spheroid.number(1)?;
    let rf = spheroid.number(2)?;
    if !(a.is_finite() && a > 0.0 && rf.is_finite() && rf >= 0.0) {
        return None;
    }
    let shape = if rf == 0.0 {
        format!("+a={a} +b={a}")
    } else {
        format!("+a={a} +rf={rf}")
    };
    let shift = datum.child("TOWGS84").and_then(|towgs84| {
        let values: Option<Vec<String>> = (0..towgs84.args.len())
            .map(|index| towgs84.number(index).map(|value| value.to_string()))
            .collect();
        values.map(|values| format!(" +towgs84={}", values.join(",")))
    });
    Some(format!("{shape}{}", shift.unwrap_or_default()))
}

/// Lower case without anything but letters and digits, for comparing names.
pub(crate) fn normalise(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_nodes_and_the_outer_authority() {
        let node = parse(
            r#"PROJCS["WGS 84 / UTM zone 32N",GEOGCS["WGS 84",AUTHORITY["EPSG","4326"]],
            AXIS["Easting",EAST],AUTHORITY["EPSG","32632"]]"#,
        )
        .unwrap();
        assert_eq!(node.keyword, "PROJCS");
        assert_eq!(node.name(), Some("WGS 84 / UTM zone 32N"));
        assert_eq!(node.epsg(), Some(32632));
        assert_eq!(node.child("GEOGCS").unwrap().epsg(), Some(4326));
    }

    #[test]
    fn wkt2_ids_and_doubled_quotes_are_understood() {
        let node = parse(r#"GEOGCRS["a ""b""", ID["EPSG", 4326]]"#).unwrap();
        assert_eq!(node.name(), Some("a \"b\""));
        assert_eq!(node.epsg(), Some(4326));
    }

    #[test]
    fn truncated_and_corrupted_definitions_never_panic() {
        let wkt = crs_definitions::EPSG_27700.wkt;
        for end in 0..wkt.len() {
            if let Some(prefix) = wkt.get(..end) {
                let _ = parse(prefix).map(|node| to_proj4(&node));
            }
        }
        let mut state = 0x2545_f491_u32;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let mut bytes = wkt.as_bytes().to_vec();
            let position = state as usize % bytes.len();
            bytes[position] = b"[](),\"\"x9-"
                .get(state as usize % 11)
                .copied()
                .unwrap_or(b'x');
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse(&text).map(|node| (node.epsg(), to_proj4(&node)));
        }
    }

    #[test]
    fn false_easting_in_feet_becomes_metres_in_proj4() {
        let feet = r#"PROJCS["x",GEOGCS["NAD83",DATUM["North_American_Datum_1983",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["latitude_of_origin",31],PARAMETER["central_meridian",-81],PARAMETER["scale_factor",0.9999],PARAMETER["false_easting",656166.6666666666],PARAMETER["false_northing",1000],UNIT["US survey foot",0.3048006096012192]]"#;
        let proj4 = to_proj4(&parse(feet).unwrap()).unwrap();
        let value = |name: &str| -> f64 {
            let start = proj4.find(&format!("+{name}=")).unwrap() + name.len() + 2;
            proj4[start..].split(' ').next().unwrap().parse().unwrap()
        };
        assert!((value("x_0") - 200_000.0).abs() < 1e-6, "{proj4}");
        assert!(
            (value("y_0") - 304.800_609_601_219_2).abs() < 1e-9,
            "{proj4}"
        );
        assert!(proj4.contains("+to_meter=0.3048006096012192"), "{proj4}");
    }

    #[test]
    fn polar_stereographic_and_lambert_azimuthal_become_stere_and_laea() {
        let geogcs = r#"GEOGCS["x",DATUM["y",SPHEROID["intl",6378388,297]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]"#;
        let proj4 = |projection: &str, parameters: &str| {
            let text = format!(
                r#"PROJCS["p",{geogcs},PROJECTION["{projection}"],{parameters},UNIT["metre",1]]"#
            );
            to_proj4(&parse(&text).unwrap()).unwrap()
        };
        assert_eq!(
            proj4(
                "Polar_Stereographic",
                r#"PARAMETER["latitude_of_origin",-90],PARAMETER["central_meridian",180],PARAMETER["scale_factor",0.994],PARAMETER["false_easting",5000000],PARAMETER["false_northing",1000000]"#
            ),
            "+proj=stere +lat_0=-90 +lon_0=180 +x_0=5000000 +y_0=1000000 +k=0.994 +a=6378388 +rf=297 +units=m +no_defs"
        );
        assert_eq!(
            proj4(
                "Polar_Stereographic",
                r#"PARAMETER["latitude_of_origin",-71],PARAMETER["central_meridian",70],PARAMETER["false_easting",6000000],PARAMETER["false_northing",6000000]"#
            ),
            "+proj=stere +lat_0=-90 +lat_ts=-71 +lon_0=70 +x_0=6000000 +y_0=6000000 +k=1 +a=6378388 +rf=297 +units=m +no_defs"
        );
        assert_eq!(
            proj4(
                "Stereographic_North_Pole",
                r#"PARAMETER["standard_parallel_1",70],PARAMETER["central_meridian",-45]"#
            ),
            "+proj=stere +lat_0=90 +lat_ts=70 +lon_0=-45 +x_0=0 +y_0=0 +k=1 +a=6378388 +rf=297 +units=m +no_defs"
        );
        assert_eq!(
            proj4(
                "Lambert_Azimuthal_Equal_Area",
                r#"PARAMETER["latitude_of_center",52],PARAMETER["longitude_of_center",10],PARAMETER["false_easting",4321000],PARAMETER["false_northing",3210000]"#
            ),
            "+proj=laea +lat_0=52 +lon_0=10 +x_0=4321000 +y_0=3210000 +a=6378388 +rf=297 +units=m +no_defs"
        );
    }

    #[test]
    fn garbage_and_deep_nesting_are_not_wkt() {
        assert!(parse("UTM-32").is_none());
        assert!(parse("A[").is_none());
        assert!(parse("A[1,]]").is_none());
        let deep = format!("{}{}", "A[".repeat(1000), "]".repeat(1000));
        assert!(parse(&deep).is_none());
    }
}
