"""Appending a turn to a session file in place: one write and an fsync.

A session file only grows at its end while a conversation runs, so a new turn is
written after the last byte instead of rewriting the whole file (whose cost grows
with the session). The write is one ``os.write`` of the turn's header and content
lines, then ``fsync``: when it returns the turn is on disk (inside a group commit, when
the write's :meth:`~kronika.stores.durable.GroupCommit.deferring` block ends). A crash
in the middle can leave the start of the turn: a cut-off header is skipped by the
parser and cut off by the next append (a copy of the file is kept in ``.corrupt/``
first); a turn cut off inside its text keeps what reached the disk. A file that is
missing or damaged (invalid UTF-8, NUL bytes, control characters) is not appended
to: the caller rewrites it whole, which creates it or saves its repaired text.

The first append to a file in a process reads it whole for those checks; the next
ones do not, while the file is as that process left it. Each append remembers the
file it leaves behind (device, inode, size, modification and change times, the
running SHA-256 of its bytes, its line count) and what it wrote
(:func:`appended_since`), so the next append, and the index adding the new turn's
rows, cost the same whatever the session's length. Any other change to the file (a
hand edit, a rewrite, another process's append) changes its size or times, and the
file is read whole again. The change time cannot be set by hand (``touch`` sets it
to now), so an edit that keeps the size and puts the old modification time back is
seen too. While the file only grew by this process's appends, the states it went
through (each one's size, SHA-256 and line count) are kept too (:func:`grown_since`):
a working copy pushing the file to the store of record sends only the bytes added
after the state the record holds.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kronika.core.model import TurnRecord
from kronika.errors import WorkspaceError
from kronika.stores import batch
from kronika.stores.durable import flush
from kronika.stores.markdown.atomic import set_pulled_time
from kronika.stores.markdown.files import holds_control, keep_copy
from kronika.stores.markdown.sessions import render_turn, torn_header

if TYPE_CHECKING:
    from kronika.ports import SourceState

_REMEMBERED = 256  # files whose state a process keeps (the most recently appended to)
_PAST = 1024  # states of one file kept while it only grows by appends (the newest)


@dataclass(frozen=True, slots=True)
class _Mark:
    """A file as an append saw it: enough to tell that it has not changed since."""

    size: int
    mtime_ns: int
    ctime_ns: int
    digest: str  # SHA-256 of the whole file, hex
    lines: int  # newlines in it

    @classmethod
    def of(cls, stat: os.stat_result, digest: str, lines: int) -> _Mark:
        return cls(stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, digest, lines)

    def fits(self, stat: os.stat_result) -> bool:
        return (self.size, self.mtime_ns, self.ctime_ns) == (
            stat.st_size,
            stat.st_mtime_ns,
            stat.st_ctime_ns,
        )


class Extended(NamedTuple):
    """A file :func:`extend_in_place` added to: its status then, and whether its time
    is one no later write leaves (so nobody has written to it while it shows it)."""

    stat: os.stat_result
    own: bool


@dataclass(slots=True)
class _Known:
    after: _Mark
    hasher: hashlib._Hash  # the running SHA-256 of the file as ``after`` saw it
    before: _Mark | None  # the file before the last append, if it ended a line
    data: bytes  # what the last append wrote
    past: dict[int, tuple[str, int]]
    """The states the file went through since it was last read whole, each ending a
    line: size -> (SHA-256, lines); the bytes before each are still those of the file."""


@dataclass(frozen=True, slots=True)
class Appended:
    """What the last append wrote to a file, for the index to add its rows alone."""

    text: str
    first_line: int
    """How many lines the file held before it (the new turns' lines follow)."""
    digest: str
    """SHA-256 of the whole file now (the index's content hash)."""


@dataclass(frozen=True, slots=True)
class Grown:
    """A file that only grew by this process's appends since an earlier state."""

    first_line: int
    """How many lines the file held in the earlier state (the added lines follow)."""
    digest: str
    """SHA-256 of the whole file now."""


_known: dict[tuple[int, int], _Known] = {}
_guard = threading.Lock()


def append_turn_in_place(folder: Path, path: str, turn: TurnRecord) -> list[str] | None:
    """Append ``turn`` to ``folder/path``; ``None`` when the file must be rewritten
    instead (missing or damaged), else the warnings of a repaired torn end."""
    return append_turns_in_place(folder, path, (turn,))


def append_turns_in_place(folder: Path, path: str, turns: Sequence[TurnRecord]) -> list[str] | None:
    """Append ``turns`` to ``folder/path`` in one write (as :func:`append_turn_in_place`
    appends one)."""
    file = folder / path
    batch.keep(file)  # inside a batch: how to put the file back, first
    try:
        fd = os.open(file, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WorkspaceError(f"cannot write {file}: {exc}") from exc
    try:
        return _append(fd, folder, path, turns)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {file}: {exc}") from exc
    finally:
        os.close(fd)


def appended_since(stat: os.stat_result, state: SourceState) -> Appended | None:
    """What this process's last append to the file of ``stat`` wrote, if the index's
    ``state`` of the file is the file just before that append and the file is still
    as the append left it; ``None`` otherwise (read the file)."""
    with _guard:
        known = _known.get((stat.st_dev, stat.st_ino))
    if known is None or known.before is None or not known.after.fits(stat):
        return None
    before = known.before
    if (before.size, before.mtime_ns, before.digest) != (
        state.size,
        state.mtime_ns,
        state.content_hash,
    ):
        return None
    return Appended(known.data.decode("utf-8"), before.lines, known.after.digest)


def grown_since(stat: os.stat_result, size: int, digest: str) -> Grown | None:
    """Whether the file of ``stat`` is, byte for byte, its earlier state of ``size``
    bytes hashing to ``digest`` followed by what this process appended since (read the
    added bytes from offset ``size``); ``None`` when that is not known (read it whole)."""
    with _guard:
        known = _known.get((stat.st_dev, stat.st_ino))
    if known is None or not known.after.fits(stat):
        return None
    was = known.past.get(size)
    if was is None or was[0] != digest:
        return None
    return Grown(was[1], known.after.digest)


def extend_in_place(
    file: Path,
    text: str,
    before: str,
    after: str,
    mtime_ns: int,
    kept: tuple[Any, int] | None = None,
) -> Extended | None:
    """Add ``text`` at the end of ``file`` if the file hashes to ``before`` (SHA-256)
    and would, with the text, hash to ``after``, then give it the modification time
    ``mtime_ns``; its status then, and whether that time serves as kronika's own stamp
    (:func:`~kronika.stores.markdown.atomic.set_pulled_time`), or ``None`` when it does
    not hash so (nothing is written). A working copy pulling a session another worker
    appended to adds the record's new parts so
    (:class:`~kronika.stores.working_copy.WorkingCopy`).

    The file is read whole unless this process knows it is as it left it (its own
    last append or extension); it is remembered as after an append, so the index adds
    the new turns' rows from the added bytes alone (:func:`appended_since`,
    :func:`grown_since`) and this process's next append does not read it. ``kept``:
    the running SHA-256 (a ``hashlib`` object) and line count of the file as it is,
    known by its kept parse (a fact file's), so it is not read either."""
    data = text.encode("utf-8")
    try:
        fd = os.open(file, os.O_RDWR | os.O_APPEND)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        key = (stat.st_dev, stat.st_ino)
        with _guard:
            known = _known.get(key)
        if known is not None and known.after.fits(stat):
            hasher, mark, past, ends_line = known.hasher.copy(), known.after, known.past, True
        elif kept is not None:  # its bytes as a kept parse holds them, ending a line
            hasher = kept[0].copy()
            mark = _Mark.of(stat, hasher.hexdigest(), kept[1])
            past, ends_line = {mark.size: (mark.digest, mark.lines)}, True
        else:
            raw = _read_all(fd)
            hasher = hashlib.sha256(raw)
            mark = _Mark.of(stat, hasher.hexdigest(), raw.count(b"\n"))
            ends_line = raw.endswith(b"\n") or not raw
            past = {mark.size: (mark.digest, mark.lines)} if ends_line else {}
        if mark.digest != before:
            return None
        hasher.update(data)
        if hasher.hexdigest() != after:
            return None
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        own = set_pulled_time(file, mtime_ns) is not None
        flush(fd)
        stat = os.fstat(fd)
    except OSError:
        return None  # the caller writes the file whole
    finally:
        os.close(fd)
    done = _Mark.of(stat, after, mark.lines + data.count(b"\n"))
    with _guard:
        _known.pop(key, None)
        if b"\x00" not in data and data.endswith(b"\n"):
            past = dict(past)
            past[done.size] = (done.digest, done.lines)
            while len(past) > _PAST:
                del past[next(iter(past))]
            _known[key] = _Known(done, hasher, mark if ends_line else None, data, past)
            while len(_known) > _REMEMBERED:
                del _known[next(iter(_known))]
    return Extended(stat, own)


def _append(fd: int, folder: Path, path: str, turns: Sequence[TurnRecord]) -> list[str] | None:
    stat = os.fstat(fd)
    key = (stat.st_dev, stat.st_ino)
    with _guard:
        known = _known.pop(key, None)
    warnings: list[str] = []
    if known is not None and known.after.fits(stat):
        hasher, lines, ends_line = known.hasher, known.after.lines, True
        before, past = known.after, known.past
    else:
        read = _read_checked(fd, folder, path, warnings)
        if read is None:
            return None
        hasher, lines, ends_line = read
        if warnings:  # cut: the file is not as fstat saw it
            stat = os.fstat(fd)
        before = _Mark.of(stat, hasher.hexdigest(), lines)
        past = {before.size: (before.digest, lines)} if ends_line else {}
    blocks = "".join("\n" + render_turn(turn) for turn in turns)
    data = (("" if ends_line else "\n") + blocks).encode("utf-8")
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    if b"\x00" not in data:  # else the next append reads the file and rewrites it
        hasher.update(data)
        after = _Mark.of(os.fstat(fd), hasher.hexdigest(), lines + data.count(b"\n"))
        past[after.size] = (after.digest, after.lines)  # a turn ends its last line
        while len(past) > _PAST:
            del past[next(iter(past))]
        with _guard:
            _known[key] = _Known(after, hasher, before if ends_line else None, data, past)
            while len(_known) > _REMEMBERED:
                del _known[next(iter(_known))]
    flush(fd)
    return warnings


def _read_checked(
    fd: int, folder: Path, path: str, warnings: list[str]
) -> tuple[hashlib._Hash, int, bool] | None:
    """Read the file whole: ``None`` if it is damaged (rewrite it), else the SHA-256
    of its bytes, its line count and whether it ends a line; a torn header at its end
    is cut off first (a copy kept, a warning added)."""
    raw = _read_all(fd)
    if b"\x00" in raw or holds_control(raw):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if torn_header(text):
        copy = keep_copy(folder, path, raw)
        keep = text.rfind("\n") + 1
        raw = text[:keep].encode("utf-8")
        batch.keep(folder / path, cutting=True)
        os.ftruncate(fd, len(raw))
        text = text[:keep]
        warnings.append(
            f"{path} ended in a turn header cut off by a crash; it was removed "
            f"(a copy of the file was kept at {copy})"
        )
    return hashlib.sha256(raw), raw.count(b"\n"), not text or text.endswith("\n")


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks: list[bytes] = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)
