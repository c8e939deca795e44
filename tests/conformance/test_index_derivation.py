"""An index built by an older reading of the Markdown gets the current types when opened.

The index is derived: an older kronika indexed profile facts as ``fact``, world notes
as ``note`` and L1/L2 summaries as ``summary``, and an unchanged file is never read
again by a sync. The test builds a real index, turns it into what an older kronika
left (the old types in its rows, no derivation stamp in its meta), and opens it again
on every backend: the types are the current ones, and a stamped index is not rebuilt.
"""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys

import pytest

from backends import Backend
from kronika import Memory
from kronika.app import INDEX_FILE
from kronika.core.model import ItemType
from kronika.engine.changes import WriteSummary
from kronika.engine.derivation import DERIVATION, DERIVATION_KEY
from kronika.stores.postgres.connect import index_schema
from kronika.testing import FrozenClock

OLD_TYPES = {"profile": "fact", "semantic": "note", "episodic": "summary"}
REBUILT = "built by an older reading"


def _write(memory: Memory) -> None:
    memory.remember("prefers green tea", key="drink", section="Preferences")
    memory.note("Kyiv stands on the Dnipro", kind="W")
    summary = WriteSummary("summaries/L1/L1_000.md", "A week about tea.", (("id", "sum-1"),))
    memory.memory_write("default", "summaries", summary)


def _types(memory: Memory) -> dict[str, str]:
    return {i.content: i.type.value for i in memory.items(limit=100)}


def _as_an_older_kronika_left_it(backend: Backend) -> list[str]:
    """Rewrite the index's rows to the old types and drop its stamp; the types now."""
    backend.close()
    if backend.database_url:
        import psycopg

        schema = index_schema(backend.tenant or "default")
        with psycopg.connect(backend.database_url) as conn:
            for new, old in OLD_TYPES.items():
                conn.execute(
                    f'UPDATE "{schema}".idx_items SET type = %s WHERE type = %s', (old, new)
                )
            conn.execute(f'DELETE FROM "{schema}".idx_meta WHERE key = %s', (DERIVATION_KEY,))
            rows = conn.execute(f'SELECT DISTINCT type FROM "{schema}".idx_items').fetchall()
    else:
        path = backend.home() / INDEX_FILE
        for copy in path.parent.glob(f"{INDEX_FILE}.*"):  # the snapshots saved beside it
            if copy.suffix not in (".sqlite", "-wal", "-shm"):
                copy.unlink()
        with sqlite3.connect(path) as conn:
            for new, old in OLD_TYPES.items():
                conn.execute("UPDATE items SET type = ? WHERE type = ?", (old, new))
            conn.execute("DELETE FROM meta WHERE key = ?", (DERIVATION_KEY,))
            rows = conn.execute("SELECT DISTINCT type FROM items").fetchall()
        conn.close()
    return sorted(t for (t,) in rows)


def test_an_index_built_the_old_way_is_rebuilt_with_the_current_types_on_open(
    backend: Backend, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    memory = backend.open(clock=clock)
    _write(memory)
    current = _types(memory)
    assert sorted(current.values()) == ["episodic", "profile", "semantic"]

    assert _as_an_older_kronika_left_it(backend) == ["fact", "note", "summary"]
    with caplog.at_level(logging.WARNING, logger="kronika"):
        reopened = backend.open(clock=clock)
    assert REBUILT in caplog.text
    assert _types(reopened) == current
    assert [i.value for i in reopened.items(types=[ItemType.PROFILE])] == ["prefers green tea"]
    assert reopened.index.meta_value(DERIVATION_KEY) == DERIVATION

    backend.close()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kronika"):
        again = backend.open(clock=clock)
    assert REBUILT not in caplog.text  # stamped: opened as it is
    assert _types(again) == current


def test_the_cli_rebuilds_an_old_index_as_it_opens_it(backend: Backend) -> None:
    _write(backend.open())
    _as_an_older_kronika_left_it(backend)
    listed = subprocess.run(
        [sys.executable, "-m", "kronika", "list", "--type", "profile", "--json"],
        env=backend.environ(),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert "prefers green tea" in listed.stdout
    assert REBUILT in listed.stderr, listed.stderr


def test_build_memory_reports_the_progress_of_the_rebuild(backend: Backend) -> None:
    from kronika import build_memory

    _write(backend.open())
    _as_an_older_kronika_left_it(backend)
    seen: list[tuple[int, int]] = []
    with build_memory(backend.settings(), progress=lambda d, t: seen.append((d, t))) as memory:
        assert [i.value for i in memory.items(types=[ItemType.PROFILE])] == ["prefers green tea"]
    assert seen and seen[-1][0] == seen[-1][1] > 0  # every file of the rebuild
    count = len(seen)
    with build_memory(backend.settings(), progress=lambda d, t: seen.append((d, t))):
        pass
    assert len(seen) == count  # the index is current: nothing rebuilt, nothing reported
