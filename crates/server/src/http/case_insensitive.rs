//! Placeholder until the real module lands.
#[derive(Debug, Clone, PartialEq)]
pub struct BindError {
    pub path: String,
    pub message: String,
}
impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
pub fn from_json_value<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, BindError> {
    serde_json::from_value(value).map_err(|e| BindError {
        path: String::new(),
        message: e.to_string(),
    })
}
pub fn from_query_pairs<T: serde::de::DeserializeOwned>(
    _pairs: Vec<(String, String)>,
) -> Result<T, BindError> {
    Err(BindError {
        path: String::new(),
        message: "todo".into(),
    })
}
