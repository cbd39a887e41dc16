-- Identity: tenants (sites), users, tenant membership, API keys and the bootstrap record.
-- Names sort with the "C" collation so ordering (and paging cursors) match SQLite byte order.

CREATE TABLE tenants (
    id UUID PRIMARY KEY NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX tenants_by_name ON tenants (name, id);
CREATE INDEX tenants_by_created_at ON tenants (created_at, id);

CREATE TABLE users (
    id UUID PRIMARY KEY NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    email TEXT,
    disabled_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX users_by_email ON users (lower(email));
CREATE INDEX users_by_name ON users (name, id);
CREATE INDEX users_by_created_at ON users (created_at, id);

CREATE TABLE tenant_members (
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('Owner', 'Administrator', 'User')),
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX tenant_members_by_user ON tenant_members (user_id);

CREATE TABLE api_keys (
    id UUID PRIMARY KEY NOT NULL,
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('Owner', 'Administrator', 'User')),
    key_hash BYTEA NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL,
    created_by UUID,
    revoked_at TIMESTAMPTZ,
    revoked_by UUID
);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at, id);

CREATE TABLE bootstrap (
    id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    user_id UUID NOT NULL REFERENCES users (id),
    api_key_id UUID NOT NULL REFERENCES api_keys (id),
    created_at TIMESTAMPTZ NOT NULL
);
