-- The server's job records (kronika.server.jobstore): a distillation started through
-- one server process can be read through any other, and outlasts a restart.
CREATE TABLE IF NOT EXISTS server_jobs (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, tenant TEXT NOT NULL, agent TEXT NOT NULL,
    params TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,
    started_at TEXT, finished_at TEXT, message TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '{}', owner TEXT NOT NULL,
    heartbeat DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS server_jobs_by_tenant ON server_jobs (tenant, created_at);
