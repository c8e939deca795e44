"""Upkeep of :class:`~kronika.stores.sqlite.SqliteIndex` after writes and damage:
cached vectors no item uses are dropped, the text of deleted rows is scrubbed from the
file, its ``-wal`` and the copies and graph beside it (:mod:`.scrub`), and SQLite's
integrity check is run on request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from kronika.stores.sqlite import scrub
from kronika.stores.sqlite.index_base import BUSY_TIMEOUT_S, IndexState, _chunks
from kronika.stores.sqlite.recovery import integrity_problems
from kronika.stores.sqlite.vectors import read_transaction

log = logging.getLogger("kronika")


class SqliteUpkeep:
    """Dropping unused vectors, scrubbing deleted text, checking integrity."""

    def __init__(self, state: IndexState) -> None:
        self.state = state

    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What SQLite finds wrong with the file (:func:`.recovery.integrity_problems`)."""
        with self.state.lock:
            return integrity_problems(self.state.conn, full=full)

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
        self.scrub()
        return dropped

    def scrub(self) -> bool:
        """Leave no readable copy of a text that left the index; True if there was one.

        Deleted rows are overwritten in the file as they go (``secure_delete``); when a
        text deleted since the last call is held by no item any more, the full-text
        index is merged, the copies and the graph beside the file are rewritten or
        removed, and the ``-wal`` is truncated (:mod:`.scrub`). Writes that delete
        nothing, or only re-index the same texts, cost nothing more.
        """
        with self.state.lock:
            candidates, everything = self.state.vanished, self.state.scrub_all
            self.state.vanished, self.state.scrub_all = {}, False
            if candidates:  # forgotten ids leave the recall log too
                self.state.recall_log().drop_forgotten(
                    item_id for item_id, _ in candidates.values()
                )
            if not candidates and not everything:
                return False
            with self.state.reading() as conn:
                gone = {
                    rid: item_id
                    for rid, (item_id, row) in candidates.items()
                    if not scrub.still_held(conn, row)
                }
            if not gone and not everything:
                return False
            began = time.perf_counter()
            with self.state.writing() as conn:
                scrub.merge_fts(conn)
                scrub.drop_usage(conn, list(gone.values()))
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('scrubbed', lower(hex(randomblob(8))))"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                )
                (self.state.scrubbed,) = conn.execute(
                    "SELECT value FROM meta WHERE key = 'scrubbed'"
                ).fetchone()
            merged = time.perf_counter()
            self._scrub_beside(None if everything else list(gone))
            beside = time.perf_counter()
            with self.state.reading() as conn:
                if not scrub.checkpoint(conn, restore_s=BUSY_TIMEOUT_S):
                    log.info("a reader kept the -wal of %s; it is truncated later", self.state.path)
            done = time.perf_counter()
            log.info(
                "scrubbed %d deleted rows from %s in %.3f s (full-text merge %.3f s,"
                " copies and graph %.3f s, -wal %.3f s)",
                len(gone),
                self.state.path,
                done - began,
                merged - began,
                beside - merged,
                done - beside,
            )
            return True

    def _scrub_beside(self, gone: Sequence[int] | None) -> None:
        """Rewrite or remove the copies and the graph beside the file, which may hold
        rows of ``gone`` (``None``: after a reset), under their rowid of now or under an
        earlier one (a re-indexed file gives its unchanged items new rowids)."""
        self.state.ann.discard()  # it may hold them, as keys or as removed vectors
        if not isinstance(self.state.path, Path):
            return
        scrub.remove_graph(self.state.path.with_name(self.state.path.name + ".ann"))
        for kind in ("vectors", "bm25"):
            if gone is None:
                scrub.remove_copy(self.state.path, kind)
            else:
                self._rewrite_copy(kind)
        self.state.saved_marks = self.state.saved_bm25_marks = None  # the next close saves anew

    def _rewrite_copy(self, kind: str) -> None:
        with self.state.reading() as conn, read_transaction(conn):
            assert isinstance(self.state.path, Path)
            if kind == "vectors":
                scrub.zero_vectors(
                    conn, self.state.path, self.state.identity, self.state.model, self.state.dim
                )
            else:
                scrub.rewrite_bm25(conn, self.state.path, self.state.identity, self.state.tokenizer)
