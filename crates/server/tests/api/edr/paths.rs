//! Radius, corridor and trajectory queries, and `method=linear`: what they hold and give on
//! the mesh sample, computed here from the element centres and values MIKE IO wrote.

use reqwest::StatusCode;
use serde_json::Value;

use super::{expected, floats, new_project, upload_sample};

const NATIVE: (&str, &str) = ("crs", "EPSG:32632");

/// The centres of the sample's elements, composite values of an answer.
fn composite(coverage: &Value) -> Vec<(f64, f64)> {
    coverage["domain"]["axes"]["composite"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("no composite axis: {coverage}"))
        .iter()
        .map(|pair| (pair[0].as_f64().unwrap(), pair[1].as_f64().unwrap()))
        .collect()
}

api_test!(
    radius_and_corridor_hold_the_centres_within_their_distance,
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let collection = app.edr().collection(&mesh);
        // Element centres (tests/corpus/dfs-samples/mesh2d_mixed.dfsu.json): 0 at (500050,
        // 6100050); 2 and 3 at 85 m from it; the others farther.
        let near = [
            ("coords", "POINT(500050 6100050)"),
            ("within", "0.1"),
            ("within-units", "km"),
            NATIVE,
        ];
        let coverage = collection
            .query("radius", &near)
            .await
            .expect(StatusCode::OK);
        assert_eq!(coverage["domain"]["domainType"], "MultiPointSeries");
        let centres = composite(&coverage);
        assert_eq!(centres.len(), 3, "{centres:?}");
        assert_eq!(centres[0], (500_050.0, 6_100_050.0));
        let close = [
            ("coords", "POINT(500050 6100050)"),
            ("within", "60"),
            ("within-units", "m"),
            NATIVE,
        ];
        let coverage = collection
            .query("radius", &close)
            .await
            .expect(StatusCode::OK);
        assert_eq!(composite(&coverage), [(500_050.0, 6_100_050.0)]);
        // A corridor 40 m wide along y = 6100050 holds elements 0, 1 and 2 (16.7 m off at most).
        let corridor = [
            ("coords", "LINESTRING(500000 6100050, 500200 6100050)"),
            ("corridor-width", "40"),
            ("width-units", "m"),
            ("corridor-height", "1"),
            ("height-units", "m"),
            NATIVE,
        ];
        let coverage = collection
            .query("corridor", &corridor)
            .await
            .expect(StatusCode::OK);
        assert_eq!(composite(&coverage).len(), 3);
        for (query, field) in [
            (
                vec![("coords", "POINT(1 1)"), ("within-units", "m")],
                "within",
            ),
            (
                vec![
                    ("coords", "POINT(1 1)"),
                    ("within", "-1"),
                    ("within-units", "m"),
                ],
                "within",
            ),
            (
                vec![("coords", "POINT(1 1)"), ("within", "5")],
                "within-units",
            ),
            (
                vec![
                    ("coords", "POINT(1 1)"),
                    ("within", "5"),
                    ("within-units", "parsec"),
                ],
                "within-units",
            ),
            (
                vec![
                    ("coords", "LINESTRING(0 0, 1 1)"),
                    ("within", "5"),
                    ("within-units", "m"),
                ],
                "coords",
            ),
        ] {
            let reply = collection.query("radius", &query).await;
            let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
            assert!(problem["errors"][field].is_array(), "{query:?}: {problem}");
        }
        for (query, field) in [
            (
                vec![
                    ("coords", "POINT(1 1)"),
                    ("corridor-width", "5"),
                    ("width-units", "m"),
                ],
                "coords",
            ),
            (
                vec![("coords", "LINESTRING(0 0, 1 1)"), ("width-units", "m")],
                "corridor-width",
            ),
            (
                vec![
                    ("coords", "LINESTRING(0 0, 1 1)"),
                    ("corridor-width", "5"),
                    ("width-units", "m"),
                    ("corridor-height", "x"),
                ],
                "corridor-height",
            ),
            (
                vec![
                    ("coords", "LINESTRING(0 0, 1 1)"),
                    ("corridor-width", "5"),
                    ("width-units", "m"),
                    ("height-units", "deg"),
                ],
                "height-units",
            ),
        ] {
            let reply = collection.query("corridor", &query).await;
            let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
            assert!(problem["errors"][field].is_array(), "{query:?}: {problem}");
        }
        let far = [
            ("coords", "POINT(0 0)"),
            ("within", "1"),
            ("within-units", "m"),
            NATIVE,
        ];
        assert_eq!(
            collection.query("radius", &far).await.status(),
            StatusCode::NO_CONTENT
        );
    }
);

api_test!(
    a_trajectory_with_times_is_interpolated_between_steps,
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let collection = app.edr().collection(&mesh);
        // 2019-08-01T00:00:00Z is 1564617600 s; the second position is at 00:22:30, halfway
        // between the steps of 00:15 and 00:30.
        let path = [
            (
                "coords",
                "LINESTRINGM(500050 6100050 1564617600, 500150 6100150 1564618950)",
            ),
            ("parameter-name", "Surface elevation"),
            NATIVE,
        ];
        let coverage = collection
            .query("trajectory", &path)
            .await
            .expect(StatusCode::OK);
        assert_eq!(coverage["domain"]["domainType"], "Trajectory");
        let tuples = &coverage["domain"]["axes"]["composite"];
        assert_eq!(tuples["coordinates"], serde_json::json!(["t", "x", "y"]));
        assert_eq!(tuples["values"][1][0], "2019-08-01T00:22:30Z");
        let data = &expected("mesh2d_mixed.dfsu")["data"]["Surface elevation"];
        let value =
            |step: usize, element: usize| f64::from(data[step][element].as_f64().unwrap() as f32);
        let got = floats(&coverage["ranges"]["Surface elevation"]["values"]);
        let halfway = (value(1, 5) + value(2, 5)) / 2.0;
        assert_eq!(got[0], Some(value(0, 0) as f32));
        assert!(
            (f64::from(got[1].unwrap()) - halfway).abs() < 1e-6,
            "{got:?} against {halfway}"
        );
        // Without times: every position at every selected step.
        let untimed = [
            ("coords", "LINESTRING(500050 6100050, 500150 6100150)"),
            ("datetime", "2019-08-01T00:15:00Z"),
            ("parameter-name", "Surface elevation"),
            NATIVE,
        ];
        let coverage = collection
            .query("trajectory", &untimed)
            .await
            .expect(StatusCode::OK);
        assert_eq!(coverage["domain"]["domainType"], "MultiPointSeries");
        let got = floats(&coverage["ranges"]["Surface elevation"]["values"]);
        assert_eq!(got, [Some(value(1, 0) as f32), Some(value(1, 5) as f32)]);
        for (query, field) in [
            (vec![("coords", "POINT(1 1)")], "coords"),
            (vec![("coords", "LINESTRING(1 1)")], "coords"),
            (vec![("coords", "LINESTRINGM(1 1 5, 2 2 1)")], "coords"),
            (
                vec![
                    ("coords", "LINESTRINGM(1 1 1, 2 2 5)"),
                    ("datetime", "2019-08-01T00:00:00Z"),
                ],
                "datetime",
            ),
            (
                vec![("coords", "LINESTRING(1 1, 2 2)"), ("method", "cubic")],
                "method",
            ),
        ] {
            let reply = collection.query("trajectory", &query).await;
            let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
            assert!(problem["errors"][field].is_array(), "{query:?}: {problem}");
        }
        let before = [
            ("coords", "LINESTRINGM(500050 6100050 0, 500150 6100150 10)"),
            NATIVE,
        ];
        assert_eq!(
            collection.query("trajectory", &before).await.status(),
            StatusCode::NO_CONTENT
        );
    }
);

api_test!(
    linear_positions_weigh_the_five_nearest_centres_by_inverse_distance,
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let (x, y) = (500_120.0, 6_100_090.0);
        let query = [
            ("coords", "POINT(500120 6100090)"),
            ("method", "linear"),
            ("parameter-name", "Current speed"),
            NATIVE,
        ];
        let coverage = app
            .edr()
            .collection(&mesh)
            .position(&query)
            .await
            .expect(StatusCode::OK);
        let expected = expected("mesh2d_mixed.dfsu");
        let centres = expected["geometry"]["element_coordinates"]
            .as_array()
            .unwrap();
        let mut near: Vec<(usize, f64)> = centres
            .iter()
            .enumerate()
            .map(|(at, c)| {
                (
                    at,
                    (c[0].as_f64().unwrap() - x).hypot(c[1].as_f64().unwrap() - y),
                )
            })
            .collect();
        near.sort_by(|a, b| a.1.total_cmp(&b.1));
        near.truncate(5);
        let total: f64 = near.iter().map(|(_, d)| 1.0 / (d * d)).sum();
        let data = &expected["data"]["Current speed"];
        let got = floats(&coverage["ranges"]["Current speed"]["values"]);
        for (step, value) in got.iter().enumerate() {
            let want: f64 = near
                .iter()
                .map(|(e, d)| f64::from(data[step][*e].as_f64().unwrap() as f32) / (d * d) / total)
                .sum();
            let got = f64::from(value.unwrap());
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                "step {step}: {got} against {want}"
            );
        }
    }
);
