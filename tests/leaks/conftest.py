"""The leak suite's backend: one fixture builds the workload on a backend.

Only :func:`backend` knows which store of record and index it runs on: the Markdown
workspace and its SQLite index, PostgreSQL (store of record and index, with a worker's
working copy; skipped without the ``postgres`` and ``postgres-local`` extras), or
PostgreSQL in a database that a second tenant shares: tenant ``neighbour`` writes the
same workload there first (the same agents, keys, audiences and words, its markers
from 5000 on), so a row of the one that reached a read of the other shows up as a
marker the reader's own memory does not hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.testing import FrozenClock
from leaks.workload import CONFIG, NEIGHBOUR_FIRST, Backend, build

_databases = iter(range(1, 1000))


@pytest.fixture(scope="module", params=["markdown+sqlite", "postgres", "postgres-shared"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    """A workspace holding the whole workload (built once per test module)."""
    root = tmp_path_factory.mktemp(request.param.replace("+", "-"))
    team = {}
    if request.param.startswith("postgres"):
        server = request.getfixturevalue("postgres_server")
        team["database_url"] = server.create_database(f"leaks{next(_databases)}")
    neighbour = None
    if request.param == "postgres-shared":
        theirs = _clock()
        neighbour = _open(root / "neighbour", theirs, tenant="neighbour", **team)
    clock = _clock()
    memory = _open(root / "ws", clock, **team)
    try:
        if neighbour is not None:
            build(neighbour, theirs, first=NEIGHBOUR_FIRST)
        yield Backend(memory, build(memory, clock), neighbour)
    finally:
        memory.close()
        if neighbour is not None:
            neighbour.close()


def _clock() -> FrozenClock:
    return FrozenClock(datetime(2026, 11, 22, 9, 0, tzinfo=UTC))


def _open(home: Path, clock: FrozenClock, **settings: str) -> Memory:
    home.mkdir()
    (home / "kronika.toml").write_text(CONFIG, encoding="utf-8")
    chosen = load_settings(home, environ={}, embedder="hashing", recall_candidates=2000, **settings)
    return build_memory(chosen, create=True, clock=clock)
