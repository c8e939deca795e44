"""The SQLite implementation of :class:`kronika.ports.ItemIndex` (SPEC S2, R1, R5).

The index is derived: everything but the embedding cache and usage statistics
can be rebuilt from the Markdown workspace, so a corrupt file is moved aside and
replaced by an empty index (:meth:`SqliteIndex.open_or_rebuild`).

Concurrency: WAL journal, ``synchronous=NORMAL``, a busy timeout, and every
write in one ``BEGIN IMMEDIATE`` transaction, so several processes can share one
file. The in-memory vector snapshot is dropped after this connection writes and
whenever ``PRAGMA data_version`` shows another connection committed.

The class is composed of mixins, one concern each: the connection and its state
(:mod:`.index_base`), the in-memory snapshots (:mod:`.index_snapshots`), reads
(:mod:`.index_reads`), search (:mod:`.index_search`), writes (:mod:`.index_writes`)
and upkeep (:mod:`.index_upkeep`); this module opens, recreates and closes it.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import suppress
from pathlib import Path
from typing import Any

from kronika.errors import CorruptIndexError, IndexError_
from kronika.stores.sqlite.index_base import ANN_THRESHOLD, BUSY_TIMEOUT_S, MEMORY
from kronika.stores.sqlite.index_reads import IndexReads
from kronika.stores.sqlite.index_search import IndexSearch
from kronika.stores.sqlite.index_upkeep import IndexUpkeep
from kronika.stores.sqlite.index_writes import IndexWrites
from kronika.stores.sqlite.recovery import move_aside

log = logging.getLogger("kronika")

__all__ = ["ANN_THRESHOLD", "BUSY_TIMEOUT_S", "MEMORY", "SqliteIndex"]


class SqliteIndex(IndexWrites, IndexReads, IndexSearch, IndexUpkeep):
    """Items, their FTS5 index, an embedding cache and usage statistics in one SQLite file.

    ``embedding_model`` selects which cached vectors vector search uses; vectors of
    other models stay in the cache untouched. ``dim`` is that model's dimension.
    From ``ann_threshold`` embedded items on (0: never), vector search takes its
    candidates from an HNSW graph saved beside the file (:mod:`.ann`); ``ann_background``
    False builds that graph in the searching thread instead of a background one. From
    the same size on, ``restart_copies`` saves the in-memory vectors and keyword
    postings beside the file on close, and the next process reads them (:mod:`.saved`).
    """

    @classmethod
    def open_or_rebuild(
        cls,
        path: Path | str,
        *,
        embedding_model: str,
        dim: int,
        ann_threshold: int = ANN_THRESHOLD,
        restart_copies: bool = True,
    ) -> tuple[SqliteIndex, bool]:
        """Open the index at ``path``; if the file is corrupt, move it aside and start empty.

        Returns ``(index, recreated)``. The corrupt file (and its ``-wal``/``-shm``)
        is renamed ``<name>.corrupt-<UTC timestamp>``; the caller then rebuilds the
        items from Markdown. Errors other than corruption (a locked or unreadable
        file) are raised as :class:`IndexError_` without touching anything.
        """
        options: dict[str, Any] = {
            "embedding_model": embedding_model,
            "dim": dim,
            "ann_threshold": ann_threshold,
            "restart_copies": restart_copies,
        }
        try:
            return cls(path, **options), False
        except CorruptIndexError:
            if str(path) == MEMORY:
                raise
        move_aside(Path(path))
        return cls(path, **options), True

    def recreate(self) -> str | None:
        """Move the damaged file aside and continue on a fresh, empty one.

        Returns where the old file went (``None`` for an in-memory index, which is
        only emptied). Nothing of the old connection is saved on the way out: its
        snapshots, graph and copies may hold what the damage garbled. The caller
        refills the items from the Markdown.
        """
        with self._lock:
            with suppress(sqlite3.Error):  # a damaged file may refuse even that
                self._conn.close()
            aside = None if isinstance(self._path, str) else move_aside(self._path)
            SqliteIndex.__init__(self, self._path, **self._options)
            return None if aside is None else str(aside)

    def close(self) -> None:
        with self._lock:
            if self._graph_outlived_a_scrub():
                self._ann.discard()
            self._ann.save_if_changed()
            try:
                self._save_copies()
            except (IndexError_, OSError, ValueError) as exc:  # a cache: never stop a close
                log.warning("could not save the index's copies beside %s: %s", self._path, exc)
            self._snapshot = None
            self._bm25 = None
            self._conn.close()

    def __enter__(self) -> SqliteIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
