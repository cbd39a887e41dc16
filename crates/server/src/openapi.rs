//! The OpenAPI document, served at `/openapi.json` with Swagger UI at `/docs`. Paths come from
//! the `#[utoipa::path]` annotations of each area's handlers; this module adds what is common:
//! the two credential schemes and the `api-version` header.

use utoipa::Modify;
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{ObjectBuilder, Required, Type};

/// Name of the API key security scheme.
pub(crate) const API_KEY_SCHEME: &str = "apiKey";
/// Name of the bearer security scheme.
pub(crate) const BEARER_SCHEME: &str = "bearer";

/// The base document.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Basin",
        description = "Open, self-hostable data platform for water and geospatial data. \
            Implements the Platform Service Interface. Errors are RFC 9457 problem+json; \
            see docs/errors.md for every problem type."
    ),
    modifiers(&CommonParts),
    tags(
        (name = "identity", description = "The caller and its tenants"),
        (name = "admin", description = "Tenants, users, members and API keys"),
        (name = "projects", description = "Projects and subprojects"),
        (name = "datasets", description = "Datasets in projects"),
        (name = "health", description = "Probes"),
        (name = "transfers", description = "Signed URLs for uploads (bytes move over the Azure-compatible blob endpoint, docs/blobs.md)"),
    )
)]
pub(crate) struct ApiDoc;

struct CommonParts;

impl Modify for CommonParts {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            API_KEY_SCHEME,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                crate::auth::API_KEY_HEADER,
                "API key of a tenant (OpenAPIAccount principal)",
            ))),
        );
        components.add_security_scheme(
            BEARER_SCHEME,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
        openapi.security = Some(vec![
            SecurityRequirement::new(API_KEY_SCHEME, Vec::<String>::new()),
            SecurityRequirement::new(BEARER_SCHEME, Vec::<String>::new()),
        ]);
    }
}

/// Adds the optional `api-version` header to every `/api/` operation. Applied after the
/// paths are collected, since the base document has none yet.
pub(crate) fn add_api_version_header(openapi: &mut utoipa::openapi::OpenApi) {
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.starts_with("/api/") {
            continue;
        }
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            let parameter = ParameterBuilder::new()
                .name(crate::http::api_version::API_VERSION)
                .parameter_in(ParameterIn::Header)
                .required(Required::False)
                .description(Some(
                    "API version (`1`, `1.0`, ...); the endpoint's default when absent",
                ))
                .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                .build();
            operation
                .parameters
                .get_or_insert_with(Vec::new)
                .push(utoipa::openapi::RefOr::T(parameter));
        }
    }
}
