-- Identity: tenants (sites), users, tenant membership, API keys and the bootstrap record.
-- Ids are 16-byte UUID blobs; times are RFC 3339 text in UTC with microseconds.

CREATE TABLE tenants (
    id BLOB PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX tenants_by_name ON tenants (name, id);
CREATE INDEX tenants_by_created_at ON tenants (created_at, id);

CREATE TABLE users (
    id BLOB PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    email TEXT,
    disabled_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX users_by_email ON users (lower(email));
CREATE INDEX users_by_name ON users (name, id);
CREATE INDEX users_by_created_at ON users (created_at, id);

CREATE TABLE tenant_members (
    tenant_id BLOB NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id BLOB NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('Owner', 'Administrator', 'User')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX tenant_members_by_user ON tenant_members (user_id);

CREATE TABLE api_keys (
    id BLOB PRIMARY KEY NOT NULL,
    tenant_id BLOB NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('Owner', 'Administrator', 'User')),
    key_hash BLOB NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    created_by BLOB,
    revoked_at TEXT,
    revoked_by BLOB
);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at, id);

CREATE TABLE bootstrap (
    id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    tenant_id BLOB NOT NULL REFERENCES tenants (id),
    user_id BLOB NOT NULL REFERENCES users (id),
    api_key_id BLOB NOT NULL REFERENCES api_keys (id),
    created_at TEXT NOT NULL
);
