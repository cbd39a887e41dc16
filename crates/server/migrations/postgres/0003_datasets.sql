-- Datasets: files and data placed in a project. The bytes live in the blob store under
-- data_path; deleted_at marks the recycle bin.

CREATE TABLE datasets (
    id UUID PRIMARY KEY NOT NULL,
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    project_id UUID NOT NULL REFERENCES projects (id),
    name TEXT COLLATE "C" NOT NULL,
    description TEXT NOT NULL,
    dataset_type TEXT,
    dataset_format TEXT NOT NULL,
    data_path TEXT NOT NULL,
    metadata TEXT NOT NULL,
    properties TEXT NOT NULL,
    tags TEXT NOT NULL,
    temporal_information TEXT,
    spatial_information TEXT,
    storage_size BIGINT NOT NULL,
    checksum TEXT,
    row_version BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    created_by UUID,
    updated_at TIMESTAMPTZ NOT NULL,
    updated_by UUID,
    deleted_at TIMESTAMPTZ,
    deleted_by UUID
);
CREATE INDEX datasets_by_project ON datasets (project_id, name, id) WHERE deleted_at IS NULL;
CREATE INDEX datasets_by_data_path ON datasets (data_path);
