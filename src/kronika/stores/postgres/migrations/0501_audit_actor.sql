-- Who acted, beside source_agent: the id of the API key a change came through and the
-- user it was made for (kronika.ports.AuditEntry.api_key, .user); NULL in older rows.
ALTER TABLE record_audit ADD COLUMN IF NOT EXISTS api_key text;
ALTER TABLE record_audit ADD COLUMN IF NOT EXISTS acting_user text;
