"""A re-entrant, inter-process lock on the workspace.

Two processes writing the same Markdown file at once would lose one update; every
write (and every index sync) therefore holds an exclusive ``flock`` on
``<home>/.kronika.lock``. Nested use within one process is allowed.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType
from typing import IO

from kronika.stores.private import open_private

try:  # POSIX; elsewhere the lock only serialises threads of this process
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class WorkspaceLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> WorkspaceLock:
        self._thread_lock.acquire()
        if self._depth == 0 and fcntl is not None and self.path.parent.is_dir():
            self._handle = open(open_private(self.path, os.O_WRONLY | os.O_APPEND), "ab")
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)
        self._depth += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth == 0 and self._handle is not None:
            if fcntl is not None:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None
        self._thread_lock.release()

    def refresh(self) -> bool:
        """Nothing to do: every process reads the same files."""
        return False

    def close(self) -> None:
        """Nothing to let go of: the file is closed whenever the lock is released."""
