-- The items of a document are keyed by their id, not their place in it, so a write
-- changes only the rows of the items that changed: each row keeps a digest of what it
-- holds (NULL for rows written before: the next write of their document rewrites
-- them once). An id repeated in one document keeps its first row, as the search index
-- keeps its first occurrence.
ALTER TABLE record_items ADD COLUMN digest text;

DELETE FROM record_items a USING record_items b
 WHERE a.tenant = b.tenant AND a.agent = b.agent AND a.path = b.path AND a.id = b.id
   AND a.position > b.position;

ALTER TABLE record_items DROP CONSTRAINT record_items_pkey;
ALTER TABLE record_items ADD PRIMARY KEY (tenant, agent, path, id);
CREATE INDEX record_items_position ON record_items (tenant, agent, path, position);
