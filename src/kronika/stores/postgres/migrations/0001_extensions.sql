-- The extensions kronika uses: pgvector for embeddings, unaccent and pg_trgm for lexical
-- search in languages PostgreSQL has no stemmer for (Polish, Ukrainian).
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
