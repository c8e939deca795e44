"""Files only their owner can read: ``0600`` files in ``0700`` folders.

A workspace holds conversations, facts and perhaps an API key (``kronika.toml``), so
everything kronika creates in it — Markdown, ``audit.jsonl``, ``index.sqlite`` and its
``-wal``/``-shm`` and saved copies, the config file, the lock, the temporary files of
atomic writes — is readable by its owner alone, whatever the process umask: a file is
created with :func:`os.open` and mode ``0600`` and then set to exactly that mode (a
umask only takes bits away, and a strict one such as ``0277`` would otherwise leave a
file its owner cannot rewrite); folders likewise get ``0700``.

Files that already exist keep their mode until kronika rewrites them (an atomic
rewrite replaces the file, so it comes back ``0600``). Opening a workspace tightens
its top folder to ``0700`` (:func:`tighten_home`), which keeps every other user out
of everything inside; :func:`loose_modes` lists what is still wider and
:func:`tighten_modes` narrows it. Where modes mean nothing (Windows), these calls
change nothing.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
_OTHERS = 0o077  # any permission for the group or for everyone else


def _set_mode(path: Path | int, mode: int) -> None:
    with contextlib.suppress(OSError, NotImplementedError):
        if isinstance(path, int):
            if hasattr(os, "fchmod"):
                os.fchmod(path, mode)
        else:
            os.chmod(path, mode)


def make_private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents as ``0700`` folders (like ``mkdir -p``);
    folders that exist are left as they are."""
    missing: list[Path] = []
    folder = Path(path)
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for new in reversed(missing):
        try:
            new.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not new.is_dir():
                raise
            continue  # made meanwhile by another process
        _set_mode(new, DIR_MODE)


def open_private(path: Path, flags: int) -> int:
    """:func:`os.open` ``path`` with ``flags`` (``O_CREAT`` added); a file this call
    creates is ``0600``. Returns the descriptor."""
    existed = os.path.lexists(path)
    fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_BINARY", 0), FILE_MODE)
    if not existed:
        _set_mode(fd, FILE_MODE)
    return fd


def touch_private(path: Path) -> None:
    """Make sure ``path`` exists; created empty and ``0600`` when missing (before a
    library such as SQLite creates it with its own mode: SQLite gives its ``-wal`` and
    ``-shm`` files the database file's mode)."""
    os.close(open_private(path, os.O_WRONLY))


def write_private_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (not atomically), a new file being ``0600``."""
    with open(open_private(path, os.O_WRONLY | os.O_TRUNC), "wb") as out:
        out.write(data)


def make_private(path: Path) -> None:
    """Set ``path`` (a file another library wrote) to ``0600``."""
    _set_mode(path, FILE_MODE)


def tighten_home(home: Path) -> int | None:
    """Set the workspace folder to ``0700`` when the group or others may enter it;
    returns its mode before (``None`` when it was already private or cannot be
    changed, e.g. a folder of another owner)."""
    try:
        mode = stat.S_IMODE(os.stat(home).st_mode)
    except OSError:
        return None
    if not mode & _OTHERS or os.name != "posix":
        return None
    try:
        os.chmod(home, DIR_MODE)
    except OSError:
        return None
    return mode


def loose_modes(home: Path) -> list[tuple[Path, int]]:
    """Every file and folder under ``home`` (itself included) that the group or
    others may read, write or enter, with its mode; symbolic links are not followed."""
    found: list[tuple[Path, int]] = []
    if os.name != "posix" or not Path(home).is_dir():
        return found
    for entry in [Path(home), *sorted(Path(home).rglob("*"))]:
        try:
            info = entry.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            continue
        mode = stat.S_IMODE(info.st_mode)
        if mode & _OTHERS:
            found.append((entry, mode))
    return found


def tighten_modes(home: Path) -> list[Path]:
    """Take the group's and others' permissions off everything :func:`loose_modes`
    finds (the owner's stay as they are); returns what was changed."""
    changed: list[Path] = []
    for path, mode in loose_modes(home):
        try:
            os.chmod(path, mode & ~_OTHERS)
        except OSError:
            continue
        changed.append(path)
    return changed


__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "loose_modes",
    "make_private",
    "make_private_dir",
    "open_private",
    "tighten_home",
    "tighten_modes",
    "touch_private",
    "write_private_bytes",
]
