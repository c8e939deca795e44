"""Benchmarks over the PostgreSQL search index: ``--index postgres[=URL]``.

``postgres`` alone starts a throwaway local PostgreSQL (:class:`LocalPostgres`, extra
``postgres-local``, with :data:`LOCAL_MEMORY` of shared buffers) for the run;
``postgres=URL`` uses that server. Either way each benchmark workspace gets a database
of its own, created for it and dropped after, so a run never reads or writes an
existing database's tables.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from kronika.errors import InvalidInput
from kronika.ports import Embedder
from kronika.settings import Settings

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
    if url:
        from kronika.stores.postgres.connect import is_postgres_url

        if not is_postgres_url(url):
            raise InvalidInput(f"--index postgres=URL needs a postgresql:// URL; got {url!r}")
    return "postgres", url or None


def _database_url(base: str, name: str) -> str:
    """``base`` naming database ``name``, without the schema ``options`` of an index's
    URL (a fresh database has not that schema: its index makes its own)."""
    parts = urlsplit(base)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "options"]
    return urlunsplit(parts._replace(path=f"/{name}", query=urlencode(query, quote_via=quote)))


class PostgresSite:
    """Where benchmark databases are made: a given server, or a local one started lazily."""

    def __init__(self, url: str | None) -> None:
        self._url = url
        self._local: Any = None

    def server_url(self) -> str:
        if self._url is not None:
            return self._url
        if self._local is None:
            from kronika.stores.postgres.embedded import LocalPostgres

            self._local = LocalPostgres(durable=True, memory=LOCAL_MEMORY).start()
        return str(self._local.url())

    @contextmanager
    def database(self) -> Iterator[str]:
        """The URL of a new, empty database, dropped on the way out."""
        from kronika.stores.postgres.connect import connect

        base = self.server_url()
        name = f"kronika_bench_{secrets.token_hex(6)}"
        with connect(base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = _database_url(base, name)
        try:
            yield url
        finally:
            with connect(base, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

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
    """A :class:`PostgresIndex` on a fresh database of ``site``, for ``embedder``."""
    from kronika.stores.postgres.index import HnswOptions, PostgresIndex

    with site.database() as url:
        index = PostgresIndex(
            url,
            embedding_model=embedder.model_id,
            dim=embedder.dim,
            ann_threshold=settings.ann_threshold,
            lexical=lexical,
            hnsw=HnswOptions(
                m=settings.postgres_hnsw_m,
                ef_construction=settings.postgres_hnsw_ef_construction,
                search_margin=settings.postgres_hnsw_search_margin,
            ),
        )
        try:
            yield index
        finally:
            with contextlib.suppress(Exception):  # the memory may have closed it already
                index.close()
