//! Features appended to a feature collection: the addition must have the same fields (by
//! name, in any order) with types that fit the existing ones, and geometries of the existing
//! kind.
//!
//! A type fits when the readers themselves would widen to it when values of one field
//! disagree (the GeoJSON reader's rules): Boolean into Integer, Boolean or Integer into Float,
//! Date into DateTime, anything into Text. Text also fits any type, with each value parsed as
//! it arrives, because a reader types a field whose values are all null as Text; a value that
//! does not parse is an error naming the feature. The existing schema is what the writer gets,
//! so its field names, widths and order win.

use chrono::{NaiveDate, NaiveDateTime};

use crate::error::{FormatError, FormatResult};
use crate::model::{Feature, FeatureSchema, FieldType, Geometry, GeometryKind, Value};

/// How the addition's features become features of the existing schema.
pub(super) struct FieldPlan {
    /// For each existing field, in order: where its values come from.
    sources: Vec<FieldSource>,
    /// The existing geometry kind, when each addition geometry must be checked against it
    /// (the addition declared no single kind of its own).
    check_kind: Option<GeometryKind>,
}

/// Where the values of one existing field come from.
struct FieldSource {
    /// The addition's field index.
    index: usize,
    /// The existing field's type, which values are converted to.
    field_type: FieldType,
    /// The existing field's name, for messages.
    name: String,
}

impl FieldPlan {
    /// The addition's feature number `number` (from 1) in the existing schema.
    pub(super) fn map(&self, feature: &Feature, number: u64) -> FormatResult<Feature> {
        if let (Some(kind), Some(geometry)) = (self.check_kind, &feature.geometry)
            && !fits(kind, geometry_kind_of(geometry))
        {
            return Err(FormatError::Append(format!(
                "feature {number} of the addition is a {}, which a collection of {} cannot hold",
                geometry.type_name(),
                kind_name(kind)
            )));
        }
        let values = self
            .sources
            .iter()
            .map(|source| {
                let value = feature.values.get(source.index).unwrap_or(&Value::Null);
                convert(value, source.field_type).ok_or_else(|| {
                    FormatError::Append(format!(
                        "feature {number} of the addition: the value {} of field {:?} is not {}",
                        describe_value(value),
                        source.name,
                        source.field_type.name()
                    ))
                })
            })
            .collect::<FormatResult<Vec<Value>>>()?;
        Ok(Feature {
            geometry: feature.geometry.clone(),
            values,
        })
    }
}

/// Matches the addition's fields and geometry kind to the existing ones.
pub(super) fn plan(existing: &FeatureSchema, addition: &FeatureSchema) -> FormatResult<FieldPlan> {
    super::geometry::same_crs(existing.crs.as_ref(), addition.crs.as_ref())?;
    let check_kind = match (existing.geometry_kind, addition.geometry_kind) {
        (GeometryKind::Any, _) => None,
        (kind, GeometryKind::Any) => Some(kind),
        (kind, other) if fits(kind, other) => None,
        (kind, other) => {
            return Err(FormatError::Append(format!(
                "the geometries differ: the existing data holds {}, the addition {}",
                kind_name(kind),
                kind_name(other)
            )));
        }
    };
    let names = |schema: &FeatureSchema| -> Vec<String> {
        schema
            .fields
            .iter()
            .map(|field| field.name.clone())
            .collect()
    };
    let addition_names: Vec<&str> = addition.fields.iter().map(|f| f.name.as_str()).collect();
    let mut used = vec![false; addition.fields.len()];
    let mut sources = Vec::with_capacity(existing.fields.len());
    for field in &existing.fields {
        let Some(index) = position_of(&field.name, &addition_names, &used) else {
            return Err(fields_differ(&names(existing), &names(addition)));
        };
        if let Some(taken) = used.get_mut(index) {
            *taken = true;
        }
        let Some(added) = addition.fields.get(index) else {
            return Err(fields_differ(&names(existing), &names(addition)));
        };
        if !widens_to(added.field_type, field.field_type) {
            return Err(FormatError::Append(format!(
                "field {:?} is {} in the existing data and {} in the addition, which does not \
                 fit it",
                field.name,
                field.field_type.name(),
                added.field_type.name()
            )));
        }
        sources.push(FieldSource {
            index,
            field_type: field.field_type,
            name: field.name.clone(),
        });
    }
    if used.contains(&false) {
        return Err(fields_differ(&names(existing), &names(addition)));
    }
    Ok(FieldPlan {
        sources,
        check_kind,
    })
}

fn fields_differ(existing: &[String], addition: &[String]) -> FormatError {
    FormatError::Append(format!(
        "the fields differ: existing has {}, the addition has {}",
        super::listing(existing),
        super::listing(addition)
    ))
}

/// The unused addition field named `name`: exactly, or else the one that matches ignoring
/// ASCII case (dBASE field names have no case of their own).
fn position_of(name: &str, names: &[&str], used: &[bool]) -> Option<usize> {
    let free = |index: &usize| !used.get(*index).copied().unwrap_or(true);
    if let Some(index) = (0..names.len())
        .filter(free)
        .find(|index| names.get(*index) == Some(&name))
    {
        return Some(index);
    }
    let mut matches = (0..names.len()).filter(free).filter(|index| {
        names
            .get(*index)
            .is_some_and(|other| other.eq_ignore_ascii_case(name))
    });
    let first = matches.next()?;
    matches.next().is_none().then_some(first)
}

/// True when values of type `from` fit a field of type `to`; see the module doc.
fn widens_to(from: FieldType, to: FieldType) -> bool {
    use FieldType::{Boolean, Date, DateTime, Float, Integer, Text};
    from == to
        || matches!(
            (from, to),
            (Boolean, Integer)
                | (Boolean | Integer, Float)
                | (Date, DateTime)
                | (_, Text)
                | (Text, _)
        )
}

/// `value` as a value of a `to` field, or `None` when it does not convert.
fn convert(value: &Value, to: FieldType) -> Option<Value> {
    Some(match (value, to) {
        (Value::Null, _) => Value::Null,
        (Value::Boolean(flag), FieldType::Boolean) => Value::Boolean(*flag),
        (Value::Boolean(flag), FieldType::Integer) => Value::Integer(i64::from(*flag)),
        (Value::Boolean(flag), FieldType::Float) => Value::Float(f64::from(u8::from(*flag))),
        (Value::Integer(integer), FieldType::Integer) => Value::Integer(*integer),
        (Value::Integer(integer), FieldType::Float) => Value::Float(*integer as f64),
        (Value::Float(float), FieldType::Float) => Value::Float(*float),
        (Value::Date(date), FieldType::Date) => Value::Date(*date),
        (Value::Date(date), FieldType::DateTime) => Value::DateTime(date.and_hms_opt(0, 0, 0)?),
        (Value::DateTime(time), FieldType::DateTime) => Value::DateTime(*time),
        (Value::Text(text), FieldType::Text) => Value::Text(text.clone()),
        (other, FieldType::Text) => Value::Text(text_of(other)),
        (Value::Text(text), to) => parse(text, to)?,
        _ => return None,
    })
}

/// A text value as a value of a non-text field.
fn parse(text: &str, to: FieldType) -> Option<Value> {
    let text = text.trim();
    if text.is_empty() {
        return Some(Value::Null);
    }
    Some(match to {
        FieldType::Boolean => match text.to_ascii_lowercase().as_str() {
            "true" => Value::Boolean(true),
            "false" => Value::Boolean(false),
            _ => return None,
        },
        FieldType::Integer => Value::Integer(text.parse().ok()?),
        FieldType::Float => Value::Float(text.parse().ok()?),
        FieldType::Date => Value::Date(NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?),
        FieldType::DateTime => Value::DateTime(crate::transform::parse_time(text)?),
        FieldType::Text => Value::Text(text.to_owned()),
    })
}

/// A value's spelling in a text field: numbers as in JSON, dates in ISO 8601.
fn text_of(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Boolean(flag) => flag.to_string(),
        Value::Integer(integer) => integer.to_string(),
        Value::Float(float) => ryu::Buffer::new().format(*float).to_owned(),
        Value::Text(text) => text.clone(),
        Value::Date(date) => date.format("%Y-%m-%d").to_string(),
        Value::DateTime(time) => iso(*time),
    }
}

fn iso(time: NaiveDateTime) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.f").to_string()
}

fn describe_value(value: &Value) -> String {
    match value {
        Value::Text(text) => format!("{text:?}"),
        other => text_of(other),
    }
}

/// True when a collection declared as `kind` can hold geometries of kind `other`.
fn fits(kind: GeometryKind, other: GeometryKind) -> bool {
    kind == GeometryKind::Any
        || kind == other
        || (kind == GeometryKind::MultiPoint && other == GeometryKind::Point)
}

fn geometry_kind_of(geometry: &Geometry) -> GeometryKind {
    match geometry {
        Geometry::Point(_) => GeometryKind::Point,
        Geometry::MultiPoint(_) => GeometryKind::MultiPoint,
        Geometry::LineString(_) | Geometry::MultiLineString(_) => GeometryKind::Line,
        Geometry::Polygon(_) | Geometry::MultiPolygon(_) => GeometryKind::Polygon,
        Geometry::GeometryCollection(_) => GeometryKind::Any,
    }
}

fn kind_name(kind: GeometryKind) -> &'static str {
    match kind {
        GeometryKind::Any => "mixed geometries",
        GeometryKind::Point => "points",
        GeometryKind::MultiPoint => "multipoints",
        GeometryKind::Line => "lines",
        GeometryKind::Polygon => "polygons",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Field;

    fn schema(fields: &[(&str, FieldType)], kind: GeometryKind) -> FeatureSchema {
        FeatureSchema {
            fields: fields
                .iter()
                .map(|(name, field_type)| Field::new(*name, *field_type))
                .collect(),
            geometry_kind: kind,
            has_z: false,
            has_m: false,
            crs: None,
        }
    }

    #[test]
    fn fields_match_by_name_in_any_order_and_case_and_values_are_converted() {
        let existing = schema(
            &[("id", FieldType::Integer), ("depth", FieldType::Float)],
            GeometryKind::Point,
        );
        let addition = schema(
            &[("DEPTH", FieldType::Integer), ("id", FieldType::Text)],
            GeometryKind::Point,
        );
        let plan = plan(&existing, &addition).unwrap();
        let feature = Feature {
            geometry: None,
            values: vec![Value::Integer(3), Value::Text(" 7 ".to_owned())],
        };
        assert_eq!(
            plan.map(&feature, 1).unwrap().values,
            vec![Value::Integer(7), Value::Float(3.0)]
        );
        let bad = Feature {
            geometry: None,
            values: vec![Value::Integer(3), Value::Text("seven".to_owned())],
        };
        let error = plan.map(&bad, 2).unwrap_err().to_string();
        assert!(
            error.contains(
                "feature 2 of the addition: the value \"seven\" of field \"id\" is not Integer"
            ),
            "{error}"
        );
    }

    #[test]
    fn narrowing_types_and_other_fields_are_refused() {
        let existing = schema(&[("id", FieldType::Integer)], GeometryKind::Any);
        let error = plan(
            &existing,
            &schema(&[("id", FieldType::Float)], GeometryKind::Any),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            error
                .contains("field \"id\" is Integer in the existing data and Float in the addition"),
            "{error}"
        );
        let error = plan(
            &existing,
            &schema(
                &[("id", FieldType::Integer), ("name", FieldType::Text)],
                GeometryKind::Any,
            ),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            error.contains("the fields differ: existing has [id], the addition has [id, name]"),
            "{error}"
        );
    }

    #[test]
    fn geometries_of_another_kind_are_refused_up_front_or_per_feature() {
        let existing = schema(&[], GeometryKind::Polygon);
        let error = plan(&existing, &schema(&[], GeometryKind::Point))
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("the existing data holds polygons, the addition points"),
            "{error}"
        );
        let mixed = plan(&existing, &schema(&[], GeometryKind::Any)).unwrap();
        let point = Feature {
            geometry: Some(Geometry::Point(crate::model::Coord::xy(0.0, 0.0))),
            values: Vec::new(),
        };
        let error = mixed.map(&point, 4).unwrap_err().to_string();
        assert!(
            error.contains("feature 4 of the addition is a Point, which a collection of polygons"),
            "{error}"
        );
        assert!(
            plan(
                &schema(&[], GeometryKind::MultiPoint),
                &schema(&[], GeometryKind::Point)
            )
            .is_ok()
        );
    }
}
