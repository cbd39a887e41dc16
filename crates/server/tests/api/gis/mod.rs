//! GIS (docs/gis.md): the coordinate-system list and lookup, and the reprojection of WKT
//! geometries, as clients of the platform's gis service call them (`api-version: 2`,
//! `svc-service-id: gis`).
//!
//! Reference positions come from GDAL 3.6 (Debian gdal-bin, PROJ 9.1):
//! `printf '9 56\n10 55\n12 54.5\n11 57\n9.5 55.5\n8.25 54.75\n' | gdaltransform -s_srs
//! EPSG:4326 -t_srs EPSG:25832 -output_xy`, and the same with `-t_srs EPSG:3857` for
//! `8 54`, `9 54`, `9 55`, `10 56`, `11 56`, `11 57`. proj4rs agrees with these to a few
//! nanometres; the tolerance is 1 mm, what matters to users.

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// EPSG:4326 (lon, lat) -> EPSG:25832 (x, y), from gdaltransform.
const TO_25832: [((f64, f64), (f64, f64)); 6] = [
    ((9.0, 56.0), (500_000.0, 6_206_079.587_128_01)),
    ((10.0, 55.0), (563_967.423_103_569, 6_095_248.708_113_63)),
    ((12.0, 54.5), (694_255.721_435_288, 6_043_296.084_035_27)),
    ((11.0, 57.0), (621_485.727_679_265, 6_319_164.464_007_63)),
    ((9.5, 55.5), (531_585.159_634_327, 6_150_546.796_746_06)),
    ((8.25, 54.75), (451_726.221_113_507, 6_067_230.271_552_92)),
];

const METRE_TOLERANCE: f64 = 1e-3;

/// A request as a gis-service client sends it, with the bootstrap API key.
fn gis(app: &TestApp, method: Method, path: &str) -> RequestBuilder {
    app.with_key(method, path)
        .header("api-version", "2")
        .header("svc-service-id", "gis")
        .header("content-type", "application/json-patch+json")
        .header("accept", "text/plain")
}

/// `/api/crs/coordinate-system/list` with the query `pairs`.
fn list_path(pairs: &[(&str, &str)]) -> String {
    let query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    format!("{}?{query}", routes::coordinate_system_list())
}

async fn list(app: &TestApp, query: &[(&str, &str)]) -> Value {
    let response = gis(app, Method::GET, &list_path(query))
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await
}

fn ids(page: &Value) -> Vec<u64> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["id"].as_u64().unwrap())
        .collect()
}

async fn project(app: &TestApp, body: &Value) -> reqwest::Response {
    gis(app, Method::POST, &routes::crs_project())
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

async fn projected(app: &TestApp, from: u32, to: u32, geometries: &[&str]) -> Vec<String> {
    let body = json!({ "inputSrid": from, "outputSrid": to, "geometries": geometries });
    let answer = expect_status(project(app, &body).await, StatusCode::OK).await;
    assert_eq!(answer["inputSrid"], from, "{answer}");
    assert_eq!(answer["outputSrid"], to, "{answer}");
    answer["geometries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|wkt| wkt.as_str().unwrap().to_owned())
        .collect()
}

/// The WKT with every number replaced by `#`, and the numbers.
fn split_numbers(wkt: &str) -> (String, Vec<f64>) {
    let mut shape = String::new();
    let mut numbers = Vec::new();
    let mut token = String::new();
    for c in wkt.chars().chain([' ']) {
        if c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e') {
            token.push(c);
            continue;
        }
        if !token.is_empty() {
            numbers.push(token.parse().unwrap_or_else(|_| panic!("{token} in {wkt}")));
            token.clear();
            shape.push('#');
        }
        shape.push(c);
    }
    shape.pop();
    (shape, numbers)
}

/// Asserts the WKT has `shape` (numbers as `#`) and numbers within `tolerance` of `expected`.
fn assert_wkt(actual: &str, shape: &str, expected: &[f64], tolerance: f64) {
    let (actual_shape, numbers) = split_numbers(actual);
    assert_eq!(actual_shape, shape, "{actual}");
    assert_eq!(numbers.len(), expected.len(), "{actual}");
    for (got, want) in numbers.iter().zip(expected) {
        assert!(
            (got - want).abs() <= tolerance,
            "{got} differs from {want} by more than {tolerance} in {actual}"
        );
    }
}

/// The expected x y of the reference position at `index`.
fn utm(index: usize) -> [f64; 2] {
    let (_, (x, y)) = TO_25832[index];
    [x, y]
}

// ---- the coordinate-system list ----

api_test!(the_list_pages_the_whole_registry_by_ascending_id, |app| {
    let page = list(&app, &[("limit", "5")]).await;
    let total = page["totalCount"].as_u64().unwrap();
    assert!(total > 6_000, "{total}");
    assert_eq!(page["offset"], 0);
    assert_eq!(page["limit"], 5);
    let first = ids(&page);
    assert_eq!(first.len(), 5);
    assert!(first.windows(2).all(|pair| pair[0] < pair[1]), "{first:?}");
    for entry in page["data"].as_array().unwrap() {
        assert_eq!(entry["authority"], "EPSG", "{entry}");
        for field in ["name", "wkt", "proj4String"] {
            assert!(
                !entry[field].as_str().unwrap().is_empty(),
                "{field}: {entry}"
            );
        }
    }
    // The next page follows on; the default page size is the configured one.
    let next = list(&app, &[("offset", "5"), ("limit", "5")]).await;
    assert!(ids(&next)[0] > first[4]);
    let default = list(&app, &[]).await;
    assert_eq!(default["limit"], app.config.limits.page_size_default.get());
    assert_eq!(
        default["data"].as_array().unwrap().len() as u32,
        app.config.limits.page_size_default.get()
    );
    // The last entry, and past the end: no rows, the same total.
    let last = list(&app, &[("offset", (total - 1).to_string().as_str())]).await;
    assert_eq!(ids(&last).len(), 1);
    for offset in [total, total + 100, u64::from(u32::MAX)] {
        let past = list(&app, &[("offset", offset.to_string().as_str())]).await;
        assert_eq!(past["data"], json!([]), "{offset}");
        assert_eq!(past["totalCount"], total);
        assert_eq!(past["offset"], offset);
    }
});

api_test!(nametext_matches_part_of_the_name_in_any_case, |app| {
    let page = list(&app, &[("nametext", "utm ZONE 32n"), ("limit", "1000")]).await;
    let found = ids(&page);
    assert!(
        found.contains(&25832) && found.contains(&32632),
        "{found:?}"
    );
    assert_eq!(page["totalCount"].as_u64().unwrap(), found.len() as u64);
    for entry in page["data"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap().to_lowercase();
        assert!(name.contains("utm zone 32n"), "{name}");
    }
    // Parameter names bind in any case.
    let same = list(&app, &[("NameText", "UTM zone 32N"), ("Limit", "1000")]).await;
    assert_eq!(ids(&same), found);
    let none = list(&app, &[("nametext", "no such system anywhere")]).await;
    assert_eq!(none["totalCount"], 0);
    assert_eq!(none["data"], json!([]));
    // An empty value is no filter.
    let all = list(&app, &[("nametext", ""), ("limit", "1")]).await;
    let everything = list(&app, &[("limit", "1")]).await;
    assert_eq!(all["totalCount"], everything["totalCount"]);
});

api_test!(fulltext_matches_name_wkt_proj4_or_code, |app| {
    // The code.
    let by_code = ids(&list(&app, &[("fulltext", "25832"), ("limit", "1000")]).await);
    assert!(by_code.contains(&25832), "{by_code:?}");
    // A piece of the WKT only (names hold no quotes or brackets): 25832 and the compound
    // systems that embed its WKT, such as 5555 (ETRS89 / UTM zone 32N + DHHN92 height).
    let by_wkt = list(
        &app,
        &[
            ("FullText", "authority[\"epsg\",\"25832\"]"),
            ("limit", "1000"),
        ],
    )
    .await;
    assert!(
        ids(&by_wkt).contains(&25832) && ids(&by_wkt).contains(&5555),
        "{by_wkt}"
    );
    for entry in by_wkt["data"].as_array().unwrap() {
        let wkt = entry["wkt"].as_str().unwrap();
        assert!(wkt.contains("AUTHORITY[\"EPSG\",\"25832\"]"), "{wkt}");
    }
    // A piece of the proj4 definition.
    let by_proj4 = ids(&list(
        &app,
        &[
            ("fulltext", "+PROJ=UTM +ZONE=32 +ELLPS=GRS80"),
            ("limit", "1000"),
        ],
    )
    .await);
    assert!(by_proj4.contains(&25832), "{by_proj4:?}");
    assert!(!by_proj4.contains(&32632), "{by_proj4:?}");
    // Filters combine: the name must match too.
    let both = ids(&list(
        &app,
        &[
            ("fulltext", "+zone=32 "),
            ("nametext", "ETRS89 / UTM"),
            ("limit", "1000"),
        ],
    )
    .await);
    assert!(both.contains(&25832) && !both.contains(&32632), "{both:?}");
});

api_test!(
    authority_epsg_matches_everything_and_others_nothing,
    |app| {
        let total = list(&app, &[("limit", "1")]).await["totalCount"].clone();
        for authority in ["EPSG", "epsg", " Epsg "] {
            let page = list(&app, &[("authority", authority), ("limit", "1")]).await;
            assert_eq!(page["totalCount"], total, "{authority}");
        }
        for authority in ["ESRI", "IAU_2015", "EPSGX"] {
            let page = list(&app, &[("Authority", authority), ("nametext", "WGS 84")]).await;
            assert_eq!(page["totalCount"], 0, "{authority}");
            assert_eq!(page["data"], json!([]), "{authority}");
        }
    }
);

api_test!(list_parameters_out_of_bounds_are_400s_naming_them, |app| {
    let max = app.config.limits.page_size_max.get();
    list(&app, &[("limit", max.to_string().as_str())]).await;
    for (name, value) in [
        ("limit", "0".to_owned()),
        ("limit", (max + 1).to_string()),
        ("limit", "ten".to_owned()),
        ("offset", "-1".to_owned()),
        ("nametext", "x".repeat(1001)),
        ("fulltext", "x".repeat(1001)),
    ] {
        let response = gis(&app, Method::GET, &list_path(&[(name, &value)]))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"][name].is_array(), "{name}: {problem}");
    }
    // At the text limit: fine, and nothing matches.
    let page = list(&app, &[("fulltext", "x".repeat(1000).as_str())]).await;
    assert_eq!(page["totalCount"], 0);
});

// ---- one coordinate system ----

api_test!(one_coordinate_system_by_id, |app| {
    let get = |id: &str| gis(&app, Method::GET, &routes::coordinate_system(id));
    let wgs84 = expect_status(get("4326").send().await.unwrap(), StatusCode::OK).await;
    assert_eq!(wgs84["id"], 4326);
    assert_eq!(wgs84["name"], "WGS 84");
    assert_eq!(wgs84["authority"], "EPSG");
    assert_eq!(wgs84["proj4String"], "+proj=longlat +datum=WGS84 +no_defs");
    let wkt = wgs84["wkt"].as_str().unwrap();
    assert!(
        wkt.starts_with("GEOGCS[\"WGS 84\",DATUM[\"WGS_1984\""),
        "{wkt}"
    );
    assert!(wkt.ends_with("AUTHORITY[\"EPSG\",\"4326\"]]"), "{wkt}");
    let etrs = expect_status(get("25832").send().await.unwrap(), StatusCode::OK).await;
    assert_eq!(etrs["id"], 25832);
    assert_eq!(etrs["name"], "ETRS89 / UTM zone 32N");
    assert_eq!(
        etrs["proj4String"],
        "+proj=utm +zone=32 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs"
    );
    let wkt = etrs["wkt"].as_str().unwrap();
    assert!(
        wkt.starts_with("PROJCS[\"ETRS89 / UTM zone 32N\",GEOGCS[\"ETRS89\""),
        "{wkt}"
    );
    assert!(wkt.ends_with("AUTHORITY[\"EPSG\",\"25832\"]]"), "{wkt}");
    // The list shows the same entry.
    let listed = list(
        &app,
        &[("fulltext", "25832"), ("nametext", "ETRS89 / UTM zone 32N")],
    )
    .await;
    let entry = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["id"] == 25832);
    assert_eq!(entry, Some(&etrs));
    // Not in the registry: 404. Not a whole number from 0 to 2^32-1: 400.
    for id in ["99999", "0", "4294967295"] {
        let response = get(id).send().await.unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
    for id in ["abc", "-1", "4326.0", "4294967296"] {
        let response = get(id).send().await.unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "invalid-path").await;
    }
});

// ---- reprojection ----

api_test!(every_geometry_type_is_reprojected_like_gdal, |app| {
    let out = projected(
        &app,
        4326,
        25832,
        &[
            "POINT (9 56)",
            "MULTIPOINT ((9 56), (10 55))",
            "LINESTRING (9 56, 10 55, 12 54.5)",
            "MULTILINESTRING ((9 56, 10 55), (12 54.5, 11 57))",
            "POLYGON ((9 56, 10 55, 12 54.5, 9 56), (9.5 55.5, 8.25 54.75, 11 57, 9.5 55.5))",
            "MULTIPOLYGON (((9 56, 10 55, 12 54.5, 9 56)), ((9.5 55.5, 8.25 54.75, 11 57, 9.5 55.5)))",
        ],
    )
    .await;
    let p = utm;
    let cases: [(&str, Vec<f64>); 6] = [
        ("POINT (# #)", p(0).to_vec()),
        ("MULTIPOINT ((# #), (# #))", [p(0), p(1)].concat()),
        ("LINESTRING (# #, # #, # #)", [p(0), p(1), p(2)].concat()),
        (
            "MULTILINESTRING ((# #, # #), (# #, # #))",
            [p(0), p(1), p(2), p(3)].concat(),
        ),
        (
            "POLYGON ((# #, # #, # #, # #), (# #, # #, # #, # #))",
            [p(0), p(1), p(2), p(0), p(4), p(5), p(3), p(4)].concat(),
        ),
        (
            "MULTIPOLYGON (((# #, # #, # #, # #)), ((# #, # #, # #, # #)))",
            [p(0), p(1), p(2), p(0), p(4), p(5), p(3), p(4)].concat(),
        ),
    ];
    assert_eq!(out.len(), cases.len());
    for (wkt, (shape, expected)) in out.iter().zip(cases) {
        assert_wkt(wkt, shape, &expected, METRE_TOLERANCE);
    }
    // The central meridian of zone 32 is 9°E: x is exactly the false easting.
    assert!(out[0].starts_with("POINT (500000 6206079.58"), "{}", out[0]);
});

api_test!(web_mercator_polygons_match_gdal, |app| {
    let out = projected(
        &app,
        4326,
        3857,
        &["MULTIPOLYGON (((8 54, 9 54, 9 55, 8 54)), ((10 56, 11 56, 11 57, 10 56)))"],
    )
    .await;
    let expected = [
        890_555.926_346_189,
        7_170_156.293_999_95,
        1_001_875.417_139_46,
        7_170_156.293_999_95,
        1_001_875.417_139_46,
        7_361_866.113_051_19,
        890_555.926_346_189,
        7_170_156.293_999_95,
        1_113_194.907_932_74,
        7_558_415.656_081_78,
        1_224_514.398_726_01,
        7_558_415.656_081_78,
        1_224_514.398_726_01,
        7_760_118.672_902_45,
        1_113_194.907_932_74,
        7_558_415.656_081_78,
    ];
    assert_wkt(
        &out[0],
        "MULTIPOLYGON (((# #, # #, # #, # #)), ((# #, # #, # #, # #)))",
        &expected,
        METRE_TOLERANCE,
    );
});

api_test!(z_and_m_pass_through_and_empty_stays_empty, |app| {
    let out = projected(
        &app,
        4326,
        25832,
        &[
            "POINT Z (9 56 42.5)",
            "point (10 55 -3)",
            "LINESTRING M (9 56 1, 10 55 2)",
            "MULTIPOINT ZM ((9 56 7 8))",
            "POINT EMPTY",
            "POINT Z EMPTY",
            "MULTIPOINT EMPTY",
            "LINESTRING EMPTY",
            "MULTILINESTRING EMPTY",
            "POLYGON EMPTY",
            "MULTIPOLYGON EMPTY",
        ],
    )
    .await;
    assert_wkt(
        &out[0],
        "POINT Z (# # #)",
        &[utm(0)[0], utm(0)[1], 42.5],
        METRE_TOLERANCE,
    );
    assert_wkt(
        &out[1],
        "POINT Z (# # #)",
        &[utm(1)[0], utm(1)[1], -3.0],
        METRE_TOLERANCE,
    );
    assert_wkt(
        &out[2],
        "LINESTRING M (# # #, # # #)",
        &[utm(0)[0], utm(0)[1], 1.0, utm(1)[0], utm(1)[1], 2.0],
        METRE_TOLERANCE,
    );
    assert_wkt(
        &out[3],
        "MULTIPOINT ZM ((# # # #))",
        &[utm(0)[0], utm(0)[1], 7.0, 8.0],
        METRE_TOLERANCE,
    );
    assert_eq!(
        out[4..],
        [
            "POINT EMPTY",
            "POINT Z EMPTY",
            "MULTIPOINT EMPTY",
            "LINESTRING EMPTY",
            "MULTILINESTRING EMPTY",
            "POLYGON EMPTY",
            "MULTIPOLYGON EMPTY",
        ]
    );
    // No geometries: nothing to do.
    assert!(projected(&app, 4326, 25832, &[]).await.is_empty());
});

api_test!(a_round_trip_returns_to_the_start, |app| {
    let start = [
        "POINT (9 56)",
        "LINESTRING (10 55, 12 54.5, 11 57)",
        "POLYGON ((9.5 55.5, 8.25 54.75, 11 57, 9.5 55.5))",
    ];
    let there = projected(&app, 4326, 25832, &start).await;
    let there: Vec<&str> = there.iter().map(String::as_str).collect();
    let back = projected(&app, 25832, 4326, &there).await;
    for (original, returned) in start.iter().zip(&back) {
        let (shape, numbers) = split_numbers(original);
        assert_wkt(returned, &shape, &numbers, 1e-9);
    }
    // gdaltransform -s_srs EPSG:25832 -t_srs EPSG:4326: 500000 6100000 -> 9 55.0468063060217.
    let back = projected(&app, 25832, 4326, &["POINT (500000 6100000)"]).await;
    assert_wkt(&back[0], "POINT (# #)", &[9.0, 55.046_806_306_021_7], 1e-9);
    // The same system: the geometries come back canonical and unchanged.
    let same = projected(&app, 25832, 25832, &["MultiPoint (1.5 2, 3 4)"]).await;
    assert_eq!(same, ["MULTIPOINT ((1.5 2), (3 4))"]);
});

/// Sends `body` and returns the 400 validation problem, checking it names `field`.
async fn rejected(app: &TestApp, body: &Value, field: &str) -> Value {
    let problem = expect_problem(
        project(app, body).await,
        StatusCode::BAD_REQUEST,
        "validation",
    )
    .await;
    assert!(problem["errors"][field].is_array(), "{field}: {problem}");
    problem
}

fn message(problem: &Value, field: &str) -> String {
    problem["errors"][field][0].as_str().unwrap().to_owned()
}

api_test!(unknown_or_unusable_srids_are_400s_naming_the_field, |app| {
    for (from, to, field, text) in [
        (
            json!(99_999),
            json!(4326),
            "inputSrid",
            "unknown SRID 99999",
        ),
        (json!(4326), json!(-5), "outputSrid", "unknown SRID -5"),
        (json!(4326), json!(0), "outputSrid", "unknown SRID 0"),
        (
            json!(4_294_967_296_i64),
            json!(4326),
            "inputSrid",
            "unknown SRID",
        ),
        // NAD27 needs a datum grid proj4rs does not have.
        (
            json!(4326),
            json!(2085),
            "outputSrid",
            "EPSG:2085 cannot be used",
        ),
    ] {
        let body = json!({ "inputSrid": from, "outputSrid": to, "geometries": ["POINT (9 56)"] });
        let problem = rejected(&app, &body, field).await;
        assert!(message(&problem, field).contains(text), "{problem}");
    }
    // Wrong types and missing fields are bound like every body.
    for (body, field) in [
        (
            json!({ "inputSrid": "4326", "outputSrid": 25832, "geometries": [] }),
            "inputSrid",
        ),
        (json!({ "inputSrid": 4326, "geometries": [] }), "body"),
        (
            json!({ "inputSrid": 4326, "outputSrid": 25832, "geometries": "POINT (9 56)" }),
            "geometries",
        ),
        (
            json!({ "inputSrid": 4326, "outputSrid": 25832, "geometries": [1] }),
            "geometries[0]",
        ),
    ] {
        let response = project(&app, &body).await;
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(
            problem["errors"]
                .as_object()
                .unwrap()
                .keys()
                .any(|key| key.starts_with(field)),
            "{field}: {problem}"
        );
    }
    // Property names bind in any case.
    let body = json!({ "inputsrid": 4326, "OUTPUTSRID": 25832, "Geometries": ["POINT (9 56)"] });
    expect_status(project(&app, &body).await, StatusCode::OK).await;
});

api_test!(
    malformed_or_untransformable_geometries_are_400s_naming_the_index,
    |app| {
        for (geometries, field, text) in [
            (
                json!(["POINT (9 56)", "POINT (9)"]),
                "geometries[1]",
                "at character 9: expected a number",
            ),
            (
                json!(["CIRCLE (1 2)"]),
                "geometries[0]",
                "\"CIRCLE\" is not a geometry type",
            ),
            (
                json!(["GEOMETRYCOLLECTION (POINT (1 2))"]),
                "geometries[0]",
                "not a geometry type",
            ),
            (
                json!(["POINT (9 56", "POINT (1 2)"]),
                "geometries[0]",
                "expected ')'",
            ),
            (
                json!(["LINESTRING Z (9 56 1, 10 55)"]),
                "geometries[0]",
                "2 ordinates where the geometry has 3",
            ),
            (
                json!(["POINT (9 56) POINT (1 2)"]),
                "geometries[0]",
                "expected the end",
            ),
            (
                json!(["", "POINT (1 2)"]),
                "geometries[0]",
                "expected a geometry type",
            ),
            (
                json!(["POINT (NaN 1)"]),
                "geometries[0]",
                "expected a number",
            ),
            (
                json!(["POINT (1e400 1)"]),
                "geometries[0]",
                "not a finite number",
            ),
            (
                json!(["POINT (9 56)", "POINT (9 95)"]),
                "geometries[1]",
                "(9 95) cannot be transformed",
            ),
        ] {
            let body = json!({ "inputSrid": 4326, "outputSrid": 25832, "geometries": geometries });
            let problem = rejected(&app, &body, field).await;
            assert!(message(&problem, field).contains(text), "{problem}");
        }
        // The pole has no Mercator y: the geometry and the position are named.
        let body = json!({
            "inputSrid": 4326,
            "outputSrid": 3857,
            "geometries": ["POINT (9 56)", "LINESTRING (9 56, 0 90)"]
        });
        let problem = rejected(&app, &body, "geometries[1]").await;
        let text = message(&problem, "geometries[1]");
        assert!(
            text.contains("(0 90) cannot be transformed from EPSG:4326 to EPSG:3857"),
            "{text}"
        );
        // NUL characters are refused before anything else.
        let body =
            json!({ "inputSrid": 4326, "outputSrid": 25832, "geometries": ["POINT (9 56)\u{0}"] });
        rejected(&app, &body, "geometries[0]").await;
    }
);

api_test!(ten_thousand_geometries_are_fine_one_more_is_a_400, |app| {
    let points = vec!["POINT (9 56)"; 10_000];
    let out = projected(&app, 4326, 25832, &points).await;
    assert_eq!(out.len(), 10_000);
    assert_eq!(out[9_999], out[0]);
    let body = json!({ "inputSrid": 4326, "outputSrid": 25832, "geometries": vec!["POINT (9 56)"; 10_001] });
    let problem = rejected(&app, &body, "geometries").await;
    assert!(
        message(&problem, "geometries").contains("10001 geometries exceed the limit of 10000"),
        "{problem}"
    );
});

api_test_with!(
    more_than_a_million_positions_are_a_400,
    |config: &mut basin::Config| config.limits.json_body_bytes_max = 16 * 1024 * 1024,
    |app| {
        // 1,000,001 positions in two geometries, neither over the limit on its own.
        let half = |count: usize| {
            let mut wkt = String::with_capacity(count * 5 + 16);
            wkt.push_str("MULTIPOINT (");
            for index in 0..count {
                wkt.push_str(if index == 0 { "1 2" } else { ",1 2" });
            }
            wkt.push(')');
            wkt
        };
        let body = json!({
            "inputSrid": 4326,
            "outputSrid": 25832,
            "geometries": [half(500_000), half(500_001)]
        });
        let problem = rejected(&app, &body, "geometries").await;
        let text = message(&problem, "geometries");
        assert!(text.contains("more than 1000000 positions"), "{text}");
        assert!(text.contains("geometry 1"), "{text}");
    }
);

// ---- transport: credentials, versions, documentation ----

api_test!(every_gis_endpoint_needs_credentials, |app| {
    let body = json!({ "inputSrid": 4326, "outputSrid": 25832, "geometries": ["POINT (9 56)"] });
    for (method, path) in [
        (Method::GET, &*routes::coordinate_system_list()),
        (Method::GET, &*routes::coordinate_system(4326)),
        (Method::POST, &*routes::crs_project()),
    ] {
        let response = app
            .anonymous(method.clone(), path)
            .header("api-version", "2")
            .json(&body)
            .send()
            .await
            .unwrap();
        let problem =
            expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-missing").await;
        assert_eq!(problem["instance"], path, "{problem}");
        let response = app
            .anonymous(method.clone(), path)
            .header("svc-open-api-key", "not-a-key")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        // A bearer token works as well as the API key.
        let response = app
            .back_office(method, path)
            .header("api-version", "2")
            .json(&body)
            .send()
            .await
            .unwrap();
        expect_status(response, StatusCode::OK).await;
    }
});

api_test!(gis_endpoints_accept_versions_1_and_2, |app| {
    for version in [None, Some("1"), Some("2"), Some("2.0")] {
        let mut request = app.with_key(Method::GET, &routes::coordinate_system(4326));
        if let Some(version) = version {
            request = request.header("api-version", version);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.headers()["api-supported-versions"], "1.0, 2.0");
        expect_status(response, StatusCode::OK).await;
    }
    let response = app
        .with_key(
            Method::GET,
            &format!("{}?api-version=3", routes::coordinate_system_list()),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["api-supported-versions"], "1.0, 2.0");
    expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
});

api_test!(the_gis_endpoints_are_in_the_openapi_document, |app| {
    let spec = expect_status(
        app.anonymous(Method::GET, "/openapi.json")
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    for (path, method) in [
        ("/api/crs/coordinate-system/list", "get"),
        ("/api/crs/coordinate-system/{id}", "get"),
        ("/api/crs/project", "post"),
    ] {
        let operation = &spec["paths"][path][method];
        assert_eq!(operation["tags"], json!(["gis"]), "{path}");
        let version = operation["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|parameter| parameter["name"] == "api-version")
            .unwrap_or_else(|| panic!("{path} has no api-version"));
        assert_eq!(
            version["schema"]["enum"],
            json!(["", "1", "1.0", "2", "2.0"]),
            "{path}"
        );
    }
    let schemas = &spec["components"]["schemas"];
    for schema in [
        "CoordinateSystemDto",
        "ReprojectRequest",
        "ReprojectResponse",
    ] {
        assert!(schemas[schema].is_object(), "{schema} missing");
    }
    assert!(schemas["CoordinateSystemDto"]["properties"]["proj4String"].is_object());
});
