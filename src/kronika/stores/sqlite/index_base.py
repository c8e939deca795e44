"""What every part of :class:`~kronika.stores.sqlite.SqliteIndex` stands on: the
connection and the state beside it.

Opening applies the migrations; :meth:`IndexBase._reading` and
:meth:`IndexBase._writing` hold the lock, turn SQLite's errors into
:class:`~kronika.errors.IndexError_` (damage into :class:`~kronika.errors.CorruptIndexError`)
and bump the generation that tells the in-memory snapshots a write happened. The
other ``index_*`` modules are mixins over this class, one concern each.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.errors import CorruptIndexError, IndexError_
from kronika.stores.private import touch_private
from kronika.stores.sqlite import scrub
from kronika.stores.sqlite.ann import AnnCache
from kronika.stores.sqlite.batch import QueryScores
from kronika.stores.sqlite.lexical import Bm25Snapshot, QueryTokenizer
from kronika.stores.sqlite.migrations import apply_migrations
from kronika.stores.sqlite.recall_log import SqliteRecallLog
from kronika.stores.sqlite.recovery import is_corruption
from kronika.stores.sqlite.vectors import VectorSnapshot

MEMORY = ":memory:"
ANN_THRESHOLD = 50_000  # the ann_threshold setting's default
BUSY_TIMEOUT_S = 30.0
_CHUNK = 500  # bound parameters per IN (...) list, far below SQLite's limit


def _chunks(values: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


class IndexBase:
    """The connection to the index file, its lock, options and in-memory state."""

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
                f"index {self._path} is corrupt ({exc}); `kronika index rebuild` moves it aside"
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

    @property
    def embedding_model(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    def recall_log(self) -> SqliteRecallLog:
        return SqliteRecallLog(self._reading)
