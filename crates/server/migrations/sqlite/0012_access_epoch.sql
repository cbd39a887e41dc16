-- The access epoch (docs/authentication.md, caches): raised by every change to a table
-- that decides who may read what, so that a process keeping authentication and access checks
-- in memory learns of changes made by another process (a replica, `basin worker`, an admin
-- command) by reading one row. Inserts of datasets and projects grant nothing to anyone who
-- could already read, so only their updates and deletes count; membership and identity count
-- in full.

CREATE TABLE access_epoch (
    id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    epoch INTEGER NOT NULL
);
INSERT INTO access_epoch (id, epoch) VALUES (1, 0);

CREATE TRIGGER tenants_access_update AFTER UPDATE ON tenants
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER tenants_access_delete AFTER DELETE ON tenants
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;

CREATE TRIGGER users_access_update AFTER UPDATE ON users
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER users_access_delete AFTER DELETE ON users
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;

CREATE TRIGGER tenant_members_access_insert AFTER INSERT ON tenant_members
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER tenant_members_access_update AFTER UPDATE ON tenant_members
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER tenant_members_access_delete AFTER DELETE ON tenant_members
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;

CREATE TRIGGER api_keys_access_update AFTER UPDATE ON api_keys
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_access_delete AFTER DELETE ON api_keys
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;

CREATE TRIGGER projects_access_update AFTER UPDATE ON projects
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER projects_access_delete AFTER DELETE ON projects
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;

CREATE TRIGGER project_members_access_insert AFTER INSERT ON project_members
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER project_members_access_update AFTER UPDATE ON project_members
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER project_members_access_delete AFTER DELETE ON project_members
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;

CREATE TRIGGER datasets_access_update AFTER UPDATE ON datasets
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER datasets_access_delete AFTER DELETE ON datasets
BEGIN UPDATE access_epoch SET epoch = epoch + 1 WHERE id = 1; END;
