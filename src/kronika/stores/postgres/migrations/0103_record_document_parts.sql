-- A document that only grew at its end (a session given new turns) keeps its added
-- text as parts after its body instead of its body written again, so an appended
-- turn writes its own bytes, not the whole conversation's: the document's text is its
-- body followed by its parts in the order of the changes that added them. Writing the
-- document whole sets its body and removes its parts.
CREATE TABLE record_document_parts (
    tenant text NOT NULL,
    agent text NOT NULL,
    path text NOT NULL,
    change bigint NOT NULL,
    text text NOT NULL,
    PRIMARY KEY (tenant, agent, path, change),
    FOREIGN KEY (tenant, agent, path) REFERENCES record_documents (tenant, agent, path)
);
