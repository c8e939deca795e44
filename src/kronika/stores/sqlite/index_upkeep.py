"""Upkeep of :class:`~kronika.stores.sqlite.SqliteIndex` (:class:`~kronika.ports.IndexUpkeep`):
the values the index keeps about itself, its statistics, the text of deleted rows
scrubbed from the file, its ``-wal`` and the copies and graph beside it (:mod:`.scrub`),
SQLite's integrity check, starting anew on a damaged file, and closing.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from kronika.core.model import layer_counts
from kronika.errors import IndexError_
from kronika.stores.sqlite import scrub
from kronika.stores.sqlite.index_base import BUSY_TIMEOUT_S, IndexState
from kronika.stores.sqlite.index_snapshots import Snapshots
from kronika.stores.sqlite.migrations import applied_migrations
from kronika.stores.sqlite.recovery import integrity_problems, move_aside
from kronika.stores.sqlite.vectors import read_transaction

log = logging.getLogger("kronika")


class SqliteUpkeep:
    """Meta values, statistics, scrubbing deleted text, checking integrity, starting
    anew and closing (:class:`~kronika.ports.IndexUpkeep`)."""

    def __init__(self, state: IndexState, snapshots: Snapshots) -> None:
        self.state = state
        self.snapshots = snapshots

    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What SQLite finds wrong with the file (:func:`.recovery.integrity_problems`)."""
        with self.state.lock:
            return integrity_problems(self.state.conn, full=full)

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
                gone = scrub.gone_rows(conn, candidates)
            if gone is None and not everything:
                return False
            began = time.perf_counter()
            with self.state.writing() as conn:
                scrub.merge_fts(conn)
                scrub.drop_usage(conn, gone or [])
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('scrubbed', lower(hex(randomblob(8))))"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                )
                (self.state.scrubbed,) = conn.execute(
                    "SELECT value FROM meta WHERE key = 'scrubbed'"
                ).fetchone()
            merged = time.perf_counter()
            self._scrub_beside(None if everything else list(candidates))
            beside = time.perf_counter()
            with self.state.reading() as conn:
                if not scrub.checkpoint(conn, restore_s=BUSY_TIMEOUT_S):
                    log.info("a reader kept the -wal of %s; it is truncated later", self.state.path)
            done = time.perf_counter()
            log.info(
                "scrubbed %d deleted rows from %s in %.3f s (full-text merge %.3f s,"
                " copies and graph %.3f s, -wal %.3f s)",
                len(candidates),
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

    def set_meta_value(self, key: str, value: str) -> None:
        with self.state.writing() as conn:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def meta_value(self, key: str) -> str | None:
        with self.state.reading() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def stats(self) -> dict[str, Any]:
        """Counts per agent and type, embedded items, the model, file sizes and migrations."""
        with self.state.reading() as conn:
            one = conn.execute
            by_agent = dict(one("SELECT agent, count(*) FROM items GROUP BY 1").fetchall())
            by_type = dict(one("SELECT type, count(*) FROM items GROUP BY 1").fetchall())
            by_layer = dict(one("SELECT layer, count(*) FROM items GROUP BY 1").fetchall())
            (embedded,) = one(
                "SELECT count(*) FROM items AS i WHERE EXISTS (SELECT 1 FROM embeddings AS e"
                " WHERE e.text_hash = i.text_hash AND e.model = ? AND length(e.vec) = ?)",
                (self.state.model, self.state.dim * 4),
            ).fetchone()
            (cached,) = one("SELECT count(*) FROM embeddings").fetchone()
            (sources,) = one("SELECT count(*) FROM sources").fetchone()
            migrations = applied_migrations(conn)
        return {
            "path": str(self.state.path),
            "items": sum(by_agent.values()),
            "items_by_agent": by_agent,
            "items_by_type": by_type,
            "items_by_layer": layer_counts(by_layer),
            "sources": sources,
            "embedded": embedded,
            "embedding_model": self.state.model,
            "dim": self.state.dim,
            "embedding_cache": cached,
            "file_size": self._file_size(),
            # the vector graph and the saved snapshot copies beside the file, if any
            "caches_size": self._caches_size(),
            "migrations": migrations,
        }

    def _caches_size(self) -> int:
        if not isinstance(self.state.path, Path):
            return 0
        found = (
            p
            for kind in ("ann", "vectors", "bm25")
            for p in self.state.path.parent.glob(f"{self.state.path.name}.{kind}*")
        )
        return sum(p.stat().st_size for p in found if p.is_file())

    def _file_size(self) -> int:
        if not isinstance(self.state.path, Path):
            return 0
        files = (self.state.path, Path(f"{self.state.path}-wal"))
        return sum(f.stat().st_size for f in files if f.exists())

    def recreate(self) -> str | None:
        """Move the damaged file aside and continue on a fresh, empty one.

        Returns where the old file went (``None`` for an in-memory index, which is
        only emptied). Nothing of the old connection is saved on the way out: its
        snapshots, graph and copies may hold what the damage garbled. The caller
        refills the items from the Markdown.
        """
        with self.state.lock:
            with suppress(sqlite3.Error):  # a damaged file may refuse even that
                self.state.conn.close()
            aside = None if isinstance(self.state.path, str) else move_aside(self.state.path)
            self.state.reopen()  # the parts (and methods of them callers hold) stay valid
            return None if aside is None else str(aside)

    def close(self) -> None:
        self.state.ann.stop()  # a build under way ends first: the process may end next
        with self.state.lock:
            if self.snapshots.graph_outlived_a_scrub():
                self.state.ann.discard()
            self.state.ann.save_if_changed()
            try:
                self.snapshots.save_copies()
            except (IndexError_, OSError, ValueError) as exc:  # a cache: never stop a close
                log.warning("could not save the index's copies beside %s: %s", self.state.path, exc)
            self.state.snapshot = None
            self.state.bm25 = None
            self.state.conn.close()
