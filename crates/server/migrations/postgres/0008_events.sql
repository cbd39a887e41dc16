-- The outbox of platform events (docs/events.md): each row is written in the same transaction
-- as the change it reports, so an event exists exactly when its change committed. The relay
-- delivers rows to the configured sinks and prunes them once every sink has them.

CREATE TABLE event_outbox (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id UUID NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    ordering_key TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX event_outbox_by_key ON event_outbox (ordering_key, seq);
