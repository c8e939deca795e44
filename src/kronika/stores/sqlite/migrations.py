"""The index schema as named migrations, applied in order and recorded in ``migrations``.

A migration is never edited once released: a schema change is a new ``(name, sql)``
pair appended to :data:`MIGRATIONS`. Each one runs in the same write transaction
as the row recording it, so a crash leaves it either fully applied or not at all,
and two processes opening a fresh index cannot both apply it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from kronika.stores.sqlite import recall_log

_SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE sources (
    agent        TEXT NOT NULL,
    path         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    size         INTEGER NOT NULL,
    PRIMARY KEY (agent, path)
) WITHOUT ROWID;

-- source_agent/source_path name the Markdown file the item was indexed from
-- (the replacement unit); path/line are the item's own provenance.
-- rowids only grow (AUTOINCREMENT): a replaced item gets a new rowid, which lets
-- the vector snapshot fetch just the rows added since it was loaded.
CREATE TABLE items (
    rowid         INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    source_agent  TEXT NOT NULL,
    source_path   TEXT NOT NULL,
    agent         TEXT NOT NULL,
    tenant        TEXT NOT NULL,
    path          TEXT NOT NULL,
    line          INTEGER,
    session_id    TEXT,
    turn_ids      TEXT NOT NULL,
    type          TEXT NOT NULL,
    layer         INTEGER NOT NULL,
    tier          TEXT NOT NULL,
    scope         TEXT NOT NULL,
    channel       TEXT,
    user          TEXT,
    key           TEXT,
    key_norm      TEXT,
    value         TEXT,
    multi         INTEGER NOT NULL,
    source        TEXT NOT NULL,
    section       TEXT,
    kind          TEXT,
    confidence    REAL,
    importance    REAL NOT NULL,
    status        TEXT NOT NULL,
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    valid_from    REAL,
    valid_to      REAL,
    superseded_by TEXT,
    speaker       TEXT,
    speaker_norm  TEXT,
    entities      TEXT NOT NULL,
    tags          TEXT NOT NULL,
    content       TEXT NOT NULL,
    text_hash     TEXT NOT NULL
);
CREATE INDEX items_source ON items (source_agent, source_path);
CREATE INDEX items_agent_created ON items (agent, created_at);
CREATE INDEX items_created ON items (created_at);
CREATE INDEX items_type ON items (type);
CREATE INDEX items_status ON items (status);
CREATE INDEX items_key ON items (key_norm) WHERE key_norm IS NOT NULL;
CREATE INDEX items_text_hash ON items (text_hash);

-- Holds accent-folded copies of the searchable columns (see query.fold), hence
-- not an external-content table over items.
CREATE VIRTUAL TABLE items_fts USING fts5 (
    content, key, entities, speaker,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Rowids of deleted items, so a process holding vectors in memory can drop exactly
-- those instead of re-reading every rowid. Pruned to the newest entries on write.
CREATE TABLE item_deletions (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    item_rowid INTEGER NOT NULL
);
CREATE TRIGGER items_deleted AFTER DELETE ON items BEGIN
    INSERT INTO item_deletions (item_rowid) VALUES (old.rowid);
END;

CREATE TABLE item_entities (
    item_rowid  INTEGER NOT NULL REFERENCES items (rowid) ON DELETE CASCADE,
    entity_norm TEXT NOT NULL,
    PRIMARY KEY (item_rowid, entity_norm)
) WITHOUT ROWID;
CREATE INDEX item_entities_norm ON item_entities (entity_norm);

-- A cache, not derived from Markdown: reset() keeps it, so a rebuild never
-- re-embeds unchanged text. vec is little-endian float32. seq only grows
-- (AUTOINCREMENT), so readers can fetch just the vectors stored since they last looked.
CREATE TABLE embeddings (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    text_hash TEXT NOT NULL,
    model     TEXT NOT NULL,
    vec       BLOB NOT NULL,
    UNIQUE (text_hash, model)
);

-- Keyed by item id (not rowid) so statistics survive a rebuild.
CREATE TABLE usage (
    item_id          TEXT PRIMARY KEY,
    access_count     INTEGER NOT NULL,
    last_accessed_at REAL
) WITHOUT ROWID;
"""

# Porter stemming ("painting" finds "painted") measured +3-4 points of LoCoMo recall at
# every k; it is applied to stored text and queries alike, so other languages only
# lose the rare English-suffix collision. Rows are copied across, so no re-parse.
_FTS_PORTER = """
CREATE VIRTUAL TABLE items_fts_new USING fts5 (
    content, key, entities, speaker,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO items_fts_new (rowid, content, key, entities, speaker)
    SELECT rowid, content, key, entities, speaker FROM items_fts;
DROP TABLE items_fts;
ALTER TABLE items_fts_new RENAME TO items_fts;
"""

# Whether every item is one tenant's is asked before the first search of a process
# (SqliteIndex._holds_only); without an index that question reads every row.
_TENANT_INDEX = """
CREATE INDEX items_tenant ON items (tenant);
"""

# A random id for this index file: caches saved beside it (the vector copy) name it,
# so a file moved aside as corrupt and recreated never reuses the old one's caches.
_IDENTITY = """
INSERT OR IGNORE INTO meta (key, value) VALUES ('index_id', lower(hex(randomblob(16))));
"""

# The team a team-scoped item is shared with: visibility (core/visibility.py) reads
# tenant, scope, channel, user and team; rows indexed before it have no team, as no
# item had one. No index on it: searches read visibility from the in-memory columns.
_ITEM_TEAM = """
ALTER TABLE items ADD COLUMN team TEXT;
"""

# An item's place among the items of its file (0, 1, 2… in file order): a turn's
# conversation neighbours are the rows of its file at the places around its own, so a
# turn appended to one session while others grow too needs only its own rows (rowids
# of one file no longer have to be consecutive). Rows indexed before it were numbered
# consecutively per file, which the backfill keeps.
_ITEM_POSITIONS = """
ALTER TABLE items ADD COLUMN pos INTEGER NOT NULL DEFAULT 0;
UPDATE items SET pos = numbered.pos FROM (
    SELECT rowid AS rid, row_number() OVER (
        PARTITION BY source_agent, source_path ORDER BY rowid
    ) - 1 AS pos FROM items
) AS numbered WHERE items.rowid = numbered.rid;
CREATE INDEX items_source_pos ON items (source_agent, source_path, pos);
DROP INDEX items_source;
"""

# The recall log (kronika.stores.sqlite.recall_log): statistics of use, kept by item
# id like the usage statistics, so that they survive a rebuild.
RECALL_LOG = recall_log.SCHEMA

MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("0001_initial_schema", _SCHEMA),
    ("0002_fts_porter_stemming", _FTS_PORTER),
    ("0003_tenant_index", _TENANT_INDEX),
    ("0004_index_identity", _IDENTITY),
    ("0005_item_team", _ITEM_TEAM),
    ("0006_item_positions", _ITEM_POSITIONS),
    ("0007_recall_log", RECALL_LOG),
)
"""Every migration, oldest first."""


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (``sqlite3.complete_statement`` decides)."""
    statements: list[str] = []
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                statements.append(pending.strip())
            pending = ""
    if pending.strip() and not pending.strip().startswith("--"):
        statements.append(pending.strip())
    return statements


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations recorded in ``conn``, in the order they were applied."""
    rows = conn.execute("SELECT name FROM migrations ORDER BY applied_at, name").fetchall()
    return [str(name) for (name,) in rows]


def apply_migrations(
    conn: sqlite3.Connection,
    migrations: Sequence[tuple[str, str]] = MIGRATIONS,
) -> list[str]:
    """Apply the migrations not yet recorded; return the names applied now.

    ``conn`` must be in autocommit mode (``isolation_level=None``).
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    if set(applied_migrations(conn)) >= {name for name, _ in migrations}:
        return []
    applied_now: list[str] = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock: another process may have just migrated.
        done = set(applied_migrations(conn))
        for name, sql in migrations:
            if name in done:
                continue
            for statement in split_statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO migrations (name, applied_at)"
                " VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                (name,),
            )
            applied_now.append(name)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may already have rolled back (disk full, I/O error)
            conn.execute("ROLLBACK")
        raise
    return applied_now
