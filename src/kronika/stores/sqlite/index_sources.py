"""Each Markdown file as :class:`~kronika.stores.sqlite.SqliteIndex` holds it
(:class:`~kronika.ports.IndexSources`): a file's rows replaced, patched, appended to or
removed, its state and its last rows read, and the cache of vectors by text hash
written with them, read back or dropped once no item uses them.

Every write is one ``BEGIN IMMEDIATE`` transaction. What a write deletes is noted
(its text hashes, its searchable rows) in the shared state; dropping the unused
vectors then has :mod:`.index_upkeep` scrub the copies no item needs any more.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence

from kronika.core.model import MemoryItem
from kronika.ports import SourceRows, SourceState, SourceTail, Vector, VectorPoint
from kronika.stores.sql import rows as shared
from kronika.stores.sql.rows import cached_vector, default_text_hash
from kronika.stores.sqlite import appends, patches, points, scrub
from kronika.stores.sqlite import rows as R
from kronika.stores.sqlite.dialect import SQLITE
from kronika.stores.sqlite.index_base import IndexState, _chunks
from kronika.stores.sqlite.index_upkeep import SqliteUpkeep
from kronika.stores.sqlite.vectors import read_transaction

_DELETIONS_KEPT = 100_000  # deletion-log entries kept for readers' incremental refresh


class SqliteSources:
    """Each file's rows and state, and the vector cache (:class:`~kronika.ports.IndexSources`)."""

    def __init__(self, state: IndexState, upkeep: SqliteUpkeep) -> None:
        self.state = state
        self.upkeep = upkeep

    @property
    def embedding_model(self) -> str:
        return self.state.model

    @property
    def patches_rows(self) -> bool:
        return True  # a Brain rewrite changes only the rows of the facts it changed

    def replace_source(
        self,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str] | None = None,
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> set[str]:
        """Atomically replace every item that came from ``(state.agent, state.path)``,
        caching ``vectors`` in the same transaction; with them, the text hashes of its
        rows left without a cached vector (:meth:`kronika.ports.IndexSources.replace_source`).

        One transaction, bulk ``executemany``. Ids are unique across the index: a
        repeated id within ``items`` keeps its first occurrence, and an id already
        indexed from another file moves to this one (the file indexed last wins).
        The items are numbered 0, 1, 2… in the given (file) order (their ``pos``):
        :meth:`neighbours` finds a turn's context by it.
        """
        return self.replace_sources([SourceRows(state, items, text_hashes, vectors)])

    def replace_sources(self, files: Sequence[SourceRows]) -> set[str]:
        """:meth:`replace_source` of each of ``files`` in one transaction: their vectors
        cached first, then each file's rows in order (a later file takes the ids it
        shares with an earlier one), and the sources' states with them; one commit for
        the whole batch (:meth:`kronika.ports.IndexSources.replace_sources`)."""
        blobs = self._blobs({h: v for f in files for h, v in (f.vectors or {}).items()})
        lacking: set[str] = set()
        with self.state.writing() as conn:
            self._insert_blobs(conn, blobs)
            for f in files:
                lacking |= self._replace(
                    conn, f.state, f.items, f.text_hashes, check=f.vectors is not None
                )
        return lacking

    def _replace(
        self,
        conn: sqlite3.Connection,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str] | None,
        *,
        check: bool,
    ) -> set[str]:
        """One file's rows replaced inside the write transaction on ``conn``; with
        ``check``, the text hashes of its rows with no cached vector."""
        if text_hashes is not None and len(text_hashes) != len(items):
            raise ValueError("text_hashes must have one hash per item")
        hashes = list(text_hashes) if text_hashes is not None else None
        unique: dict[str, tuple[MemoryItem, str]] = {}
        for n, item in enumerate(items):
            if item.id not in unique:
                unique[item.id] = (item, hashes[n] if hashes else default_text_hash(item))
        rows = list(unique.values())
        # the rows before the file's first change stay (their places and rowids too):
        # the rest are deleted and written again, as a full replace writes them
        head = patches.kept_head(conn, state, rows)
        tail = [it.id for it, _ in rows[head:]]
        source = [state.agent, state.path, head]
        where = "source_agent = ? AND source_path = ? AND pos >= ?"
        self._note_hashes(conn, where, source)
        old = scrub.searchable_rows(conn, where, source)
        for chunk in _chunks(tail):  # ids moving here from another file
            self._note_hashes(conn, f"id IN ({', '.join('?' * len(chunk))})", chunk)
            old.update(scrub.searchable_rows(conn, f"id IN ({', '.join('?' * len(chunk))})", chunk))
        self._delete_where(conn, where, source)
        conn.executemany(
            "DELETE FROM items_fts WHERE rowid = (SELECT rowid FROM items WHERE id = ?)",
            ((i,) for i in tail),
        )
        conn.executemany("DELETE FROM items WHERE id = ?", ((i,) for i in tail))
        top = _last_rowid(conn)
        numbered = [(top + 1 + n, pair) for n, pair in enumerate(rows[head:])]
        conn.executemany(
            R.INSERT_ITEM_SQL,
            (R.item_row(rid, it, state, h, head + rid - top - 1) for rid, (it, h) in numbered),
        )
        fts = [R.fts_row(rid, it) for rid, (it, _) in numbered]  # folded once, used twice
        conn.executemany(R.INSERT_FTS_SQL, fts)
        conn.executemany(
            "INSERT INTO item_entities (item_rowid, entity_norm) VALUES (?, ?)",
            (row for rid, (it, _) in numbered for row in R.entity_rows(rid, it)),
        )
        if old:
            kept = {row[1:] for row in fts}
            self.state.vanished.update((rid, row) for rid, row in old.items() if row[1] not in kept)
        conn.execute(
            "INSERT INTO sources (agent, path, content_hash, mtime_ns, size)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, path) DO UPDATE SET"
            " content_hash = excluded.content_hash, mtime_ns = excluded.mtime_ns,"
            " size = excluded.size",
            (state.agent, state.path, state.content_hash, state.mtime_ns, state.size),
        )
        if not check:
            return set()
        lacking = conn.execute(
            "SELECT DISTINCT i.text_hash FROM items AS i WHERE i.source_agent = ?"
            " AND i.source_path = ? AND NOT EXISTS (SELECT 1 FROM embeddings AS e"
            " WHERE e.text_hash = i.text_hash AND e.model = ?)",
            (state.agent, state.path, self.state.model),
        ).fetchall()
        return {str(h) for (h,) in lacking}

    def append_to_source(
        self,
        expected: SourceState,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> bool:
        """Add ``items`` after the rows of a file the index holds as ``expected``, and
        cache ``vectors`` (by text hash), in one transaction; ``False`` (nothing
        written) when it cannot: re-index the file."""
        blobs = self._blobs(vectors or {})
        with self.state.writing() as conn:
            top = _last_rowid(conn)
            if not appends.append_rows(conn, expected, state, items, text_hashes, top):
                return False
            self._insert_blobs(conn, blobs)
            return True

    def patch_source(
        self,
        expected: SourceState,
        state: SourceState,
        gone: Sequence[str],
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        lines: Mapping[str, int | None],
        *,
        vectors: Mapping[str, Vector] | None = None,
        held: Collection[str] | None = None,
    ) -> bool:
        """Change a few items of a file the index holds as ``expected``, in one
        transaction (:mod:`.patches`): delete this file's rows of ``gone`` and the rows
        of ``items`` (from any file: an id moving here), insert ``items``, set the line
        of the ids in ``lines``, record ``state``, cache ``vectors``. ``False`` (nothing
        written) when the index no longer holds ``expected``: re-index the file.
        ``held`` is not needed: nothing here depends on rows kept from an earlier
        write.

        An id gone from this file may be held by another file the index took it from
        (the archive's copy of a fact a move cut short put back in the Brain): that
        row is the other file's, and stays."""
        blobs = self._blobs(vectors or {})
        source = (expected.agent, expected.path)
        kept = {R.fts_row(0, it)[1:] for it in items}
        renewed = list(dict.fromkeys(item.id for item in items))
        left = [i for i in dict.fromkeys(gone) if i not in set(renewed)]
        with self.state.writing() as conn:
            if not patches.holds(conn, expected):
                return False
            self._insert_blobs(conn, blobs)
            for ids, scope in ((left, " AND source_agent = ? AND source_path = ?"), (renewed, "")):
                for chunk in _chunks(ids):
                    where = f"id IN ({', '.join('?' * len(chunk))}){scope}"
                    args = [*chunk, *source] if scope else chunk
                    self._note_hashes(conn, where, args)
                    old = scrub.searchable_rows(conn, where, args)
                    self.state.vanished.update(
                        (rid, row) for rid, row in old.items() if row[1] not in kept
                    )
                    if old:
                        self._delete_where(conn, where, args)
            patches.patch_rows(conn, state, items, text_hashes, lines, _last_rowid(conn))
            return True

    def remove_source(self, agent: str, path: str) -> None:
        with self.state.writing() as conn:
            self._note_hashes(conn, "source_agent = ? AND source_path = ?", [agent, path])
            where = "source_agent = ? AND source_path = ?"
            self.state.vanished.update(scrub.searchable_rows(conn, where, [agent, path]))
            self._delete_where(conn, where, (agent, path))
            conn.execute("DELETE FROM sources WHERE agent = ? AND path = ?", (agent, path))

    def reset(self) -> None:
        """Forget every item and source (keeps the embedding cache and usage statistics)."""
        self.state.scrub_all = True
        with self.state.writing() as conn:
            conn.execute("DELETE FROM item_entities")
            conn.execute("DELETE FROM items_fts")
            conn.execute("DELETE FROM items")
            conn.execute("DELETE FROM item_deletions")  # readers see the gap and reload
            conn.execute("DELETE FROM sources")

    @staticmethod
    def _delete_where(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> None:
        conn.execute(
            f"DELETE FROM items_fts WHERE rowid IN (SELECT rowid FROM items WHERE {where})", params
        )
        conn.execute(f"DELETE FROM items WHERE {where}", params)
        # Readers further behind than this reload their vectors in full.
        conn.execute(
            "DELETE FROM item_deletions WHERE seq <= (SELECT max(seq) FROM item_deletions) - ?",
            (_DELETIONS_KEPT,),
        )

    def _note_hashes(self, conn: sqlite3.Connection, where: str, params: Sequence[object]) -> None:
        """Remember the text hashes of the items about to be deleted (see
        :meth:`drop_unused_embeddings`)."""
        found = conn.execute(f"SELECT DISTINCT text_hash FROM items WHERE {where}", params)
        self.state.maybe_unused.update(text_hash for (text_hash,) in found)

    def store_embeddings(self, vectors: Mapping[str, Vector]) -> None:
        """Cache one vector per text hash under ``embedding_model`` (replacing any old one).

        Vectors are stored scaled to unit length (a zero vector stays zero), so
        cosine similarity is a plain dot product at search time.
        """
        blobs = self._blobs(vectors)
        with self.state.writing() as conn:
            self._insert_blobs(conn, blobs)

    def _blobs(self, vectors: Mapping[str, Vector]) -> list[tuple[str, str, bytes]]:
        """The rows of the embedding cache for ``vectors``: unit length, little-endian."""
        model, dim = self.state.model, self.state.dim
        return [
            (text_hash, model, cached_vector(text_hash, vec, dim=dim, model=model).tobytes())
            for text_hash, vec in vectors.items()
        ]

    @staticmethod
    def _insert_blobs(conn: sqlite3.Connection, blobs: Sequence[tuple[str, str, bytes]]) -> None:
        if blobs:
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings (text_hash, model, vec) VALUES (?, ?, ?)", blobs
            )

    def source_states(
        self, agent: str, paths: Sequence[str] | None = None
    ) -> dict[str, SourceState]:
        with self.state.reading() as conn:
            return shared.source_states(SQLITE, conn, agent, paths)

    def source_state(self, agent: str, path: str) -> SourceState | None:
        """The state of one indexed file (``None`` when the index holds none)."""
        with self.state.reading() as conn:
            return shared.source_state(SQLITE, conn, agent, path)

    def source_tail(self, agent: str, path: str, last: int = 2) -> SourceTail | None:
        """The end of one indexed file (:func:`kronika.stores.sqlite.appends.source_tail`)."""
        with self.state.reading() as conn, read_transaction(conn):
            return appends.source_tail(conn, agent, path, last)

    def source_items(self, agent: str, path: str) -> list[MemoryItem]:
        """The items indexed from one file, in file order."""
        sql = f"{R.SELECT_ITEM_SQL} WHERE i.source_agent = ? AND i.source_path = ? ORDER BY i.pos"
        with self.state.reading() as conn:
            return [R.item_from_row(row) for row in conn.execute(sql, (agent, path))]

    def agents(self) -> list[str]:
        with self.state.reading() as conn:
            found = conn.execute(
                "SELECT agent FROM sources UNION SELECT agent FROM items ORDER BY 1"
            ).fetchall()
        return [a for (a,) in found]

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]:
        """The hashes with no cached vector for this index's ``embedding_model``."""
        wanted = list(dict.fromkeys(text_hashes))
        present: set[str] = set()
        with self.state.reading() as conn:
            for chunk in _chunks(wanted):
                marks = ", ".join("?" * len(chunk))
                found = conn.execute(
                    f"SELECT text_hash FROM embeddings WHERE model = ? AND length(vec) = ?"
                    f" AND text_hash IN ({marks})",
                    [self.state.model, self.state.dim * 4, *chunk],
                )
                present.update(h for (h,) in found)
        return set(wanted) - present

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        """The items embedded from ``text_hashes`` (every item when ``None``) that have a
        cached vector, with it: what a vector index outside this file holds."""
        with self.state.reading() as conn, read_transaction(conn):
            wanted = points.every_text_hash(conn) if text_hashes is None else text_hashes
            return points.vector_points(conn, wanted, self.state.model, self.state.dim)

    def drop_unused_embeddings(self, *, everywhere: bool = False) -> int:
        """Delete the cached vectors of texts that no item uses any more; returns how many.

        Only the texts of items this index replaced or removed since the last call are
        looked at (an indexed look-up each), so a forgotten memory, or the words of it a
        neighbouring turn was embedded with, leaves no vector behind. :meth:`reset`
        notes nothing: a rebuild finds its unchanged texts still embedded, and then
        calls this with ``everywhere`` to look at every cached vector.

        Called after every sync, it then scrubs what the deletions left (:meth:`scrub`).
        """
        with self.state.lock:
            candidates = sorted(self.state.maybe_unused)
            self.state.maybe_unused.clear()
        unused = "NOT EXISTS (SELECT 1 FROM items AS i WHERE i.text_hash = embeddings.text_hash)"
        dropped = 0
        if everywhere:
            with self.state.writing() as conn:
                dropped = conn.execute(f"DELETE FROM embeddings WHERE {unused}").rowcount
        elif candidates:
            with self.state.writing() as conn:
                for chunk in _chunks(candidates):
                    marks = ", ".join("?" * len(chunk))
                    gone = conn.execute(
                        f"DELETE FROM embeddings WHERE text_hash IN ({marks}) AND {unused}", chunk
                    )
                    dropped += gone.rowcount
        self.upkeep.scrub()
        return dropped


def _last_rowid(conn: sqlite3.Connection) -> int:
    """The highest item rowid ever used; new rows take the next ones, so none is reused."""
    (used,) = conn.execute(
        "SELECT max(coalesce((SELECT max(rowid) FROM items), 0),"
        " coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'items'), 0))"
    ).fetchone()
    return int(used)
