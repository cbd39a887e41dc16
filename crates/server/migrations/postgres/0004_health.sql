-- One row that the readiness probe updates inside a transaction it rolls back: /health/ready
-- answers only when the database can take a write, not merely a read.
CREATE TABLE health_probe (
    id INTEGER PRIMARY KEY NOT NULL,
    checked_at TIMESTAMPTZ NOT NULL
);
INSERT INTO health_probe (id, checked_at) VALUES (1, '1970-01-01T00:00:00+00:00');
