-- The size of each cached vector, kept beside it. Asking which texts already have a
-- vector of the model's size read every vector found (2 KB each, kept out of line) only
-- to count its dimensions: about 0.5 ms for a Brain's few dozen texts, several times
-- on every write. Computed once per row, when it is written.
ALTER TABLE idx_embeddings
    ADD COLUMN dims integer GENERATED ALWAYS AS (vector_dims(vec)) STORED;
