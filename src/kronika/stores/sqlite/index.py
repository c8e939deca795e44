"""The SQLite implementation of :class:`kronika.ports.ItemIndex` (SPEC S2, R1, R5).

The index is derived: everything but the embedding cache and usage statistics
can be rebuilt from the Markdown workspace, so a corrupt file is moved aside and
replaced by an empty index (:meth:`SqliteIndex.open_or_rebuild`).

Concurrency: WAL journal, ``synchronous=NORMAL``, a busy timeout, and every
write in one ``BEGIN IMMEDIATE`` transaction, so several processes can share one
file. The in-memory vector snapshot is dropped after this connection writes and
whenever ``PRAGMA data_version`` shows another connection committed.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.core.model import MemoryItem, RecallFilter, layer_counts
from kronika.errors import CorruptIndexError, IndexError_
from kronika.ports import (
    DayCount,
    FeatureRow,
    ScoreFeatures,
    SourceState,
    SourceTail,
    Vector,
    VectorPoint,
)
from kronika.stores.private import touch_private
from kronika.stores.sqlite import appends, context, day_counts, patches, points, saved, scrub
from kronika.stores.sqlite import rows as R
from kronika.stores.sqlite.ann import AnnCache, AnnGraph
from kronika.stores.sqlite.batch import MAX_SCORES, QueryScores
from kronika.stores.sqlite.lexical import Bm25Snapshot, Phrase, QueryTokenizer
from kronika.stores.sqlite.migrations import applied_migrations, apply_migrations
from kronika.stores.sqlite.query import filter_clause, query_terms, quote, to_epoch
from kronika.stores.sqlite.recall_log import SqliteRecallLog
from kronika.stores.sqlite.recovery import integrity_problems, is_corruption, move_aside
from kronika.stores.sqlite.vectors import VectorSnapshot, read_transaction

log = logging.getLogger("kronika")

MEMORY = ":memory:"
ANN_THRESHOLD = 50_000  # the ann_threshold setting's default
BUSY_TIMEOUT_S = 30.0
_DELETIONS_KEPT = 100_000  # deletion-log entries kept for readers' incremental refresh
_CHUNK = 500  # bound parameters per IN (...) list, far below SQLite's limit
# BM25 column weights: content, key, entities, speaker. A hit on a key or an
# entity name says more about an item than one word of its text.
_BM25 = "bm25(items_fts)"  # equal column weights: measured best, and nothing to tune


def _chunks(values: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


class SqliteIndex:
    """Items, their FTS5 index, an embedding cache and usage statistics in one SQLite file.

    ``embedding_model`` selects which cached vectors vector search uses; vectors of
    other models stay in the cache untouched. ``dim`` is that model's dimension.
    From ``ann_threshold`` embedded items on (0: never), vector search takes its
    candidates from an HNSW graph saved beside the file (:mod:`.ann`); ``ann_background``
    False builds that graph in the searching thread instead of a background one. From
    the same size on, ``restart_copies`` saves the in-memory vectors and keyword
    postings beside the file on close, and the next process reads them (:mod:`.saved`).
    """

    def __init__(
        self,
        path: Path | str,
        *,
        embedding_model: str,
        dim: int,
        ann_threshold: int = ANN_THRESHOLD,
        ann_background: bool = True,
        restart_copies: bool = True,
    ) -> None:
        self._path = path if str(path) == MEMORY else Path(path)
        self._options: dict[str, Any] = {
            "embedding_model": embedding_model,
            "dim": dim,
            "ann_threshold": ann_threshold,
            "ann_background": ann_background,
            "restart_copies": restart_copies,
        }
        self._model = embedding_model
        self._dim = dim
        self._lock = threading.RLock()
        self._snapshot: VectorSnapshot | None = None
        self._together: QueryScores | None = None  # score_together's batch
        self._bm25: Bm25Snapshot | None = None
        self._bm25_wanted = False
        self._maybe_unused: set[str] = set()  # text hashes of items replaced or removed
        self._vanished: dict[int, scrub.Deleted] = {}  # deleted rows whose text left
        self._scrub_all = False  # after a reset: everything beside the file is stale
        self._scrubbed: str | None = None  # the index's scrub mark when the graph was read
        self._tokenizer = QueryTokenizer()
        # Bumped by every write of this connection and whenever PRAGMA data_version
        # shows another connection committed; each snapshot remembers the one it saw.
        self._generation = 0
        self._data_version: int | None = None
        self._snapshot_generation = -1
        self._bm25_generation = -1
        # the last filter's allowed rowids, by generation: one recall asks three times
        self._allowed: tuple[tuple[object, ...], npt.NDArray[np.int64]] | None = None
        self._restart_copies = restart_copies
        self._conn = self._connect()
        self._identity = self._read_identity()
        self._ann = AnnCache(
            ann_threshold,
            None if isinstance(self._path, str) else self._path.with_name(self._path.name + ".ann"),
            embedding_model,
            dim,
            identity=self._identity,
            background=ann_background,
        )
        # the marks of the copies saved beside the file (:mod:`.saved`), when there are
        self._saved_marks: tuple[int, int, int] | None = None
        self._saved_bm25_marks: tuple[int, int] | None = None

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

    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What SQLite finds wrong with the file (:func:`.recovery.integrity_problems`)."""
        with self._lock:
            return integrity_problems(self._conn, full=full)

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

    # -- connection -----------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if isinstance(self._path, Path):
            # made 0600 before SQLite makes it 0644; its -wal and -shm take that mode
            with contextlib.suppress(OSError):  # an unusable path: SQLite says why below
                touch_private(self._path)
        try:
            conn = sqlite3.connect(
                str(self._path),
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,  # guarded by self._lock
            )
        except sqlite3.Error as exc:
            raise IndexError_(f"cannot open index {self._path}: {exc}") from exc
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA secure_delete = ON")  # deleted content is overwritten
            apply_migrations(conn)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            conn.close()
            raise self._translate_error(exc) from exc
        return conn

    def _read_identity(self) -> str:
        try:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'index_id'").fetchone()
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            self._conn.close()
            raise self._translate_error(exc) from exc
        return str(row[0]) if row else ""

    def _translate_error(self, exc: sqlite3.Error | UnicodeDecodeError) -> IndexError_:
        if is_corruption(exc):
            return CorruptIndexError(
                f"index {self._path} is corrupt ({exc}); `kronika reindex` moves it aside"
                " and rebuilds it from the Markdown"
            )
        return IndexError_(f"index {self._path} cannot be used: {exc}")

    @contextmanager
    def _reading(self, *, decoding: bool = True) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; SQLite's errors become :class:`IndexError_`.

        With ``decoding``, a value read that Python cannot turn back into an item (a
        time out of range, a number that is not one) is damage inside a row, which no
        page check sees: :class:`CorruptIndexError` too, so it is rebuilt.
        """
        with self._lock:
            try:
                yield self._conn
            except (sqlite3.Error, UnicodeDecodeError) as exc:
                raise self._translate_error(exc) from exc
            except (ValueError, OverflowError, OSError) as exc:
                if not decoding:
                    raise
                raise CorruptIndexError(
                    f"index {self._path} holds a value that cannot be read ({exc})"
                ) from exc

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, committed on success, rolled back on error."""
        with self._reading(decoding=False) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if (
                    conn.in_transaction
                ):  # SQLite may already have rolled back (disk full, I/O error)
                    conn.execute("ROLLBACK")
                raise
            finally:
                self._generation += 1

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

    @property
    def embedding_model(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    # -- sources and items ------------------------------------------------------------

    def source_states(self, agent: str) -> dict[str, SourceState]:
        with self._reading() as conn:
            found = conn.execute(
                "SELECT agent, path, content_hash, mtime_ns, size FROM sources WHERE agent = ?",
                (agent,),
            ).fetchall()
        return {row[1]: SourceState(*row) for row in found}

    def source_state(self, agent: str, path: str) -> SourceState | None:
        """The state of one indexed file (``None`` when the index holds none)."""
        with self._reading() as conn:
            row = conn.execute(
                "SELECT agent, path, content_hash, mtime_ns, size FROM sources"
                " WHERE agent = ? AND path = ?",
                (agent, path),
            ).fetchone()
        return None if row is None else SourceState(*row)

    def replace_source(
        self,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str] | None = None,
    ) -> None:
        """Atomically replace every item that came from ``(state.agent, state.path)``.

        One transaction, bulk ``executemany``. Ids are unique across the index: a
        repeated id within ``items`` keeps its first occurrence, and an id already
        indexed from another file moves to this one (the file indexed last wins).
        The items are numbered 0, 1, 2… in the given (file) order (their ``pos``):
        :meth:`neighbours` finds a turn's context by it.
        """
        if text_hashes is not None and len(text_hashes) != len(items):
            raise ValueError("text_hashes must have one hash per item")
        hashes = list(text_hashes) if text_hashes is not None else None
        unique: dict[str, tuple[MemoryItem, str]] = {}
        for n, item in enumerate(items):
            if item.id not in unique:
                unique[item.id] = (item, hashes[n] if hashes else R.default_text_hash(item))
        with self._writing() as conn:
            source = [state.agent, state.path]
            self._note_hashes(conn, "source_agent = ? AND source_path = ?", source)
            old = scrub.searchable_rows(conn, "source_agent = ? AND source_path = ?", source)
            for chunk in _chunks(list(unique)):  # ids moving here from another file
                self._note_hashes(conn, f"id IN ({', '.join('?' * len(chunk))})", chunk)
                old.update(
                    scrub.searchable_rows(conn, f"id IN ({', '.join('?' * len(chunk))})", chunk)
                )
            self._delete_where(
                conn, "source_agent = ? AND source_path = ?", (state.agent, state.path)
            )
            conn.executemany(
                "DELETE FROM items_fts WHERE rowid = (SELECT rowid FROM items WHERE id = ?)",
                ((i,) for i in unique),
            )
            conn.executemany("DELETE FROM items WHERE id = ?", ((i,) for i in unique))
            top = _last_rowid(conn)
            numbered = [(top + 1 + n, pair) for n, pair in enumerate(unique.values())]
            conn.executemany(
                R.INSERT_ITEM_SQL,
                (R.item_row(rid, it, state, h, rid - top - 1) for rid, (it, h) in numbered),
            )
            fts = [R.fts_row(rid, it) for rid, (it, _) in numbered]  # folded once, used twice
            conn.executemany(R.INSERT_FTS_SQL, fts)
            conn.executemany(
                "INSERT INTO item_entities (item_rowid, entity_norm) VALUES (?, ?)",
                (row for rid, (it, _) in numbered for row in R.entity_rows(rid, it)),
            )
            if old:
                kept = {row[1:] for row in fts}
                self._vanished.update((rid, row) for rid, row in old.items() if row[1] not in kept)
            conn.execute(
                "INSERT INTO sources (agent, path, content_hash, mtime_ns, size)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, path) DO UPDATE SET"
                " content_hash = excluded.content_hash, mtime_ns = excluded.mtime_ns,"
                " size = excluded.size",
                (state.agent, state.path, state.content_hash, state.mtime_ns, state.size),
            )

    def source_tail(self, agent: str, path: str, last: int = 2) -> SourceTail | None:
        """The end of one indexed file (:func:`kronika.stores.sqlite.appends.source_tail`)."""
        with self._reading() as conn, read_transaction(conn):
            return appends.source_tail(conn, agent, path, last)

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
        with self._writing() as conn:
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
    ) -> bool:
        """Change a few items of a file the index holds as ``expected``, in one
        transaction (:mod:`.patches`): delete the rows of ``gone`` and of ``items``
        (from any file: an id moving here), insert ``items``, set the line of the ids in
        ``lines``, record ``state``, cache ``vectors``. ``False`` (nothing written) when
        the index no longer holds ``expected``: re-index the file."""
        blobs = self._blobs(vectors or {})
        with self._writing() as conn:
            if not patches.holds(conn, expected):
                return False
            self._insert_blobs(conn, blobs)
            ids = list(dict.fromkeys([*gone, *(item.id for item in items)]))
            for chunk in _chunks(ids):
                where = f"id IN ({', '.join('?' * len(chunk))})"
                self._note_hashes(conn, where, chunk)
                old = scrub.searchable_rows(conn, where, chunk)
                kept = {R.fts_row(0, it)[1:] for it in items}
                self._vanished.update((rid, row) for rid, row in old.items() if row[1] not in kept)
                if old:
                    self._delete_where(conn, where, chunk)
            patches.patch_rows(conn, state, items, text_hashes, lines, _last_rowid(conn))
            return True

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
        self._maybe_unused.update(text_hash for (text_hash,) in found)

    def drop_unused_embeddings(self, *, everywhere: bool = False) -> int:
        """Delete the cached vectors of texts that no item uses any more; returns how many.

        Only the texts of items this index replaced or removed since the last call are
        looked at (an indexed look-up each), so a forgotten memory, or the words of it a
        neighbouring turn was embedded with, leaves no vector behind. :meth:`reset`
        notes nothing: a rebuild finds its unchanged texts still embedded, and then
        calls this with ``everywhere`` to look at every cached vector.

        Called after every sync, it then scrubs what the deletions left (:meth:`scrub`).
        """
        with self._lock:
            candidates = sorted(self._maybe_unused)
            self._maybe_unused.clear()
        unused = "NOT EXISTS (SELECT 1 FROM items AS i WHERE i.text_hash = embeddings.text_hash)"
        dropped = 0
        if everywhere:
            with self._writing() as conn:
                dropped = conn.execute(f"DELETE FROM embeddings WHERE {unused}").rowcount
        elif candidates:
            with self._writing() as conn:
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
        with self._lock:
            candidates, everything = self._vanished, self._scrub_all
            self._vanished, self._scrub_all = {}, False
            if candidates:  # forgotten ids leave the recall log too
                self.recall_log().drop_forgotten(item_id for item_id, _ in candidates.values())
            if not candidates and not everything:
                return False
            with self._reading() as conn:
                gone = {
                    rid: item_id
                    for rid, (item_id, row) in candidates.items()
                    if not scrub.still_held(conn, row)
                }
            if not gone and not everything:
                return False
            began = time.perf_counter()
            with self._writing() as conn:
                scrub.merge_fts(conn)
                scrub.drop_usage(conn, list(gone.values()))
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('scrubbed', lower(hex(randomblob(8))))"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                )
                (self._scrubbed,) = conn.execute(
                    "SELECT value FROM meta WHERE key = 'scrubbed'"
                ).fetchone()
            merged = time.perf_counter()
            self._scrub_beside(None if everything else list(gone))
            beside = time.perf_counter()
            with self._reading() as conn:
                if not scrub.checkpoint(conn, restore_s=BUSY_TIMEOUT_S):
                    log.info("a reader kept the -wal of %s; it is truncated later", self._path)
            done = time.perf_counter()
            log.info(
                "scrubbed %d deleted rows from %s in %.3f s (full-text merge %.3f s,"
                " copies and graph %.3f s, -wal %.3f s)",
                len(gone),
                self._path,
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
        self._ann.discard()  # it may hold them, as keys or as removed vectors
        if not isinstance(self._path, Path):
            return
        scrub.remove_graph(self._path.with_name(self._path.name + ".ann"))
        for kind in ("vectors", "bm25"):
            if gone is None:
                scrub.remove_copy(self._path, kind)
            else:
                self._rewrite_copy(kind)
        self._saved_marks = self._saved_bm25_marks = None  # the next close saves anew

    def _rewrite_copy(self, kind: str) -> None:
        with self._reading() as conn, read_transaction(conn):
            assert isinstance(self._path, Path)
            if kind == "vectors":
                scrub.zero_vectors(conn, self._path, self._identity, self._model, self._dim)
            else:
                scrub.rewrite_bm25(conn, self._path, self._identity, self._tokenizer)

    def remove_source(self, agent: str, path: str) -> None:
        with self._writing() as conn:
            self._note_hashes(conn, "source_agent = ? AND source_path = ?", [agent, path])
            where = "source_agent = ? AND source_path = ?"
            self._vanished.update(scrub.searchable_rows(conn, where, [agent, path]))
            self._delete_where(conn, where, (agent, path))
            conn.execute("DELETE FROM sources WHERE agent = ? AND path = ?", (agent, path))

    def reset(self) -> None:
        """Forget every item and source (keeps the embedding cache and usage statistics)."""
        self._scrub_all = True
        with self._writing() as conn:
            conn.execute("DELETE FROM item_entities")
            conn.execute("DELETE FROM items_fts")
            conn.execute("DELETE FROM items")
            conn.execute("DELETE FROM item_deletions")  # readers see the gap and reload
            conn.execute("DELETE FROM sources")

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Items in the order of ``ids`` (unknown ids skipped), with usage statistics."""
        found: dict[str, MemoryItem] = {}
        wanted = list(dict.fromkeys(ids))
        with self._reading() as conn:
            for chunk in _chunks(wanted):
                marks = ", ".join("?" * len(chunk))
                for row in conn.execute(f"{R.SELECT_ITEM_SQL} WHERE i.id IN ({marks})", chunk):
                    item = R.item_from_row(row)
                    found[item.id] = item
        return [found[i] for i in ids if i in found]

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        """What the R3 score needs of each item, without building whole items.

        Read from the BM25 snapshot's columns once it is loaded (only usage comes
        from SQLite), else from SQLite (:meth:`_score_features_sql`).
        """
        wanted = list(dict.fromkeys(ids))
        with self._reading() as conn:
            if self._bm25 is None or not wanted:
                return self._score_features_sql(conn, wanted)
            with read_transaction(conn):
                bm25 = self._current_bm25(conn)
                rows = bm25.rows_of(wanted)
                usage = self._usage(
                    conn, [i for i, r in zip(wanted, rows.tolist(), strict=True) if r >= 0]
                )
            return context.score_features(bm25.cols, bm25.context, wanted, rows, usage)

    @staticmethod
    def _usage(conn: sqlite3.Connection, ids: Sequence[str]) -> context.Usage:
        found: dict[str, tuple[float | None, int]] = {}
        for chunk in _chunks(ids):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT item_id, last_accessed_at, access_count FROM usage"
                f" WHERE item_id IN ({marks})",
                chunk,
            )
            for item_id, accessed, count in rows:
                found[item_id] = (None if accessed is None else float(accessed), int(count))
        return found

    @staticmethod
    def _score_features_sql(conn: sqlite3.Connection, wanted: Sequence[str]) -> ScoreFeatures:
        """:meth:`score_features` read from SQLite (before the BM25 snapshot is loaded)."""
        found: dict[str, FeatureRow] = {}
        for chunk in _chunks(wanted):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT i.id, i.importance, i.created_at, u.last_accessed_at,"
                " coalesce(u.access_count, 0), i.speaker, i.session_id FROM items AS i"
                f" LEFT JOIN usage AS u ON u.item_id = i.id WHERE i.id IN ({marks})",
                chunk,
            )
            for item_id, importance, created, accessed, count, speaker, session in rows:
                found[item_id] = (
                    float(importance),
                    float(created),
                    None if accessed is None else float(accessed),
                    int(count),
                    speaker,
                    session,
                )
        return ScoreFeatures.from_rows({i: found[i] for i in wanted if i in found})

    def neighbours(
        self, ids: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """The other party's messages at most ``window`` turns from each message in ``ids``.

        A turn's context is the exchange it belongs to: the question it answers, the
        answer it got. Consecutive messages of the same speaker are separate statements
        (and where the other side was not kept, as when only user turns are imported,
        they were not even adjacent), so they are not each other's context.

        Every row records its place in its file (``pos``, in file order), so a turn's
        neighbours are the rows of the same file whose places are within ``window`` of
        its own: range lookups in the ``(source_agent, source_path, pos)`` index, no
        scan, wherever appends from other files put their rowids. Neighbours come from
        the same session and must pass ``flt``; the offset is the difference of places.
        """
        wanted = list(dict.fromkeys(ids))
        if window < 1 or not wanted:
            return {}
        with self._reading() as conn:
            if self._bm25 is None:
                return self._neighbours_sql(conn, wanted, flt, window)
            with read_transaction(conn):
                bm25 = self._current_bm25(conn)
                allowed = self._allowed_rowids(conn, flt)
            keep = bm25.cols.mask(flt, bm25.live if bm25.dead else None)
            if allowed is not None:
                allowed_rows = np.isin(bm25.cols.rowids, allowed)
                keep = allowed_rows if keep is None else keep & allowed_rows
            rows = bm25.rows_of(wanted)
            found: dict[str, list[tuple[str, int]]] = {}
            for start in range(0, len(wanted), _CHUNK):  # ordered per chunk, as in SQL
                part = slice(start, start + _CHUNK)
                near = context.neighbours(
                    bm25.cols, bm25.context, wanted[part], rows[part], keep, window
                )
                if near is None:  # more files or places than the columns can key
                    return self._neighbours_sql(conn, wanted, flt, window)
                found.update(near)
            return found

    @staticmethod
    def _neighbours_sql(
        conn: sqlite3.Connection, wanted: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """:meth:`neighbours` answered by SQLite (before the BM25 snapshot is loaded)."""
        found: dict[str, list[tuple[str, int]]] = {}
        where, params = filter_clause(flt, alias="n")
        for chunk in _chunks(wanted):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                # CROSS JOIN and the unary + keep SQLite on this plan: each c by its
                # id, then n by a range of places in c's file. Left to itself it scans
                # every message as c (150 ms instead of 10 at 100k items).
                "SELECT c.id, n.id, n.pos - c.pos FROM items AS c CROSS JOIN items AS n"
                " ON n.source_agent = c.source_agent AND n.source_path = c.source_path"
                " AND n.pos BETWEEN c.pos - ? AND c.pos + ? AND n.pos != c.pos"
                " AND n.session_id = c.session_id AND +n.type = 'message'"
                " AND coalesce(n.speaker_norm, '') != coalesce(c.speaker_norm, '')"
                f" WHERE c.id IN ({marks}) AND +c.type = 'message' AND {where}"
                " ORDER BY c.id, n.pos",
                [window, window, *chunk, *params],
            )
            for item_id, other, offset in rows:
                found.setdefault(item_id, []).append((other, int(offset)))
        return found

    def list_items(
        self, flt: RecallFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryItem]:
        """Items matching ``flt``, newest ``created_at`` first (ties by id)."""
        where, params = filter_clause(flt)
        sql = f"{R.SELECT_ITEM_SQL} WHERE {where} ORDER BY i.created_at DESC, i.id LIMIT ? OFFSET ?"
        with self._reading() as conn:
            found = conn.execute(sql, [*params, -1 if limit is None else limit, offset])
            return [R.item_from_row(row) for row in found]

    def source_items(self, agent: str, path: str) -> list[MemoryItem]:
        """The items indexed from one file, in file order."""
        sql = f"{R.SELECT_ITEM_SQL} WHERE i.source_agent = ? AND i.source_path = ? ORDER BY i.pos"
        with self._reading() as conn:
            return [R.item_from_row(row) for row in conn.execute(sql, (agent, path))]

    def count_items(self, flt: RecallFilter) -> int:
        where, params = filter_clause(flt)
        with self._reading() as conn:
            (n,) = conn.execute(f"SELECT count(*) FROM items AS i WHERE {where}", params).fetchone()
        return int(n)

    def recall_log(self) -> SqliteRecallLog:
        return SqliteRecallLog(self._reading)

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        with self._reading() as conn:
            return day_counts.created_per_day(conn, flt, since)

    def agents(self) -> list[str]:
        with self._reading() as conn:
            found = conn.execute(
                "SELECT agent FROM sources UNION SELECT agent FROM items ORDER BY 1"
            ).fetchall()
        return [a for (a,) in found]

    def meta_value(self, key: str) -> str | None:
        with self._reading() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta_value(self, key: str, value: str) -> None:
        with self._writing() as conn:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def record_access(self, ids: Sequence[str], at: datetime) -> None:
        """Count one access per distinct id; ``last_accessed_at`` never moves backwards."""
        moment = to_epoch(at)
        with self._writing() as conn:
            conn.executemany(
                "INSERT INTO usage (item_id, access_count, last_accessed_at) VALUES (?, 1, ?)"
                " ON CONFLICT (item_id) DO UPDATE SET access_count = access_count + 1,"
                " last_accessed_at = max(coalesce(last_accessed_at, excluded.last_accessed_at),"
                " excluded.last_accessed_at)",
                ((i, moment) for i in dict.fromkeys(ids)),
            )

    def restore_usage(self, rows: Sequence[tuple[str, int, datetime | None]]) -> None:
        """Set usage statistics as a backup recorded them (``0, None`` removes a row)."""
        kept = [(i, n, None if t is None else to_epoch(t)) for i, n, t in rows if n or t]
        with self._writing() as conn:
            conn.executemany(
                "DELETE FROM usage WHERE item_id = ?", ((i,) for i, n, t in rows if not (n or t))
            )
            conn.executemany(
                "INSERT INTO usage (item_id, access_count, last_accessed_at) VALUES (?, ?, ?)"
                " ON CONFLICT (item_id) DO UPDATE SET access_count = excluded.access_count,"
                " last_accessed_at = excluded.last_accessed_at",
                kept,
            )

    # -- embeddings -------------------------------------------------------------------

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]:
        """The hashes with no cached vector for this index's ``embedding_model``."""
        wanted = list(dict.fromkeys(text_hashes))
        present: set[str] = set()
        with self._reading() as conn:
            for chunk in _chunks(wanted):
                marks = ", ".join("?" * len(chunk))
                found = conn.execute(
                    f"SELECT text_hash FROM embeddings WHERE model = ? AND length(vec) = ?"
                    f" AND text_hash IN ({marks})",
                    [self._model, self._dim * 4, *chunk],
                )
                present.update(h for (h,) in found)
        return set(wanted) - present

    def store_embeddings(self, vectors: Mapping[str, Vector]) -> None:
        """Cache one vector per text hash under ``embedding_model`` (replacing any old one).

        Vectors are stored scaled to unit length (a zero vector stays zero), so
        cosine similarity is a plain dot product at search time.
        """
        blobs = self._blobs(vectors)
        with self._writing() as conn:
            self._insert_blobs(conn, blobs)

    def _blobs(self, vectors: Mapping[str, Vector]) -> list[tuple[str, str, bytes]]:
        """The rows of the embedding cache for ``vectors``: unit length, little-endian."""
        blobs: list[tuple[str, str, bytes]] = []
        for text_hash, vec in vectors.items():
            flat = np.asarray(vec, dtype=np.float64).reshape(-1)
            if flat.size != self._dim:
                raise IndexError_(
                    f"embedding for {text_hash} has {flat.size} dimensions;"
                    f" model {self._model} has {self._dim}"
                )
            norm = float(np.linalg.norm(flat))
            unit = flat / norm if norm > 0 else flat
            blobs.append((text_hash, self._model, unit.astype("<f4").tobytes()))
        return blobs

    @staticmethod
    def _insert_blobs(conn: sqlite3.Connection, blobs: Sequence[tuple[str, str, bytes]]) -> None:
        if blobs:
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings (text_hash, model, vec) VALUES (?, ?, ?)", blobs
            )

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        """The items embedded from ``text_hashes`` (every item when ``None``) that have a
        cached vector, with it: what a vector index outside this file holds."""
        with self._reading() as conn, read_transaction(conn):
            wanted = points.every_text_hash(conn) if text_hashes is None else text_hashes
            return points.vector_points(conn, wanted, self._model, self._dim)

    # -- search -----------------------------------------------------------------------

    def search_lexical(
        self, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
    ) -> list[tuple[str, float]]:
        """FTS5's BM25 over accent-folded text, best first; higher score is better.

        The query is the MATCH expression of :func:`query.match_expression` (every
        word OR-ed, plus the whole phrase unless ``whole_phrase`` is false); the scores
        are those of FTS5's ``bm25()``, computed over an in-memory copy of the index
        (:mod:`.lexical`).
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        texts = [" ".join(terms), *terms] if len(terms) > 1 and whole_phrase else terms
        with self._reading() as conn, read_transaction(conn):
            if self._bm25 is None and not self._bm25_wanted:
                # Loading the copy costs seconds at 100k items: a process that recalls
                # once (a CLI call) lets SQLite answer; the second search loads it.
                # SQLite's statistics count every row, so only when every row is the
                # agent's own (the in-memory copy counts the agent's rows only).
                self._bm25_wanted = True
                if self._holds_only(conn, flt):
                    return self._search_fts5(conn, texts, flt, limit)
            bm25 = self._current_bm25(conn)
            phrases = [
                Phrase(text, tokens)
                for text, tokens in zip(texts, self._tokenizer.words(conn, texts), strict=True)
            ]
            # FTS5 scores a phrase of several tokens itself (the snapshot has no positions).
            parts: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}
            for phrase in phrases:
                if len(phrase.tokens) > 1 and all(t in bm25.postings for t in phrase.tokens):
                    found = conn.execute(
                        f"SELECT rowid, {_BM25} FROM items_fts WHERE items_fts MATCH ?",
                        (quote(phrase.text),),
                    ).fetchall()
                    parts[phrase.text] = (
                        np.asarray([r for r, _ in found], dtype=np.int64),
                        -np.asarray([v for _, v in found], dtype=np.float64),
                    )
            allowed = self._allowed_rowids(conn, flt)
            return bm25.search(phrases, parts, flt, limit, allowed)

    def _search_fts5(
        self, conn: sqlite3.Connection, texts: Sequence[str], flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """The same search run by FTS5 itself (equal scores ordered by id, as in memory)."""
        expression = " OR ".join(quote(text) for text in texts)
        where, params = filter_clause(flt)
        sql = (
            f"SELECT i.id, {_BM25} AS rank FROM items_fts JOIN items AS i"
            f" ON i.rowid = items_fts.rowid WHERE items_fts MATCH ? AND {where}"
            " ORDER BY rank, i.id LIMIT ?"
        )
        found = conn.execute(sql, [expression, *params, limit]).fetchall()
        return [(item_id, -float(rank)) for item_id, rank in found]

    @staticmethod
    def _holds_only(conn: sqlite3.Connection, flt: RecallFilter) -> bool:
        """Whether every item belongs to the agents and tenant ``flt`` names.

        Asked as ranges outside the names (both columns are NOT NULL), one EXISTS
        each, so the agent and tenant indexes answer at once whatever the size.
        """
        outside: list[tuple[str, tuple[str, ...]]] = []
        if flt.agents:
            names = sorted(set(flt.agents))
            outside.append(("agent < ?", (names[0],)))
            outside.extend(("agent > ? AND agent < ?", pair) for pair in itertools.pairwise(names))
            outside.append(("agent > ?", (names[-1],)))
        if flt.tenant is not None:
            outside += [("tenant < ?", (flt.tenant,)), ("tenant > ?", (flt.tenant,))]
        if not outside:
            return True
        sql = " OR ".join(f"EXISTS (SELECT 1 FROM items WHERE {cond})" for cond, _ in outside)
        params = [value for _, values in outside for value in values]
        (other,) = conn.execute(f"SELECT {sql}", params).fetchone()
        return not other

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

    def _current_bm25(self, conn: sqlite3.Connection) -> Bm25Snapshot:
        generation = self._current_generation(conn)
        if self._bm25 is None:
            self._bm25 = self._new_bm25(conn)
        if self._bm25_generation != generation:
            self._bm25.refresh(conn)
            self._bm25_generation = generation
        return self._bm25

    def _current_generation(self, conn: sqlite3.Connection) -> int:
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != self._data_version:
            self._data_version = version
            self._generation += 1
        return self._generation

    def search_vector(
        self, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """Cosine similarity against the embedded items passing ``flt`` (exact scores).

        From ``ann_threshold`` items on, the rows scored are the candidates of the
        vector graph (:mod:`.ann`), or every row the filter keeps when it is narrow.
        """
        if np.asarray(query).size != self._dim:
            raise IndexError_(
                f"query vector has {np.asarray(query).size} dimensions;"
                f" model {self._model} has {self._dim}"
            )
        with self._reading() as conn:
            snapshot = self._current_snapshot(conn)
            allowed = self._allowed_rowids(conn, flt)
            graph = self._current_graph(conn, snapshot)
            if graph is not None:  # the graph changes under the lock only
                return snapshot.search(query, flt, limit, allowed, graph)
            together = self._together
            scores = None if together is None else together.take(snapshot, query)
            if together is not None and not together:
                self._together = None
        return snapshot.search(query, flt, limit, allowed, scores=scores)

    def score_together(self, queries: Sequence[Vector], *, max_scores: int = MAX_SCORES) -> None:
        """The next searches for these query vectors score them in one matrix product
        (:mod:`.batch`; in groups when rows × queries pass ``max_scores``); a later
        batch takes the place of one not searched in full."""
        with self._lock:
            self._together = (
                QueryScores(queries, max_scores=max_scores) if len(queries) > 1 else None
            )

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

    def wait_for_vector_graph(self, timeout: float | None = None) -> bool:
        """Build the vector graph now if the index is large enough; True once it is ready.

        Searches never wait for it (they stay exact meanwhile); benchmarks and tools
        that want the steady state call this first.
        """
        with self._reading() as conn:
            if self._current_graph(conn, self._current_snapshot(conn)) is not None:
                return True
        if not self._ann.wait(timeout):
            return False
        with self._reading() as conn:
            return self._current_graph(conn, self._current_snapshot(conn)) is not None

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

    # -- reporting --------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts per agent and type, embedded items, the model, file sizes and migrations."""
        with self._reading() as conn:
            one = conn.execute
            by_agent = dict(one("SELECT agent, count(*) FROM items GROUP BY 1").fetchall())
            by_type = dict(one("SELECT type, count(*) FROM items GROUP BY 1").fetchall())
            by_layer = dict(one("SELECT layer, count(*) FROM items GROUP BY 1").fetchall())
            (embedded,) = one(
                "SELECT count(*) FROM items AS i WHERE EXISTS (SELECT 1 FROM embeddings AS e"
                " WHERE e.text_hash = i.text_hash AND e.model = ? AND length(e.vec) = ?)",
                (self._model, self._dim * 4),
            ).fetchone()
            (cached,) = one("SELECT count(*) FROM embeddings").fetchone()
            (sources,) = one("SELECT count(*) FROM sources").fetchone()
            migrations = applied_migrations(conn)
        return {
            "path": str(self._path),
            "items": sum(by_agent.values()),
            "items_by_agent": by_agent,
            "items_by_type": by_type,
            "items_by_layer": layer_counts(by_layer),
            "sources": sources,
            "embedded": embedded,
            "embedding_model": self._model,
            "dim": self._dim,
            "embedding_cache": cached,
            "file_size": self._file_size(),
            # the vector graph and the saved snapshot copies beside the file, if any
            "caches_size": self._caches_size(),
            "migrations": migrations,
        }

    def _caches_size(self) -> int:
        if not isinstance(self._path, Path):
            return 0
        found = (
            p
            for kind in ("ann", "vectors", "bm25")
            for p in self._path.parent.glob(f"{self._path.name}.{kind}*")
        )
        return sum(p.stat().st_size for p in found if p.is_file())

    def _file_size(self) -> int:
        if not isinstance(self._path, Path):
            return 0
        files = (self._path, Path(f"{self._path}-wal"))
        return sum(f.stat().st_size for f in files if f.exists())


def _last_rowid(conn: sqlite3.Connection) -> int:
    """The highest item rowid ever used; new rows take the next ones, so none is reused."""
    (used,) = conn.execute(
        "SELECT max(coalesce((SELECT max(rowid) FROM items), 0),"
        " coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'items'), 0))"
    ).fetchone()
    return int(used)
