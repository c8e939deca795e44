"""A batch of writes lands whole or not at all (``WriteLock.batch``).

A batch (``Memory.remember_many``, ``Memory.import_sessions``) changes several files of
the agents' folders one after the other: each replaced whole by a rename
(:mod:`~kronika.stores.markdown.atomic`) or appended to in place. A kill between two
of them would leave part of the batch. So, before a batch changes a file for the first
time, its journal ``<home>/.kronika-batch/`` records how to put the file back, and that
record is on disk (``fsync``) before the file is touched:

* a file that was not there: it is removed;
* a file that was: a hard link to it as it is (a copy where links are not possible) and
  its length. A rename leaves the linked file as it was; an append in place is cut back
  to that length. A file about to be cut in place (a torn end removed) is copied first.

The batch ends by syncing what it wrote and removing the journal's list (one unlink:
from that moment it happened), then the saved copies. A list found when the workspace
lock is next taken (:func:`recover` runs in every
:class:`~kronika.stores.lock.WorkspaceLock`'s take, before anything is read) belongs to
a batch a kill cut short, never acknowledged: every file it names is put back, then
the list and the copies removed, so none of the batch is left. Putting back is
idempotent, so a kill meanwhile is harmless; only a linked original is ever cut back
(its inode is recorded), so a copy already gone never tears a file. A batch that
raises is put back at once the same way.

Only the agents' folders (``<home>/agents/``) are recorded: the audit trail is a log of
what was asked, and an index is derived from the files (a batch's writes are indexed
after it ends). So the audit may name writes of a batch that was put back; whoever
listens (:meth:`BatchJournal.on_undone`, set by the lock's owner) is told of each batch
put back, with its agents and when it began, under the lock, and adds an entry saying
so to the trail.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kronika.errors import WorkspaceError
from kronika.ports import UndoneBatch
from kronika.stores.durable import sync_folder, sync_queued, writing_a_copy
from kronika.stores.private import make_private_dir, open_private

FOLDER = ".kronika-batch"
_ENTRIES = "journal.jsonl"
_ACTIVE: contextvars.ContextVar[BatchJournal | None] = contextvars.ContextVar(
    "kronika_batch", default=None
)
log = logging.getLogger("kronika.batch")


def recording() -> bool:
    """Whether a batch records its changes in this thread (a crash puts it back whole)."""
    return _ACTIVE.get() is not None


def keep(path: Path, *, cutting: bool = False) -> None:
    """Before ``path`` is changed: inside a batch (in this thread), record how to put it
    back (see the module docstring); ``cutting``: it is about to be cut in place."""
    journal = _ACTIVE.get()
    if journal is not None:
        journal.keep(path, cutting=cutting)


@dataclass(frozen=True, slots=True)
class _Kept:
    kind: str  # "absent", "link" or "copy"
    saved: str = ""
    size: int = 0
    ino: int = 0  # a link's file (the original): only that one is ever cut back


class BatchJournal:
    """The batch journal of the workspace at ``home`` (see the module docstring)."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.folder = self.home / FOLDER
        self._agents = os.fspath(self.home / "agents") + os.sep
        self._kept: dict[str, _Kept] = {}
        self._fd: int | None = None
        self._listeners: list[Callable[[UndoneBatch], None]] = []

    def on_undone(self, report: Callable[[UndoneBatch], None]) -> None:
        """Call ``report`` for every batch this journal puts back (a kill's, found when
        the lock is taken, or one that raised), under the lock, once it is put back."""
        self._listeners.append(report)

    @contextmanager
    def recording(self) -> Iterator[None]:
        """Within the block (in this thread, holding the lock) every change of a file is
        recorded first; a block that raises is put back at once. :meth:`commit` ends
        the batch. A batch inside a batch is part of it."""
        if _ACTIVE.get() is self:
            yield
            return
        token = _ACTIVE.set(self)
        try:
            yield
        except BaseException:
            _ACTIVE.reset(token)
            self._close()
            self.roll_back()
            raise
        _ACTIVE.reset(token)
        self._close()

    def keep(self, path: Path, *, cutting: bool = False) -> None:
        name = os.fspath(path)
        if not name.startswith(self._agents):
            return
        rel = os.path.relpath(name, self.home)
        known = self._kept.get(rel)
        if known is not None and not (cutting and known.kind == "link"):
            return
        try:
            self._keep(rel, path, known, cutting)
        except OSError as exc:
            raise WorkspaceError(f"cannot record the batch's change of {path}: {exc}") from exc

    def _keep(self, rel: str, path: Path, known: _Kept | None, cutting: bool) -> None:
        fd = self._open()
        saved = str(len(self._kept)) + ("c" if known else "")
        if known is not None:  # a linked file about to be cut: its first bytes are the old file
            with open(self.folder / known.saved, "rb") as old:
                self._copy_bytes(old.read(known.size), saved)
            kept = _Kept("copy", saved, known.size)
        else:
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                kept = _Kept("absent")
            else:
                size = stat.st_size
                if cutting:
                    self._copy_bytes(path.read_bytes()[:size], saved)
                    kept = _Kept("copy", saved, size)
                else:
                    try:
                        os.link(path, self.folder / saved)
                        kept = _Kept("link", saved, size, stat.st_ino)
                    except OSError:  # no hard links here: a copy does
                        self._copy_bytes(path.read_bytes()[:size], saved)
                        kept = _Kept("copy", saved, size)
        line = {"path": rel, "kind": kept.kind, "saved": kept.saved, "size": kept.size}
        line["ino"], line["at"] = kept.ino, time.time()
        os.write(fd, (json.dumps(line) + "\n").encode("utf-8"))
        os.fsync(fd)
        sync_folder(self.folder, deferred=False)  # the link (or copy) and the journal's own name
        self._kept[rel] = kept

    def _open(self) -> int:
        if self._fd is None:
            make_private_dir(self.folder)
            self._fd = open_private(self.folder / _ENTRIES, os.O_WRONLY | os.O_APPEND)
            sync_folder(self.home, deferred=False)
        return self._fd

    def _copy_bytes(self, data: bytes, saved: str) -> None:
        fd = open_private(self.folder / saved, os.O_WRONLY | os.O_EXCL)
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def commit(self) -> None:
        """The batch is done: what it wrote is synced, then the journal's list goes (the
        moment the batch happened), then the rest of it. A failed sync puts it back."""
        self._kept.clear()
        if not self.folder.exists():
            return  # it changed nothing
        try:
            sync_queued()  # the batch's renames and appends on disk before the journal goes
        except BaseException:
            self.roll_back()
            raise
        (self.folder / _ENTRIES).unlink()
        # with the group commit, or at once for a copy of the record, which waits for
        # no other sync: a batch it sent is never put back after a crash of the machine
        sync_folder(self.folder, deferred=not writing_a_copy())
        shutil.rmtree(self.folder)

    def roll_back(self) -> UndoneBatch | None:
        """Put back every file the journal names, then remove it, and tell the
        listeners; what was put back (``None``: nothing was recorded)."""
        self._kept.clear()
        try:
            lines = (self.folder / _ENTRIES).read_text(encoding="utf-8").splitlines(True)
        except FileNotFoundError:  # nothing recorded yet, or done: only copies are left
            shutil.rmtree(self.folder, ignore_errors=True)
            return None
        entries: dict[str, _Kept] = {}
        began: float | None = None
        for line in lines:
            if not line.endswith("\n"):
                continue  # cut by the kill: its file was not changed yet
            data = json.loads(line)
            kept = _Kept(data["kind"], data["saved"], int(data["size"]), int(data["ino"]))
            entries[data["path"]] = kept
            at = data.get("at")  # not in a journal of an older kronika
            if isinstance(at, int | float) and (began is None or at < began):
                began = float(at)
        for rel, kept in entries.items():
            _put_back(self.home / rel, self.folder, kept)
        (self.folder / _ENTRIES).unlink()  # all put back: the saved copies may go
        sync_folder(self.folder, deferred=False)
        shutil.rmtree(self.folder)
        undone = UndoneBatch(
            agents=tuple(sorted({_agent_of(rel) for rel in entries} - {""})),
            files=len(entries),
            began=None if began is None else datetime.fromtimestamp(began, UTC),
        )
        for report in self._listeners:
            report(undone)
        return undone

    def recover(self) -> None:
        """Put back a batch a kill cut short, if its journal is there (holding the lock)."""
        if self.folder.exists() and self.roll_back() is not None:
            log.warning("%s: a batch of writes cut short by a crash was undone", self.home)


def _agent_of(rel: str) -> str:
    """The agent whose folder holds ``rel`` (``agents/<name>/…``), or ``""``."""
    parts = rel.replace(os.sep, "/").split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "agents" else ""


def _put_back(target: Path, folder: Path, kept: _Kept) -> None:
    if kept.kind == "absent":
        target.unlink(missing_ok=True)
    else:
        with contextlib.suppress(FileNotFoundError):  # put back already, by a roll-back cut short
            os.replace(folder / kept.saved, target)
        now = target.stat()
        if kept.kind == "link" and now.st_ino == kept.ino and now.st_size > kept.size:
            with open(target, "r+b") as handle:  # the original, appended to in place: cut back
                handle.truncate(kept.size)
                os.fsync(handle.fileno())
    sync_folder(target.parent, deferred=False)


__all__ = ["FOLDER", "BatchJournal", "keep", "recording"]
