"""Crash-safe file writes.

A write goes to a temporary file in the same folder (``.<name>.<random>.kronika-tmp``),
is flushed and fsync'ed, then moved over the target with :func:`os.replace`, and the
folder itself is fsync'ed so the rename survives a power cut (at the end of the write,
with its other files, inside a group commit: :mod:`kronika.stores.durable`). A crash at any point
leaves either the old file or the new one, never a mix; at worst a temporary file is
left behind, which listings ignore and :meth:`MarkdownWorkspace.cleanup_temp` removes.
The new file carries kronika's own stamp (:func:`stamp_own_write`), so a later look
can tell that nobody has written to it since.
The file is its owner's alone (``0600``, in ``0700`` folders: :mod:`kronika.stores.private`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from kronika.stores import batch
from kronika.stores.durable import sync_file, sync_folder
from kronika.stores.private import make_private_dir, open_private

TEMP_SUFFIX = ".kronika-tmp"


def is_temp_name(name: str) -> bool:
    """True for the name of a temporary file left by an interrupted write."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> int | None:
    """Replace ``path`` with ``text`` (UTF-8, newlines written as given) atomically;
    returns the modification time it was given (:func:`stamp_own_write`), or ``None``.
    ``durable=False`` leaves out the syncs (a version a batch replaces again before it
    ends: its journal, not the disk, makes a crash harmless)."""
    return atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def atomic_write_bytes(path: Path, raw: bytes, *, durable: bool = True) -> int | None:
    """:func:`atomic_write_text` of text already encoded as ``raw``."""
    make_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:
        # 0600 from the first byte; the rename keeps the mode, so a rewrite tightens
        fd = open_private(tmp, os.O_WRONLY | os.O_EXCL)
        with open(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            stamp = stamp_own_write(handle.fileno())
            if durable:  # unless it is a copy of the record (team mode)
                sync_file(handle.fileno())
        batch.keep(path)  # inside a batch: how to put the file back, first
        os.replace(tmp, path)
    except BaseException:
        # The old file is untouched; drop the half-made copy if we still can.
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if durable:
        sync_folder(path.parent)  # inside a group commit: with the write's other files
    return stamp


def stamp_own_write(fd: int) -> int | None:
    """Set the modification time of the file open as ``fd``, just written by kronika,
    one nanosecond back from the time its write gave it: a time no later write leaves,
    so while the file still shows it nobody has written to it since (what that spares:
    :mod:`~kronika.stores.markdown.facts.cache`). Returns the stamp, or ``None`` when the
    file system could not take it."""
    if os.utime not in os.supports_fd:
        return None
    try:
        st = os.fstat(fd)
        stamp = st.st_mtime_ns - 1
        os.utime(fd, ns=(st.st_atime_ns, stamp))
        if os.fstat(fd).st_mtime_ns != stamp:
            return None  # rounded to what the file system holds (whole seconds, say)
    except OSError:
        return None
    return stamp


def set_pulled_time(path: Path, mtime_ns: int) -> int | None:
    """Give ``path``, just written by kronika with text pulled from the store of
    record, the record's modification time ``mtime_ns`` (as its access time too).
    Returns ``mtime_ns`` when it serves as kronika's own stamp
    (:func:`stamp_own_write`): a time earlier than the one the write gave the file is
    one no later write leaves either. ``None`` when it does not (a time from a clock
    ahead of this machine's, or one the file system rounds)."""
    wrote = os.stat(path).st_mtime_ns
    os.utime(path, ns=(mtime_ns, mtime_ns))
    if mtime_ns >= wrote or os.stat(path).st_mtime_ns != mtime_ns:
        return None
    return mtime_ns
