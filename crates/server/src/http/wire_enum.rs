//! Enums as they travel on the wire: PascalCase on output, any case on input
//! (docs/api-conventions.md#requests), one string schema in the OpenAPI document.

/// Declares a string enum whose variant names are its wire values. Input is matched
/// ignoring ASCII case; output is the variant name.
#[macro_export]
macro_rules! wire_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(clippy::enum_variant_names, reason = "the variants are the interface's wire names")]
        $vis enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub(crate) const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire name.
            pub(crate) const fn as_str(&self) -> &'static str {
                match self { $($name::$variant => stringify!($variant)),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::http::wire_enum::UnknownVariant;
            fn from_str(value: &str) -> Result<Self, Self::Err> {
                let value = value.trim();
                $(if value.eq_ignore_ascii_case(stringify!($variant)) {
                    return Ok($name::$variant);
                })+
                Err($crate::http::wire_enum::UnknownVariant {
                    value: value.to_owned(),
                    allowed: &[$(stringify!($variant)),+],
                })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
                raw.parse().map_err(serde::de::Error::custom)
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$(stringify!($variant)),+]))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl $name {
            /// The value stored in a database column: the exact wire name, nothing else.
            pub(crate) fn from_stored(raw: &str) -> Result<Self, $crate::http::wire_enum::UnknownVariant> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|value| value.as_str() == raw)
                    .ok_or_else(|| $crate::http::wire_enum::UnknownVariant {
                        value: raw.chars().take(64).collect(),
                        allowed: &[$(stringify!($variant)),+],
                    })
            }
        }

        // Stored as its wire name in a text column, on both databases and on the synchronous
        // SQLite read path; a stored value that is not a variant fails to decode.
        impl<DB: sqlx::Database> sqlx::Type<DB> for $name
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

        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $name
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

        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $name
        where
            &'r str: sqlx::Decode<'r, DB>,
        {
            fn decode(
                value: <DB as sqlx::Database>::ValueRef<'r>,
            ) -> Result<Self, sqlx::error::BoxDynError> {
                let raw = <&'r str as sqlx::Decode<'r, DB>>::decode(value)?;
                Ok(Self::from_stored(raw)?)
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                Self::from_stored(value.as_str()?)
                    .map_err(|error| rusqlite::types::FromSqlError::Other(Box::new(error)))
            }
        }
    };
}

/// A string that names no variant of a wire enum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value '{value}'; expected one of {}", allowed.join(", "))]
pub(crate) struct UnknownVariant {
    /// What was sent.
    pub(crate) value: String,
    /// What would have been accepted.
    pub(crate) allowed: &'static [&'static str],
}

/// Sort direction of lists (`sortOrder`).
pub(crate) mod sort {
    crate::wire_enum! {
        /// Ascending or descending.
        #[derive(Default)]
        pub(crate) enum SortOrder {
            /// Smallest first.
            #[default]
            Asc,
            /// Largest first.
            Desc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort::SortOrder;

    #[test]
    fn wire_enums_parse_any_case_and_print_pascal_case() {
        assert_eq!("desc".parse::<SortOrder>().unwrap(), SortOrder::Desc);
        assert_eq!("ASC".parse::<SortOrder>().unwrap(), SortOrder::Asc);
        let parsed: SortOrder = serde_json::from_str("\"dEsC\"").unwrap();
        assert_eq!(serde_json::to_string(&parsed).unwrap(), "\"Desc\"");
        let error = "sideways".parse::<SortOrder>().unwrap_err().to_string();
        assert_eq!(error, "unknown value 'sideways'; expected one of Asc, Desc");
    }
}
