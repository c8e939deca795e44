"""Appending a turn to a session file in place: one write and an fsync.

A session file only grows at its end while a conversation runs, so a new turn is
written after the last byte instead of rewriting the whole file (whose cost grows
with the session). The write is one ``os.write`` of the turn's header and content
lines, then ``fsync``: when it returns the turn is on disk (inside a group commit, when
the write's :meth:`~kronika.stores.durable.GroupCommit.deferring` block ends). A crash
in the middle can leave the start of the turn: a cut-off header is skipped by the
parser and cut off by the next append (a copy of the file is kept in ``.corrupt/``
first); a turn cut off inside its text keeps what reached the disk. A file that is
missing or damaged (invalid UTF-8, NUL bytes) is not appended to: the caller rewrites
it whole, which creates it or saves its repaired text.
"""

from __future__ import annotations

import os
from pathlib import Path

from kronika.core.model import TurnRecord
from kronika.errors import WorkspaceError
from kronika.stores.durable import flush
from kronika.stores.markdown.files import keep_copy
from kronika.stores.markdown.sessions import render_turn, torn_header


def append_turn_in_place(folder: Path, path: str, turn: TurnRecord) -> list[str] | None:
    """Append ``turn`` to ``folder/path``; ``None`` when the file must be rewritten
    instead (missing or damaged), else the warnings of a repaired torn end."""
    file = folder / path
    try:
        fd = os.open(file, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WorkspaceError(f"cannot write {file}: {exc}") from exc
    try:
        return _append(fd, folder, path, turn)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {file}: {exc}") from exc
    finally:
        os.close(fd)


def _append(fd: int, folder: Path, path: str, turn: TurnRecord) -> list[str] | None:
    raw = _read_all(fd)
    if b"\x00" in raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    warnings: list[str] = []
    if torn_header(text):
        copy = keep_copy(folder, path, raw)
        keep = text.rfind("\n") + 1
        os.ftruncate(fd, len(text[:keep].encode("utf-8")))
        text = text[:keep]
        warnings.append(
            f"{path} ended in a turn header cut off by a crash; it was removed "
            f"(a copy of the file was kept at {copy})"
        )
    lead = "" if not text or text.endswith("\n") else "\n"
    data = (lead + "\n" + render_turn(turn)).encode("utf-8")
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    flush(fd)
    return warnings


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
