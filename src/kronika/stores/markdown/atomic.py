"""Crash-safe file writes.

A write goes to a temporary file in the same folder (``.<name>.<random>.kronika-tmp``),
is flushed and fsync'ed, then moved over the target with :func:`os.replace`, and the
folder itself is fsync'ed so the rename survives a power cut (at the end of the write,
with its other files, inside a group commit: :mod:`kronika.stores.durable`). A crash at any point
leaves either the old file or the new one, never a mix; at worst a temporary file is
left behind, which listings ignore and :meth:`MarkdownWorkspace.cleanup_temp` removes.
The file is its owner's alone (``0600``, in ``0700`` folders: :mod:`kronika.stores.private`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from kronika.stores.durable import flush
from kronika.stores.private import make_private_dir, open_private

TEMP_SUFFIX = ".kronika-tmp"


def is_temp_name(name: str) -> bool:
    """True for the name of a temporary file left by an interrupted write."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines written as given) atomically."""
    make_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:
        # 0600 from the first byte; the rename keeps the mode, so a rewrite tightens
        fd = open_private(tmp, os.O_WRONLY | os.O_EXCL)
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        # The old file is untouched; drop the half-made copy if we still can.
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    # Directories cannot be opened for fsync on every platform (Windows); the
    # rename is still atomic there, only its durability is weaker. Inside a group
    # commit (stores/durable.py) the folder is synced with the write's other files
    # when the write ends: before that only the rename may be lost, never the file.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            flush(fd)
    finally:
        os.close(fd)
