//! Case-insensitive binding of JSON bodies and query strings.
//!
//! Clients of the API send JSON property names and query parameter names in any letter case
//! (`rowVersion` and `rowversion`, `Limit` and `limit`, `NamePrefix` and `namePrefix`), send
//! booleans in query strings as `True` or `False`, and repeat query keys to send lists
//! (`?filter=Available&filter=Reserved`, `?Role=Owner&role=Reader`). The DTOs are ordinary
//! `#[derive(Deserialize)] #[serde(rename_all = "camelCase")]` structs, and serde on its own
//! matches field names exactly, so this module supplies a deserializer that does the matching
//! without any per-struct code.
//!
//! Whenever serde asks for a struct, the deserializer renames each input key that is not an
//! exact field name to the field name it equals ignoring ASCII case, at every nesting level.
//! Keys that match no field are left alone, so `#[serde(deny_unknown_fields)]` still reports
//! them and other structs ignore them as usual. Keys of free-form maps (`HashMap`,
//! `serde_json::Value`) keep their original case, because only struct fields are renamed.
//! Enum variant names (`"reader"` for `Reader`) are matched ignoring ASCII case in the same way.
//!
//! JSON keeps strict JSON typing: a string is never a number. Two keys naming the same field
//! (`limit` and `Limit`) are an error in JSON, while in a query string they are the same
//! parameter repeated and become a list in query order. Query values are strings that are
//! converted on demand: numbers are parsed, booleans accept `true`/`false` in any case and
//! `1`/`0`, an empty value is `None` for an `Option`, and a single occurrence of a key binds a
//! `Vec` with one element.
//!
//! serde reads structs with `#[serde(flatten)]` fields, and internally tagged or untagged
//! enums, through its own buffer instead of asking for a struct, so their keys bind with exact
//! case only; DTOs should avoid those attributes.
//!
//! Errors carry the dotted path of the field that failed (`members[2].role`), tracked with
//! `serde_path_to_error`, so the caller can report them per field.

use std::collections::HashMap;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, Error as _,
    IntoDeserializer, MapAccess, SeqAccess, Unexpected, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Value};

/// Error from binding JSON or query input; `path` is the dotted field path where it failed
/// (e.g. `billingReference.billingReferenceTag`, `members[2].role`), empty for the root.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BindError {
    /// Where the input failed to bind, empty for the root.
    pub(crate) path: String,
    /// What was wrong, without the path.
    pub(crate) message: String,
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for BindError {}

/// Deserialize `T` from a parsed JSON value, matching object keys to struct field names
/// case-insensitively at every nesting level.
///
/// # Errors
///
/// A [`BindError`] when the value does not fit `T`: a wrong type, a missing field, an unknown
/// field under `deny_unknown_fields`, or two keys that name the same field in different case.
pub(crate) fn from_json_value<T: DeserializeOwned>(value: Value) -> Result<T, BindError> {
    serde_path_to_error::deserialize(ValueDe::new(value, Mode::Json)).map_err(bind_error)
}

/// Deserialize `T` (a struct) from query-string pairs (already percent-decoded), matching keys
/// case-insensitively; repeated keys become sequences; string values are converted on demand.
///
/// # Errors
///
/// A [`BindError`] when the pairs do not fit `T`: a value that does not parse as the field's
/// type (for example ``invalid integer `abc` ``), a missing field, or a scalar field given
/// more than once.
pub(crate) fn from_query_pairs<T: DeserializeOwned>(
    pairs: Vec<(String, String)>,
) -> Result<T, BindError> {
    serde_path_to_error::deserialize(QueryDe { pairs }).map_err(bind_error)
}

fn bind_error(error: serde_path_to_error::Error<Error>) -> BindError {
    let path = if error.path().iter().next().is_none() {
        String::new()
    } else {
        error.path().to_string()
    };
    BindError {
        path,
        message: error.into_inner().to_string(),
    }
}

type Error = serde_json::Error;

/// How values are typed: JSON is strict, query values are strings converted on demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Json,
    Query,
}

/// A map entry's value, or the error to report when the value is asked for (so the error's
/// path names the entry).
type Slot = Result<Value, Error>;

/// The top level of a query string: ordered pairs, possibly with repeated keys. The pairs are
/// kept as a list rather than a `serde_json::Map`, which sorts its keys, so that a key repeated
/// in different case (`Role=Owner&role=Reader`) still binds its values in query order.
struct QueryDe {
    pairs: Vec<(String, String)>,
}

impl<'de> Deserializer<'de> for QueryDe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let entries = group_repeated_keys(self.pairs);
        visit_map(entries, Mode::Query, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let pairs = self
            .pairs
            .into_iter()
            .map(|(key, value)| (key, Value::String(value)));
        let entries = rename_fields(pairs, fields, Mode::Query);
        visit_map(entries, Mode::Query, visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map enum identifier
    }
}

/// Collects exact repeats of a key into one array, keeping the order of first appearance.
fn group_repeated_keys(pairs: Vec<(String, String)>) -> Vec<(String, Slot)> {
    let mut entries: Vec<(String, Slot)> = Vec::with_capacity(pairs.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    for (key, value) in pairs {
        let value = Value::String(value);
        if let Some(&at) = index.get(&key) {
            if let Some((_, Ok(existing))) = entries.get_mut(at) {
                append(existing, value);
            }
        } else {
            index.insert(key.clone(), entries.len());
            entries.push((key, Ok(value)));
        }
    }
    entries
}

/// Renames each key that is not an exact field name to the field it equals ignoring ASCII
/// case. Keys that end up naming the same field are merged into one list (query) or become a
/// duplicate-field error reported at that field (JSON).
fn rename_fields(
    entries: impl Iterator<Item = (String, Value)>,
    fields: &'static [&'static str],
    mode: Mode,
) -> Vec<(String, Slot)> {
    let mut renamed: Vec<(String, Slot)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (key, value) in entries {
        let field = fields
            .iter()
            .find(|field| **field == key)
            .or_else(|| fields.iter().find(|field| field.eq_ignore_ascii_case(&key)))
            .copied();
        let key = field.map_or(key, str::to_owned);
        let Some(&at) = index.get(&key) else {
            index.insert(key.clone(), renamed.len());
            renamed.push((key, Ok(value)));
            continue;
        };
        let Some((_, slot)) = renamed.get_mut(at) else {
            continue;
        };
        match (mode, slot) {
            (Mode::Query, Ok(existing)) => append(existing, value),
            (Mode::Query, Err(_)) => {}
            (Mode::Json, slot) => {
                *slot = Err(match field {
                    Some(field) => Error::duplicate_field(field),
                    None => Error::custom(format_args!("duplicate key `{key}`")),
                });
            }
        }
    }
    renamed
}

/// Appends `value` (or its items, when it is an array) to `existing`, turning it into an array.
fn append(existing: &mut Value, value: Value) {
    let mut items = match std::mem::take(existing) {
        Value::Array(items) => items,
        other => vec![other],
    };
    match value {
        Value::Array(more) => items.extend(more),
        other => items.push(other),
    }
    *existing = Value::Array(items);
}

/// Renames `name` to the entry of `names` it equals ignoring ASCII case, unless it is exact.
fn match_name(name: String, names: &'static [&'static str]) -> String {
    if names.contains(&name.as_str()) {
        return name;
    }
    match names
        .iter()
        .find(|candidate| candidate.eq_ignore_ascii_case(&name))
    {
        Some(candidate) => (*candidate).to_owned(),
        None => name,
    }
}

fn visit_map<'de, V: Visitor<'de>>(
    entries: Vec<(String, Slot)>,
    mode: Mode,
    visitor: V,
) -> Result<V::Value, Error> {
    let mut map = MapDe {
        entries: entries.into_iter(),
        pending: None,
        mode,
    };
    let value = visitor.visit_map(&mut map)?;
    let remaining = map.entries.len();
    if remaining == 0 {
        Ok(value)
    } else {
        Err(Error::invalid_length(remaining, &"fewer elements in map"))
    }
}

fn visit_seq<'de, V: Visitor<'de>>(
    items: Vec<Value>,
    mode: Mode,
    visitor: V,
) -> Result<V::Value, Error> {
    let mut seq = SeqDe {
        items: items.into_iter(),
        mode,
    };
    let value = visitor.visit_seq(&mut seq)?;
    let remaining = seq.items.len();
    if remaining == 0 {
        Ok(value)
    } else {
        Err(Error::invalid_length(remaining, &"fewer elements in array"))
    }
}

fn object_entries(object: Map<String, Value>) -> Vec<(String, Slot)> {
    object
        .into_iter()
        .map(|(key, value)| (key, Ok(value)))
        .collect()
}

/// Parses a query value as an integer and lets the visitor check the range.
fn visit_integer<'de, V: Visitor<'de>>(text: &str, visitor: V) -> Result<V::Value, Error> {
    let trimmed = text.trim();
    if let Ok(value) = trimmed.parse::<u64>() {
        visitor.visit_u64(value)
    } else if let Ok(value) = trimmed.parse::<i64>() {
        visitor.visit_i64(value)
    } else if let Ok(value) = trimmed.parse::<u128>() {
        visitor.visit_u128(value)
    } else if let Ok(value) = trimmed.parse::<i128>() {
        visitor.visit_i128(value)
    } else {
        Err(Error::custom(format_args!("invalid integer `{text}`")))
    }
}

/// Parses a query value as a finite number.
fn visit_float<'de, V: Visitor<'de>>(text: &str, visitor: V) -> Result<V::Value, Error> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() => visitor.visit_f64(value),
        _ => Err(Error::custom(format_args!("invalid number `{text}`"))),
    }
}

/// Parses a query value as a boolean: `true`/`false` in any case, or `1`/`0`.
fn visit_boolean<'de, V: Visitor<'de>>(text: &str, visitor: V) -> Result<V::Value, Error> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("true") || trimmed == "1" {
        visitor.visit_bool(true)
    } else if trimmed.eq_ignore_ascii_case("false") || trimmed == "0" {
        visitor.visit_bool(false)
    } else {
        Err(Error::custom(format_args!("invalid boolean `{text}`")))
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(value) => Unexpected::Bool(*value),
        Value::Number(number) => match (number.as_u64(), number.as_i64(), number.as_f64()) {
            (Some(value), _, _) => Unexpected::Unsigned(value),
            (None, Some(value), _) => Unexpected::Signed(value),
            (None, None, Some(value)) => Unexpected::Float(value),
            (None, None, None) => Unexpected::Other("number"),
        },
        Value::String(text) => Unexpected::Str(text),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// Marks a string that holds the literal text of a JSON number, so that exact decimals reach
/// their type unrounded (see `JsonBody::read_exact`). No client string can start with it: NUL
/// is refused in every JSON string before binding. A marked number binds to the number types
/// and to types that read any value (credit amounts), and is refused where a string is
/// expected, as any JSON number is.
pub(crate) const NUMBER_MARK: char = '\0';

/// A JSON value (or a query value held as a string or an array of strings).
struct ValueDe {
    value: Value,
    mode: Mode,
}

impl ValueDe {
    fn new(value: Value, mode: Mode) -> Self {
        Self { value, mode }
    }

    /// The literal text of a marked number ([`NUMBER_MARK`]), when this JSON value is one.
    fn number_literal(&self) -> Option<&str> {
        match (&self.value, self.mode) {
            (Value::String(text), Mode::Json) => text.strip_prefix(NUMBER_MARK),
            _ => None,
        }
    }

    /// An error when this JSON value is a marked number, which the visitor does not take.
    fn refuse_number<'de, V: Visitor<'de>>(&self, visitor: &V) -> Result<(), Error> {
        match self.number_literal() {
            Some(_) => Err(Error::invalid_type(Unexpected::Other("number"), visitor)),
            None => Ok(()),
        }
    }

    /// The text of a query value, or the deserializer back when JSON typing applies.
    fn query_text(self) -> Result<String, Self> {
        match (self.mode, self.value) {
            (Mode::Query, Value::String(text)) => Ok(text),
            (mode, value) => Err(Self { value, mode }),
        }
    }
}

/// Deserializer methods that parse a query string value, or the literal text of a marked
/// JSON number, and otherwise follow JSON typing.
macro_rules! parse_query_text {
    ($($method:ident => $visit:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self.query_text() {
                Ok(text) => $visit(&text, visitor),
                Err(json) => {
                    if let Some(literal) = json.number_literal() {
                        return $visit(literal, visitor);
                    }
                    json.deserialize_any(visitor)
                }
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for ValueDe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(value) => visitor.visit_bool(value),
            Value::Number(number) => {
                if let Some(value) = number.as_u64() {
                    visitor.visit_u64(value)
                } else if let Some(value) = number.as_i64() {
                    visitor.visit_i64(value)
                } else if let Some(value) = number.as_f64() {
                    visitor.visit_f64(value)
                } else {
                    Err(Error::custom(format_args!("invalid number `{number}`")))
                }
            }
            Value::String(text) => match (self.mode, text.strip_prefix(NUMBER_MARK)) {
                (Mode::Json, Some(literal)) => visitor.visit_str(literal),
                _ => visitor.visit_string(text),
            },
            Value::Array(items) => visit_seq(items, self.mode, visitor),
            Value::Object(object) => visit_map(object_entries(object), self.mode, visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.refuse_number(&visitor)?;
        match self.query_text() {
            Ok(text) => visit_boolean(&text, visitor),
            Err(json) => json.deserialize_any(visitor),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.refuse_number(&visitor)?;
        self.deserialize_any(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.refuse_number(&visitor)?;
        self.deserialize_any(visitor)
    }

    parse_query_text! {
        deserialize_i8 => visit_integer,
        deserialize_i16 => visit_integer,
        deserialize_i32 => visit_integer,
        deserialize_i64 => visit_integer,
        deserialize_i128 => visit_integer,
        deserialize_u8 => visit_integer,
        deserialize_u16 => visit_integer,
        deserialize_u32 => visit_integer,
        deserialize_u64 => visit_integer,
        deserialize_u128 => visit_integer,
        deserialize_f32 => visit_float,
        deserialize_f64 => visit_float,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match (&self.value, self.mode) {
            (Value::Null, _) => visitor.visit_none(),
            (Value::String(text), Mode::Query) if text.is_empty() => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.refuse_number(&visitor)?;
        match self.query_text() {
            Ok(text) => visit_seq(vec![Value::String(text)], Mode::Query, visitor),
            Err(json) => json.deserialize_any(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.refuse_number(&visitor)?;
        match self.value {
            Value::Object(object) => {
                let entries = rename_fields(object.into_iter(), fields, self.mode);
                visit_map(entries, self.mode, visitor)
            }
            value => Self::new(value, self.mode).deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.refuse_number(&visitor)?;
        match self.value {
            Value::String(variant) => {
                let variant = match_name(variant, variants);
                visitor.visit_enum(<String as IntoDeserializer<'de, Error>>::into_deserializer(
                    variant,
                ))
            }
            Value::Object(object) => {
                let mut entries = object.into_iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, value)), None) => visitor.visit_enum(EnumDe {
                        variant: match_name(variant, variants),
                        value,
                        mode: self.mode,
                    }),
                    _ => Err(Error::invalid_value(
                        Unexpected::Map,
                        &"a map with a single key",
                    )),
                }
            }
            value => Err(Error::invalid_type(unexpected(&value), &visitor)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.refuse_number(&visitor)?;
        self.deserialize_any(visitor)
    }

    forward_to_deserialize_any! {
        char bytes byte_buf unit unit_struct identifier
    }
}

/// The entries of an object, values wrapped again so that nesting binds the same way.
struct MapDe {
    entries: std::vec::IntoIter<(String, Slot)>,
    pending: Option<Slot>,
    mode: Mode,
}

impl<'de> MapAccess<'de> for MapDe {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.entries.next() {
            Some((key, slot)) => {
                self.pending = Some(slot);
                // Keys are strings converted on demand, like query values (`HashMap<u32, _>`).
                seed.deserialize(ValueDe::new(Value::String(key), Mode::Query))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        match self.pending.take() {
            Some(Ok(value)) => seed.deserialize(ValueDe::new(value, self.mode)),
            Some(Err(error)) => seed.deserialize(FailDe(error)),
            None => Err(Error::custom("a map value was requested before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// The items of an array, wrapped again so that nesting binds the same way.
struct SeqDe {
    items: std::vec::IntoIter<Value>,
    mode: Mode,
}

impl<'de> SeqAccess<'de> for SeqDe {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        match self.items.next() {
            Some(value) => seed.deserialize(ValueDe::new(value, self.mode)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// An externally tagged enum value: `{"Variant": content}`.
struct EnumDe {
    variant: String,
    value: Value,
    mode: Mode,
}

impl<'de> EnumAccess<'de> for EnumDe {
    type Error = Error;
    type Variant = ValueDe;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, ValueDe), Error> {
        let variant = seed.deserialize(
            <String as IntoDeserializer<'de, Error>>::into_deserializer(self.variant),
        )?;
        Ok((variant, ValueDe::new(self.value, self.mode)))
    }
}

impl<'de> VariantAccess<'de> for ValueDe {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_struct("", fields, visitor)
    }
}

/// Fails with the stored error whatever is asked, so the error is reported at its entry.
struct FailDe(Error);

impl<'de> Deserializer<'de> for FailDe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(self.0)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::HashMap;

    use chrono::{DateTime, TimeZone, Utc};
    use serde::Deserialize;
    use serde_json::{Value, json};
    use uuid::Uuid;

    use super::{BindError, from_json_value, from_query_pairs};

    #[derive(Debug, Deserialize, PartialEq)]
    enum AccessLevel {
        Private,
        Public,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Role {
        Owner,
        Reader,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Dataset {
        row_version: String,
        access_level: AccessLevel,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct BillingReference {
        billing_reference_tag: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Order {
        billing_reference: BillingReference,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Member {
        user_id: String,
        role: Role,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Team {
        members: Vec<Member>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct FreeForm {
        display_name: String,
        metadata: Value,
        properties: HashMap<String, Value>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Strict {
        name_prefix: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Optional {
        description: Option<String>,
        #[serde(rename = "EXTERNAL_id")]
        external_id: Option<u32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Page {
        limit: Option<u32>,
        cursor: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Flags {
        flag: bool,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Filters {
        #[serde(default)]
        filter: Vec<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Roles {
        role: Vec<Role>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Typed {
        id: Uuid,
        since: Option<DateTime<Utc>>,
        offset: Option<i32>,
        scale: Option<f64>,
    }

    fn json_error<T: serde::de::DeserializeOwned + std::fmt::Debug>(value: Value) -> BindError {
        from_json_value::<T>(value).unwrap_err()
    }

    fn query<T: serde::de::DeserializeOwned>(text: &[(&str, &str)]) -> Result<T, BindError> {
        let pairs = text
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        from_query_pairs(pairs)
    }

    #[test]
    fn json_keys_in_any_case_bind_camel_case_fields() {
        let dataset: Dataset =
            from_json_value(json!({"ROWVERSION": "a", "accesslevel": "Private"})).unwrap();
        assert_eq!(
            dataset,
            Dataset {
                row_version: "a".to_owned(),
                access_level: AccessLevel::Private,
            }
        );
    }

    #[test]
    fn exact_case_json_keys_still_bind() {
        let dataset: Dataset =
            from_json_value(json!({"rowVersion": "b", "accessLevel": "Public"})).unwrap();
        assert_eq!(dataset.row_version, "b");
        assert_eq!(dataset.access_level, AccessLevel::Public);
    }

    #[test]
    fn nested_object_keys_bind_in_any_case() {
        let order: Order =
            from_json_value(json!({"billingreference": {"BILLINGREFERENCETAG": "t"}})).unwrap();
        assert_eq!(order.billing_reference.billing_reference_tag, "t");
    }

    #[test]
    fn arrays_of_structs_with_odd_case_keys_bind() {
        let team: Team = from_json_value(json!({"Members": [
            {"USERID": "u1", "Role": "Owner"},
            {"userId": "u2", "rOLE": "Reader"},
        ]}))
        .unwrap();
        assert_eq!(
            team.members,
            vec![
                Member {
                    user_id: "u1".to_owned(),
                    role: Role::Owner
                },
                Member {
                    user_id: "u2".to_owned(),
                    role: Role::Reader
                },
            ]
        );
    }

    #[test]
    fn duplicate_case_variants_in_json_are_an_error_naming_the_field() {
        let error = json_error::<Dataset>(json!({
            "rowVersion": "a", "ROWVERSION": "b", "accessLevel": "Private"
        }));
        assert_eq!(error.path, "rowVersion");
        assert_eq!(error.message, "duplicate field `rowVersion`");
        assert_eq!(
            error.to_string(),
            "rowVersion: duplicate field `rowVersion`"
        );
    }

    #[test]
    fn free_form_values_and_maps_keep_the_case_of_their_keys() {
        let metadata = json!({"MixedCase": {"innerKEY": [1, -2, 3.5, null, true, "x"]}});
        let free: FreeForm = from_json_value(json!({
            "DISPLAYNAME": "d",
            "Metadata": metadata,
            "properties": {"FooBar": 1, "fooBar": {"Baz": "q"}},
        }))
        .unwrap();
        assert_eq!(free.display_name, "d");
        assert_eq!(free.metadata, metadata);
        assert_eq!(free.properties.get("FooBar"), Some(&json!(1)));
        assert_eq!(free.properties.get("fooBar"), Some(&json!({"Baz": "q"})));
        assert_eq!(free.properties.len(), 2);
    }

    #[test]
    fn a_missing_required_field_is_named_in_the_message() {
        let error = json_error::<Dataset>(json!({"rowVersion": "a"}));
        assert_eq!(error.path, "");
        assert_eq!(error.message, "missing field `accessLevel`");
        assert_eq!(error.to_string(), "missing field `accessLevel`");
    }

    #[test]
    fn a_type_error_carries_the_path_of_the_field() {
        let error = json_error::<Team>(json!({"members": [
            {"userId": "u1", "role": "Owner"},
            {"userId": "u2", "role": 5},
        ]}));
        assert_eq!(error.path, "members[1].role");
        assert!(
            error.message.contains("invalid type: integer `5`"),
            "{error}"
        );
        let error = json_error::<Order>(json!({"billingReference": {"billingReferenceTag": 1}}));
        assert_eq!(error.path, "billingReference.billingReferenceTag");
    }

    #[test]
    fn json_strings_are_not_numbers() {
        let error = json_error::<Optional>(json!({"EXTERNAL_ID": "7"}));
        assert_eq!(error.path, "EXTERNAL_id");
        assert!(
            error.message.contains("invalid type: string \"7\""),
            "{error}"
        );
    }

    #[test]
    fn deny_unknown_fields_still_rejects_a_truly_unknown_key() {
        let strict: Strict = from_json_value(json!({"NamePrefix": "a"})).unwrap();
        assert_eq!(strict.name_prefix, "a");
        let error = json_error::<Strict>(json!({"namePrefix": "a", "Colour": "red"}));
        assert!(
            error.message.starts_with("unknown field `Colour`"),
            "{error}"
        );
    }

    #[test]
    fn unknown_keys_are_ignored_without_deny_unknown_fields() {
        let dataset: Dataset = from_json_value(json!({
            "rowVersion": "a", "accessLevel": "Private", "extra": {"Anything": 1}
        }))
        .unwrap();
        assert_eq!(dataset.row_version, "a");
    }

    #[test]
    fn unit_enum_variants_bind_from_strings_in_any_case() {
        let member: Member = from_json_value(json!({"userId": "u", "role": "reader"})).unwrap();
        assert_eq!(member.role, Role::Reader);
        let error = json_error::<Member>(json!({"userId": "u", "role": "Admin"}));
        assert_eq!(error.path, "role");
        assert!(
            error.message.starts_with("unknown variant `Admin`"),
            "{error}"
        );
    }

    #[test]
    fn externally_tagged_enum_content_binds_case_insensitively() {
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(rename_all = "camelCase")]
        enum Shape {
            Circle { radius_m: f64 },
            Label(String),
            Empty,
        }
        let shape: Shape = from_json_value(json!({"Circle": {"RADIUS_M": 2.5}})).unwrap();
        assert_eq!(shape, Shape::Circle { radius_m: 2.5 });
        let shape: Shape = from_json_value(json!({"label": "x"})).unwrap();
        assert_eq!(shape, Shape::Label("x".to_owned()));
        let shape: Shape = from_json_value(json!("EMPTY")).unwrap();
        assert_eq!(shape, Shape::Empty);
    }

    #[test]
    fn options_bind_from_null_and_from_missing_keys() {
        let optional: Optional =
            from_json_value(json!({"description": null, "external_ID": 7})).unwrap();
        assert_eq!(
            optional,
            Optional {
                description: None,
                external_id: Some(7)
            }
        );
        let optional: Optional = from_json_value(json!({})).unwrap();
        assert_eq!(
            optional,
            Optional {
                description: None,
                external_id: None
            }
        );
    }

    #[test]
    fn query_names_in_any_case_bind_options() {
        let page: Page = query(&[("Limit", "10"), ("cursor", "abc")]).unwrap();
        assert_eq!(
            page,
            Page {
                limit: Some(10),
                cursor: Some("abc".to_owned())
            }
        );
        let page: Page = query(&[]).unwrap();
        assert_eq!(
            page,
            Page {
                limit: None,
                cursor: None
            }
        );
    }

    #[test]
    fn query_booleans_bind_in_any_case() {
        for (text, expected) in [("True", true), ("FALSE", false), ("1", true), ("0", false)] {
            let flags: Flags = query(&[("flag", text)]).unwrap();
            assert_eq!(flags.flag, expected, "{text}");
        }
        let error = query::<Flags>(&[("FLAG", "yes")]).unwrap_err();
        assert_eq!(error.path, "flag");
        assert_eq!(error.message, "invalid boolean `yes`");
    }

    #[test]
    fn repeated_query_keys_bind_a_list() {
        let filters: Filters = query(&[("filter", "A"), ("filter", "B")]).unwrap();
        assert_eq!(filters.filter, vec!["A", "B"]);
    }

    #[test]
    fn a_single_query_key_binds_a_list_of_one() {
        let filters: Filters = query(&[("Filter", "A")]).unwrap();
        assert_eq!(filters.filter, vec!["A"]);
    }

    #[test]
    fn query_keys_repeated_in_different_case_bind_a_list_in_query_order() {
        let roles: Roles = query(&[("Role", "Owner"), ("role", "Reader")]).unwrap();
        assert_eq!(roles.role, vec![Role::Owner, Role::Reader]);
        let roles: Roles =
            query(&[("role", "Reader"), ("ROLE", "Owner"), ("role", "reader")]).unwrap();
        assert_eq!(roles.role, vec![Role::Reader, Role::Owner, Role::Reader]);
    }

    #[test]
    fn an_unparsable_query_number_is_an_error_at_its_name() {
        let error = query::<Page>(&[("limit", "abc")]).unwrap_err();
        assert_eq!(error.path, "limit");
        assert_eq!(error.message, "invalid integer `abc`");
        assert_eq!(error.to_string(), "limit: invalid integer `abc`");
        let error = query::<Page>(&[("LIMIT", "-1")]).unwrap_err();
        assert_eq!(error.path, "limit");
        assert!(error.message.contains("integer `-1`"), "{error}");
    }

    #[test]
    fn an_empty_query_value_is_none_for_an_option() {
        let page: Page = query(&[("cursor", ""), ("limit", "")]).unwrap();
        assert_eq!(
            page,
            Page {
                limit: None,
                cursor: None
            }
        );
    }

    #[test]
    fn a_missing_defaulted_list_is_empty() {
        let filters: Filters = query(&[("other", "x")]).unwrap();
        assert!(filters.filter.is_empty());
    }

    #[test]
    fn query_uuids_dates_and_signed_and_float_numbers_parse() {
        let id = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let typed: Typed = query(&[
            ("ID", &id.to_string()),
            ("since", "2024-05-06T07:08:09Z"),
            ("Offset", "-42"),
            ("scale", "-0.25"),
        ])
        .unwrap();
        assert_eq!(typed.id, id);
        assert_eq!(
            typed.since,
            Some(Utc.with_ymd_and_hms(2024, 5, 6, 7, 8, 9).unwrap())
        );
        assert_eq!(typed.offset, Some(-42));
        assert_eq!(typed.scale, Some(-0.25));
        let error = query::<Typed>(&[("id", &id.to_string()), ("scale", "NaN")]).unwrap_err();
        assert_eq!(error.path, "scale");
        assert_eq!(error.message, "invalid number `NaN`");
    }

    #[test]
    fn a_scalar_query_parameter_given_twice_is_an_error() {
        let error = query::<Page>(&[("limit", "1"), ("Limit", "2")]).unwrap_err();
        assert_eq!(error.path, "limit");
    }

    #[test]
    fn a_free_form_query_map_keeps_keys_and_groups_exact_repeats() {
        let map: HashMap<String, Value> = query(&[("a", "1"), ("A", "2"), ("a", "3")]).unwrap();
        assert_eq!(map.get("a"), Some(&json!(["1", "3"])));
        assert_eq!(map.get("A"), Some(&json!("2")));
    }

    #[test]
    fn the_error_path_is_empty_at_the_root() {
        let error = json_error::<Dataset>(json!("x"));
        assert!(error.message.starts_with("invalid type: string"), "{error}");
        assert_eq!(error.path, "");
        let error = query::<Page>(&[]).map(|_: Page| ()).err();
        assert_eq!(error, None);
    }

    #[test]
    fn types_that_borrow_strings_and_numeric_map_keys_bind() {
        #[derive(Debug, PartialEq)]
        struct Lower(String);
        impl<'de> Deserialize<'de> for Lower {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = <std::borrow::Cow<'de, str> as Deserialize>::deserialize(deserializer)?;
                Ok(Lower(raw.to_ascii_lowercase()))
            }
        }
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(rename_all = "camelCase")]
        struct Holder {
            sort_order: Lower,
            #[serde(default)]
            by_id: HashMap<u32, String>,
        }
        let holder: Holder =
            from_json_value(json!({"SortOrder": "DESC", "byid": {"7": "seven"}})).unwrap();
        assert_eq!(holder.sort_order, Lower("desc".to_owned()));
        assert_eq!(holder.by_id.get(&7).map(String::as_str), Some("seven"));
        let holder: Holder = query(&[("sortorder", "Asc")]).unwrap();
        assert_eq!(holder.sort_order, Lower("asc".to_owned()));
    }
}
