"""The backends every memory behaviour must hold on, for the suites that run on each.

``backend`` (a fixture of ``tests/conftest.py``, parametrized ``markdown`` and
``postgres``) is a :class:`Backend`: ``backend.open()`` builds a :class:`Memory` the
way a user does (``build_memory`` over settings); ``backend.open("b")`` is another
worker of the same memory — on Markdown, another process's view of the same
workspace; on PostgreSQL, another worker with its own working copy of the same
database (so what it reads came through the store of record). ``backend.settings``
gives the settings to pass elsewhere (``kronika`` subprocesses take
``backend.environ()``); ``backend.another(root)`` is an empty backend of the same kind
(a new database: team mode keeps one tenant per database). The PostgreSQL one needs
the ``postgres`` and ``postgres-local`` extras and is skipped without them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kronika import Memory, build_memory, load_settings
from kronika.ports import Clock
from kronika.settings import Settings

BACKENDS = ("markdown", "postgres")


@dataclass
class Backend:
    name: str
    root: Path
    database_url: str = ""
    new_database: Callable[[], str] = field(default=lambda: "", repr=False)
    opened: list[Memory] = field(default_factory=list)

    def home(self, worker: str = "a") -> Path:
        """The workspace folder of ``worker`` (one shared folder on Markdown)."""
        return self.root / (worker if self.database_url else "ws")

    def settings(self, worker: str = "a", **overrides: Any) -> Settings:
        extra = {"database_url": self.database_url} if self.database_url else {}
        return load_settings(
            self.home(worker), environ={}, embedder="hashing", **extra, **overrides
        )

    def environ(self, worker: str = "a") -> dict[str, str]:
        """``KRONIKA_*`` variables that point a ``kronika`` process at this backend."""
        env = {"KRONIKA_HOME": str(self.home(worker)), "KRONIKA_EMBEDDER": "hashing"}
        if self.database_url:
            env["KRONIKA_DATABASE_URL"] = self.database_url
        return env

    def open(self, worker: str = "a", *, clock: Clock | None = None, **overrides: Any) -> Memory:
        memory = build_memory(self.settings(worker, **overrides), create=True, clock=clock)
        self.opened.append(memory)
        return memory

    def another(self, root: Path) -> Backend:
        """An empty backend of the same kind (on PostgreSQL: a new database)."""
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
    try:
        yield backend
    finally:
        backend.close()
