-- Each posting carries its item's length in tokens, and one index covers what BM25 reads
-- of a posting (term, agent, tenant -> row, occurrences, length): a keyword search sums
-- the parts of a word's postings from the index alone, with no look-up of the item per
-- posting. The filter is applied afterwards, to the best rows only
-- (kronika.stores.postgres.search). An item's length never changes: its rows are
-- replaced, never updated.
ALTER TABLE idx_terms ADD COLUMN doc_len integer;
UPDATE idx_terms AS t SET doc_len = i.doc_len FROM idx_items AS i WHERE i.rowid = t.item_rowid;
ALTER TABLE idx_terms ALTER COLUMN doc_len SET NOT NULL;
CREATE INDEX idx_terms_scan ON idx_terms (term, agent, tenant) INCLUDE (item_rowid, tf, doc_len);
DROP INDEX idx_terms_agent;
