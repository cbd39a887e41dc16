//! The OpenAPI document, served at `/openapi.json` with Swagger UI at `/docs`. Paths come from
//! the `#[utoipa::path]` annotations of each area's handlers; this module adds what is common:
//! the two credential schemes and the `api-version` header.

use utoipa::Modify;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{ObjectBuilder, Ref, RefOr, Required, Type};

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
        (name = "recycle-bin", description = "Deleted projects and datasets: listings, restore, permanent deletion, retention (docs/recycle-bin.md)"),
        (name = "credits", description = "The credit ledger, API version 4: add, reserve, spend, release, move, balances, details and the journal (docs/credits.md)"),
        (name = "features", description = "Feature status messages, the banner, tenant feature availability, and the feature catalogue and licenses (docs/features.md)"),
        (name = "tiles", description = "Tiling metadata, WMTS capabilities and GetTile, raster tiles of grids and meshes, the empty tile and vector tiles (docs/tiles.md)"),
        (name = "gis", description = "Coordinate systems (the EPSG registry) and reprojection of WKT geometries (docs/gis.md)"),
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

/// Adds the optional `api-version` header to every `/api/` operation, with the values its
/// group accepts (`1` and `1.0`, ...), and bounds every `limit` to the page sizes in force
/// (`1` to `page_size_max`) and every `offset` to natural numbers, so that the document
/// describes exactly what the server accepts. Applied after the paths are collected.
pub(crate) fn add_api_version_header(openapi: &mut utoipa::openapi::OpenApi, page_size_max: u32) {
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.starts_with("/api/") {
            continue;
        }
        // An empty value means the default, as an absent header does.
        let versions: Vec<String> = std::iter::once(String::new())
            .chain(
                crate::http::api_version::versions_for_path(path)
                    .supported
                    .iter()
                    .flat_map(|major| [format!("{major}"), format!("{major}.0")]),
            )
            .collect();
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
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(versions.clone())),
                ))
                .build();
            let parameters = operation.parameters.get_or_insert_with(Vec::new);
            for parameter in parameters.iter_mut() {
                if let RefOr::T(parameter) = parameter {
                    bound_paging(parameter, page_size_max);
                }
            }
            parameters.push(RefOr::T(parameter));
        }
    }
}

/// `limit` is 1 to `page_size_max`, `offset` at least 0.
fn bound_paging(parameter: &mut utoipa::openapi::path::Parameter, page_size_max: u32) {
    if parameter.parameter_in != ParameterIn::Query {
        return;
    }
    let (minimum, maximum) = match parameter.name.as_str() {
        "limit" => (1, Some(page_size_max)),
        "offset" => (0, None),
        _ => return,
    };
    parameter.schema = Some(
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Int32,
            )))
            .minimum(Some(minimum))
            .maximum(maximum)
            .into(),
    );
}

/// Every error is a problem: for each `/api/` operation, the statuses any of them can answer
/// are documented (400 for a bad `api-version` or input, 401 without valid credentials, 404
/// for ids in the path, 413 for bodies), and every 4xx and 5xx response is
/// `application/problem+json` with the `Problem` schema. Applied after the paths are collected.
pub(crate) fn add_problem_responses(openapi: &mut utoipa::openapi::OpenApi) {
    openapi
        .components
        .get_or_insert_with(Default::default)
        .schemas
        .insert("Problem".into(), problem_schema().into());
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.starts_with("/api/") {
            continue;
        }
        let has_path_ids = path.contains('{');
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            let responses = &mut operation.responses.responses;
            let mut ensure = |status: &str, description: &str| {
                responses
                    .entry(status.to_owned())
                    .or_insert_with(|| ResponseBuilder::new().description(description).into());
            };
            ensure("400", "The input or the api-version is invalid");
            ensure(
                "401",
                "Credentials are missing, invalid, expired or revoked",
            );
            if has_path_ids {
                ensure(
                    "404",
                    "The resource does not exist or is not visible to the caller",
                );
            }
            if operation.request_body.is_some() {
                ensure("413", "The body is larger than the endpoint accepts");
            }
            for (status, response) in responses.iter_mut() {
                let is_error = status.starts_with('4') || status.starts_with('5');
                if let (true, RefOr::T(response)) = (is_error, response) {
                    response.content.clear();
                    response.content.insert(
                        crate::http::problem::PROBLEM_CONTENT_TYPE.to_owned(),
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("Problem")))
                            .into(),
                    );
                    if response.description.is_empty() {
                        response.description = "A problem (RFC 9457); `type` names its kind".into();
                    }
                }
            }
        }
    }
}

/// RFC 9457 problem details as Basin writes them.
fn problem_schema() -> utoipa::openapi::schema::Schema {
    let text = || ObjectBuilder::new().schema_type(Type::String);
    ObjectBuilder::new()
        .property(
            "type",
            text().description(Some("`urn:basin:problem:<kind>`")),
        )
        .required("type")
        .property("title", text())
        .required("title")
        .property("status", ObjectBuilder::new().schema_type(Type::Integer))
        .required("status")
        .property("detail", text())
        .property("instance", text())
        .property("requestId", text())
        .property(
            "errors",
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some("Messages per field, for validation problems")),
        )
        .into()
}

/// Routes whose last segment the router takes whole and the handler splits, documented as
/// clients call them: `(route, documented path)`. The router cannot match a parameter with a
/// fixed suffix in one segment, but a client generated from the document must call the path
/// the interface names, with the suffix.
const PATHS_WITH_SUFFIX: &[(&str, &str)] = &[(
    "/api/vectortiles/dataset/{id}/{zoom}/{tileCol}/{tileRow}",
    "/api/vectortiles/dataset/{id}/{zoom}/{tileCol}/{tileRow}.vector.pbf",
)];

/// Names the routes of [`PATHS_WITH_SUFFIX`] with their suffix. Applied after the paths are
/// collected.
pub(crate) fn name_paths_with_their_suffix(openapi: &mut utoipa::openapi::OpenApi) {
    for (route, documented) in PATHS_WITH_SUFFIX {
        if let Some(item) = openapi.paths.paths.remove(*route) {
            openapi.paths.paths.insert((*documented).to_owned(), item);
        }
    }
}
