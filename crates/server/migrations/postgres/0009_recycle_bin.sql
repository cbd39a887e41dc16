-- The recycle bin (spec 3.1 and 4.6, docs/recycle-bin.md): one row per project, subproject or
-- dataset a user deleted directly. The item's own row keeps deleted_at; this table is the index
-- the bin endpoints list and sort, the retention job scans, and permanent deletion works from.
--
-- container_id: the project holding the item (a dataset's project, a subproject's parent);
-- NULL for top-level projects. access_level: a deleted project's own level, fixed while it is in
-- the bin (deleted projects cannot be changed). listed: false for a dataset while a project
-- above it is in the bin (it returns with that project and is not restorable alone).
-- purging_since: set when the item is to be removed for good (permanent delete or retention);
-- from then on it is gone for users, and the purge resumes from here after a crash.
--
-- blob_garbage: blob keys whose dataset rows are gone, written in the same transaction as the
-- removal, deleted from the store afterwards (so a crash between the two loses nothing and
-- leaks nothing).

CREATE TABLE recycle_bin (
    item_id UUID PRIMARY KEY NOT NULL,
    item_type TEXT NOT NULL CHECK (item_type IN ('Project', 'Dataset')),
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    container_id UUID,
    name TEXT COLLATE "C" NOT NULL,
    access_level TEXT,
    dataset_type TEXT,
    dataset_format TEXT,
    storage_size BIGINT NOT NULL,
    deleted_at TIMESTAMPTZ NOT NULL,
    deleted_by UUID,
    listed BOOLEAN NOT NULL,
    purging_since TIMESTAMPTZ,
    purge_requested_by UUID
);
-- The listings: one index per sort key, carrying what the visibility filter reads, so that a
-- page and its total come from the index alone.
CREATE INDEX recycle_bin_by_deleted_at ON recycle_bin (tenant_id, deleted_at, item_id, container_id, item_type, access_level, deleted_by) WHERE listed = TRUE AND purging_since IS NULL;
CREATE INDEX recycle_bin_by_name ON recycle_bin (tenant_id, name, item_id, container_id, item_type, access_level, deleted_by) WHERE listed = TRUE AND purging_since IS NULL;
CREATE INDEX recycle_bin_by_size ON recycle_bin (tenant_id, storage_size, item_id, container_id, item_type, access_level, deleted_by) WHERE listed = TRUE AND purging_since IS NULL;
CREATE INDEX recycle_bin_by_deleter ON recycle_bin (tenant_id, deleted_by, deleted_at, item_id, container_id, item_type, access_level) WHERE listed = TRUE AND purging_since IS NULL;
CREATE INDEX recycle_bin_by_container ON recycle_bin (container_id, item_type);
-- The listings of one project's items, and the distinct containers of a tenant's listed items
-- (read by a loose index scan).
CREATE INDEX recycle_bin_listed_containers ON recycle_bin (tenant_id, container_id, deleted_at, item_id) WHERE listed = TRUE AND purging_since IS NULL;
CREATE INDEX recycle_bin_expiry ON recycle_bin (deleted_at) WHERE purging_since IS NULL;
CREATE INDEX recycle_bin_purging ON recycle_bin (purging_since) WHERE purging_since IS NOT NULL;

-- A version per tenant, bumped in every transaction that changes what its bin listings show:
-- the processes cache listing totals under it (counting 100,000 rows costs more than a page).
CREATE TABLE recycle_bin_versions (
    tenant_id UUID PRIMARY KEY NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    version BIGINT NOT NULL
);

-- Purges walk deleted subtrees and their datasets, which the live-only indexes of 0002 and
-- 0003 leave out.
CREATE INDEX projects_by_parent ON projects (parent_id);
CREATE INDEX datasets_by_project_any ON datasets (project_id);

CREATE TABLE blob_garbage (
    blob_key TEXT PRIMARY KEY NOT NULL,
    queued_at TIMESTAMPTZ NOT NULL
);

-- Items deleted before the bin had its own table. A dataset whose project lies further below a
-- deleted project shows as listed; restoring it checks the whole chain and refuses.
INSERT INTO recycle_bin (item_id, item_type, tenant_id, container_id, name, access_level, dataset_type,
    dataset_format, storage_size, deleted_at, deleted_by, listed, purging_since, purge_requested_by)
SELECT p.id, 'Project', p.tenant_id, p.parent_id, p.name, p.access_level, NULL, NULL,
    COALESCE((SELECT SUM(d.storage_size) FROM datasets d WHERE d.project_id = p.id AND d.deleted_at IS NULL), 0),
    p.deleted_at, p.deleted_by, TRUE, NULL, NULL
FROM projects p WHERE p.deleted_at IS NOT NULL;

INSERT INTO recycle_bin (item_id, item_type, tenant_id, container_id, name, access_level, dataset_type,
    dataset_format, storage_size, deleted_at, deleted_by, listed, purging_since, purge_requested_by)
SELECT d.id, 'Dataset', d.tenant_id, d.project_id, d.name, NULL, d.dataset_type, d.dataset_format,
    d.storage_size, d.deleted_at, d.deleted_by,
    NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = d.project_id AND p.deleted_at IS NOT NULL),
    NULL, NULL
FROM datasets d WHERE d.deleted_at IS NOT NULL;
