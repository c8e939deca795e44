"""A re-entrant, inter-process lock on the workspace.

Two processes writing the same Markdown file at once would lose one update; every
write (and every index sync) therefore holds an exclusive ``flock`` on
``<home>/.kronika.lock``. Nested use within one process is allowed. Taking it first
puts back a batch of writes a kill cut short (:mod:`kronika.stores.batch`).
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from kronika.ports import UndoneBatch
from kronika.stores.batch import FOLDER, BatchJournal
from kronika.stores.private import open_private

try:  # POSIX; elsewhere the lock only serialises threads of this process
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class Reentrant(ABC):
    """Entered by one thread at a time, any number of times over: :meth:`_take` runs
    when the outermost entry begins and :meth:`_give_back` when it ends; a ``_take``
    that fails leaves nothing held."""

    def __init__(self) -> None:
        self._thread_lock = threading.RLock()
        self._depth = 0

    def __enter__(self) -> Self:
        self._thread_lock.acquire()
        if self._depth == 0:
            try:
                self._take()
            except BaseException:
                self._thread_lock.release()
                raise
        self._depth += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._give_back()
        finally:
            self._thread_lock.release()

    @abstractmethod
    def _take(self) -> None:
        """Take what the outermost entry holds."""

    @abstractmethod
    def _give_back(self) -> None:
        """Give back what :meth:`_take` took."""


class WorkspaceLock(Reentrant):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._handle: IO[bytes] | None = None
        self.journal = BatchJournal(path.parent)

    def _take(self) -> None:
        if fcntl is not None and self.path.parent.is_dir():
            # open while the lock is held: _give_back closes it
            handle = open(open_private(self.path, os.O_WRONLY | os.O_APPEND), "ab")  # noqa: SIM115
            self._handle = handle
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            self.journal.recover()  # a batch whose writer was killed: none of it stays
        except BaseException:
            self._give_back()
            raise

    def for_agent(self, agent: str) -> Self:
        """The lock itself: every writer of the folder takes turns, whatever the agent."""
        return self

    def on_undone(self, report: Callable[[UndoneBatch], None]) -> None:
        """Call ``report`` for every batch put back (:meth:`BatchJournal.on_undone`)."""
        self.journal.on_undone(report)

    def after_release(self, run: Callable[[], None]) -> None:
        """No store of record to let go of: ``run`` runs at once."""
        run()

    def from_record(self, agent: str, path: str) -> bool:
        """No store of record: no file is its version."""
        return False

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the lock for a batch that lands whole or not at all (see the module)."""
        with self:
            with self.journal.recording():
                yield
            self.journal.commit()

    def _give_back(self) -> None:
        if self._handle is not None:
            if fcntl is not None:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def refresh(self) -> bool:
        """Nothing to do: every process reads the same files."""
        return False

    def close(self) -> None:
        """Nothing to let go of: the file is closed whenever the lock is released."""


def recover_batch(home: Path, report: Callable[[UndoneBatch], None] | None = None) -> None:
    """Put back a batch a kill cut short in the workspace at ``home`` (opening a
    workspace calls this, so nothing reads what the batch left): the lock's take does,
    and tells ``report``."""
    if (home / FOLDER).exists():
        lock = WorkspaceLock(home / ".kronika.lock")
        if report is not None:
            lock.on_undone(report)
        with lock:
            pass
