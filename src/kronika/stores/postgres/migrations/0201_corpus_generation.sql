-- A generation per agent and tenant in idx_corpus, taken from one sequence by every
-- write to their rows: it names the state of those rows, so a searcher may keep the
-- document frequencies it read until the generation moves (never back to an old value,
-- even after the agent's last row went and came back).
CREATE SEQUENCE idx_corpus_generation;
ALTER TABLE idx_corpus
    ADD COLUMN generation bigint NOT NULL DEFAULT nextval('idx_corpus_generation');

CREATE OR REPLACE FUNCTION idx_corpus_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO idx_corpus AS c (agent, tenant, n, tokens)
    SELECT agent, tenant, count(*), sum(doc_len) FROM added GROUP BY agent, tenant
    ORDER BY agent, tenant
    ON CONFLICT (agent, tenant) DO UPDATE SET n = c.n + excluded.n,
        tokens = c.tokens + excluded.tokens, generation = nextval('idx_corpus_generation');
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION idx_corpus_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE idx_corpus AS c SET n = c.n - r.n, tokens = c.tokens - r.tokens,
        generation = nextval('idx_corpus_generation')
    FROM (SELECT agent, tenant, count(*) AS n, sum(doc_len) AS tokens FROM removed
          GROUP BY agent, tenant ORDER BY agent, tenant) AS r
    WHERE c.agent = r.agent AND c.tenant = r.tenant;
    DELETE FROM idx_corpus WHERE n <= 0;
    RETURN NULL;
END $$;
