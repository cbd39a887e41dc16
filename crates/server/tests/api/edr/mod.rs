//! EDR (docs/edr.md) through HTTP on both databases: the landing page and conformance, the
//! collections a caller may read (paging, the project filter, other tenants), a collection's
//! extent, parameters and queries, and position queries checked value for value against the
//! MIKE IO samples in tests/corpus/dfs-samples, with every error the endpoints give.

mod area;
mod collections;
mod paths;
mod position;
mod series;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// Uploads tests/corpus/dfs-samples/`sample` as `name` into `project`; the dataset id.
pub async fn upload_sample(app: &TestApp, project: &str, name: &str, sample: &str) -> String {
    let response = app.upload_file(project, name, dfs_sample(sample)).await;
    let dataset = expect_status(response, StatusCode::CREATED).await;
    id_str(&dataset).to_owned()
}

/// A new project of the bootstrap key; its id.
pub async fn new_project(app: &TestApp, name: &str) -> String {
    let project = app.create_project(As::Key, name, json!({})).await;
    id_str(&project).to_owned()
}

/// What MIKE IO wrote about `sample` (its `.json` beside it), NaN read as null.
pub fn expected(sample: &str) -> Value {
    let path = dfs_sample_path(&format!("{sample}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text.replace("NaN", "null")).unwrap_or_else(|error| panic!("{error}"))
}

/// Values as `f32`, `None` for null.
pub fn floats(values: &Value) -> Vec<Option<f32>> {
    values
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {values}"))
        .iter()
        .map(|value| value.as_f64().map(|value| value as f32))
        .collect()
}
