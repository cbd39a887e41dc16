-- Projects and subprojects (folders) with their members. Capabilities are computed, never
-- stored. deleted_at marks the recycle bin; every regular query filters it out.

CREATE TABLE projects (
    id UUID PRIMARY KEY NOT NULL,
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    parent_id UUID REFERENCES projects (id),
    root_id UUID NOT NULL,
    depth BIGINT NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT NOT NULL,
    metadata TEXT NOT NULL,
    settings TEXT NOT NULL,
    access_level TEXT NOT NULL CHECK (access_level IN ('Confidential', 'Private', 'Shared')),
    inherits_members BOOLEAN NOT NULL,
    has_thumbnail BOOLEAN NOT NULL,
    billing_information TEXT,
    row_version BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    created_by UUID,
    updated_at TIMESTAMPTZ NOT NULL,
    updated_by UUID,
    deleted_at TIMESTAMPTZ,
    deleted_by UUID
);
CREATE INDEX projects_roots_by_name ON projects (tenant_id, name, id) WHERE parent_id IS NULL AND deleted_at IS NULL;
CREATE INDEX projects_roots_by_created_at ON projects (tenant_id, created_at, id) WHERE parent_id IS NULL AND deleted_at IS NULL;
CREATE INDEX projects_roots_by_updated_at ON projects (tenant_id, updated_at, id) WHERE parent_id IS NULL AND deleted_at IS NULL;
CREATE INDEX projects_children_by_name ON projects (parent_id, name, id) WHERE deleted_at IS NULL;
CREATE INDEX projects_children_by_created_at ON projects (parent_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX projects_children_by_updated_at ON projects (parent_id, updated_at, id) WHERE deleted_at IS NULL;
CREATE INDEX projects_by_root ON projects (root_id);

CREATE TABLE project_members (
    project_id UUID NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    principal_id UUID NOT NULL,
    principal_type TEXT NOT NULL CHECK (principal_type IN ('UserIdentity', 'OpenAPIAccount', 'MemberGroup')),
    role TEXT NOT NULL CHECK (role IN ('Owner', 'Contributor', 'Reader')),
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (project_id, principal_id)
);
CREATE INDEX project_members_by_principal ON project_members (principal_id, project_id);
