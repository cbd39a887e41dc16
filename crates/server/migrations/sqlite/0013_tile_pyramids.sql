-- Stored tile pyramids (docs/tiles.md, "Stored pyramids"): one row per tiles dataset whose
-- stored levels are still to be rendered into the blob store. The row is written in the same
-- transaction as the tiles dataset, claimed by one process at a time with a lease (a crashed
-- renderer's lease runs out and another process starts again), and deleted once the
-- pyramid's manifest is written or rendering gave up. A purged dataset takes its row along
-- (ON DELETE CASCADE); its renderer learns of that when it next renews the lease.

CREATE TABLE tile_pyramids (
    dataset_id BLOB PRIMARY KEY NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    queued_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires_at TEXT
);
CREATE INDEX tile_pyramids_queue ON tile_pyramids (queued_at, dataset_id);
