-- An item's vector (2 KB at 512 dimensions, which does not compress) is kept in its row
-- rather than out of line in TOAST: a vector search computes each candidate's exact
-- score from it, one heap page per row instead of a heap page, a TOAST index look-up
-- and the TOAST pages. A row is moved out of line only if it would not fit a page
-- otherwise. Rows written before keep their place until they are written again.
ALTER TABLE idx_items ALTER COLUMN vec SET STORAGE MAIN;
