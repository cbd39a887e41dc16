-- The Kubernetes executor creates one Job per run of a transfer. dispatches counts the Jobs
-- created for the transfer and numbers their names (basin-transfer-<id>-<n>), so that a new
-- Job never collides with an older one that Kubernetes still keeps; it is not attempts,
-- which goes back down when a worker gives its transfer back. dispatched_job names the
-- transfer's latest Job and is cleared when that Job's worker gives the transfer back, and
-- dispatched_at, compared with lease_expires_at, tells whether the transfer was dispatched
-- again since its last worker died.
ALTER TABLE transfers ADD COLUMN dispatched_job TEXT;
ALTER TABLE transfers ADD COLUMN dispatched_at TEXT;
ALTER TABLE transfers ADD COLUMN dispatches INTEGER NOT NULL DEFAULT 0;
