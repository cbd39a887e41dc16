-- Feature status messages and tenant features (spec 2.2, 2.3, 3.2, 4.2, 4.3; docs/features.md).
--
-- feature_messages: notices of one feature (feature_id) or of all (feature_id NULL, global).
-- title is plain text and body sanitized HTML, both cleaned before they are written here.
-- version rises on every change, so the banner's ETag changes with any edit. A message is
-- active from start_date inclusive to expiring_date exclusive (start_date < expiring_date).
--
-- features: the catalogue BackOffice keeps. feature_licenses: which tenant holds which feature,
-- with the owner's switch (enabled); switching never removes or adds a license.

CREATE TABLE feature_messages (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    feature_id TEXT COLLATE "C",
    message_type TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    start_date TIMESTAMPTZ NOT NULL,
    expiring_date TIMESTAMPTZ NOT NULL,
    version BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    created_by UUID,
    updated_at TIMESTAMPTZ NOT NULL,
    updated_by UUID,
    CHECK (start_date < expiring_date)
);
CREATE INDEX feature_messages_by_start ON feature_messages (feature_id, start_date, id);
CREATE INDEX feature_messages_by_expiry ON feature_messages (feature_id, expiring_date, id);
CREATE INDEX feature_messages_expiring ON feature_messages (expiring_date);

CREATE TABLE features (
    id TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    url TEXT NOT NULL,
    response_url TEXT NOT NULL,
    feature_type TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    created_by UUID,
    updated_at TIMESTAMPTZ NOT NULL,
    updated_by UUID
);

CREATE TABLE feature_licenses (
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    feature_id TEXT COLLATE "C" NOT NULL REFERENCES features (id),
    enabled BOOLEAN NOT NULL,
    licensed_at TIMESTAMPTZ NOT NULL,
    licensed_by UUID,
    updated_at TIMESTAMPTZ NOT NULL,
    updated_by UUID,
    PRIMARY KEY (tenant_id, feature_id)
);
CREATE INDEX feature_licenses_by_feature ON feature_licenses (feature_id, tenant_id);
