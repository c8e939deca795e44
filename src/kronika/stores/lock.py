"""A re-entrant, inter-process lock on the workspace.

Two processes writing the same Markdown file at once would lose one update; every
write (and every index sync) therefore holds an exclusive ``flock`` on
``<home>/.kronika.lock``. Nested use within one process is allowed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

from kronika.stores.private import open_private

try:  # POSIX; elsewhere the lock only serialises threads of this process
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class Reentrant:
    """A hold one thread at a time takes, any number of times over: ``take`` runs when
    the outermost hold begins and ``give_back`` when it ends; a ``take`` that fails
    leaves nothing held. ``thread_lock`` and ``depth`` say who holds it how often."""

    def __init__(self, take: Callable[[], None], give_back: Callable[[], None]) -> None:
        self.thread_lock = threading.RLock()
        self.depth = 0
        self._take = take
        self._give_back = give_back

    def acquire(self) -> None:
        self.thread_lock.acquire()
        if self.depth == 0:
            try:
                self._take()
            except BaseException:
                self.thread_lock.release()
                raise
        self.depth += 1

    def release(self) -> None:
        self.depth -= 1
        try:
            if self.depth == 0:
                self._give_back()
        finally:
            self.thread_lock.release()


class WorkspaceLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._hold = Reentrant(self._take, self._give_back)
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> WorkspaceLock:
        self._hold.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._hold.release()

    def _take(self) -> None:
        if fcntl is not None and self.path.parent.is_dir():
            # open while the lock is held: _give_back closes it
            handle = open(open_private(self.path, os.O_WRONLY | os.O_APPEND), "ab")  # noqa: SIM115
            self._handle = handle
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)

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
