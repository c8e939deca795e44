-- The store of record: tenants, agents, every Markdown document of an agent (its
-- text and a change number), what was parsed from them (facts with their history,
-- notes, conversation turns, summaries; proposals), and the audit trail.
CREATE SEQUENCE record_change_seq;

CREATE TABLE record_tenants (
    tenant text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE record_agents (
    tenant text NOT NULL REFERENCES record_tenants (tenant),
    agent text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, agent)
);

-- One row per document; a removed one keeps its row with body NULL (nothing readable)
-- so that every worker's copy learns of the removal.
CREATE TABLE record_documents (
    tenant text NOT NULL,
    agent text NOT NULL,
    path text NOT NULL,
    body text,
    sha256 text,
    modified_ns bigint NOT NULL,
    change bigint NOT NULL,
    PRIMARY KEY (tenant, agent, path),
    FOREIGN KEY (tenant, agent) REFERENCES record_agents (tenant, agent)
);
CREATE INDEX record_documents_change ON record_documents (tenant, change);

-- The items of each document, rewritten in the transaction that writes the document.
CREATE TABLE record_items (
    tenant text NOT NULL,
    agent text NOT NULL,
    path text NOT NULL,
    position integer NOT NULL,
    id text NOT NULL,
    type text NOT NULL,
    status text NOT NULL,
    scope text NOT NULL,
    channel text,
    user_name text,
    team text,
    key text,
    section text,
    content text NOT NULL,
    created_at timestamptz NOT NULL,
    valid_from timestamptz,
    valid_to timestamptz,
    superseded_by text,
    session_id text,
    speaker text,
    data jsonb NOT NULL,
    PRIMARY KEY (tenant, agent, path, position),
    FOREIGN KEY (tenant, agent, path) REFERENCES record_documents (tenant, agent, path)
);
CREATE INDEX record_items_id ON record_items (tenant, agent, id);
CREATE INDEX record_items_key ON record_items (tenant, agent, key) WHERE key IS NOT NULL;

CREATE TABLE record_proposals (
    tenant text NOT NULL,
    agent text NOT NULL,
    id text NOT NULL,
    source_agent text NOT NULL,
    created_at timestamptz NOT NULL,
    section text NOT NULL,
    text text NOT NULL,
    PRIMARY KEY (tenant, agent, id),
    FOREIGN KEY (tenant, agent) REFERENCES record_agents (tenant, agent)
);

-- "at" is kept as written (its offset) and as a time to sort and filter by.
CREATE TABLE record_audit (
    seq bigserial PRIMARY KEY,
    tenant text NOT NULL REFERENCES record_tenants (tenant),
    at text NOT NULL,
    at_time timestamptz NOT NULL,
    action text NOT NULL,
    target_agent text NOT NULL,
    source_agent text NOT NULL,
    section text NOT NULL,
    item_id text,
    summary text NOT NULL,
    outcome text NOT NULL
);
CREATE INDEX record_audit_agent ON record_audit (tenant, target_agent, seq);
