"""Which Markdown files of a workspace's agents' folders changed since the last look.

A working copy's push (:meth:`kronika.stores.working_copy.WorkingCopy.push`) sends
every file that differs from the record: kronika's own writes and hand edits alike. To
find them it may list every file of the held agent, one ``stat`` each, which grows
with the agent's documents (a session file per conversation). Where the system tells
of changes to a folder (Linux's ``inotify``), :class:`FolderWatch` watches every
folder of ``agents/`` instead, from before the first listing on, and a look reads what
changed since: the files named in its events, whoever wrote them (this process,
another, an editor), as each write, rename, removal or time change is queued by the
kernel before the call that made it returns.

One ``inotify`` instance serves every watch of a process (the system allows few per
user: ``fs.inotify.max_user_instances``, 128 by default), each folder watched once
whoever asks; a look reads every event queued and gives each watch its own.

An agent's files are listed whole once after the watch begins, and again whenever the
watch cannot vouch for them: its queue overflowed, a watched folder was removed or
moved, the process forked (the watch is another process's then), a look raised
before its files were sent (:meth:`FolderWatch.forget`), or no watch could be set
(not Linux, the per-user limit of ``fs.inotify.max_user_instances`` or
``max_user_watches`` reached): then every look lists every file, as without it.
A file whose name or folder starts with ``.`` is not looked at (temporary files of
atomic writes, ``.corrupt/``), nor one that does not end in ``.md``; a link among
the files (symbolic, or a second name of a file) makes its agent listed at every look
(the file may change under its other name, where no watch is told). A link is seen
when its agent is listed, or when the linked name in the folder is written, made or
renamed; a second name given outside the folder to a file already listed is not,
and an edit made under that name is sent when the agent is next listed whole (at the
latest, by the next process).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import os
import struct
import sys
import threading
import weakref
from pathlib import Path

log = logging.getLogger(__name__)

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_OVERFLOW, _IGNORED, _ISDIR = 0x4000, 0x8000, 0x40000000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_MASK = (
    _MODIFY
    | _ATTRIB
    | _CLOSE_WRITE
    | _MOVED_FROM
    | _MOVED_TO
    | _CREATE
    | _DELETE
    | _DELETE_SELF
    | _MOVE_SELF
    | _ONLYDIR
    | _DONT_FOLLOW
)
_LOCK = threading.RLock()
"""Held while events are read and given out, and while a watch looks or changes: a
look in one thread must not miss an event another thread read and has not given out."""
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)
_READ = 64 * 1024


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


class _Instance:
    """The process's ``inotify`` instance: which watch each folder's events go to."""

    def __init__(self) -> None:
        self.fd = -1
        self.pid = 0
        self.epoch = 0  # a new instance (a fork's): every watch set again
        self.failed = False
        self.owners: dict[int, weakref.WeakSet[FolderWatch]] = {}  # wd -> watches

    def open(self) -> bool:
        """Whether the instance is open in this process (opened, where it can be)."""
        if self.fd >= 0 and self.pid == os.getpid():
            return True
        if self.fd >= 0:  # a copy of the parent's: its events are the parent's to read
            os.close(self.fd)
            self.fd, self.owners = -1, {}
        libc = _libc()
        if libc is None or self.failed:
            return False
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            self.failed = True
            log.debug("no folder watch (%s)", os.strerror(ctypes.get_errno()))
            return False
        self.fd, self.pid, self.epoch = fd, os.getpid(), self.epoch + 1
        return True

    def add(self, watch: FolderWatch, folder: str) -> int:
        """Watch ``folder`` for ``watch``: its watch descriptor, or ``-errno``."""
        libc = _libc()
        assert libc is not None
        wd = int(libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK))
        if wd < 0:
            return -ctypes.get_errno()
        self.owners.setdefault(wd, weakref.WeakSet()).add(watch)
        return wd

    def drop(self, watch: FolderWatch, wds: list[int]) -> None:
        """``watch`` no longer wants the events of ``wds`` (a folder nobody else
        watches is let go)."""
        libc = _libc()
        for wd in wds:
            owners = self.owners.get(wd)
            if owners is None:
                continue
            owners.discard(watch)
            if not owners:
                del self.owners[wd]
                if libc is not None and self.fd >= 0 and self.pid == os.getpid():
                    libc.inotify_rm_watch(self.fd, wd)

    def read(self) -> None:
        """Give every event queued to the watches of its folder."""
        while self.fd >= 0 and self.pid == os.getpid():
            try:
                raw = os.read(self.fd, _READ)
            except BlockingIOError:
                return
            except OSError as error:  # every watch lists every file from now on
                log.warning("the folder watch failed (%s): files are listed", error)
                self.fd, self.owners, self.failed = -1, {}, True
                return
            at = 0
            while at + _HEADER.size <= len(raw):
                wd, mask, _, size = _HEADER.unpack_from(raw, at)
                name = raw[at + _HEADER.size : at + _HEADER.size + size].rstrip(b"\0")
                at += _HEADER.size + size
                if mask & _OVERFLOW:  # events lost: nobody can vouch for anything
                    for owners in list(self.owners.values()):
                        for watch in list(owners):
                            watch.forget()
                    continue
                for watch in list(self.owners.get(wd, ())):
                    watch._take(wd, mask, os.fsdecode(name))
                if mask & _IGNORED:
                    self.owners.pop(wd, None)


_INSTANCE = _Instance()


class FolderWatch:
    """The Markdown files of ``agents`` (``<home>/agents``) changed since the last look
    of their agent (see the module docstring)."""

    def __init__(self, agents: Path) -> None:
        self.agents = Path(agents)
        self._epoch = 0  # the instance's epoch this watch was set in (0: not set)
        self._where: dict[int, tuple[str, str]] = {}  # wd -> (agent, "sub/") or ("", "")
        self._listed: set[str] = set()  # agents listed whole since the watch vouches
        self._dirty: dict[str, set[str]] = {}  # agent -> paths changed since its look
        self._linked: set[str] = set()  # agents with a link among their files
        self._failed = False  # the watch could not be set: every look lists every file

    @property
    def watching(self) -> bool:
        """Whether looks are told what changed (else each lists every file)."""
        return (
            self._epoch == _INSTANCE.epoch
            and _INSTANCE.fd >= 0
            and _INSTANCE.pid == os.getpid()
            and bool(self._where)
        )

    def look(self, agent: str) -> set[str] | None:
        """The paths of ``agent``'s Markdown files changed since its last look, or
        ``None`` when the caller must list them all (and then say so: :meth:`listed`)."""
        with _LOCK:
            self._start()
            _INSTANCE.read()
            changed = self._dirty.pop(agent, set())
            if not self.watching or agent not in self._listed or agent in self._linked:
                return None  # what changed before is in the listing the caller makes
            return changed

    def listed(self, agent: str, *, linked: bool = False) -> None:
        """``agent``'s files were listed whole after a :meth:`look` (which read what was
        queued before the listing began); ``linked``: a link was among them (symbolic,
        or a file with more than one name). What was read since that look (by a look of
        another watch of the process, or of another agent) is kept: a change made while
        the files were listed is told at the next look."""
        with _LOCK:
            if self.watching and (agent, "") in self._where.values():
                self._listed.add(agent)  # only an agent whose folder is watched (not a link)
                if linked:
                    self._linked.add(agent)
                else:
                    self._linked.discard(agent)

    def linked(self, agent: str) -> None:
        """A file of ``agent``'s is a link (see :meth:`listed`): listed at every look."""
        with _LOCK:
            self._linked.add(agent)

    def forget(self) -> None:
        """Vouch for nothing looked at so far: every agent is listed whole next."""
        with _LOCK:
            self._listed.clear()
            self._dirty.clear()

    def close(self) -> None:
        with _LOCK:
            self._stop()
            self._failed = True

    def __del__(self) -> None:
        try:  # noqa: SIM105  (at exit, contextlib may be gone already)
            with _LOCK:
                self._stop()
        except Exception:
            pass

    # -- the watch ------------------------------------------------------------------

    def _start(self) -> None:
        """Set the watch (again, in a forked process), from before any listing."""
        if self.watching or self._failed:
            return
        self._stop()
        if self.agents.is_symlink() or not self.agents.is_dir():
            return  # nothing to watch yet (or a folder elsewhere): every look lists
        if not _INSTANCE.open():
            self._failed = True
            return
        self._epoch = _INSTANCE.epoch
        self._add_tree(self.agents, "", "")

    def _add_tree(self, folder: Path, agent: str, prefix: str) -> None:
        """Watch ``folder`` and every folder under it (not hidden ones)."""
        pending = [(folder, agent, prefix)]
        while pending:
            where, owner, sub = pending.pop()
            wd = _INSTANCE.add(self, os.fspath(where))
            if wd < 0:
                if -wd in (errno.ENOENT, errno.ENOTDIR) and where != self.agents:
                    continue  # gone already: nothing to watch
                log.debug("%s: folder watch given up (%s)", self.agents, os.strerror(-wd))
                self._stop()
                self._failed = True
                return
            self._where[wd] = (owner, sub)
            try:
                entries = list(os.scandir(where))
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                    continue
                if owner:
                    pending.append((Path(entry.path), owner, f"{sub}{entry.name}/"))
                else:
                    pending.append((Path(entry.path), entry.name, ""))

    def _stop(self) -> None:
        if self._where and self._epoch == _INSTANCE.epoch:
            _INSTANCE.drop(self, list(self._where))
        self._where, self._epoch = {}, 0
        self.forget()

    def _take(self, wd: int, mask: int, name: str) -> None:
        """One event of a folder this watch set (:meth:`_Instance.read`)."""
        if wd not in self._where:
            return  # a folder this watch let go of (its last events)
        owner, sub = self._where[wd]
        if mask & (_IGNORED | _DELETE_SELF | _MOVE_SELF):
            if mask & _IGNORED:
                del self._where[wd]
            if owner:
                self._listed.discard(owner)
            else:  # agents/ itself: watched again from the next look on
                self._stop()
            return
        if not name or name.startswith("."):
            return
        if mask & _ISDIR:
            folder = self.agents / owner / sub / name if owner else self.agents / name
            agent = owner or name
            if mask & (_CREATE | _MOVED_TO):
                self._add_tree(folder, agent, f"{sub}{name}/" if owner else "")
            self._listed.discard(agent)  # files came or went with the folder
            return
        if owner and name.endswith(".md"):
            path = f"{sub}{name}"
            self._dirty.setdefault(owner, set()).add(path)
            if mask & (_CREATE | _MOVED_TO) and os.path.islink(self.agents / owner / path):
                self._linked.add(owner)  # its target may change where no watch sees
