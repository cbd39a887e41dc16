-- Stored tile pyramids keep their row after rendering (docs/tiles.md, "Stored pyramids"), so
-- that replacing the content of the dataset a tiles dataset draws from queues its pyramid
-- again: `source_dataset_id` finds them, `generation` tells a renderer of the old content
-- that it was superseded, and `stored_version` / `rendering_version` name the blob folders
-- (content versions) to remove once a newer one is complete or abandoned.
--
-- state: 'queued' (to render, claimed with a lease), 'stored' (its manifest is written),
-- 'given_up' (failed too often, or cannot be drawn: its tiles are drawn on demand).
-- A faulted attempt leaves lease_owner NULL and lease_expires_at at the time it may be tried
-- again, with the fault in last_error.

ALTER TABLE tile_pyramids ADD COLUMN source_dataset_id UUID;
ALTER TABLE tile_pyramids ADD COLUMN state TEXT NOT NULL DEFAULT 'queued';
ALTER TABLE tile_pyramids ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tile_pyramids ADD COLUMN stored_version TEXT;
ALTER TABLE tile_pyramids ADD COLUMN rendering_version TEXT;
ALTER TABLE tile_pyramids ADD COLUMN last_error TEXT;
CREATE INDEX tile_pyramids_source ON tile_pyramids (source_dataset_id);
