"""The leak suite's backend: one fixture builds the workload on a backend.

Only :func:`backend` knows which store of record and index it runs on: the Markdown
workspace and its SQLite index, or PostgreSQL (store of record and index, with a
worker's working copy; skipped without the ``postgres`` and ``postgres-local`` extras).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from kronika import build_memory, load_settings
from kronika.testing import FrozenClock
from leaks.workload import CONFIG, Backend, build

_databases = iter(range(1, 1000))


@pytest.fixture(scope="module", params=["markdown+sqlite", "postgres"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    """A workspace holding the whole workload (built once per test module)."""
    home = tmp_path_factory.mktemp(request.param.replace("+", "-")) / "ws"
    home.mkdir()
    (home / "kronika.toml").write_text(CONFIG, encoding="utf-8")
    team = {}
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        team["database_url"] = server.create_database(f"leaks{next(_databases)}")
    settings = load_settings(home, environ={}, embedder="hashing", recall_candidates=2000, **team)
    clock = FrozenClock(datetime(2026, 11, 22, 9, 0, tzinfo=UTC))
    memory = build_memory(settings, create=True, clock=clock)
    try:
        yield Backend(memory, build(memory, clock))
    finally:
        memory.close()
