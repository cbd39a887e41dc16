//! Every route template of the API in one place, one function per route, named after the
//! resource it serves; parameters are anything that displays (ids, `&str`, numbers). A test
//! writes `routes::project_members(id)` where it wrote the path; literal paths stay only in
//! tests whose point is the raw path itself (malformed ids, unknown routes, trailing slashes).

use std::fmt::Display;

// ---- Identity and administration ----

/// `/api/iam/principal/me`: The caller (`GET`).
pub fn principal_me() -> String {
    "/api/iam/principal/me".to_owned()
}

/// `/api/iam/tenant/my`: The caller's tenants (`GET`).
pub fn my_tenants() -> String {
    "/api/iam/tenant/my".to_owned()
}

/// `/api/iam/invitation/my`: The caller's invitations (`GET`).
pub fn my_invitations() -> String {
    "/api/iam/invitation/my".to_owned()
}

/// `/api/iam/invitation/{invitation}/accept`: Accepts an invitation (`POST`).
pub fn invitation_accept(invitation: impl Display) -> String {
    format!("/api/iam/invitation/{invitation}/accept")
}

/// `/api/iam/invitation/{invitation}/decline`: Declines an invitation (`POST`).
pub fn invitation_decline(invitation: impl Display) -> String {
    format!("/api/iam/invitation/{invitation}/decline")
}

/// `/api/admin/tenants`: Tenants: list (`GET`), create (`POST`).
pub fn tenants() -> String {
    "/api/admin/tenants".to_owned()
}

/// `/api/admin/tenants/{tenant}`: One tenant (`GET`).
pub fn tenant(tenant: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}")
}

/// `/api/admin/tenants/{tenant}/members`: A tenant's members: list (`GET`), add (`POST`).
pub fn tenant_members(tenant: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}/members")
}

/// `/api/admin/tenants/{tenant}/members/{user}`: One member of a tenant: role (`PUT`), removal (`DELETE`).
pub fn tenant_member(tenant: impl Display, user: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}/members/{user}")
}

/// `/api/admin/tenants/{tenant}/invitations`: A tenant's open invitations (`GET`).
pub fn tenant_invitations(tenant: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}/invitations")
}

/// `/api/admin/tenants/{tenant}/invitations/{invitation}`: Withdraws an invitation (`DELETE`).
pub fn tenant_invitation(tenant: impl Display, invitation: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}/invitations/{invitation}")
}

/// `/api/admin/tenants/{tenant}/api-keys`: A tenant's API keys: list (`GET`), create (`POST`).
pub fn tenant_api_keys(tenant: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}/api-keys")
}

/// `/api/admin/tenants/{tenant}/api-keys/{key}`: Revokes an API key (`DELETE`).
pub fn tenant_api_key(tenant: impl Display, key: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}/api-keys/{key}")
}

/// `/api/admin/tenants/{tenant}/features`: The features licensed to a tenant (`GET`).
pub fn tenant_licenses(tenant: impl Display) -> String {
    format!("/api/admin/tenants/{tenant}/features")
}

/// `/api/admin/users`: Users: list (`GET`), create (`POST`).
pub fn users() -> String {
    "/api/admin/users".to_owned()
}

/// `/api/admin/users/{user}`: One user: read (`GET`), change (`PATCH`).
pub fn user(user: impl Display) -> String {
    format!("/api/admin/users/{user}")
}

// ---- Projects ----

/// `/api/metadata/project`: Projects: create (`POST`), update (`PUT`), patch (`PATCH`).
pub fn projects() -> String {
    "/api/metadata/project".to_owned()
}

/// `/api/metadata/project/list`: The caller's projects, cursor pages (`GET`).
pub fn project_list() -> String {
    "/api/metadata/project/list".to_owned()
}

/// `/api/metadata/project/offset-list`: The caller's projects, offset pages (`GET`).
pub fn project_offset_list() -> String {
    "/api/metadata/project/offset-list".to_owned()
}

/// `/api/metadata/project/{project}`: One project: read (`GET`), delete (`DELETE`).
pub fn project(project: impl Display) -> String {
    format!("/api/metadata/project/{project}")
}

/// `/api/metadata/project/{project}/capabilities`: What the caller may do in a project (`GET`).
pub fn project_capabilities(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/capabilities")
}

/// `/api/metadata/project/{project}/path`: A project's chain of ancestors (`GET`).
pub fn project_path(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/path")
}

/// `/api/metadata/project/{project}/move`: Moves a project (`POST`).
pub fn project_move(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/move")
}

/// `/api/metadata/project/{project}/subproject`: Creates a subproject (`POST`).
pub fn project_subprojects(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/subproject")
}

/// `/api/metadata/project/{project}/subproject/list`: A project's subprojects, cursor pages (`GET`).
pub fn project_subproject_list(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/subproject/list")
}

/// `/api/metadata/project/{project}/subproject/offset-list`: A project's subprojects, offset pages (`GET`).
pub fn project_subproject_offset_list(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/subproject/offset-list")
}

/// `/api/metadata/project/{project}/offset-list-recursive`: Everything under a project, offset pages (`GET`).
pub fn project_recursive_list(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/offset-list-recursive")
}

/// `/api/metadata/project/{project}/member`: A project's members: list (`GET`), add (`POST`), set (`PUT`).
pub fn project_member(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/member")
}

/// `/api/metadata/project/{project}/member/{member}`: Removes a member of a project (`DELETE`).
pub fn project_member_of(project: impl Display, member: impl Display) -> String {
    format!("/api/metadata/project/{project}/member/{member}")
}

/// `/api/metadata/project/{project}/members`: Sets a project's members (`PUT`).
pub fn project_members(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/members")
}

/// `/api/metadata/project/{project}/members/inherit`: Switches a project's member inheritance (`PUT`).
pub fn project_members_inherit(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/members/inherit")
}

/// `/api/metadata/project/{project}/dataset`: Updates a dataset of a project (`PUT`).
pub fn project_dataset(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/dataset")
}

/// `/api/metadata/project/{project}/dataset/list`: A project's datasets (`GET`).
pub fn project_dataset_list(project: impl Display) -> String {
    format!("/api/metadata/project/{project}/dataset/list")
}

/// `/api/project/list`: The legacy project list (`GET`).
pub fn legacy_project_list() -> String {
    "/api/project/list".to_owned()
}

/// `/api/project/{project}`: The legacy project deletion (`DELETE`).
pub fn legacy_project(project: impl Display) -> String {
    format!("/api/project/{project}")
}

/// `/api/project/{project}/subprojects`: The legacy subproject list (`GET`).
pub fn legacy_project_subprojects(project: impl Display) -> String {
    format!("/api/project/{project}/subprojects")
}

/// `/api/project/{project}/path`: The legacy project path (`GET`).
pub fn legacy_project_path(project: impl Display) -> String {
    format!("/api/project/{project}/path")
}

/// `/api/project/{project}/dataset/{dataset}`: The legacy dataset deletion (`DELETE`).
pub fn legacy_project_dataset(project: impl Display, dataset: impl Display) -> String {
    format!("/api/project/{project}/dataset/{dataset}")
}

// ---- Datasets ----

/// `/api/metadata/dataset/{dataset}`: One dataset: read (`GET`), delete (`DELETE`).
pub fn dataset(dataset: impl Display) -> String {
    format!("/api/metadata/dataset/{dataset}")
}

/// `/api/metadata/dataset/{dataset}/move`: Moves a dataset (`POST`).
pub fn dataset_move(dataset: impl Display) -> String {
    format!("/api/metadata/dataset/{dataset}/move")
}

/// `/api/metadata/dataset/{dataset}/convert`: Converts a dataset into a new one (`POST`).
pub fn dataset_convert(dataset: impl Display) -> String {
    format!("/api/metadata/dataset/{dataset}/convert")
}

/// `/api/metadata/dataset/{dataset}/download-convert`: Converts a dataset to a file to download (`POST`).
pub fn dataset_download_convert(dataset: impl Display) -> String {
    format!("/api/metadata/dataset/{dataset}/download-convert")
}

/// `/api/metadata/dataset/{dataset}/update`: Updates a dataset from an upload (`POST`).
pub fn dataset_update(dataset: impl Display) -> String {
    format!("/api/metadata/dataset/{dataset}/update")
}

/// `/api/metadata/dataset/{source}/update/{target}`: Updates `target` from the dataset `source` (`POST`).
pub fn dataset_update_from(source: impl Display, target: impl Display) -> String {
    format!("/api/metadata/dataset/{source}/update/{target}")
}

/// `/api/metadata/dataset/{dataset}/append`: Appends an upload to a dataset (`POST`).
pub fn dataset_append(dataset: impl Display) -> String {
    format!("/api/metadata/dataset/{dataset}/append")
}

/// `/api/raw/dataset/{dataset}`: A read URL of a dataset's content (`GET`).
pub fn raw_dataset(dataset: impl Display) -> String {
    format!("/api/raw/dataset/{dataset}")
}

// ---- Bulk hierarchy ----

/// `/api/hierarchy/project/{project}`: Applies bulk hierarchy actions under a project (`POST`).
pub fn hierarchy(project: impl Display) -> String {
    format!("/api/hierarchy/project/{project}")
}

// ---- Conversion and transfers ----

/// `/api/conversion/reader/list`: The readers (`GET`).
pub fn reader_list() -> String {
    "/api/conversion/reader/list".to_owned()
}

/// `/api/conversion/reader/{name}`: One reader (`GET`).
pub fn reader(name: impl Display) -> String {
    format!("/api/conversion/reader/{name}")
}

/// `/api/conversion/writer/list`: The writers (`GET`).
pub fn writer_list() -> String {
    "/api/conversion/writer/list".to_owned()
}

/// `/api/conversion/writer/{name}`: One writer (`GET`).
pub fn writer(name: impl Display) -> String {
    format!("/api/conversion/writer/{name}")
}

/// `/api/conversion/transfer/upload-url`: A new upload URL (`GET`).
pub fn upload_url() -> String {
    "/api/conversion/transfer/upload-url".to_owned()
}

/// `/api/conversion/project/{project}/file/upload`: A direct upload into a project (`POST`, multipart).
pub fn file_upload(project: impl Display) -> String {
    format!("/api/conversion/project/{project}/file/upload")
}

/// `/api/conversion/project/{project}/file/import-staged`: Imports staged files into a project (`POST`).
pub fn import_staged(project: impl Display) -> String {
    format!("/api/conversion/project/{project}/file/import-staged")
}

/// `/api/conversion/upload-convert`: Imports an upload (`POST`).
pub fn upload_convert() -> String {
    "/api/conversion/upload-convert".to_owned()
}

/// `/api/conversion/transfer/list`: Transfers (`GET`).
pub fn transfer_list() -> String {
    "/api/conversion/transfer/list".to_owned()
}

/// `/api/transfer/list-summaries`: The legacy transfer summaries (`GET`).
pub fn legacy_transfer_list_summaries() -> String {
    "/api/transfer/list-summaries".to_owned()
}

/// `/api/conversion/transfer/{transfer}`: One transfer (`GET`).
pub fn transfer(transfer: impl Display) -> String {
    format!("/api/conversion/transfer/{transfer}")
}

/// `/api/conversion/transfer/{transfer}/cancel`: Cancels a transfer (`POST`).
pub fn transfer_cancel(transfer: impl Display) -> String {
    format!("/api/conversion/transfer/{transfer}/cancel")
}

// ---- Credits ----

/// `/api/iam/credit`: Adds credits (`POST`).
pub fn credits() -> String {
    "/api/iam/credit".to_owned()
}

/// `/api/iam/credit/unassigned`: The generic pool's breakdown (`GET`, `POST`).
pub fn unassigned_credits() -> String {
    "/api/iam/credit/unassigned".to_owned()
}

/// `/api/iam/credit/unassigned/details`: The generic pool's lots (`POST`, `GET`).
pub fn unassigned_credit_details() -> String {
    "/api/iam/credit/unassigned/details".to_owned()
}

/// `/api/iam/credit/unassigned/journal`: The generic pool's journal (`GET`).
pub fn unassigned_credit_journal() -> String {
    "/api/iam/credit/unassigned/journal".to_owned()
}

/// `/api/iam/credit/details`: A tenant's lots (`POST`, `GET`).
pub fn credit_details() -> String {
    "/api/iam/credit/details".to_owned()
}

/// `/api/iam/credit/details/extended`: A tenant's lots with their operations (`POST`).
pub fn credit_details_extended() -> String {
    "/api/iam/credit/details/extended".to_owned()
}

/// `/api/iam/credit/reserve`: Reserves credits (`PUT`).
pub fn credit_reserve() -> String {
    "/api/iam/credit/reserve".to_owned()
}

/// `/api/iam/credit/spend`: Spends credits (`PUT`).
pub fn credit_spend() -> String {
    "/api/iam/credit/spend".to_owned()
}

/// `/api/iam/credit/release`: Releases a reservation (`PUT`).
pub fn credit_release() -> String {
    "/api/iam/credit/release".to_owned()
}

/// `/api/iam/credit/move`: Moves credits between pools (`PUT`).
pub fn credit_move() -> String {
    "/api/iam/credit/move".to_owned()
}

/// `/api/iam/credit/{tenant}`: A tenant's breakdown (`GET`).
pub fn tenant_credits(tenant: impl Display) -> String {
    format!("/api/iam/credit/{tenant}")
}

/// `/api/iam/credit/{tenant}/operation/{operation}`: One operation of a tenant (`GET`).
pub fn credit_operation(tenant: impl Display, operation: impl Display) -> String {
    format!("/api/iam/credit/{tenant}/operation/{operation}")
}

/// `/api/iam/credit/{tenant}/journal`: A tenant's journal (`GET`).
pub fn tenant_credit_journal(tenant: impl Display) -> String {
    format!("/api/iam/credit/{tenant}/journal")
}

/// `/api/iam/credit/{tenant}/audit`: A tenant's audit (`GET`).
pub fn tenant_credit_audit(tenant: impl Display) -> String {
    format!("/api/iam/credit/{tenant}/audit")
}

// ---- Feature messages and the feature catalogue ----

/// `/api/admin/feature/message`: Global messages: list (`GET`), create (`POST`).
pub fn global_messages() -> String {
    "/api/admin/feature/message".to_owned()
}

/// `/api/admin/feature/message/{message}`: One global message: change (`PATCH`), delete (`DELETE`).
pub fn global_message(message: impl Display) -> String {
    format!("/api/admin/feature/message/{message}")
}

/// `/api/admin/feature/tenant/list`: The caller's tenant's features (`GET`).
pub fn my_tenant_features() -> String {
    "/api/admin/feature/tenant/list".to_owned()
}

/// `/api/admin/feature/{feature}/message`: A feature's messages: list (`GET`), create (`POST`).
pub fn feature_messages(feature: impl Display) -> String {
    format!("/api/admin/feature/{feature}/message")
}

/// `/api/admin/feature/{feature}/message/{message}`: One message of a feature: change
/// (`PATCH`), delete (`DELETE`).
pub fn feature_message(feature: impl Display, message: impl Display) -> String {
    format!("/api/admin/feature/{feature}/message/{message}")
}

/// `/api/admin/feature/{feature}/banner`: A feature's banner (`GET`).
pub fn feature_banner(feature: impl Display) -> String {
    format!("/api/admin/feature/{feature}/banner")
}

/// `/api/admin/feature/{feature}/tenant/{tenant}`: Switches a feature for a tenant (`PATCH`).
pub fn tenant_feature(feature: impl Display, tenant: impl Display) -> String {
    format!("/api/admin/feature/{feature}/tenant/{tenant}")
}

/// `/api/admin/feature-messages/purge-expired`: Removes expired messages now (`POST`).
pub fn feature_messages_purge_expired() -> String {
    "/api/admin/feature-messages/purge-expired".to_owned()
}

/// `/api/admin/features`: The feature catalogue: list (`GET`), create (`POST`).
pub fn features() -> String {
    "/api/admin/features".to_owned()
}

/// `/api/admin/features/{feature}`: One feature: read (`GET`), replace (`PUT`), delete (`DELETE`).
pub fn feature(feature: impl Display) -> String {
    format!("/api/admin/features/{feature}")
}

/// `/api/admin/features/{feature}/licenses`: A feature's licenses (`GET`).
pub fn feature_licenses(feature: impl Display) -> String {
    format!("/api/admin/features/{feature}/licenses")
}

/// `/api/admin/features/{feature}/licenses/{tenant}`: One license: grant (`PUT`), revoke (`DELETE`).
pub fn feature_license(feature: impl Display, tenant: impl Display) -> String {
    format!("/api/admin/features/{feature}/licenses/{tenant}")
}

// ---- GIS ----

/// `/api/crs/coordinate-system/list`: Coordinate systems (`GET`).
pub fn coordinate_system_list() -> String {
    "/api/crs/coordinate-system/list".to_owned()
}

/// `/api/crs/coordinate-system/{id}`: One coordinate system (`GET`).
pub fn coordinate_system(id: impl Display) -> String {
    format!("/api/crs/coordinate-system/{id}")
}

/// `/api/crs/project`: Reprojects geometries (`POST`).
pub fn crs_project() -> String {
    "/api/crs/project".to_owned()
}

// ---- Platform events ----

/// `/api/admin/events/dead-letters`: Dead-lettered events (`GET`).
pub fn dead_letters() -> String {
    "/api/admin/events/dead-letters".to_owned()
}

/// `/api/admin/events/dead-letters/replay`: Replays every dead letter (`POST`).
pub fn dead_letters_replay() -> String {
    "/api/admin/events/dead-letters/replay".to_owned()
}

/// `/api/admin/events/dead-letters/{event}/replay`: Replays one dead letter (`POST`).
pub fn dead_letter_replay(event: impl Display) -> String {
    format!("/api/admin/events/dead-letters/{event}/replay")
}

// ---- The recycle bin ----

/// `/api/recycle-bin/dataset/list`: Deleted datasets (`GET`).
pub fn bin_dataset_list() -> String {
    "/api/recycle-bin/dataset/list".to_owned()
}

/// `/api/recycle-bin/project/list`: Deleted projects (`GET`).
pub fn bin_project_list() -> String {
    "/api/recycle-bin/project/list".to_owned()
}

/// `/api/recycle-bin/my-deleted-items`: What the caller deleted (`GET`).
pub fn my_deleted_items() -> String {
    "/api/recycle-bin/my-deleted-items".to_owned()
}

/// `/api/recycle-bin/all-deleted-items`: Everything deleted (`GET`).
pub fn all_deleted_items() -> String {
    "/api/recycle-bin/all-deleted-items".to_owned()
}

/// `/api/recycle-bin/project/{project}`: A deleted project: read (`GET`), purge (`DELETE`).
pub fn bin_project(project: impl Display) -> String {
    format!("/api/recycle-bin/project/{project}")
}

/// `/api/recycle-bin/project/{project}/subprojects`: A deleted project's subprojects (`GET`).
pub fn bin_project_subprojects(project: impl Display) -> String {
    format!("/api/recycle-bin/project/{project}/subprojects")
}

/// `/api/recycle-bin/project/{project}/restore`: Restores a project in place (`PUT`) or elsewhere (`POST`).
pub fn bin_project_restore(project: impl Display) -> String {
    format!("/api/recycle-bin/project/{project}/restore")
}

/// `/api/recycle-bin/project/{project}/dataset/list`: A project's deleted datasets (`GET`).
pub fn bin_project_dataset_list(project: impl Display) -> String {
    format!("/api/recycle-bin/project/{project}/dataset/list")
}

/// `/api/recycle-bin/project/{project}/dataset/{dataset}`: A deleted dataset of a project: read (`GET`), purge (`DELETE`).
pub fn bin_project_dataset(project: impl Display, dataset: impl Display) -> String {
    format!("/api/recycle-bin/project/{project}/dataset/{dataset}")
}

/// `/api/recycle-bin/project/{project}/dataset/{dataset}/restore`: Restores a dataset of a project in place (`PUT`) or elsewhere (`POST`).
pub fn bin_project_dataset_restore(project: impl Display, dataset: impl Display) -> String {
    format!("/api/recycle-bin/project/{project}/dataset/{dataset}/restore")
}

/// `/api/recycle-bin/dataset/{dataset}`: A deleted dataset: read (`GET`), purge (`DELETE`).
pub fn bin_dataset(dataset: impl Display) -> String {
    format!("/api/recycle-bin/dataset/{dataset}")
}

/// `/api/recycle-bin/dataset/{dataset}/restore`: Restores a dataset in place (`PUT`) or elsewhere (`POST`).
pub fn bin_dataset_restore(dataset: impl Display) -> String {
    format!("/api/recycle-bin/dataset/{dataset}/restore")
}

/// `/api/admin/recycle-bin/purge-expired`: Removes what outlived its retention now (`POST`).
pub fn bin_purge_expired() -> String {
    "/api/admin/recycle-bin/purge-expired".to_owned()
}

// ---- Tiles ----

/// `/api/tiles/dataset/{dataset}/metadata`: A dataset's tiling metadata (`GET`).
pub fn tiles_metadata(dataset: impl Display) -> String {
    format!("/api/tiles/dataset/{dataset}/metadata")
}

/// `/api/tiles/dataset/{dataset}/tiles`: Defines the tiles of a dataset (`POST`).
pub fn tiles_definition(dataset: impl Display) -> String {
    format!("/api/tiles/dataset/{dataset}/tiles")
}

/// `/api/tiles/dataset/{dataset}/wmts`: WMTS key-value requests (`GET`).
pub fn wmts(dataset: impl Display) -> String {
    format!("/api/tiles/dataset/{dataset}/wmts")
}

/// `/api/tiles/dataset/{dataset}/wmts100/1.0.0/WMTSCapabilities.xml`: The WMTS capabilities document (`GET`).
pub fn wmts_capabilities(dataset: impl Display) -> String {
    format!("/api/tiles/dataset/{dataset}/wmts100/1.0.0/WMTSCapabilities.xml")
}

/// `/api/tiles/dataset/{dataset}/scheme/{scheme}/emptyTile`: A scheme's empty tile (`GET`).
pub fn empty_tile(dataset: impl Display, scheme: impl Display) -> String {
    format!("/api/tiles/dataset/{dataset}/scheme/{scheme}/emptyTile")
}

/// `/api/tiles/dataset/{dataset}/scheme/{scheme}/{matrix}/{row}/{col}`: One tile of a scheme (`GET`).
pub fn scheme_tile(
    dataset: impl Display,
    scheme: impl Display,
    matrix: impl Display,
    row: impl Display,
    col: impl Display,
) -> String {
    format!("/api/tiles/dataset/{dataset}/scheme/{scheme}/{matrix}/{row}/{col}")
}

/// `/api/tiles/dataset/{dataset}/wmts100/{scheme}/{matrix}/{row}/{col}`: One tile, WMTS 1.0.0 REST form (`GET`).
pub fn wmts100_tile(
    dataset: impl Display,
    scheme: impl Display,
    matrix: impl Display,
    row: impl Display,
    col: impl Display,
) -> String {
    format!("/api/tiles/dataset/{dataset}/wmts100/{scheme}/{matrix}/{row}/{col}")
}

/// `/api/vectortiles/dataset/{dataset}/{zoom}/{col}/{row}.vector.pbf`: One vector tile (`GET`).
pub fn vector_tile(
    dataset: impl Display,
    zoom: impl Display,
    col: impl Display,
    row: impl Display,
) -> String {
    format!("/api/vectortiles/dataset/{dataset}/{zoom}/{col}/{row}.vector.pbf")
}

// ---- EDR ----

/// `/api/edr`: The EDR landing page (`GET`).
pub fn edr_landing() -> String {
    "/api/edr".to_owned()
}

/// `/api/edr/conformance`: The EDR conformance classes (`GET`).
pub fn edr_conformance() -> String {
    "/api/edr/conformance".to_owned()
}

/// `/api/edr/collections`: The collections the caller may query (`GET`).
pub fn edr_collections() -> String {
    "/api/edr/collections".to_owned()
}

/// `/api/edr/collections/{collection}`: One collection (`GET`).
pub fn edr_collection(collection: impl Display) -> String {
    format!("/api/edr/collections/{collection}")
}

/// `/api/edr/collections/{collection}/position`: A position query (`GET`).
pub fn edr_position(collection: impl Display) -> String {
    format!("/api/edr/collections/{collection}/position")
}

/// `/api/edr/collections/{collection}/area`: An area query (`GET`).
pub fn edr_area(collection: impl Display) -> String {
    format!("/api/edr/collections/{collection}/area")
}

/// `/api/edr/collections/{collection}/cube`: A cube query (`GET`).
pub fn edr_cube(collection: impl Display) -> String {
    format!("/api/edr/collections/{collection}/cube")
}

/// `/api/edr/collections/{collection}/{query}`: Another query of a collection (`GET`):
/// `radius`, `corridor`, `trajectory`.
pub fn edr_query(collection: impl Display, query: &str) -> String {
    format!("/api/edr/collections/{collection}/{query}")
}
