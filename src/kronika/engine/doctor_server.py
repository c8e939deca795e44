"""``kronika doctor``'s check of the SQLite files the server keeps beside the workspace."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kronika.engine.findings import PROBLEM, Finding
from kronika.stores.sqlite.recovery import small_file_problem

SERVER_FILES = {
    "keys.sqlite": "the server's API keys: each must be made again (`kronika keys create`); "
    "only their hashes were kept, so no key can be recovered from the copy",
    "server-jobs.sqlite": "the records of the server's background jobs (their results "
    "are in the memory itself)",
}
"""SQLite files the server keeps beside the workspace, and what is lost with each."""


def check_server_files(home: Path) -> list[Finding]:
    """``PRAGMA quick_check`` of each server file there is (read-only)."""
    findings = []
    for name, held in SERVER_FILES.items():
        problem = sqlite_problem(home / name)
        if problem is None:
            continue
        findings.append(
            Finding(
                "server",
                PROBLEM,
                name,
                f"the file is damaged ({problem}); the server cannot use it",
                "`kronika doctor --fix` moves it aside and the server starts a new one; "
                f"lost: {held}",
                "move the damaged file aside (kept as <name>.corrupt-<time>)",
            )
        )
    return findings


def sqlite_problem(path: Path) -> str | None:
    """What is wrong with the SQLite file at ``path`` (``None``: whole, or not there)."""
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return small_file_problem(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return str(exc)
