"""The in-memory copies :class:`~kronika.stores.sqlite.SqliteIndex` searches, kept current.

The vector snapshot (:mod:`.vectors`), the BM25 snapshot (:mod:`.lexical`) and the
vector graph (:mod:`.ann`) are refreshed when the generation moves (a write of this
connection, or ``PRAGMA data_version`` showing another one committed). From
``ann_threshold`` rows on, the snapshots are read from and saved to copies beside the
file (:mod:`.saved`), so a new process does not rebuild them.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.core.model import RecallFilter
from kronika.errors import IndexError_
from kronika.stores.sqlite import saved
from kronika.stores.sqlite.ann import AnnGraph
from kronika.stores.sqlite.index_base import IndexBase
from kronika.stores.sqlite.lexical import Bm25Snapshot
from kronika.stores.sqlite.query import filter_clause
from kronika.stores.sqlite.vectors import VectorSnapshot, read_transaction

log = logging.getLogger("kronika")


class IndexSnapshots(IndexBase):
    """Keeps the vector and BM25 snapshots, the vector graph and their saved copies current."""

    def _current_generation(self, conn: sqlite3.Connection) -> int:
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != self._data_version:
            self._data_version = version
            self._generation += 1
        return self._generation

    def _current_snapshot(self, conn: sqlite3.Connection) -> VectorSnapshot:
        # Only the difference since the last look is read (VectorSnapshot.refresh).
        generation = self._current_generation(conn)
        if self._snapshot is None:
            saved = self._load_saved_vectors(conn)
            if saved is not None:
                self._snapshot = saved.refresh(conn, self._model, self._dim)
            else:
                self._snapshot = VectorSnapshot.load(conn, self._model, self._dim)
        elif self._snapshot_generation != generation:
            self._snapshot = self._snapshot.refresh(conn, self._model, self._dim)
        self._snapshot_generation = generation
        return self._snapshot

    def _current_bm25(self, conn: sqlite3.Connection) -> Bm25Snapshot:
        generation = self._current_generation(conn)
        if self._bm25 is None:
            self._bm25 = self._new_bm25(conn)
        if self._bm25_generation != generation:
            self._bm25.refresh(conn)
            self._bm25_generation = generation
        return self._bm25

    def _allowed_rowids(
        self, conn: sqlite3.Connection, flt: RecallFilter
    ) -> npt.NDArray[np.int64] | None:
        """Rowids passing the filters that need a join (keys, entities); None if there are none."""
        if not (flt.keys or flt.entities):
            return None
        where, params = filter_clause(flt)
        key = (self._current_generation(conn), where, *params)
        if self._allowed is not None and self._allowed[0] == key:
            return self._allowed[1]
        found = conn.execute(f"SELECT i.rowid FROM items AS i WHERE {where}", params)
        rowids = np.fromiter(itertools.chain.from_iterable(found), dtype=np.int64)
        rowids.flags.writeable = False  # shared by the calls that hit the cache
        self._allowed = (key, rowids)
        return rowids

    def _current_graph(self, conn: sqlite3.Connection, snapshot: VectorSnapshot) -> AnnGraph | None:
        if not self._ann.enabled_for(len(snapshot) - snapshot.dead):
            return None
        with read_transaction(conn):
            if self._ann.graph is None and not self._ann.building:
                self._scrubbed = self._scrub_mark(conn)  # a graph read or built from now
            return self._ann.current(
                conn,
                snapshot.rowids,
                snapshot.matrix,
                snapshot.live if snapshot.dead else None,
                snapshot.marks,
                snapshot.cols.positions,
            )

    @staticmethod
    def _scrub_mark(conn: sqlite3.Connection) -> str:
        found = conn.execute("SELECT value FROM meta WHERE key = 'scrubbed'").fetchone()
        return str(found[0]) if found else ""

    def _graph_outlived_a_scrub(self) -> bool:
        """Whether another connection scrubbed the index since this one read its graph:
        the graph may then hold a removed row's vector, and is not saved."""
        if self._ann.graph is None:
            return False
        try:
            with self._reading() as conn:
                return self._scrub_mark(conn) != self._scrubbed
        except IndexError_:
            return True

    def _copies_beside(self, rows: int | None = None) -> Path | None:
        """The index file, if this index saves copies of its snapshots beside it
        (:mod:`.saved`): a file index with a vector graph, from ``ann_threshold`` rows on."""
        if not self._restart_copies or not isinstance(self._path, Path):
            return None
        if self._ann.threshold <= 0 or not self._identity:
            return None
        return self._path if rows is None or self._ann.enabled_for(rows) else None

    def _load_saved_vectors(self, conn: sqlite3.Connection) -> VectorSnapshot | None:
        path = self._copies_beside()
        if path is None:
            return None
        with read_transaction(conn):
            snapshot = saved.load(
                conn,
                path,
                "vectors",
                identity=self._identity,
                newest=VectorSnapshot.newest_marks(conn),
                expect={"model": self._model, "dim": self._dim},
                build=lambda copy: VectorSnapshot.from_saved(copy, self._dim),
            )
        if snapshot is None:
            return None
        self._saved_marks = snapshot.marks
        log.info("vectors loaded from the copy beside %s (%d rows)", path, len(snapshot))
        return snapshot

    def _new_bm25(self, conn: sqlite3.Connection) -> Bm25Snapshot:
        """A BM25 snapshot, filled from its saved copy if there is a usable one."""
        path = self._copies_beside()
        if path is None:
            return Bm25Snapshot(self._tokenizer)
        bm25 = saved.load(
            conn,
            path,
            "bm25",
            identity=self._identity,
            newest=Bm25Snapshot.newest_marks(conn),
            expect={},
            build=lambda copy: Bm25Snapshot.from_saved(copy, self._tokenizer),
        )
        if bm25 is None:
            return Bm25Snapshot(self._tokenizer)
        self._saved_bm25_marks = bm25.marks
        log.info("keyword postings loaded from the copy beside %s (%d rows)", path, bm25.rows)
        return bm25

    def _save_copies(self) -> None:
        """Save each snapshot beside the file if the index is large enough and it changed.

        Each is brought up to date first: another process may have deleted rows since
        this one last searched, and a copy never holds a deleted row.
        """
        loaded = self._snapshot is not None or (self._bm25 is not None and self._bm25.loaded)
        if loaded and self._copies_beside() is not None:
            with self._reading() as conn:
                if self._snapshot is not None:
                    self._current_snapshot(conn)
                if self._bm25 is not None and self._bm25.loaded:
                    with read_transaction(conn):
                        self._current_bm25(conn)
        vectors = self._snapshot
        if vectors is not None and vectors.marks != self._saved_marks:
            mapped, arrays, meta = vectors.to_saved()
            meta |= {"model": self._model, "dim": self._dim}
            if self._save_copy(
                "vectors", len(vectors) - vectors.dead, vectors.marks, mapped, arrays, meta
            ):
                self._saved_marks = vectors.marks
        bm25 = self._bm25
        if bm25 is not None and bm25.loaded and bm25.marks != self._saved_bm25_marks:
            arrays, meta = bm25.to_saved()
            if self._save_copy("bm25", bm25.rows, bm25.marks, {}, arrays, meta):
                self._saved_bm25_marks = bm25.marks

    def _save_copy(
        self,
        kind: str,
        rows: int,
        marks: Sequence[int],
        mapped: Mapping[str, npt.NDArray[Any]],
        arrays: Mapping[str, npt.NDArray[Any]],
        meta: dict[str, Any],
    ) -> bool:
        """Save one snapshot's parts (:func:`saved.save`) if this index keeps copies at
        ``rows`` live rows; its newest row (``meta["last_item"]``) becomes a fingerprint."""
        path = self._copies_beside(rows)
        if path is None:
            return False
        with self._reading() as conn:
            meta["last_item"] = saved.fingerprint(conn, meta["last_item"])
        return saved.save(
            path,
            kind,
            identity=self._identity,
            marks=marks,
            mapped=mapped,
            arrays=arrays,
            meta=meta,
        )
