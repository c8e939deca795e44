-- The vectors the HNSW graph is built over, in a table of their own keyed by item id.
--
-- The graph was an index of idx_items, and PostgreSQL gives every new version of a row
-- a new entry in every index of the table: a row renumbered in its file (pos, line) or
-- moved to another file (the Brain's fact to the archive: deleted from one and inserted
-- in the other) went into the graph again, 3-5 ms a row at 10,000 items, though its
-- vector was the same. A remember() wrote 3.5 row versions for the one new item. Here
-- an item's vector is written when the item first has it or its vector changes; the row
-- of idx_items keeps its own copy for the exact scan, which reads one table.
--
-- Inserts and updates of idx_items write it by statement triggers, so every way rows are
-- written (COPY, UPDATE, the model's vectors replaced) keeps the two alike; their
-- functions keep the schema they were made in, whatever session writes a row. A row
-- deleted leaves its vector behind: the file it moves to is written by the next
-- transaction. drop_unused_embeddings, after both, deletes the vectors of ids left
-- without an item, and a forget every vector without an item; meanwhile no search
-- sees them (it joins idx_items).
CREATE TABLE idx_graph (
    item_id text PRIMARY KEY,
    vec     vector NOT NULL
);
-- as idx_items' vectors (0203, 0205): kept in the row, not compressed
ALTER TABLE idx_graph ALTER COLUMN vec SET STORAGE MAIN;
ALTER TABLE idx_graph SET (toast_tuple_target = 8160);

CREATE FUNCTION idx_graph_put() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO idx_graph AS g (item_id, vec)
    SELECT n.id, n.vec FROM written AS n WHERE n.vec IS NOT NULL ORDER BY n.id
    ON CONFLICT (item_id) DO UPDATE SET vec = excluded.vec
        WHERE g.vec IS DISTINCT FROM excluded.vec;
    DELETE FROM idx_graph
    WHERE item_id = ANY(ARRAY(SELECT n.id FROM written AS n WHERE n.vec IS NULL));
    RETURN NULL;
END $$;

-- an UPDATE that leaves the vector as it was (a renumbering) touches no graph row
CREATE FUNCTION idx_graph_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO idx_graph AS g (item_id, vec)
    SELECT n.id, n.vec FROM written AS n JOIN was AS o ON o.rowid = n.rowid
    WHERE n.vec IS NOT NULL AND (n.vec IS DISTINCT FROM o.vec OR n.id IS DISTINCT FROM o.id)
    ORDER BY n.id
    ON CONFLICT (item_id) DO UPDATE SET vec = excluded.vec
        WHERE g.vec IS DISTINCT FROM excluded.vec;
    DELETE FROM idx_graph
    WHERE item_id = ANY(ARRAY(SELECT n.id FROM written AS n WHERE n.vec IS NULL));
    RETURN NULL;
END $$;

CREATE TRIGGER idx_graph_added AFTER INSERT ON idx_items
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION idx_graph_put();
CREATE TRIGGER idx_graph_updated AFTER UPDATE ON idx_items
    REFERENCING OLD TABLE AS was NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION idx_graph_changed();

INSERT INTO idx_graph (item_id, vec) SELECT id, vec FROM idx_items WHERE vec IS NOT NULL;

-- a graph built over idx_items is built again over idx_graph, in the background
DO $$
DECLARE name text;
BEGIN
    FOR name IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
        AND tablename = 'idx_items' AND indexname LIKE 'idx\_items\_hnsw\_%'
    LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', name);
    END LOOP;
END $$;
