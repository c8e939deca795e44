-- An item's row is not compressed while it fits a page: PostgreSQL compresses a row's
-- long values (pglz) once the row passes 2 KB, and a row with a 512-dimension vector
-- (2 KB) always does. Vectors with repeated values (a hashing or a quantised embedder)
-- then compress, and an exact vector search decompressed every row it scored: 140-270
-- ms for 10,000 rows against 9-13 ms stored plain. A row too long for a page is still
-- compressed, and moved out of line if need be, as before. Rows written before keep
-- their form until they are written again (or `kronika index rebuild`).
ALTER TABLE idx_items SET (toast_tuple_target = 8160);
