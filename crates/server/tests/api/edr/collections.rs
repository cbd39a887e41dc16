//! The landing page, conformance, the collection list and one collection's metadata.

use reqwest::StatusCode;
use serde_json::Value;

use super::{new_project, upload_sample};
use crate::helpers::*;

api_test!(
    the_landing_page_and_conformance_need_credentials_and_name_the_classes,
    |app| {
        let landing = app.edr().landing(&[]).await.expect(StatusCode::OK);
        let rels: Vec<&str> = landing["links"]
            .as_array()
            .unwrap()
            .iter()
            .map(|link| link["rel"].as_str().unwrap())
            .collect();
        for rel in ["self", "service-desc", "conformance", "data"] {
            assert!(rels.contains(&rel), "{rel} missing: {landing}");
        }
        let data = landing["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|link| link["rel"] == "data")
            .unwrap();
        assert!(
            data["href"]
                .as_str()
                .unwrap()
                .ends_with("/api/edr/collections")
        );
        let conformance = app.edr().conformance().await.expect(StatusCode::OK);
        let classes = conformance["conformsTo"].as_array().unwrap();
        for class in ["core", "collections", "covjson", "queries", "oas30"] {
            let uri = format!("http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/{class}");
            assert!(
                classes.contains(&Value::from(uri)),
                "{class}: {conformance}"
            );
        }
        let html = app.edr().landing(&[("f", "html")]).await;
        let problem = html.problem(StatusCode::BAD_REQUEST, "validation");
        assert!(problem["errors"]["f"].is_array(), "{problem}");
        let anonymous = app
            .anonymous(reqwest::Method::GET, &routes::edr_collections())
            .send()
            .await
            .unwrap();
        expect_problem(anonymous, StatusCode::UNAUTHORIZED, "credentials-missing").await;
        let version = app
            .with_key(reqwest::Method::GET, &routes::edr_landing())
            .header("api-version", "2")
            .send()
            .await
            .unwrap();
        expect_problem(version, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
    }
);

/// The titles of a collection page, in order.
fn titles(page: &Value) -> Vec<String> {
    page["collections"]
        .as_array()
        .unwrap_or_else(|| panic!("no collections: {page}"))
        .iter()
        .map(|collection| collection["title"].as_str().unwrap().to_owned())
        .collect()
}

/// The `next` link of a page, if any.
fn next_link(page: &Value) -> Option<String> {
    page["links"]
        .as_array()?
        .iter()
        .find(|link| link["rel"] == "next")
        .and_then(|link| link["href"].as_str())
        .map(str::to_owned)
}

api_test!(
    collections_are_the_readable_grids_and_meshes_by_name_a_page_at_a_time,
    |app| {
        let results = new_project(&app, "results").await;
        let other = new_project(&app, "other").await;
        upload_sample(&app, &results, "b mesh.dfsu", "mesh2d_mixed.dfsu").await;
        upload_sample(&app, &results, "a grid.dfs2", "grid_utm32.dfs2").await;
        upload_sample(&app, &results, "gauge.dfs0", "ts_eq.dfs0").await;
        upload_sample(&app, &other, "c cube.dfs3", "cube.dfs3").await;
        let notes = app
            .upload_file(&results, "notes.txt", b"hello".to_vec())
            .await;
        expect_status(notes, StatusCode::CREATED).await;
        // Another tenant's mesh is never listed.
        let stranger = crate::tiles::outsider_key(&app).await;
        let elsewhere = app.by(As::ApiKey(&stranger)).projects();
        let elsewhere = elsewhere
            .create(&serde_json::json!({"name": "theirs"}))
            .await;
        let elsewhere = elsewhere.expect(StatusCode::CREATED);
        let part = reqwest::multipart::Part::bytes(dfs_sample("mesh2d_mixed.dfsu"))
            .file_name("theirs.dfsu");
        let uploaded = app
            .by(As::ApiKey(&stranger))
            .datasets_of(id_str(&elsewhere))
            .upload_form(reqwest::multipart::Form::new().part("file", part))
            .await;
        uploaded.expect(StatusCode::CREATED);

        let all = app.edr().collections(&[]).await.expect(StatusCode::OK);
        assert_eq!(
            titles(&all),
            ["a grid.dfs2", "b mesh.dfsu", "c cube.dfs3", "gauge.dfs0"]
        );
        assert_eq!(next_link(&all), None);
        let only = app.edr().collections(&[("project", &results)]).await;
        assert_eq!(
            titles(&only.expect(StatusCode::OK)),
            ["a grid.dfs2", "b mesh.dfsu", "gauge.dfs0"]
        );

        // A page at a time, following `next`.
        let first = app
            .edr()
            .collections(&[("limit", "2")])
            .await
            .expect(StatusCode::OK);
        assert_eq!(titles(&first), ["a grid.dfs2", "b mesh.dfsu"]);
        let next = next_link(&first).expect("a next link");
        let query = next.split_once('?').unwrap().1;
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let second = app.edr().collections(&pairs).await.expect(StatusCode::OK);
        assert_eq!(titles(&second), ["c cube.dfs3", "gauge.dfs0"]);
        assert_eq!(next_link(&second), None);

        for (name, value, kind) in [
            ("project", "not-a-uuid", "validation"),
            ("limit", "0", "validation"),
            ("cursor", "garbage", "invalid-cursor"),
            ("f", "xml", "validation"),
        ] {
            let reply = app.edr().collections(&[(name, value)]).await;
            reply.problem(StatusCode::BAD_REQUEST, kind);
        }
        let unknown = uuid::Uuid::new_v4().to_string();
        let reply = app.edr().collections(&[("project", &unknown)]).await;
        reply.problem(StatusCode::NOT_FOUND, "not-found");
    }
);

api_test!(a_caller_sees_only_the_collections_it_may_read, |app| {
    let results = new_project(&app, "results").await;
    let mesh = upload_sample(&app, &results, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
    let outsider = app.person("outsider", "User").await;
    let theirs = app.by(As::Person(&outsider)).edr();
    let page = theirs.collections(&[]).await.expect(StatusCode::OK);
    assert_eq!(titles(&page), Vec::<String>::new());
    // The project is not theirs to see: it does not exist for them.
    let collection = theirs.collection(&mesh).get(&[]).await;
    collection.problem(StatusCode::NOT_FOUND, "not-found");
    let position = theirs
        .collection(&mesh)
        .position(&[("coords", "POINT(500050 6100050)"), ("crs", "EPSG:32632")])
        .await;
    position.problem(StatusCode::NOT_FOUND, "not-found");
    let theirs = theirs.collections(&[("project", &results)]).await;
    theirs.problem(StatusCode::NOT_FOUND, "not-found");
    // A member who may read the project sees it.
    let added = app
        .project(&results)
        .members()
        .add(outsider.id, "Reader")
        .await;
    assert!(added.status().is_success(), "{}", added.text());
    let page = app.by(As::Person(&outsider)).edr().collections(&[]).await;
    assert_eq!(titles(&page.expect(StatusCode::OK)), ["mesh.dfsu"]);
});

api_test!(
    a_collection_states_its_extent_parameters_systems_and_queries,
    |app| {
        let results = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &results, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let collection = app
            .edr()
            .collection(&mesh)
            .get(&[])
            .await
            .expect(StatusCode::OK);
        assert_eq!(collection["id"], mesh.as_str());
        assert_eq!(collection["title"], "mesh.dfsu");
        let native = &collection["extent"]["spatial"]["native"];
        assert_eq!(
            native["bbox"][0],
            serde_json::json!([500000.0, 6100000.0, 500200.0, 6100200.0])
        );
        assert_eq!(native["crs"], "http://www.opengis.net/def/crs/EPSG/0/32632");
        let bbox = &collection["extent"]["spatial"]["bbox"][0];
        let (west, south) = (bbox[0].as_f64().unwrap(), bbox[1].as_f64().unwrap());
        assert!(
            (8.99..9.01).contains(&west) && (55.0..55.1).contains(&south),
            "{bbox}"
        );
        let temporal = &collection["extent"]["temporal"];
        assert_eq!(
            temporal["interval"][0],
            serde_json::json!(["2019-08-01T00:00:00Z", "2019-08-01T01:00:00Z"])
        );
        assert_eq!(temporal["values"][0], "R5/2019-08-01T00:00:00Z/PT900S");
        let elevation = &collection["parameter_names"]["Surface elevation"];
        assert_eq!(elevation["type"], "Parameter");
        assert_eq!(elevation["unit"]["symbol"], "m");
        assert_eq!(elevation["unit"]["label"]["en"], "meter");
        assert!(collection["parameter_names"]["Current speed"].is_object());
        let position = &collection["data_queries"]["position"]["link"];
        assert!(
            position["href"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/api/edr/collections/{mesh}/position"))
        );
        assert_eq!(position["variables"]["query_type"], "position");
        assert_eq!(
            collection["crs"],
            serde_json::json!([
                "http://www.opengis.net/def/crs/OGC/1.3/CRS84",
                "http://www.opengis.net/def/crs/EPSG/0/32632"
            ])
        );
        assert_eq!(
            collection["output_formats"],
            serde_json::json!(["CoverageJSON", "GeoJSON", "CSV"])
        );
        for query in ["area", "cube"] {
            let link = &collection["data_queries"][query]["link"];
            assert_eq!(link["variables"]["query_type"], query, "{collection}");
        }

        // What is not a collection: a text file, an unknown id.
        let notes = app.upload_file(&results, "notes.txt", b"x".to_vec()).await;
        let notes = expect_status(notes, StatusCode::CREATED).await;
        for id in [id_str(&notes), &uuid::Uuid::new_v4().to_string()] {
            let reply = app.edr().collection(id).get(&[]).await;
            reply.problem(StatusCode::NOT_FOUND, "not-found");
        }
        let reply = app.edr().collection("not-a-uuid").get(&[]).await;
        reply.problem(StatusCode::BAD_REQUEST, "invalid-path");
    }
);
