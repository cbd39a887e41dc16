-- Invitations to join a tenant, by e-mail address. A tenant manager who adds a member by an
-- address that is not a user it can reach gets an invitation, whether or not the address is
-- known elsewhere on the platform, so the answer reveals nothing; the user holding the address
-- accepts or declines it.
CREATE TABLE invitations (
    id UUID PRIMARY KEY NOT NULL,
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('Owner', 'Administrator', 'User')),
    invited_by UUID,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX invitations_by_tenant_email ON invitations (tenant_id, email);
CREATE INDEX invitations_by_email ON invitations (email);
