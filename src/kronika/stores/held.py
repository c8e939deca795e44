"""What kronika's small irreplaceable files held when kronika last wrote them.

A file that is gone or emptied reads as one never made: no keys (every request gets
401), no job records, no audit trail, no proposals, default settings. So kronika keeps
a record of what each held, in ``<home>/.kronika/`` — apart from the file itself, so
the damage that takes a file cannot take its record — and ``kronika doctor`` compares
(:mod:`kronika.engine.doctor_held`):

* ``keys.sqlite``, ``server-jobs.sqlite``: the ids of their rows. Each write records
  the ids it added and forgets those it removed (a job record pruned); ids recorded but
  missing before the write stay recorded, so damage stays found until ``doctor --fix``.
  ``keys.sqlite`` also gets a last good copy (``.kronika/keys.sqlite``: only the keys'
  hashes, like the file), made when a key is created or revoked while nothing is missing.
* ``audit.jsonl``: its size, recorded by the append that first takes it past twice the
  size recorded (a record written a handful of times in the file's life, never more
  than the file holds), unless the file is already shorter than recorded; a forget's
  redaction records the new size. An emptied or deleted trail, or one cut to less than
  half, is found (a cut inside a line is found by its torn last line).
* ``agents/<agent>/proposals.md``: how many proposals it held (no copy: a forget must
  not leave a proposal's text behind).
* ``kronika.toml``: a last good copy, refreshed when a command finds the file readable
  and changed (a hand edit is the person's; the copy follows it).

Each record is one small JSON file written atomically; reading one is a file read.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.private import make_private_dir, write_private_bytes

HELD_DIR = ".kronika"


@dataclass(frozen=True, slots=True)
class Held:
    """What a file held when kronika last wrote it: ``ids`` of rows, ``size`` in bytes,
    ``count`` of entries, ``at`` (UTC, ISO) when recorded."""

    ids: tuple[str, ...] = ()
    size: int = 0
    count: int = 0
    at: str = ""


def _name(rel: str) -> str:
    return rel.replace("/", "__")


def record_path(home: Path, rel: str) -> Path:
    return Path(home) / HELD_DIR / f"{_name(rel)}.held.json"


def copy_path(home: Path, rel: str) -> Path:
    """Where the last good copy of ``rel`` is kept (``keys.sqlite``, ``kronika.toml``)."""
    return Path(home) / HELD_DIR / _name(rel)


def read_held(home: Path, rel: str) -> Held | None:
    """The record of ``rel`` (``None``: none, or unreadable)."""
    try:
        data = json.loads(record_path(home, rel).read_text("utf-8"))
        return Held(
            tuple(str(i) for i in data.get("ids", ())),
            int(data.get("size", 0)),
            int(data.get("count", 0)),
            str(data.get("at", "")),
        )
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def write_held(home: Path, rel: str, held: Held) -> None:
    """Record ``held`` for ``rel`` (stamped now); never fails the write it follows."""
    data = {"ids": list(held.ids), "size": held.size, "count": held.count, "at": _now()}
    with contextlib.suppress(OSError):
        atomic_write_text(record_path(home, rel), json.dumps(data))


def forget_held(home: Path, rel: str) -> None:
    record_path(home, rel).unlink(missing_ok=True)


def note_ids(home: Path, rel: str, before: Iterable[str], after: Iterable[str]) -> bool:
    """Record a write that turned the rows ``before`` into ``after``; returns whether
    every recorded row was there before it (nothing missing)."""
    was, now = set(before), set(after)
    held = read_held(home, rel)
    recorded = set(held.ids) if held is not None else set()
    whole = recorded <= was
    kept = (recorded - (was - now)) | (now - was) if held is not None else now
    write_held(home, rel, Held(tuple(sorted(kept))))
    return whole


class SizeRecord:
    """The recorded size of one appended file, read once per process."""

    def __init__(self, home: Path, rel: str) -> None:
        self.home, self.rel = Path(home), rel
        self._size: int | None = None

    def appended(self, before: int, after: int) -> None:
        """An append took the file from ``before`` to ``after`` bytes: record ``after``
        when it is twice the size recorded, not when the file was already shorter than
        recorded (that stays found)."""
        if self._size is None:
            record = read_held(self.home, self.rel)
            self._size = record.size if record is not None else -1
        if before < self._size:
            return
        if self._size <= 0 or after >= 2 * self._size:
            write_held(self.home, self.rel, Held(size=after))
            self._size = after

    def rewritten(self, size: int) -> None:
        """The file was rewritten whole (a redaction) at ``size`` bytes."""
        write_held(self.home, self.rel, Held(size=size))
        self._size = size


def note_count(home: Path, rel: str, count: int) -> None:
    write_held(home, rel, Held(count=count))


def sqlite_ids(path: Path, table: str) -> set[str]:
    """The ids of ``table``'s rows in the SQLite file at ``path`` (empty: none, or the
    file cannot be read)."""
    if not path.is_file() or path.stat().st_size == 0:
        return set()
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return {str(row[0]) for row in conn.execute(f"SELECT id FROM {table}")}  # noqa: S608
        finally:
            conn.close()
    except (sqlite3.Error, UnicodeDecodeError):
        return set()


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of the SQLite file ``source`` at ``target`` (private)."""
    make_private_dir(target.parent)
    pending = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    pending.unlink(missing_ok=True)
    write_private_bytes(pending, b"")
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(pending)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    os.replace(pending, target)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
