-- Committed uploads: blobs under uploads/<tenant>/..., written through upload URLs. A row is
-- written (or refreshed) with every committed write, so that uploads no transfer used are
-- removed blob.upload_retention_seconds after their last write, an upload a completed import
-- took over is removed at once, and operators see the bytes each tenant keeps in uploads.
--
-- transfers.upload_key names the upload a transfer reads, so that an upload in use by a queued
-- or running transfer is never removed. Removing an upload deletes its row and queues its blob
-- in blob_garbage in one transaction; a transfer that starts from an upload reads or creates
-- its row in the transaction that queues it, and refuses one whose blob is queued for removal.
CREATE TABLE uploads (
    blob_key TEXT PRIMARY KEY NOT NULL,
    tenant_id BLOB NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    size INTEGER NOT NULL,
    committed_at TEXT NOT NULL
);
CREATE INDEX uploads_by_commit ON uploads (committed_at);
CREATE INDEX uploads_by_tenant ON uploads (tenant_id);

ALTER TABLE transfers ADD COLUMN upload_key TEXT;
UPDATE transfers SET upload_key = json_extract(request, '$.source.blobKey')
    WHERE json_valid(request) AND json_extract(request, '$.source.kind') = 'upload';
CREATE INDEX transfers_by_upload ON transfers (upload_key, status) WHERE upload_key IS NOT NULL;
