//! Identity (docs/authentication.md): tenants (sites), users, tenant membership and API
//! keys; `principal/me`, `tenant/my`; the administration API for BackOffice and tenant
//! owners; and the bootstrap of an empty store.

pub(crate) mod bootstrap;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod storage;
mod store;

pub(crate) use routes::router;
pub(crate) use storage::{StorageMeter, StorageMeters};

/// Creates a tenant named `name` straight in the store, for the tests of other areas whose rows
/// name one (the Kubernetes dispatcher's, today).
#[cfg(all(test, feature = "kubernetes"))]
pub(crate) async fn create_tenant_for_tests(
    db: &crate::db::Db,
    name: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> crate::db::StoreResult<crate::ids::TenantId> {
    let tenant = model::Tenant {
        id: crate::ids::TenantId::new_random(),
        name: name.to_owned(),
        created_at: at,
        updated_at: at,
    };
    let mut tx = db.begin().await?;
    store::insert_tenant(&mut tx, &tenant).await?;
    tx.commit().await?;
    Ok(tenant.id)
}
