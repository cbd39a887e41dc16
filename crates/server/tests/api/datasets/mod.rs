//! Datasets (docs/datasets.md): direct upload, records, the direct listing (docs/projects.md#listings), update,
//! move, soft delete, and reading content through a signed URL.

use reqwest::multipart::{Form, Part};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

async fn project(app: &TestApp, name: &str, parent: Option<&str>) -> String {
    let record = match parent {
        Some(parent) => {
            let parent = json!({ "id": parent });
            app.create_subproject(As::Key, &parent, name, json!({}))
                .await
        }
        None => app.create_project(As::Key, name, json!({})).await,
    };
    id_str(&record).to_owned()
}

fn form(file_name: &str, bytes: Vec<u8>) -> Form {
    Form::new()
        .text("description", "ignored field")
        .part("file", Part::bytes(bytes).file_name(file_name.to_owned()))
}

async fn upload(app: &TestApp, project: &str, file_name: &str, bytes: Vec<u8>) -> Reply<Dataset> {
    app.datasets_of(project).upload(file_name, bytes).await
}

/// A direct upload of `part`, beside a field the server ignores.
async fn upload_part(app: &TestApp, project: &str, part: Part) -> Reply<Dataset> {
    let form = Form::new()
        .text("description", "ignored field")
        .part("file", part);
    app.datasets_of(project).upload_form(form).await
}

fn sample(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

async fn listing(app: &TestApp, project: &str) -> Vec<String> {
    app.datasets_of(project).names().await
}

api_test!(
    a_direct_upload_creates_a_dataset_with_name_size_format_and_checksum,
    |app| {
        let project = project(&app, "Models", None).await;
        let bytes = sample(300_000);
        let dataset = expect_status(
            upload(&app, &project, "Lake.DFSU", bytes.clone()).await,
            StatusCode::CREATED,
        )
        .await;
        assert_eq!(dataset["name"], "Lake.DFSU");
        assert_eq!(dataset["storageSize"], 300_000);
        assert_eq!(dataset["datasetFormat"], ".dfsu");
        assert_eq!(dataset["datasetType"], "multidimensional");
        assert_eq!(dataset["projectId"], project);
        assert!(dataset["checksum"].as_str().unwrap().starts_with("md5:"));
        for field in [
            "id",
            "description",
            "dataPath",
            "metadata",
            "properties",
            "tags",
            "rowVersion",
            "createdAt",
            "createdBy",
            "updatedAt",
            "updatedBy",
        ] {
            assert!(dataset.get(field).is_some(), "{field} missing: {dataset}");
        }
        assert!(
            dataset.get("temporalInformation").is_none()
                && dataset.get("spatialInformation").is_none(),
            "null objects are omitted"
        );
        let id = dataset["id"].as_str().unwrap();
        let got = app.dataset(id).get().await.expect(StatusCode::OK);
        assert_eq!(got, dataset);
        // The raw endpoint gives a read URL; ranges work as Azure clients expect.
        let raw = expect_status(
            app.with_key(Method::GET, &routes::raw_dataset(id))
                .header("svc-service-id", "raw")
                .header("svc-project-id", &project)
                .header("svc-dataset-id", id)
                .send()
                .await
                .unwrap(),
            StatusCode::OK,
        )
        .await;
        let url = raw["data"].as_str().unwrap();
        let whole = app.client.get(url).send().await.unwrap();
        assert_eq!(whole.status(), StatusCode::OK);
        // The part named no media type.
        assert_eq!(whole.headers()["content-type"], "application/octet-stream");
        assert_eq!(whole.bytes().await.unwrap().to_vec(), bytes);
        let part = app
            .client
            .get(url)
            .header("x-ms-range", "bytes=1000-1999")
            .send()
            .await
            .unwrap();
        assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(part.headers()["content-range"], "bytes 1000-1999/300000");
        assert_eq!(
            part.bytes().await.unwrap().to_vec(),
            bytes[1000..2000].to_vec()
        );
        // A read URL cannot write.
        let write = app
            .client
            .put(url)
            .header("x-ms-blob-type", "BlockBlob")
            .body("x")
            .send()
            .await
            .unwrap();
        assert_eq!(write.status(), StatusCode::FORBIDDEN);
    }
);

api_test!(failed_uploads_create_nothing, |app| {
    let project = project(&app, "P", None).await;
    let response = app
        .with_key(Method::POST, &routes::file_upload(&project))
        .json(&json!({"not": "multipart"}))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-body").await;
    let response = app
        .datasets_of(&project)
        .upload_form(Form::new().text("description", "no file"))
        .await;
    expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    expect_problem(
        upload(&app, &project, "../escape.txt", sample(10)).await,
        StatusCode::BAD_REQUEST,
        "validation",
    )
    .await;
    expect_problem(
        upload(&app, &uuid::Uuid::new_v4().to_string(), "a.txt", sample(10)).await,
        StatusCode::NOT_FOUND,
        "not-found",
    )
    .await;
    // A Reader may not create content: nothing is stored.
    let reader = app.person("Reader", "User").await;
    let key_id = expect_status(
        app.with_key(Method::GET, &routes::principal_me())
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await["id"]
        .clone();
    let body = json!({"members": [{"userId": reader.id, "role": "Reader"}, {"userId": key_id, "role": "Owner", "principalType": "OpenAPIAccount"}]});
    let members = app.project(&project).members().set(&body).await;
    members.expect(StatusCode::OK);
    let response = app
        .by(As::Person(&reader))
        .datasets_of(&project)
        .upload_form(form("a.txt", sample(10)))
        .await;
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    assert_eq!(listing(&app, &project).await, Vec::<String>::new());
});

fn small_uploads(config: &mut basin::Config) {
    config.limits.direct_upload_bytes_max = 50_000;
}

api_test_with!(
    an_upload_over_the_limit_is_413_and_leaves_nothing,
    small_uploads,
    |app| {
        let project = project(&app, "P", None).await;
        expect_status(
            upload(&app, &project, "fits.bin", sample(50_000)).await,
            StatusCode::CREATED,
        )
        .await;
        expect_problem(
            upload(&app, &project, "too-big.bin", sample(50_001)).await,
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload-too-large",
        )
        .await;
        assert_eq!(listing(&app, &project).await, vec!["fits.bin"]);
    }
);

api_test!(the_dataset_list_holds_direct_datasets_only, |app| {
    let root = project(&app, "Root", None).await;
    let sub = project(&app, "Sub", Some(&root)).await;
    for name in ["b.dfs0", "a.shp", "c.txt"] {
        expect_status(
            upload(&app, &root, name, sample(10)).await,
            StatusCode::CREATED,
        )
        .await;
    }
    expect_status(
        upload(&app, &sub, "deep.dfs2", sample(10)).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(listing(&app, &root).await, vec!["a.shp", "b.dfs0", "c.txt"]);
    assert_eq!(listing(&app, &sub).await, vec!["deep.dfs2"]);
    let datasets = app.datasets_of(&root);
    let page = datasets.list("limit=2").await.expect(StatusCode::OK);
    assert_eq!(page["data"].as_array().unwrap().len(), 2);
    let cursor = page["cursor"].as_str().unwrap();
    let next = datasets.list(&format!("limit=2&cursor={cursor}")).await;
    let next = next.expect(StatusCode::OK);
    assert_eq!(next["data"][0]["name"], "c.txt");
    assert!(next["cursor"].is_null());
    // namePrefix filters by the start of the name, ignoring case, and pages as well.
    for (prefix, expected) in [("B", vec!["b.dfs0"]), ("c.T", vec!["c.txt"]), ("x", vec![])] {
        let filtered = datasets.list(&format!("namePrefix={prefix}")).await;
        let filtered = filtered.expect(StatusCode::OK);
        let names: Vec<&str> = filtered["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, expected, "namePrefix={prefix}");
    }
});

api_test!(
    datasets_are_updated_moved_and_deleted_to_the_recycle_bin,
    |app| {
        let first = project(&app, "First", None).await;
        let second = project(&app, "Second", None).await;
        let dataset = expect_status(
            upload(&app, &first, "model.dfsu", sample(100)).await,
            StatusCode::CREATED,
        )
        .await;
        let id = dataset["id"].as_str().unwrap().to_owned();
        let update = json!({"id": id, "name": "renamed.dfsu", "description": "calibrated", "metadata": {"run": 3}, "rowVersion": dataset["rowVersion"]});
        let updated = app.datasets_of(&first).update(&update).await;
        let updated = updated.expect(StatusCode::OK);
        assert_eq!(updated["name"], "renamed.dfsu");
        assert_eq!(updated["metadata"], json!({"run": 3}));
        let response = app.datasets_of(&first).update(&update).await;
        expect_problem(response, StatusCode::CONFLICT, "row-version-conflict").await;
        let elsewhere = json!({"id": id, "name": "x"});
        let response = app.datasets_of(&second).update(&elsewhere).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        let path_like = json!({"id": id, "name": "a/b"});
        let response = app.datasets_of(&first).update(&path_like).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;

        let moved = app.dataset(&id).move_to(&second).await;
        let moved = moved.expect(StatusCode::OK);
        assert_eq!(moved["projectId"], second);
        assert_eq!(listing(&app, &first).await, Vec::<String>::new());
        assert_eq!(listing(&app, &second).await, vec!["renamed.dfsu"]);
        let response = app.dataset(&id).move_to(uuid::Uuid::new_v4()).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;

        let response = app.datasets_of(&first).legacy_delete(&id).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        let deleted = app.datasets_of(&second).legacy_delete(&id).await;
        deleted.no_content();
        let gone = app.dataset(&id).get().await;
        expect_problem(gone, StatusCode::NOT_FOUND, "not-found").await;
        let gone = app.dataset(&id).raw().await;
        expect_problem(gone, StatusCode::NOT_FOUND, "not-found").await;
        assert_eq!(listing(&app, &second).await, Vec::<String>::new());
        let again = app.dataset(&id).delete().await;
        expect_problem(again, StatusCode::NOT_FOUND, "not-found").await;
    }
);

api_test!(
    datasets_of_other_tenants_and_hidden_projects_are_not_found,
    |app| {
        let project = project(&app, "Private", None).await;
        let dataset: Value = expect_status(
            upload(&app, &project, "secret.txt", sample(5)).await,
            StatusCode::CREATED,
        )
        .await;
        let id = dataset["id"].as_str().unwrap();
        let other_tenant = app.create_tenant("Other").await;
        let (_, other_key) = app.create_api_key(other_tenant, "Owner").await;
        for path in [
            routes::dataset(id),
            routes::raw_dataset(id),
            routes::project_dataset_list(&project),
        ] {
            let response = app
                .anonymous(Method::GET, &path)
                .header("svc-open-api-key", &other_key)
                .send()
                .await
                .unwrap();
            expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        }
    }
);

api_test_with!(
    a_slow_direct_upload_outlasts_the_request_timeout_and_a_stalled_one_is_408,
    short_idle_timeout,
    |app| {
        let project = project(&app, "P", None).await;
        // Five chunks 200 ms apart: a second in all, over the 300 ms request timeout, but
        // never silent for the 600 ms idle limit.
        let bytes = sample(5000);
        let part = Part::stream(slow_body(&bytes)).file_name("slow.bin");
        let response = upload_part(&app, &project, part).await;
        let dataset = expect_status(response, StatusCode::CREATED).await;
        assert_eq!(dataset["storageSize"], json!(5000), "{dataset}");

        // A body that stops sending is cut off after the idle limit: 408, nothing stored.
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let address = app.address.trim_start_matches("http://").to_owned();
        let boundary = "basin-test-boundary";
        let part_head = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"stalled.bin\"\r\n\r\n"
        );
        let head = format!(
            "POST /api/conversion/project/{project}/file/upload HTTP/1.1\r\nHost: {address}\r\nsvc-open-api-key: {}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n{part_head}",
            app.bootstrap.api_key
        );
        let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&sample(1000)).await.unwrap();
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response).await;
        let response = String::from_utf8_lossy(&response);
        assert!(response.starts_with("HTTP/1.1 408"), "{response}");
        assert!(
            response.contains("urn:basin:problem:request-timeout"),
            "{response}"
        );
        assert_eq!(listing(&app, &project).await, vec!["slow.bin"]);
        let blobs = app.config.data_dir.join("blobs");
        let count_files = |folder: std::path::PathBuf| {
            let mut files = 0;
            let mut pending = vec![folder];
            while let Some(folder) = pending.pop() {
                for entry in std::fs::read_dir(folder).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        pending.push(path);
                    } else {
                        files += 1;
                    }
                }
            }
            files
        };
        for _ in 0..50 {
            if count_files(blobs.join(".tmp")) == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(count_files(blobs.join(".tmp")), 0, "a write is left over");
        assert_eq!(
            count_files(blobs.join("datasets")),
            1,
            "only slow.bin is stored"
        );
    }
);

api_test!(a_direct_upload_keeps_the_media_type_of_its_part, |app| {
    let project = project(&app, "P", None).await;
    let part = Part::bytes(sample(100))
        .file_name("grid.tif")
        .mime_str("image/tiff")
        .unwrap();
    let response = upload_part(&app, &project, part).await;
    let id = expect_status(response, StatusCode::CREATED).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = app
        .client
        .head(read_url(&app, &id).await)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(read.headers()["content-type"], "image/tiff");
});

// Issue 9, fault 8: tags were unbounded (1 MB per dataset).
api_test!(tags_are_bounded_in_number_and_length, |app| {
    let project = project(&app, "P", None).await;
    let uploaded = expect_status(
        upload(&app, &project, "a.txt", sample(10)).await,
        StatusCode::CREATED,
    )
    .await;
    let datasets = app.datasets_of(&project);
    let update = |tags: Vec<String>| json!({"id": uploaded["id"], "tags": tags});
    for (tags, field_hint) in [
        (
            (0..65).map(|i| format!("t{i}")).collect::<Vec<_>>(),
            "dataset_tags_max",
        ),
        (vec!["x".repeat(129)], "dataset_tag_chars_max"),
    ] {
        let response = datasets.update(&update(tags)).await;
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(
            problem["detail"].as_str().unwrap().contains(field_hint),
            "{problem}"
        );
    }
    let most: Vec<String> = (0..64).map(|i| format!("{i:0>128}")).collect();
    let response = datasets.update(&update(most.clone())).await;
    let saved = expect_status(response, StatusCode::OK).await;
    assert_eq!(saved["tags"], json!(most));
});

// Issue 9, fault 10: names `.`, `..`, zero-width-only and bidi-override names were accepted,
// and the bulk hierarchy created a folder the project API rejected as blank.
api_test!(
    names_that_are_blank_path_like_or_reorder_text_are_refused,
    |app| {
        let root = app.create_project(As::Key, "Root", json!({})).await;
        let root = id_str(&root);
        let uploaded = expect_status(
            upload(&app, root, "a.txt", sample(10)).await,
            StatusCode::CREATED,
        )
        .await;
        for bad in [
            ".",
            "..",
            " \u{200B} ",
            "\u{3164}",
            "\u{2800}",
            "report\u{202E}fdp.exe",
            "\u{00A0}\u{3000}",
        ] {
            let create = app.projects().create(&json!({"name": bad})).await;
            expect_problem(create, StatusCode::BAD_REQUEST, "validation").await;
            let sub = app
                .project(root)
                .create_subproject(&json!({"name": bad}))
                .await;
            expect_problem(sub, StatusCode::BAD_REQUEST, "validation").await;
            let renamed = json!({"id": uploaded["id"], "name": bad});
            let rename = app.datasets_of(root).update(&renamed).await;
            expect_problem(rename, StatusCode::BAD_REQUEST, "validation").await;
            let bulk = json!({"actions": [{"type": "PathActionCreate", "path": format!("a/{bad}/b"), "isFolder": true}]});
            let response = app.hierarchy(root).apply(&bulk).await;
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
        let upload = upload(&app, root, "\u{202E}gnp.exe", sample(3)).await;
        expect_problem(upload, StatusCode::BAD_REQUEST, "validation").await;
    }
);
