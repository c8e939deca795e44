-- A worker pulling a document that only had parts appended since it last pulled gets
-- those parts alone: ``body_change`` is the change that last wrote the document whole
-- (an append leaves it), and each part keeps ``base_sha256``, the SHA-256 of the
-- document just before the part was added, which the pulling worker's copy must hash
-- to. Rows written before this migration have neither: they are pulled whole.
ALTER TABLE record_documents ADD COLUMN body_change bigint;
ALTER TABLE record_document_parts ADD COLUMN base_sha256 text;
