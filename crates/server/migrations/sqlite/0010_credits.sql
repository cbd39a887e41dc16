-- Credits (spec 2.1 and 4.1, wire-contract 7; docs/credits.md): a ledger of lots in pools.
--
-- credit_pools: one row per pool, the tenant's (id = tenant id) or the generic pool of credits
-- not assigned to a tenant (id = the nil uuid, tenant_id NULL). Every change to a pool first
-- takes its row (FOR UPDATE on PostgreSQL; SQLite has one writer), so changes to one pool are
-- serial. received: credits the pool ever received (adds and moves in), bounded so that every
-- sum of its amounts fits in a 64-bit integer.
--
-- Amounts are whole micro-credits (10^-6 credit) in BIGINT columns: exact, never floating point.
--
-- credit_lots: the credits of one pool with one billing reference and one expiry date, by status.
-- A lot is expired from the day after expires_on (UTC). Amounts never go negative.
--
-- credit_operations: reservations and direct spends, one per (tenant, operation id);
-- credit_operation_lots: what each took from each lot (still reserved, and spent).
--
-- credit_journal: every change to a lot, append-only (triggers refuse UPDATE and DELETE): who,
-- when, what, and the change of each status. The sum of a pool's journal is its balance.
--
-- credit_orders, credit_moves: the requests already applied, by sales order id and by
-- idempotency key, so that a retried request changes nothing (a move's answer is rebuilt from
-- the journal entries of its change_id).

CREATE TABLE credit_pools (
    id BLOB PRIMARY KEY NOT NULL,
    tenant_id BLOB REFERENCES tenants (id),
    received BIGINT NOT NULL CHECK (received >= 0)
);

CREATE TABLE credit_lots (
    id BLOB PRIMARY KEY NOT NULL,
    pool_id BLOB NOT NULL REFERENCES credit_pools (id),
    billing_reference TEXT NOT NULL,
    billing_reference_tag TEXT NOT NULL,
    billing_reference_type TEXT NOT NULL,
    expires_on TEXT NOT NULL,
    available BIGINT NOT NULL CHECK (available >= 0),
    reserved BIGINT NOT NULL CHECK (reserved >= 0),
    spent BIGINT NOT NULL CHECK (spent >= 0),
    expired BIGINT NOT NULL CHECK (expired >= 0),
    created_at TEXT NOT NULL,
    UNIQUE (pool_id, billing_reference, billing_reference_tag, billing_reference_type, expires_on)
);
-- Reserving and moving take a pool's available lots, earliest expiry first.
CREATE INDEX credit_lots_available ON credit_lots (pool_id, expires_on, id) WHERE available > 0;
-- The expiry job finds pools with available credits past their date.
CREATE INDEX credit_lots_expiring ON credit_lots (expires_on, pool_id) WHERE available > 0;
-- Details pages list a pool's lots by expiry.
CREATE INDEX credit_lots_by_pool ON credit_lots (pool_id, expires_on, billing_reference, id);

CREATE TABLE credit_operations (
    id BLOB PRIMARY KEY NOT NULL,
    tenant_id BLOB NOT NULL REFERENCES tenants (id),
    operation_id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('Reserved', 'Spent', 'Released', 'TimedOut')),
    direct BOOLEAN NOT NULL,
    credits BIGINT NOT NULL CHECK (credits > 0),
    spent BIGINT NOT NULL CHECK (spent >= 0 AND spent <= credits),
    project_id BLOB,
    request TEXT NOT NULL,
    resolution TEXT,
    created_at TEXT NOT NULL,
    created_by BLOB NOT NULL,
    timeout_at TEXT,
    resolved_at TEXT,
    resolved_by BLOB,
    UNIQUE (tenant_id, operation_id)
);
-- Reservations past their timeout, per tenant and across tenants.
CREATE INDEX credit_operations_due ON credit_operations (tenant_id, timeout_at) WHERE state = 'Reserved' AND timeout_at IS NOT NULL;
CREATE INDEX credit_operations_due_any ON credit_operations (timeout_at) WHERE state = 'Reserved' AND timeout_at IS NOT NULL;

CREATE TABLE credit_operation_lots (
    operation_ref BLOB NOT NULL REFERENCES credit_operations (id),
    lot_id BLOB NOT NULL REFERENCES credit_lots (id),
    reserved BIGINT NOT NULL CHECK (reserved >= 0),
    spent BIGINT NOT NULL CHECK (spent >= 0),
    PRIMARY KEY (operation_ref, lot_id)
);
CREATE INDEX credit_operation_lots_by_lot ON credit_operation_lots (lot_id);

CREATE TABLE credit_journal (
    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
    change_id BLOB NOT NULL,
    pool_id BLOB NOT NULL REFERENCES credit_pools (id),
    lot_id BLOB NOT NULL REFERENCES credit_lots (id),
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    actor_id BLOB,
    actor_type TEXT,
    operation_id TEXT,
    sales_order_id TEXT,
    counterpart_pool_id BLOB,
    available BIGINT NOT NULL,
    reserved BIGINT NOT NULL,
    spent BIGINT NOT NULL,
    expired BIGINT NOT NULL
);
CREATE INDEX credit_journal_by_pool ON credit_journal (pool_id, sequence);
-- A retried move answers from the entries of its change.
CREATE INDEX credit_journal_by_change ON credit_journal (change_id);
CREATE TRIGGER credit_journal_no_update BEFORE UPDATE ON credit_journal
BEGIN
    SELECT RAISE(ABORT, 'credit_journal is append-only');
END;
CREATE TRIGGER credit_journal_no_delete BEFORE DELETE ON credit_journal
BEGIN
    SELECT RAISE(ABORT, 'credit_journal is append-only');
END;

CREATE TABLE credit_orders (
    sales_order_id TEXT PRIMARY KEY NOT NULL,
    request TEXT NOT NULL,
    pool_id BLOB NOT NULL REFERENCES credit_pools (id),
    credits BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    created_by BLOB NOT NULL
);

CREATE TABLE credit_moves (
    idempotency_key TEXT PRIMARY KEY NOT NULL,
    request TEXT NOT NULL,
    change_id BLOB NOT NULL,
    created_at TEXT NOT NULL,
    created_by BLOB NOT NULL
);
