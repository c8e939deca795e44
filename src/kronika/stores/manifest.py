"""A working copy's manifest (``record.json``): what its folder held of each document
when it last matched the store of record, the record's change it is at, the boot its
files are trusted in and the agents a forget's push is to fold
(:class:`~kronika.stores.working_copy.WorkingCopy`).

Written whole, a save costs as much as the tenant has documents (a session file each),
while a push changes a few of them. So a save appends only the documents that changed
since the last save, with the change number, as one JSON line to ``record.json.log``
(no ``fsync``: the manifest is not synced either), and the whole is written again
(atomically, ``record.json`` naming the last line it holds) when the log has grown to
:data:`COMPACT_LINES` lines or a quarter of the documents, when the boot or the agents
to fold differ from the whole's, when a document left the copy (no line of the log
keeps naming it, or the digest of a version of it), when a save must reach the disk,
and when another process wrote either file since this one read or wrote them.

A read takes the whole, then the log's lines that follow it (each carries the mark of
the whole it follows and its number), in order, and stops at the first line that does
not follow (cut short by a kill, or left by a crash of the machine); lines of an
earlier whole, which a kill kept from being removed, are passed over. What it reads is
the manifest as it stood after some save, maybe an earlier one than the last, which
costs pulls, never a write (see :meth:`WorkingCopy._save_manifest
<kronika.stores.working_copy.WorkingCopy._save_manifest>`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import Any, NamedTuple

from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.private import open_private

COMPACT_LINES = 64
"""How many lines the log may hold, whatever the number of documents, before a save
writes the whole again."""

Key = tuple[str, str]
"""A document: its agent and its path."""


class Entry(NamedTuple):
    """What the folder held of one document: its time, size and SHA-256."""

    mtime_ns: int
    size: int
    sha256: str


class Documents(dict[Key, Entry]):
    """The documents of a manifest, noting those set or removed since the manifest last
    read or saved them (:attr:`touched`), so a save compares those alone, not every
    document of the tenant; ``None``: not known, every one is compared."""

    def __init__(self, *args: Any, touched: set[Key] | None = None) -> None:
        super().__init__(*args)
        self.touched = touched

    def __setitem__(self, key: Key, value: Entry) -> None:
        super().__setitem__(key, value)
        if self.touched is not None:
            self.touched.add(key)

    def __delitem__(self, key: Key) -> None:
        super().__delitem__(key)
        if self.touched is not None:
            self.touched.add(key)

    def pop(self, key: Key, *default: Any) -> Any:
        if self.touched is not None:
            self.touched.add(key)
        return super().pop(key, *default)

    def _unknown(self) -> None:
        self.touched = None

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._unknown()
        super().update(*args, **kwargs)

    def setdefault(self, key: Key, default: Any = None) -> Any:
        self._unknown()
        return super().setdefault(key, default)

    def popitem(self) -> tuple[Key, Entry]:
        self._unknown()
        return super().popitem()

    def clear(self) -> None:
        self._unknown()
        super().clear()

    def __ior__(self, other: Any) -> Documents:  # type: ignore[override,misc]
        self._unknown()
        super().update(other)
        return self


class Saved(NamedTuple):
    """A manifest as read: its change, documents, boot and agents to fold."""

    change: int
    files: dict[Key, Entry]
    boot: str | None
    fold: frozenset[str]


class Manifest:
    """``record.json`` and its log (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.log = path.with_name(f"{path.name}.log")
        self._gen = ""  # the whole's mark, which its log's lines carry
        self._seq = 0  # the number of the last save read or written
        self._lines = 0  # the lines of the log after the whole
        self._files: dict[Key, Entry] = {}  # the documents as last read or written
        self._whole: tuple[str | None, frozenset[str]] = (None, frozenset())
        self._marks: tuple[Any, Any] | None = None  # both files' states then

    def marks(self) -> tuple[Any, Any]:
        """The time and size of both files (``None`` for one that is not there): what
        tells whether another process wrote the manifest since."""
        return quick_state(self.path), quick_state(self.log)

    def read(self) -> Saved | None:
        """The manifest on disk, ``None`` when there is none; ``OSError``,
        ``ValueError``, ``KeyError`` or ``TypeError`` when the whole is unreadable."""
        marks = self.marks()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        boot = data.get("boot")
        boot = boot if isinstance(boot, str) else None
        fold = frozenset(str(agent) for agent in data.get("fold", ()))
        change = int(data["change"])
        files = {(str(a), str(p)): Entry(int(m), int(s), str(h)) for a, p, m, s, h in data["files"]}
        gen, seq, lines = str(data.get("gen", "")), int(data.get("seq", 0)), 0
        for line in _log_lines(self.log) if gen else ():
            try:
                step = json.loads(line)
                if step["gen"] != gen:
                    continue  # the log of an earlier whole, left by a kill
                if int(step["seq"]) != seq + 1:
                    break
                changed = [
                    ((str(a), str(p)), Entry(int(m), int(s), str(h)))
                    for a, p, m, s, h in step["set"]
                ]
                gone = [(str(a), str(p)) for a, p in step["del"]]
                number = int(step["change"])
            except (ValueError, KeyError, TypeError):
                break  # cut short, or not a line at all
            files.update(changed)
            for key in gone:
                files.pop(key, None)
            change, seq, lines = number, seq + 1, lines + 1
        self._gen = gen
        self._seq, self._lines, self._files = seq, lines, dict(files)
        self._whole, self._marks = (boot, fold), marks
        return Saved(change, Documents(files, touched=set()), boot, fold)

    def write(self, saved: Saved, *, durable: bool) -> None:
        """Save ``saved``: a line of the documents that changed since the last save
        appended to the log, or the whole written again (see the module docstring).
        ``OSError`` when it cannot be written (then the next save writes the whole)."""
        files, before = saved.files, self._files
        touched = files.touched if isinstance(files, Documents) else None
        if touched is None:
            changed = [(key, entry) for key, entry in files.items() if before.get(key) != entry]
            gone = [key for key in before if key not in files]
        else:  # the rest are as the manifest last read or saved them
            changed = [
                (key, files[key])
                for key in sorted(touched)
                if key in files and before.get(key) != files[key]
            ]
            gone = [key for key in sorted(touched) if key not in files and key in before]
        most = max(COMPACT_LINES, len(files) // 4)
        if (
            durable
            or not self._gen
            or self._marks != self.marks()
            or (saved.boot, saved.fold) != self._whole
            or bool(gone)  # a document gone (a forget's, say) leaves no line naming it
            or self._lines + 1 >= most
            or len(changed) + len(gone) > most
        ):
            self._write_whole(saved, durable=durable)
        else:
            step = {
                "gen": self._gen,
                "seq": self._seq + 1,
                "change": saved.change,
                "set": [[a, p, *entry] for (a, p), entry in changed],
                "del": [list(key) for key in gone],
            }
            self._marks = None  # a failed append leaves the log unknown: written whole next
            _append_line(self.log, json.dumps(step))
            self._seq, self._lines = self._seq + 1, self._lines + 1
            before.update(changed)
        if isinstance(files, Documents):
            files.touched = set()
        self._marks = self.marks()

    def _write_whole(self, saved: Saved, *, durable: bool) -> None:
        gen, seq = secrets.token_hex(8), self._seq + 1
        listed = [[a, p, *entry] for (a, p), entry in sorted(saved.files.items())]
        whole: dict[str, object] = {"change": saved.change, "files": listed}
        whole.update(gen=gen, seq=seq)
        if saved.boot is not None:
            whole["boot"] = saved.boot
        if saved.fold:
            whole["fold"] = sorted(saved.fold)
        self._marks = None  # a failed write leaves the files unknown: written whole next
        atomic_write_text(self.path, json.dumps(whole), durable=durable)
        self._files = dict(saved.files)
        self._gen, self._seq, self._lines = gen, seq, 0
        self._whole = (saved.boot, saved.fold)
        # its lines are all in the whole now (a kill before this leaves lines of an
        # earlier whole's mark, which a read passes over)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.log)


def _log_lines(log: Path) -> list[str]:
    """The log's whole lines (a last one without its line end is not one)."""
    try:
        raw = log.read_bytes()
    except FileNotFoundError:
        return []
    text = raw.decode("utf-8", errors="replace")
    return text.split("\n")[:-1]


def _append_line(log: Path, line: str) -> None:
    fd = open_private(log, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, f"{line}\n".encode())
    finally:
        os.close(fd)


def quick_state(file: Path) -> tuple[int, int] | None:
    """``file``'s modification time and size, ``None`` when it is not there."""
    try:
        stat = file.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


__all__ = ["COMPACT_LINES", "Documents", "Entry", "Key", "Manifest", "Saved", "quick_state"]
