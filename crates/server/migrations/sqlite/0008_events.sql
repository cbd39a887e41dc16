-- The outbox of platform events (docs/events.md): each row is written in the same transaction
-- as the change it reports, so an event exists exactly when its change committed. The relay
-- delivers rows to the configured sinks and prunes them once every sink has them.
--
-- Delivery is tracked per row and sink, never with a high-water mark (see the PostgreSQL
-- migration: there a lower seq can commit after a higher one).

CREATE TABLE event_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id BLOB NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    ordering_key TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- Set once the relay has made this row's delivery rows (one per sink that takes its type).
    dispatched BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX event_outbox_by_key ON event_outbox (ordering_key, seq);
CREATE INDEX event_outbox_undispatched ON event_outbox (seq) WHERE dispatched = FALSE;

-- One row per event and sink until the sink has it (then the row is deleted) or it is given up
-- (state 'dead', kept for the admin endpoint to list and replay).
CREATE TABLE event_deliveries (
    seq INTEGER NOT NULL REFERENCES event_outbox (seq) ON DELETE CASCADE,
    sink TEXT NOT NULL,
    ordering_key TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    lease_owner TEXT,
    lease_expires_at TEXT,
    last_error TEXT,
    dead_at TEXT,
    PRIMARY KEY (seq, sink)
);
CREATE INDEX event_deliveries_by_key ON event_deliveries (sink, ordering_key, seq);
CREATE INDEX event_deliveries_due ON event_deliveries (sink, state, next_attempt_at);
