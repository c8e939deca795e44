"""Benchmarks over the PostgreSQL search index: ``--index postgres[=URL]``.

``postgres`` alone starts a throwaway local PostgreSQL (:class:`LocalPostgres`, extra
``postgres-local``, with :data:`LOCAL_MEMORY` of shared buffers) for the run;
``postgres=URL`` uses that server. Either way each benchmark workspace gets a database
of its own, created for it and dropped after, so a run never reads or writes an
existing database's tables. The server, the databases and the index are reached
through :mod:`kronika.testing` (:mod:`kronika.testing.parts`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kronika import Embedder, InvalidInput, Settings
from kronika.testing import LocalPostgres, is_postgres_url, postgres_database, postgres_index

INDEXES = ("sqlite", "postgres")
LOCAL_MEMORY = "1GB"
"""``shared_buffers`` of the throwaway server: room for the 100k corpus' HNSW index
(260 MB at 512 dimensions) and its rows, as a server sized for its data has
(PostgreSQL's default, 128 MB, makes every walk read half its pages from the OS)."""


def parse_index(spec: str | None) -> tuple[str, str | None]:
    """``sqlite`` (the default), ``postgres`` or ``postgres=URL`` as ``(kind, url)``."""
    if not spec or spec == "sqlite":
        return "sqlite", None
    kind, _, url = spec.partition("=")
    if kind != "postgres":
        raise InvalidInput(f"--index must be sqlite, postgres or postgres=URL; got {spec!r}")
    if url and not is_postgres_url(url):
        raise InvalidInput(f"--index postgres=URL needs a postgresql:// URL; got {url!r}")
    return "postgres", url or None


class PostgresSite:
    """Where benchmark databases are made: a given server, or a local one started lazily."""

    def __init__(self, url: str | None) -> None:
        self._url = url
        self._local: Any = None

    def server_url(self) -> str:
        if self._url is not None:
            return self._url
        if self._local is None:
            self._local = LocalPostgres(durable=True, memory=LOCAL_MEMORY).start()
        return str(self._local.url())

    @contextmanager
    def database(self) -> Iterator[str]:
        """The URL of a new, empty database, dropped on the way out."""
        with postgres_database(self.server_url()) as url:
            yield url

    def cpu_seconds(self) -> float | None:
        """CPU time so far of the local server this site started (its postmaster, the
        connections and background processes it runs, and those that ended); ``None``
        for a server given by URL, which may be on another machine."""
        from kronika.bench.processes import tree_cpu_seconds

        if self._local is None:
            return None
        return tree_cpu_seconds(self._local.pid, reaped=True)

    def close(self) -> None:
        if self._local is not None:
            self._local.stop()
            self._local = None


@contextmanager
def postgres_site(spec: str | None) -> Iterator[PostgresSite | None]:
    """The site of ``--index`` (``None`` for SQLite), stopped when the run ends."""
    kind, url = parse_index(spec)
    if kind == "sqlite":
        yield None
        return
    site = PostgresSite(url)
    try:
        yield site
    finally:
        site.close()


@contextmanager
def open_index(
    site: PostgresSite, settings: Settings, embedder: Embedder, *, lexical: str = "bm25"
) -> Iterator[Any]:
    """A PostgreSQL search index on a fresh database of ``site``, for ``embedder``."""
    with site.database() as url:
        index = postgres_index(
            url,
            embedding_model=embedder.model_id,
            dim=embedder.dim,
            ann_threshold=settings.postgres_ann_threshold,
            lexical=lexical,
            hnsw=(
                settings.postgres_hnsw_m,
                settings.postgres_hnsw_ef_construction,
                settings.postgres_hnsw_search_margin,
            ),
        )
        try:
            yield index
        finally:
            with contextlib.suppress(Exception):  # the memory may have closed it already
                index.close()
