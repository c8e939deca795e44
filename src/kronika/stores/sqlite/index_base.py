"""What every part of :class:`~kronika.stores.sqlite.SqliteIndex` stands on: the
connection and the state beside it, one :class:`IndexState` the parts share.

Opening applies the migrations; :meth:`IndexState.reading` and
:meth:`IndexState.writing` hold the lock, turn SQLite's errors into
:class:`~kronika.errors.IndexError_` (damage into :class:`~kronika.errors.CorruptIndexError`)
and bump the generation that tells the in-memory snapshots a write happened. The
other ``index_*`` modules hold the parts built over it, one concern each; none
inherits from another.
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


class IndexState:
    """The connection to the index file, its lock, options and in-memory state.

    Every part of the index holds the same one and reads and changes its attributes
    under :attr:`lock`; :meth:`reopen` starts it anew on the same path (after the file
    was moved aside), so the parts and what callers hold of them stay valid.
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
        self.path = path if str(path) == MEMORY else Path(path)
        self.options: dict[str, Any] = {
            "embedding_model": embedding_model,
            "dim": dim,
            "ann_threshold": ann_threshold,
            "ann_background": ann_background,
            "restart_copies": restart_copies,
        }
        self.model = embedding_model
        self.dim = dim
        self.lock = threading.RLock()
        self.snapshot: VectorSnapshot | None = None
        self.together: QueryScores | None = None  # score_together's batch
        self.bm25: Bm25Snapshot | None = None
        self.bm25_wanted = False
        self.maybe_unused: set[str] = set()  # text hashes of items replaced or removed
        self.vanished: dict[int, scrub.Deleted] = {}  # deleted rows whose text left
        self.scrub_all = False  # after a reset: everything beside the file is stale
        self.scrubbed: str | None = None  # the index's scrub mark when the graph was read
        self.tokenizer = QueryTokenizer()
        # Bumped by every write of this connection and whenever PRAGMA data_version
        # shows another connection committed; each snapshot remembers the one it saw.
        self.generation = 0
        self.data_version: int | None = None
        self.snapshot_generation = -1
        self.bm25_generation = -1
        # the last filter's allowed rowids, by generation: one recall asks three times
        self.allowed: tuple[tuple[object, ...], npt.NDArray[np.int64]] | None = None
        self.restart_copies = restart_copies
        self.conn = self._connect()
        self.identity = self._read_identity()
        self.ann = AnnCache(
            ann_threshold,
            None if isinstance(self.path, str) else self.path.with_name(self.path.name + ".ann"),
            embedding_model,
            dim,
            identity=self.identity,
            background=ann_background,
        )
        # the marks of the copies saved beside the file (:mod:`.saved`), when there are
        self.saved_marks: tuple[int, int, int] | None = None
        self.saved_bm25_marks: tuple[int, int] | None = None

    def _connect(self) -> sqlite3.Connection:
        if isinstance(self.path, Path):
            # made 0600 before SQLite makes it 0644; its -wal and -shm take that mode
            with contextlib.suppress(OSError):  # an unusable path: SQLite says why below
                touch_private(self.path)
        try:
            conn = sqlite3.connect(
                str(self.path),
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,  # guarded by self.lock
            )
        except sqlite3.Error as exc:
            raise IndexError_(f"cannot open index {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA secure_delete = ON")  # deleted content is overwritten
            apply_migrations(conn)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            conn.close()
            raise self.translate_error(exc) from exc
        return conn

    def _read_identity(self) -> str:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'index_id'").fetchone()
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            self.conn.close()
            raise self.translate_error(exc) from exc
        return str(row[0]) if row else ""

    def translate_error(self, exc: sqlite3.Error | UnicodeDecodeError) -> IndexError_:
        if is_corruption(exc):
            return CorruptIndexError(
                f"index {self.path} is corrupt ({exc}); `kronika index rebuild` moves it aside"
                " and rebuilds it from the Markdown"
            )
        return IndexError_(f"index {self.path} cannot be used: {exc}")

    @contextmanager
    def reading(self, *, decoding: bool = True) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; SQLite's errors become :class:`IndexError_`.

        With ``decoding``, a value read that Python cannot turn back into an item (a
        time out of range, a number that is not one) is damage inside a row, which no
        page check sees: :class:`CorruptIndexError` too, so it is rebuilt.
        """
        with self.lock:
            try:
                yield self.conn
            except (sqlite3.Error, UnicodeDecodeError) as exc:
                raise self.translate_error(exc) from exc
            except (ValueError, OverflowError, OSError) as exc:
                if not decoding:
                    raise
                raise CorruptIndexError(
                    f"index {self.path} holds a value that cannot be read ({exc})"
                ) from exc

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, committed on success, rolled back on error."""
        with self.reading(decoding=False) as conn:
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
                self.generation += 1

    def reopen(self) -> None:
        """Open a fresh connection on the same path with the same options, and forget
        every in-memory snapshot (the caller closed the old connection)."""
        IndexState.__init__(self, self.path, **self.options)

    def recall_log(self) -> SqliteRecallLog:
        return SqliteRecallLog(self.reading)
