-- A part may replace a span of the document instead of following it: an archived fact
-- given a new value changes a few of the archive's lines, and only those are written.
-- ``at`` is the character where the part's text goes in the document as the parts
-- before it left it, and ``cut`` how many characters from there it replaces; both are
-- NULL for a part added at the end. The document's text is its body with its parts put
-- in, in the order of the changes that made them.
ALTER TABLE record_document_parts ADD COLUMN at integer, ADD COLUMN cut integer;
