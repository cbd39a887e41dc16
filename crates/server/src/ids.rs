//! Typed ids: a tenant id cannot be passed where a user id is expected. Each is a UUID on the
//! wire and in both databases.

/// Declares a UUID newtype id with Display, FromStr, serde, OpenAPI and sqlx support.
#[macro_export]
macro_rules! id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize, serde::Deserialize, sqlx::Type,
        )]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(uuid::Uuid);

        impl $name {
            /// A new random (v7, time-ordered) id.
            pub fn new_random() -> Self {
                Self(uuid::Uuid::now_v7())
            }

            /// Wraps a UUID that is known to be this kind of id.
            pub const fn from_uuid(uuid: uuid::Uuid) -> Self {
                Self(uuid)
            }

            /// The underlying UUID.
            pub const fn as_uuid(&self) -> uuid::Uuid {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                uuid::Uuid::parse_str(s.trim()).map(Self)
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                        utoipa::openapi::schema::KnownFormat::Uuid,
                    )))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

id!(
    /// A tenant (also called a site).
    TenantId
);
id!(
    /// A user identity.
    UserId
);
id!(
    /// An API key (its record, not the secret key itself).
    ApiKeyId
);
id!(
    /// A project or subproject (folder).
    ProjectId
);
id!(
    /// A dataset.
    DatasetId
);
id!(
    /// An invitation to join a tenant.
    InvitationId
);
id!(
    /// A transfer (an import, export, conversion, update or append).
    TransferId
);
