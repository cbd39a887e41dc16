//! The one type of stored JSON: free objects (project metadata, settings and billing data,
//! dataset metadata and properties), tag lists and extents are checked once where they come in,
//! kept as text in both databases, and sent out as they are, never parsed into a tree and
//! written again on the way out.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// A JSON document, valid by construction, stored in a text column.
#[derive(Debug, Clone)]
pub(crate) struct JsonText(Box<RawValue>);

impl JsonText {
    /// The document `value` holds.
    pub(crate) fn from_value(value: &serde_json::Value) -> Self {
        // A `Value` always serialises; `null` stands in for the impossible failure.
        Self(serde_json::value::to_raw_value(value).unwrap_or_else(|_| null()))
    }

    /// `{}`.
    pub(crate) fn empty_object() -> Self {
        Self::from_value(&serde_json::Value::Object(serde_json::Map::new()))
    }

    /// `[]`.
    pub(crate) fn empty_array() -> Self {
        Self::from_value(&serde_json::Value::Array(Vec::new()))
    }

    /// Checks stored text: a document that is not JSON is corrupt data.
    fn from_stored(text: &str) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text.to_owned()).map(Self)
    }

    /// The text, as stored and sent.
    pub(crate) fn as_str(&self) -> &str {
        self.0.get()
    }
}

fn null() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<DB: sqlx::Database> sqlx::Type<DB> for JsonText
where
    str: sqlx::Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <str as sqlx::Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <str as sqlx::Type<DB>>::compatible(ty)
    }
}

impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for JsonText
where
    String: sqlx::Encode<'q, DB>,
{
    fn encode_by_ref(
        &self,
        buf: &mut <DB as sqlx::Database>::ArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        <String as sqlx::Encode<'q, DB>>::encode(self.as_str().to_owned(), buf)
    }
}

impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for JsonText
where
    &'r str: sqlx::Decode<'r, DB>,
{
    fn decode(
        value: <DB as sqlx::Database>::ValueRef<'r>,
    ) -> Result<Self, sqlx::error::BoxDynError> {
        let text = <&'r str as sqlx::Decode<'r, DB>>::decode(value)?;
        Ok(Self::from_stored(text)?)
    }
}

impl rusqlite::types::FromSql for JsonText {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        Self::from_stored(value.as_str()?)
            .map_err(|error| rusqlite::types::FromSqlError::Other(Box::new(error)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_go_out_as_they_came_in_and_stored_garbage_is_refused() {
        let value = serde_json::json!({"b": [1, 2.5, "x"], "a": null});
        let text = JsonText::from_value(&value);
        assert_eq!(
            serde_json::to_string(&serde_json::json!({ "m": text })).unwrap(),
            format!("{{\"m\":{}}}", text.as_str())
        );
        assert_eq!(JsonText::empty_object().as_str(), "{}");
        assert_eq!(JsonText::empty_array().as_str(), "[]");
        assert!(JsonText::from_stored("{\"k\": 1}").is_ok());
        assert!(JsonText::from_stored("{not json").is_err());
    }
}
