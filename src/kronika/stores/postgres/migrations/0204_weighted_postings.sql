-- A posting's occurrences are weighted by the column they are in, as in the SQLite index
-- (kronika.stores.sqlite.lexical.COLUMN_WEIGHTS): a word of a fact's key counts a quarter
-- of a word of its content, the name of a turn's speaker nothing, so tf is no longer a
-- whole number. The postings written before are replaced when the index is next opened:
-- its derivation version (3) makes kronika rebuild it from the record
-- (kronika.engine.derivation), which also searches a keyed fact's content as its value
-- and its key in words.
ALTER TABLE idx_terms ALTER COLUMN tf TYPE double precision;
