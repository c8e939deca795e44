-- Each tenant's search index lives in a schema of its own (the idx_* tables tell their
-- sources apart by agent alone): which schema holds whose, for a person reading the
-- catalog and for tools that walk every tenant. A kronika that predates this refuses
-- the database (it does not know this migration) instead of writing an index into the
-- shared schema beside the tenants' ones.
CREATE TABLE record_index_schemas (
    tenant text PRIMARY KEY,
    schema_name text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
