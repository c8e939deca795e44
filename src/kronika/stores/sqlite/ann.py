"""Approximate nearest neighbours (HNSW, usearch) in front of the exact vector snapshot.

Above ``ann_threshold`` embedded items, multiplying the query by the whole float32
matrix (2 GB at 1M × 512) costs more than the rest of a recall together. An HNSW
graph over int8 copies of the unit vectors finds candidates in about a millisecond;
the candidates are then filtered and scored exactly with the float32 rows of the
snapshot, so every score a search returns is the exact cosine and every filter holds
exactly. Only *which* rows are considered is approximate:

* the graph is asked for ``OVERSAMPLE`` times more rows than wanted, divided by the
  share of rows the filter keeps (a filter keeping half the rows asks for twice as
  many);
* if that would be more than ``MAX_CANDIDATES`` rows (a narrow filter, e.g. a small
  agent in a large workspace), or fewer than ``limit`` candidates pass the filter,
  the search is exact over the rows the filter keeps, which is cheap precisely
  because the filter is narrow.

One graph serves the whole index (every agent): one build and one file instead of
one per agent, and agent filters are masks like any other filter.

The graph is a cache, like the rest of the index. Its keys are item rowids; it
remembers the marks (highest item rowid, embedding seq, deletion seq) it covers and
follows writes from the same logs the snapshot reads (:func:`changes_since`). It is
saved beside the index file (``index.sqlite.ann`` plus ``index.sqlite.ann.json``) so
that a restart loads it instead of rebuilding it; a missing, unreadable or
mismatched file (another model, or another index file: the description names the
index's random id) is rebuilt, with a log line. A build runs in a background thread
(the search stays exact until it is ready), because at 1M items it takes minutes.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.stores.private import make_private, write_private_bytes
from kronika.stores.sqlite.columns import Mask, Rowids

log = logging.getLogger("kronika")

FORMAT = 2  # 2: the description names the index it was built for
DTYPE = "i8"  # 4× smaller than f32, fastest build; exact re-scoring makes up the difference
# Search depth while adding: 64 builds twice as fast as usearch's 128 and, with exact
# re-scoring, lost no top-10 result on real vectors (top 100: 0.996 instead of 0.998).
EXPANSION_ADD = 64
# Conversation turns embedded with their exchange lie closer together: asking for 4×
# found 0.994 / 0.973 of the exact top 10 / top 100 at 100k synthetic turns, 6× 0.996 /
# 0.988 for 0.8 ms more (8×: 0.998 / 0.993, 1.8 ms; a deeper build, 128, barely helped).
OVERSAMPLE = 6
MAX_CANDIDATES = 4096
REBUILD_SHARE = 4  # rebuild once removed keys exceed 1/4 of the graph
SYNC_LIMIT = 20_000  # more new rows than this (and than 1/10 of the graph): rebuild instead

Marks = tuple[int, int, int]


class BuildStopped(Exception):
    """A graph build stopped before its end (:meth:`AnnCache.stop`)."""


def _going(stop: threading.Event) -> Any:
    """The graph library's progress callback: False (stop) once ``stop`` is set. The
    library matches the callback's signature against real types, which this module's
    postponed annotations are not, so they are given here."""

    def going(done: int, total: int) -> bool:
        return not stop.is_set()

    going.__annotations__ = {"done": int, "total": int, "return": bool}
    return going


def _usearch() -> Any:
    from usearch.index import Index  # imported on first use: small indexes never need it

    return Index


@dataclass(slots=True)
class Changes:
    """Rowids to drop from the graph and rowids to (re-)add, between two sets of marks."""

    removed: Rowids
    added: Rowids


def changes_since(
    conn: sqlite3.Connection, model: str, dim: int, old: Marks, new: Marks
) -> Changes | None:
    """What changed between ``old`` and ``new`` marks; ``None`` if the log no longer says.

    ``conn`` must be inside a read transaction that sees ``new``. The deletion log is
    pruned (and emptied by a reset); if it no longer reaches back to ``old``, the
    caller rebuilds.
    """
    items_old, vectors_old, deletions_old = old
    items_new, vectors_new, deletions_new = new
    if deletions_new < deletions_old or items_new < items_old or vectors_new < vectors_old:
        return None
    if deletions_new > deletions_old:
        (oldest,) = conn.execute("SELECT min(seq) FROM item_deletions").fetchone()
        if oldest is None or oldest > deletions_old + 1:
            return None
    deleted = conn.execute(
        "SELECT item_rowid FROM item_deletions WHERE seq > ? AND seq <= ?",
        (deletions_old, deletions_new),
    ).fetchall()
    fresh = conn.execute(
        "SELECT i.rowid FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash"
        " WHERE e.model = ? AND length(e.vec) = ? AND i.rowid > ? AND i.rowid <= ?",
        (model, dim * 4, items_old, items_new),
    ).fetchall()
    # Older items whose vector was stored (or replaced) since: drop the old copy, add anew.
    restored = conn.execute(
        "SELECT i.rowid FROM embeddings AS e CROSS JOIN items AS i ON i.text_hash = e.text_hash"
        " WHERE e.model = ? AND length(e.vec) = ? AND e.seq > ? AND e.seq <= ?"
        " AND i.rowid <= ?",
        (model, dim * 4, vectors_old, vectors_new, items_old),
    ).fetchall()
    gone = np.asarray([r for (r,) in deleted], dtype=np.int64)
    again = np.asarray([r for (r,) in restored], dtype=np.int64)
    added = np.concatenate([np.asarray([r for (r,) in fresh], dtype=np.int64), again])
    return Changes(
        removed=np.unique(np.concatenate([gone, again])),
        added=np.setdiff1d(added, gone),
    )


class AnnGraph:
    """One usearch HNSW graph over unit vectors, keyed by item rowid, and the marks it covers.

    Not thread-safe: the owning :class:`AnnCache` uses it under the index lock.
    """

    def __init__(self, graph: Any, marks: Marks, removed: int = 0) -> None:
        self.graph = graph
        self.marks = marks
        self.removed = removed  # keys removed since the build (HNSW keeps tombstones)
        self.dirty = False  # changed since it was last saved

    @classmethod
    def build(
        cls,
        rowids: Rowids,
        matrix: npt.NDArray[np.float32],
        marks: Marks,
        threads: int = 0,
        stop: threading.Event | None = None,
    ) -> AnnGraph:
        """A graph of ``rowids`` with ``matrix``'s rows; :class:`BuildStopped` as soon
        as ``stop`` is set (the library's threads stop with it)."""
        graph = _usearch()(
            ndim=matrix.shape[1], metric="ip", dtype=DTYPE, expansion_add=EXPANSION_ADD
        )
        if len(rowids):
            going = None if stop is None else _going(stop)
            try:
                graph.add(rowids.astype(np.uint64), matrix, threads=threads, progress=going)
            except RuntimeError as exc:
                if stop is not None and stop.is_set():
                    raise BuildStopped from exc
                raise
        return cls(graph, marks)

    def __len__(self) -> int:
        return int(len(self.graph))

    def search(self, query: npt.NDArray[np.float32], count: int) -> Rowids:
        """Rowids of about the ``count`` nearest rows (fewer if the graph is smaller)."""
        self.graph.expansion_search = max(count, 64)
        found = self.graph.search(query, count, threads=1)
        return np.asarray(found.keys, dtype=np.int64)

    def apply(self, changes: Changes, rowids: Rowids, vectors: npt.NDArray[np.float32]) -> None:
        """Drop ``changes.removed``; add ``rowids`` with their ``vectors`` (the live added rows)."""
        if changes.removed.size:
            present = changes.removed[self.graph.contains(changes.removed.astype(np.uint64))]
            if present.size:
                self.graph.remove(present.astype(np.uint64))
                self.removed += int(present.size)
        if rowids.size:
            keys = rowids.astype(np.uint64)
            known = np.asarray(self.graph.contains(keys), dtype=np.bool_).reshape(-1)
            if known.any():  # cannot happen with consistent logs; never add a key twice
                self.graph.remove(keys[known])
            self.graph.add(keys, vectors, threads=1)
        self.dirty = self.dirty or bool(changes.removed.size or rowids.size)

    def worn(self) -> bool:
        return self.removed * REBUILD_SHARE > max(len(self), 1)

    # -- files ------------------------------------------------------------------------

    def save(self, path: Path, model: str, dim: int, identity: str) -> None:
        """Write the graph and its description atomically (description last)."""
        meta_path = _meta_path(path)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        meta_tmp = meta_path.with_name(f"{meta_path.name}.{os.getpid()}.tmp")
        try:
            self.graph.save(str(tmp))
            make_private(tmp)  # hnswlib writes with the umask's mode
            meta = {
                "format": FORMAT,
                "identity": identity,
                "model": model,
                "dim": dim,
                "dtype": DTYPE,
                "marks": list(self.marks),
                "size": len(self),
                "removed": self.removed,
                "bytes": tmp.stat().st_size,
            }
            write_private_bytes(meta_tmp, json.dumps(meta).encode("utf-8"))
            meta_path.unlink(missing_ok=True)  # a graph without description is never trusted
            os.replace(tmp, path)
            os.replace(meta_tmp, meta_path)
            self.dirty = False
        except OSError as exc:
            log.warning("could not save the vector graph to %s: %s", path, exc)
        finally:
            tmp.unlink(missing_ok=True)
            meta_tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: Path, model: str, dim: int, identity: str) -> AnnGraph | None:
        """The graph saved at ``path`` if it is whole and made for ``model``; else ``None``."""
        meta_path = _meta_path(path)
        if not path.is_file() and not meta_path.is_file():
            return None
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if (
                meta.get("format") != FORMAT
                or meta.get("model") != model
                or meta.get("dim") != dim
                or meta.get("dtype") != DTYPE
                or meta.get("bytes") != path.stat().st_size
            ):
                raise ValueError("made for another model, format or file")
            if meta.get("identity") != identity:
                raise ValueError("made for another index")
            graph = _usearch().restore(str(path))
            if graph is None or len(graph) != meta["size"] or graph.ndim != dim:
                raise ValueError("unreadable or of another size")
            marks = meta["marks"]
            return cls(graph, (int(marks[0]), int(marks[1]), int(marks[2])), int(meta["removed"]))
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            log.warning("vector graph %s cannot be used (%s); rebuilding it", path, exc)
            return None


def _meta_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _remove(path: Path) -> None:
    _meta_path(path).unlink(missing_ok=True)
    path.unlink(missing_ok=True)


class AnnCache:
    """The graph of one :class:`SqliteIndex`: loaded, built in the background, kept current.

    ``threshold`` is the number of embedded rows from which the graph is used (0:
    never). ``path`` is where it is saved (``None``: in memory only), with
    ``identity`` (the index's random id) in its description. ``background`` False
    builds in the calling thread (tests, benchmarks that want it ready).
    """

    def __init__(
        self,
        threshold: int,
        path: Path | None,
        model: str,
        dim: int,
        *,
        identity: str,
        background: bool = True,
    ) -> None:
        self.threshold = threshold
        self.path = path
        self.model = model
        self.dim = dim
        self.identity = identity
        self.background = background
        self.graph: AnnGraph | None = None
        self._tried_file = False
        self._building: threading.Thread | None = None
        self._built: AnnGraph | None = None
        self._lock = threading.Lock()  # guards _built / _building between threads
        self._discarded = 0  # bumped by discard(): a build begun before is never kept
        self._stop = threading.Event()  # set by stop(): a build under way ends
        self.build_seconds: float | None = None

    @property
    def building(self) -> bool:
        return self._building is not None

    def enabled_for(self, rows: int) -> bool:
        return self.threshold > 0 and rows >= self.threshold

    def current(
        self,
        conn: sqlite3.Connection,
        rowids: Rowids,
        matrix: npt.NDArray[np.float32],
        live: Mask | None,
        marks: Marks,
        positions: Any,
    ) -> AnnGraph | None:
        """The graph brought up to ``marks`` (the snapshot's), or ``None`` while there is none.

        ``conn`` must be in a read transaction; ``positions(rowids)`` maps rowids to
        snapshot rows (−1 when absent). Called under the index lock.
        """
        with self._lock:
            if self._built is not None:
                self.graph, self._built = self._built, None
                self._building = None
        if self.graph is None and not self._tried_file and self.path is not None:
            self._tried_file = True
            self.graph = AnnGraph.load(self.path, self.model, self.dim, self.identity)
            if self.graph is not None:
                log.info("vector graph loaded from %s (%d rows)", self.path, len(self.graph))
        if (
            self.graph is not None
            and self.graph.marks != marks
            and not self._sync(conn, marks, matrix, positions)
        ):
            self.graph = None
        if self.graph is not None and self.graph.worn():
            log.info("vector graph has too many removed rows; rebuilding it")
            self.graph = None
        if self.graph is None:
            self._start_build(rowids, matrix, live, marks)
        return self.graph

    def _sync(
        self,
        conn: sqlite3.Connection,
        marks: Marks,
        matrix: npt.NDArray[np.float32],
        positions: Any,
    ) -> bool:
        assert self.graph is not None
        changes = changes_since(conn, self.model, self.dim, self.graph.marks, marks)
        if changes is None:
            log.info("vector graph is older than the deletion log; rebuilding it")
            return False
        if changes.added.size > max(SYNC_LIMIT, len(self.graph) // 10):
            log.info("vector graph is %d rows behind; rebuilding it", changes.added.size)
            return False
        rows = positions(changes.added)
        found = rows >= 0
        self.graph.apply(changes, changes.added[found], matrix[rows[found]])
        self.graph.marks = marks
        return True

    def _start_build(
        self, rowids: Rowids, matrix: npt.NDArray[np.float32], live: Mask | None, marks: Marks
    ) -> None:
        with self._lock:
            if self._building is not None:
                return
            keys = rowids if live is None else rowids[live]
            rows = matrix if live is None else matrix[live]
            if self.background:
                self._building = threading.Thread(
                    target=self._build, args=(keys, rows, marks), name="kronika-ann", daemon=True
                )
                self._building.start()
        if not self.background:
            self._build(keys, rows, marks)
            with self._lock:
                if self._built is not None:
                    self.graph, self._built = self._built, None

    def discard(self) -> None:
        """Drop the graph and any build under way (they may hold rows scrubbed since)."""
        with self._lock:
            self.graph = None
            self._built = None
            self._discarded += 1

    def _build(self, rowids: Rowids, matrix: npt.NDArray[np.float32], marks: Marks) -> None:
        discarded = self._discarded
        began = time.perf_counter()
        log.info("building the vector graph over %d rows", len(rowids))
        try:
            graph = AnnGraph.build(rowids, matrix, marks, stop=self._stop)
        except BuildStopped:
            log.info("building the vector graph stopped: the index was closed")
            with self._lock:
                self._building = None
            return
        except Exception as exc:  # a failed build leaves search exact; it is retried later
            log.warning("building the vector graph failed: %s", exc)
            with self._lock:
                self._building = None
            return
        self.build_seconds = time.perf_counter() - began
        log.info("vector graph built in %.1f s", self.build_seconds)
        if self.path is not None and discarded == self._discarded:
            graph.save(self.path, self.model, self.dim, self.identity)
        with self._lock:
            if discarded != self._discarded:  # scrubbed while building: neither kept nor saved
                if self.path is not None:
                    _remove(self.path)
                self._building = None
                return
            self._built = graph

    def stop(self) -> None:
        """End a build under way and wait for its thread (the index is closing). A
        process must not end while the graph library's threads run: their end in the
        middle of a build aborts it ("terminate called without an active exception")."""
        thread = self._building
        if thread is None:
            return
        self._stop.set()
        try:
            thread.join()
        finally:
            self._stop.clear()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a build in progress; True if no build is running afterwards."""
        thread = self._building
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def save_if_changed(self) -> None:
        if self.graph is not None and self.graph.dirty and self.path is not None:
            self.graph.save(self.path, self.model, self.dim, self.identity)


def ann_count(limit: int, kept: int, total: int) -> int | None:
    """How many rows to ask the graph for, or ``None`` when an exact search is better."""
    if kept <= 0:
        return None
    count = math.ceil(OVERSAMPLE * limit * total / kept)
    if count > MAX_CANDIDATES or count * 4 > total:
        return None
    return count
