"""Group commit: the files a write appended to reach the disk after the workspace lock
is released, one ``fsync`` per file for every writer waiting at that moment.

An append is acknowledged only once its bytes are on disk, and an ``fsync`` takes
0.15 ms on a quiet disk but 2-6 ms on a busy shared one: waiting for it while
holding the workspace lock made every other writer wait too, and a conversation turn
waited for two in a row (its session file, then ``audit.jsonl``). Inside
:meth:`GroupCommit.deferring` the stores hand the descriptor of a file they appended
to to :func:`flush` instead of syncing it; leaving the block (after the lock is
released) waits for :meth:`GroupCommit.wait`, which syncs what was queued. One waiter leads
a round and syncs the files of every writer that queued before it began (each file
once, the files of a round side by side on a few threads, so two files cost about
one ``fsync``); the others wait for the round that holds their files. A writer that
returns has its bytes on disk, as before; one whose round failed gets a
:class:`~kronika.errors.WorkspaceError`.

Outside :meth:`~GroupCommit.deferring` (every other write, and any other thread),
:func:`flush` syncs at once.

Inside :func:`copy_of_record` nothing waits for the disk: the files written there are a
working copy of a store of record (team mode), acknowledged once the record has them,
and a copy whose machine restarted is compared with the record before it is trusted
again (:func:`boot_id`, :mod:`kronika.stores.working_copy`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kronika.errors import WorkspaceError

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_QUEUE: contextvars.ContextVar[_Ticket | None] = contextvars.ContextVar(
    "kronika_group_commit", default=None
)
_SYNC_THREADS = 4
_COPY: contextvars.ContextVar[bool] = contextvars.ContextVar("kronika_record_copy", default=False)
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@contextmanager
def copy_of_record(copy: bool = True) -> Iterator[None]:
    """Within the block (in this thread), with ``copy``, the files written are a copy
    of what a store of record holds: :func:`flush`, :func:`sync_file` and
    :func:`sync_folder` do not wait for the disk. ``copy=False``: they do again (a
    forget's edits, sent later than they are made)."""
    token = _COPY.set(copy)
    try:
        yield
    finally:
        _COPY.reset(token)


def writing_a_copy() -> bool:
    """Whether this thread writes a copy of the record (:func:`copy_of_record`)."""
    return _COPY.get()


def boot_id() -> str | None:
    """What names this boot of the machine (Linux), or ``None`` where it cannot be
    told: a copy written without waiting for the disk is trusted only within the boot
    that wrote it, since only a crash of the machine loses what was not synced."""
    try:
        found = _BOOT_ID.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return found or None


def sync_tree(folder: Path) -> None:
    """Sync every file and folder under ``folder`` (and it) at once, copies of the
    record too: what was written without waiting, made durable before a write that
    must be (a file gone meanwhile is passed over)."""
    try:
        for root, _dirs, files in os.walk(folder):
            for name in [*files, "."]:
                try:
                    fd = os.open(os.path.join(root, name), os.O_RDONLY)
                except FileNotFoundError:
                    continue
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
    except OSError as exc:
        raise WorkspaceError(f"cannot sync {folder} to disk: {exc}") from exc


def sync_file(fd: int) -> None:
    """``os.fsync(fd)``, unless this thread writes a copy of the record."""
    if not _COPY.get():
        os.fsync(fd)


@dataclass
class _Ticket:
    """One writer's files: descriptors (duplicated) to sync, then how that went."""

    commit: GroupCommit
    files: dict[tuple[int, int], int] = field(default_factory=dict)
    round: int = -1
    error: OSError | None = None


def flush(fd: int) -> None:
    """Make what was written to ``fd`` durable: now, or in the group commit of the
    write under way in this thread (see the module docstring)."""
    if _COPY.get():
        return
    ticket = _QUEUE.get()
    if ticket is None:
        os.fsync(fd)
        return
    stat = os.fstat(fd)
    key = (stat.st_dev, stat.st_ino)
    if key not in ticket.files:
        ticket.files[key] = os.dup(fd)


def sync_folder(folder: Path, *, deferred: bool = True) -> None:
    """Sync ``folder`` (a rename or a link in it), at once or, ``deferred``, with the
    group commit under way (:func:`flush`). Folders cannot be opened for a sync on
    every platform (Windows): there the rename is still atomic, only its durability is
    weaker. A deferred sync of a copy of the record (:func:`copy_of_record`) is not
    made: only a sync asked for at once (a batch journal's) is."""
    if deferred and _COPY.get():
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            if deferred:
                flush(fd)
            else:
                os.fsync(fd)
    finally:
        os.close(fd)


def sync_queued() -> None:
    """Sync now what the write under way in this thread has queued so far (a batch's
    files, before its journal goes: :mod:`kronika.stores.batch`)."""
    ticket = _QUEUE.get()
    if ticket is None:
        return
    files, ticket.files = ticket.files, {}
    try:
        for fd in files.values():
            os.fsync(fd)
    except OSError as exc:
        raise WorkspaceError(f"a write could not be made durable: {exc}") from exc
    finally:
        for fd in files.values():
            with contextlib.suppress(OSError):
                os.close(fd)


class GroupCommit:
    """The rounds of ``fsync`` shared by the writers of one process."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queued: list[_Ticket] = []
        self._next = 0  # the round that takes what is queued now
        self._done = -1  # the last round finished
        self._leading = False
        self._pool: ThreadPoolExecutor | None = None

    @contextmanager
    def deferring(self) -> Iterator[_Ticket]:
        """Within the block, :func:`flush` (in this thread) queues files; leaving it
        waits until they are on disk (:meth:`wait`), also when the block raised, so
        what it wrote is durable either way. :class:`WorkspaceError` when a sync fails."""
        ticket = _Ticket(self)
        token = _QUEUE.set(ticket)
        try:
            yield ticket
        finally:
            _QUEUE.reset(token)
            if ticket.files:
                with self._cond:
                    ticket.round = self._next
                    self._queued.append(ticket)
                self.wait(ticket)

    def wait(self, ticket: _Ticket) -> None:
        """Return once ``ticket``'s files are on disk (:class:`WorkspaceError` if not)."""
        if ticket.round < 0:
            return
        with self._cond:
            while self._done < ticket.round:
                if self._leading:
                    self._cond.wait()
                    continue
                self._leading = True
                batch, self._queued = self._queued, []
                this = self._next
                self._next += 1
                self._cond.release()
                try:
                    self._sync(batch)
                finally:
                    self._cond.acquire()
                    self._done = this
                    self._leading = False
                    self._cond.notify_all()
        if ticket.error is not None:
            raise WorkspaceError(f"a write could not be made durable: {ticket.error}")

    def _sync(self, batch: list[_Ticket]) -> None:
        files: dict[tuple[int, int], int] = {}
        for ticket in batch:
            for key, fd in ticket.files.items():
                files.setdefault(key, fd)
        errors = dict(zip(files, self._fsync_all(list(files.values())), strict=True))
        for ticket in batch:
            ticket.error = next((errors[k] for k in ticket.files if errors[k]), None)
            for fd in ticket.files.values():
                with contextlib.suppress(OSError):  # synced already: only the copy goes
                    os.close(fd)

    def _fsync_all(self, fds: list[int]) -> list[OSError | None]:
        """``fsync`` each descriptor, the others on helper threads while this one syncs
        the first: concurrent syncs of different files overlap on the device."""
        if len(fds) > 1 and self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(_SYNC_THREADS, thread_name_prefix="kronika-fsync")
        others = [self._pool.submit(_fsync, fd) for fd in fds[1:]] if self._pool else []
        return [_fsync(fds[0]), *(f.result() for f in others)]


def _fsync(fd: int) -> OSError | None:
    try:
        os.fsync(fd)
    except OSError as exc:
        return exc
    return None
