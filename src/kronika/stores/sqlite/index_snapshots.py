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
from kronika.stores.sqlite.index_base import IndexState
from kronika.stores.sqlite.lexical import Bm25Snapshot
from kronika.stores.sqlite.query import filter_clause
from kronika.stores.sqlite.vectors import VectorSnapshot, read_transaction

log = logging.getLogger("kronika")


class Snapshots:
    """Keeps the vector and BM25 snapshots, the vector graph and their saved copies current.

    The snapshots themselves live in the shared :class:`IndexState`; reads and search
    ask this part for them (under the state's lock) with the connection they hold.
    """

    def __init__(self, state: IndexState) -> None:
        self.state = state

    def current_generation(self, conn: sqlite3.Connection) -> int:
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != self.state.data_version:
            self.state.data_version = version
            self.state.generation += 1
        return self.state.generation

    def current_snapshot(self, conn: sqlite3.Connection) -> VectorSnapshot:
        # Only the difference since the last look is read (VectorSnapshot.refresh).
        generation = self.current_generation(conn)
        if self.state.snapshot is None:
            saved = self._load_saved_vectors(conn)
            if saved is not None:
                self.state.snapshot = saved.refresh(conn, self.state.model, self.state.dim)
            else:
                self.state.snapshot = VectorSnapshot.load(conn, self.state.model, self.state.dim)
        elif self.state.snapshot_generation != generation:
            self.state.snapshot = self.state.snapshot.refresh(
                conn, self.state.model, self.state.dim
            )
        self.state.snapshot_generation = generation
        return self.state.snapshot

    def current_bm25(self, conn: sqlite3.Connection) -> Bm25Snapshot:
        generation = self.current_generation(conn)
        if self.state.bm25 is None:
            self.state.bm25 = self._new_bm25(conn)
        if self.state.bm25_generation != generation:
            self.state.bm25.refresh(conn)
            self.state.bm25_generation = generation
        return self.state.bm25

    def allowed_rowids(
        self, conn: sqlite3.Connection, flt: RecallFilter
    ) -> npt.NDArray[np.int64] | None:
        """Rowids passing the filters that need a join (keys, entities); None if there are none."""
        if not (flt.keys or flt.entities):
            return None
        where, params = filter_clause(flt)
        key = (self.current_generation(conn), where, *params)
        if self.state.allowed is not None and self.state.allowed[0] == key:
            return self.state.allowed[1]
        found = conn.execute(f"SELECT i.rowid FROM items AS i WHERE {where}", params)
        rowids = np.fromiter(itertools.chain.from_iterable(found), dtype=np.int64)
        rowids.flags.writeable = False  # shared by the calls that hit the cache
        self.state.allowed = (key, rowids)
        return rowids

    def current_graph(self, conn: sqlite3.Connection, snapshot: VectorSnapshot) -> AnnGraph | None:
        if not self.state.ann.enabled_for(len(snapshot) - snapshot.dead):
            return None
        with read_transaction(conn):
            if self.state.ann.graph is None and not self.state.ann.building:
                self.state.scrubbed = self._scrub_mark(conn)  # a graph read or built from now
            return self.state.ann.current(
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

    def graph_outlived_a_scrub(self) -> bool:
        """Whether another connection scrubbed the index since this one read its graph:
        the graph may then hold a removed row's vector, and is not saved."""
        if self.state.ann.graph is None:
            return False
        try:
            with self.state.reading() as conn:
                return self._scrub_mark(conn) != self.state.scrubbed
        except IndexError_:
            return True

    def copies_beside(self, rows: int | None = None) -> Path | None:
        """The index file, if this index saves copies of its snapshots beside it
        (:mod:`.saved`): a file index with a vector graph, from ``ann_threshold`` rows on."""
        if not self.state.restart_copies or not isinstance(self.state.path, Path):
            return None
        if self.state.ann.threshold <= 0 or not self.state.identity:
            return None
        return self.state.path if rows is None or self.state.ann.enabled_for(rows) else None

    def _load_saved_vectors(self, conn: sqlite3.Connection) -> VectorSnapshot | None:
        path = self.copies_beside()
        if path is None:
            return None
        with read_transaction(conn):
            kind = VectorSnapshot.saved_kind(self.state.model, self.state.dim)
            snapshot = saved.load_kind(conn, path, kind, self.state.identity)
        if snapshot is None:
            return None
        self.state.saved_marks = snapshot.marks
        log.info("vectors loaded from the copy beside %s (%d rows)", path, len(snapshot))
        return snapshot

    def _new_bm25(self, conn: sqlite3.Connection) -> Bm25Snapshot:
        """A BM25 snapshot, filled from its saved copy if there is a usable one."""
        path = self.copies_beside()
        if path is None:
            return Bm25Snapshot(self.state.tokenizer)
        kind = Bm25Snapshot.saved_kind(self.state.tokenizer)
        bm25 = saved.load_kind(conn, path, kind, self.state.identity)
        if bm25 is None:
            return Bm25Snapshot(self.state.tokenizer)
        self.state.saved_bm25_marks = bm25.marks
        log.info("keyword postings loaded from the copy beside %s (%d rows)", path, bm25.rows)
        return bm25

    def save_copies(self) -> None:
        """Save each snapshot beside the file if the index is large enough and it changed.

        Each is brought up to date first: another process may have deleted rows since
        this one last searched, and a copy never holds a deleted row.
        """
        loaded = self.state.snapshot is not None or (
            self.state.bm25 is not None and self.state.bm25.loaded
        )
        if loaded and self.copies_beside() is not None:
            with self.state.reading() as conn:
                if self.state.snapshot is not None:
                    self.current_snapshot(conn)
                if self.state.bm25 is not None and self.state.bm25.loaded:
                    with read_transaction(conn):
                        self.current_bm25(conn)
        vectors = self.state.snapshot
        if vectors is not None and vectors.marks != self.state.saved_marks:
            mapped, arrays, meta = vectors.to_saved()
            meta |= {"model": self.state.model, "dim": self.state.dim}
            if self._save_copy(
                "vectors", len(vectors) - vectors.dead, vectors.marks, mapped, arrays, meta
            ):
                self.state.saved_marks = vectors.marks
        bm25 = self.state.bm25
        if bm25 is not None and bm25.loaded and bm25.marks != self.state.saved_bm25_marks:
            arrays, meta = bm25.to_saved()
            if self._save_copy("bm25", bm25.rows, bm25.marks, {}, arrays, meta):
                self.state.saved_bm25_marks = bm25.marks

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
        path = self.copies_beside(rows)
        if path is None:
            return False
        with self.state.reading() as conn:
            meta["last_item"] = saved.fingerprint(conn, meta["last_item"])
        return saved.save(
            path,
            kind,
            identity=self.state.identity,
            marks=marks,
            mapped=mapped,
            arrays=arrays,
            meta=meta,
        )
