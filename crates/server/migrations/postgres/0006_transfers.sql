-- Transfers: every import, export, conversion, update and append is a row here, queued until a
-- worker claims it. A claim takes a lease (lease_owner, lease_expires_at) that the worker
-- renews while it runs; a lease that runs out means the worker died, and the transfer is taken
-- up again until attempts reaches the configured maximum. Only the lease holder may finish a
-- transfer, in the same transaction that publishes its result, so a transfer's effect happens
-- once however many workers touched it.
--
-- source_secret holds the address to fetch from when it carries credentials (ftp user and
-- password); it is never shown and is cleared when the transfer ends.
CREATE TABLE transfers (
    id UUID PRIMARY KEY NOT NULL,
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('Import', 'Export', 'Conversion', 'Append', 'Update')),
    status TEXT NOT NULL CHECK (status IN ('None', 'Pending', 'InProgress', 'Completed', 'Error')),
    format TEXT NOT NULL,
    project_id UUID,
    dataset_id UUID,
    request TEXT NOT NULL,
    source_secret TEXT,
    progress BIGINT NOT NULL DEFAULT 0,
    error_message TEXT,
    import_results TEXT NOT NULL,
    download_blob TEXT,
    attempts BIGINT NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires_at TIMESTAMPTZ,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    created_by UUID NOT NULL,
    created_by_type TEXT NOT NULL,
    started_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX transfers_queue ON transfers (status, created_at);
CREATE INDEX transfers_by_tenant ON transfers (tenant_id, created_at DESC, id);
CREATE INDEX transfers_by_creator ON transfers (created_by, created_at DESC, id);
