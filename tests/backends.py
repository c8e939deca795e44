"""The backends every memory behaviour must hold on, for the suites that run on each.

``backend`` (a fixture of ``tests/conftest.py``, parametrized ``markdown`` and
``postgres``) is a :class:`Backend`: ``backend.open()`` builds a :class:`Memory` the
way a user does (``build_memory`` over settings); ``backend.open("b")`` is another
worker of the same memory — on Markdown, another process's view of the same
workspace; on PostgreSQL, another worker with its own working copy of the same
database (so what it reads came through the store of record). ``backend.settings``
gives the settings to pass elsewhere (``kronika`` subprocesses take
``backend.environ()``); ``backend.another(root)`` is an empty backend of the same kind
(a new database). ``postgres-shared`` is PostgreSQL in a database that another tenant
uses too: before the test a neighbour (tenant ``neighbour``, agent ``default``, the
keys and words the tests use) writes its memory there, afterwards it must read back
exactly that; ``another`` is a new tenant of the same database. The PostgreSQL ones
need the ``postgres`` and ``postgres-local`` extras and are skipped without them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kronika import Memory, build_memory, load_settings
from kronika.ports import Clock
from kronika.settings import Settings

BACKENDS = ("markdown", "postgres", "postgres-shared")
INDEXES = ("sqlite", "postgres")
"""The item indexes the index conformance suite runs on (``IndexOpener``)."""
NEIGHBOUR = "neighbour"


@dataclass
class Backend:
    name: str
    root: Path
    database_url: str = ""
    new_database: Callable[[], str] = field(default=lambda: "", repr=False)
    opened: list[Memory] = field(default_factory=list)
    tenant: str = ""  # the tenant setting, when not the default one

    def home(self, worker: str = "a") -> Path:
        """The workspace folder of ``worker`` (one shared folder on Markdown)."""
        return self.root / (worker if self.database_url else "ws")

    def settings(self, worker: str = "a", **overrides: Any) -> Settings:
        extra: dict[str, Any] = {"database_url": self.database_url} if self.database_url else {}
        if self.tenant:
            extra["tenant"] = self.tenant
        return load_settings(
            self.home(worker), environ={}, **{"embedder": "hashing", **extra, **overrides}
        )

    def environ(self, worker: str = "a") -> dict[str, str]:
        """``KRONIKA_*`` variables that point a ``kronika`` process at this backend."""
        env = {"KRONIKA_HOME": str(self.home(worker)), "KRONIKA_EMBEDDER": "hashing"}
        if self.database_url:
            env["KRONIKA_DATABASE_URL"] = self.database_url
        if self.tenant:
            env["KRONIKA_TENANT"] = self.tenant
        return env

    def open(self, worker: str = "a", *, clock: Clock | None = None, **overrides: Any) -> Memory:
        memory = build_memory(self.settings(worker, **overrides), create=True, clock=clock)
        self.opened.append(memory)
        return memory

    def another(self, root: Path) -> Backend:
        """An empty backend of the same kind (on PostgreSQL: a new database; sharing
        one: another tenant of this database)."""
        if self.name == "postgres-shared":
            tenant = f"another-{root.name}"
            return Backend(self.name, root, self.database_url, self.new_database, tenant=tenant)
        url = self.new_database() if self.database_url else ""
        return Backend(self.name, root, url, new_database=self.new_database)

    def close(self) -> None:
        for memory in self.opened:
            memory.close()
        self.opened.clear()


def make_backend(
    name: str, root: Path, postgres_url: str = "", new_database: Callable[[], str] = str
) -> Iterator[Backend]:
    backend = Backend(name, root, postgres_url, new_database)
    before = _neighbour(backend, write=True) if name == "postgres-shared" else None
    try:
        yield backend
    finally:
        backend.close()
    if before is not None:
        assert _neighbour(backend, write=False) == before, "the neighbour tenant was touched"


def _neighbour(backend: Backend, *, write: bool) -> dict[str, Any]:
    """The neighbour tenant of a shared database: with ``write``, its memory is written
    first; either way what a new worker of it reads."""
    home = backend.root.parent / f"{NEIGHBOUR}-{'before' if write else 'after'}"
    settings = load_settings(
        home, environ={}, embedder="hashing", database_url=backend.database_url, tenant=NEIGHBOUR
    )
    with build_memory(settings, create=True) as memory:
        if write:
            memory.remember("Kraków", key="city")
            memory.remember("Lviv", key="city")
            memory.note("Зустрів Олену в Києві")
            memory.save_turn("s1", "user", "¿recordás que me gusta el mate?")
            memory.remember("salary is 9000 zlotyquux")
        return {
            "items": sorted((i.id, i.content, i.status.value) for i in memory.items(limit=999)),
            "history": [h.value for h in memory.history("city")],
            "recall": [h.item.id for h in memory.recall("Kraków Lviv mate Олену", k=9).hits],
        }


class IndexOpener:
    """Opens the item index ``kind`` (again, or with another model) on one storage:
    ``where`` is a file on SQLite, a database URL on PostgreSQL."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind = kind
        self.where = where

    def __call__(self, model: str = "m1", dim: int = 4) -> Any:
        if self.kind == "sqlite":
            from kronika.stores.sqlite import SqliteIndex

            return SqliteIndex(self.where, embedding_model=model, dim=dim)
        from kronika.stores.postgres.index import PostgresIndex

        return PostgresIndex(self.where, embedding_model=model, dim=dim)
