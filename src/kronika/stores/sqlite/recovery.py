"""Recognising a corrupt index file and moving it out of the way (SPEC S4).

The index is derived data, so the cure for corruption is always the same: keep
the damaged file for inspection and start an empty index the engine refills
from the Markdown workspace.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from kronika.errors import IndexError_

_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (primary result codes)


def is_corruption(exc: BaseException) -> bool:
    """Whether ``exc`` says the file is not a (healthy) SQLite database.

    A locked, missing or unreadable file is *not* corruption: moving it aside
    would throw away a good index.
    """
    if isinstance(exc, UnicodeDecodeError):  # text SQLite hands back is garbled
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _CORRUPT_CODES:
        return True
    text = str(exc).lower()
    # a stored value whose bytes are not UTF-8: SQLite's own error, not Python's
    return "not a database" in text or "malformed" in text or "could not decode" in text


def small_file_problem(conn: sqlite3.Connection) -> str | None:
    """What is wrong with a small SQLite file (the server's keys, its job records), or
    ``None``: ``PRAGMA quick_check``, then every row of every table read back, which
    finds text that is not UTF-8 (no page check does). Reads the whole file: for small
    files only. SQLite's errors that are not damage are raised."""
    try:
        checked = [str(row[0]) for row in conn.execute("PRAGMA quick_check").fetchall()]
        if checked != ["ok"]:
            return "; ".join(checked[:3])
        tables = [
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        for table in tables:
            quoted = table.replace('"', '""')
            conn.execute(f'SELECT * FROM "{quoted}"').fetchall()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if not is_corruption(exc):
            raise
        return str(exc)
    return None


def move_aside(path: Path, now: datetime | None = None) -> Path:
    """Rename ``path`` (and its ``-wal``/``-shm``) to ``<name>.corrupt-<UTC stamp>``.

    Returns the new path of the main file.
    """
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        # The WAL of a corrupt file must not be replayed into the fresh one.
        for suffix in ("-wal", "-shm", ""):
            old = Path(f"{path}{suffix}")
            if old.exists():
                old.rename(Path(f"{target}{suffix}"))
    except OSError as exc:
        raise IndexError_(f"cannot move corrupt index {path} aside: {exc}") from exc
    return target


def integrity_problems(conn: sqlite3.Connection, *, full: bool = False) -> list[str]:
    """What SQLite finds wrong with the open file; empty when it is healthy.

    ``PRAGMA quick_check`` (``integrity_check`` when ``full``) walks every page and
    b-tree; FTS5's own ``integrity-check`` compares the full-text index with the
    items it indexes. A file too damaged to be asked at all answers with the error.
    Reads the whole file: worth it before a rebuild, too slow for every command.
    """
    problems: list[str] = []
    try:
        pragma = "integrity_check" if full else "quick_check"
        rows = conn.execute(f"PRAGMA {pragma}").fetchall()
        problems += [str(row[0]) for row in rows if row and row[0] != "ok"]
        if not problems:
            conn.execute("INSERT INTO items_fts (items_fts) VALUES ('integrity-check')")
    except sqlite3.Error as exc:
        problems.append(str(exc))
    return problems
