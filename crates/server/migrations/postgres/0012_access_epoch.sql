-- Access changes (docs/authentication.md, caches): every change to a table that decides
-- who may read what notifies channel basin_access when it commits, so that a process keeping
-- authentication and access checks in memory learns of changes made by another process (a
-- replica, `basin worker`, an admin command). A notification rather than a counter row: a row
-- that every such transaction updated would be locked by each until it commits, serialising
-- them and deadlocking two that touch the same tables in opposite orders. Inserts of datasets
-- and projects grant nothing to anyone who could already read, so only their updates and
-- deletes count; membership and identity count in full.

CREATE FUNCTION basin_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('basin_access', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER tenants_access AFTER UPDATE OR DELETE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION basin_access_changed();
CREATE TRIGGER users_access AFTER UPDATE OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION basin_access_changed();
CREATE TRIGGER tenant_members_access AFTER INSERT OR UPDATE OR DELETE ON tenant_members
    FOR EACH STATEMENT EXECUTE FUNCTION basin_access_changed();
CREATE TRIGGER api_keys_access AFTER UPDATE OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION basin_access_changed();
CREATE TRIGGER projects_access AFTER UPDATE OR DELETE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION basin_access_changed();
CREATE TRIGGER project_members_access AFTER INSERT OR UPDATE OR DELETE ON project_members
    FOR EACH STATEMENT EXECUTE FUNCTION basin_access_changed();
CREATE TRIGGER datasets_access AFTER UPDATE OR DELETE ON datasets
    FOR EACH STATEMENT EXECUTE FUNCTION basin_access_changed();
