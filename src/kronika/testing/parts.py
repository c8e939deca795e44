"""kronika's inner parts, reached on purpose, for a benchmark or test that measures one
of them alone instead of what :class:`kronika.Memory` gives.

``kronika bench`` drives kronika through :mod:`kronika` as a user does; the figures
that are about one part on purpose reach that part only through here, so what they
lean on is named in one place:

* :class:`RecallReplay` — recall's own engine over a memory's index under the recall
  settings of other :class:`~kronika.Settings`: query-time settings change nothing
  that is stored, so candidate settings are compared over one ingested workspace.
* :func:`empty_index_like` and :func:`exact_index_like` — a fresh index of the same
  kind (a bulk load into it is timed, embedding excluded, its files handed over as
  :class:`SourceRows` in batches, as a sync hands them), and the same index opened
  again with exact vector search (what the vector graph's answers are checked
  against).
* :func:`postgres_database`, :func:`postgres_index`, :class:`LocalPostgres` and
  :func:`is_postgres_url` — a throwaway database for a PostgreSQL search index.
* :func:`archive_document` and :func:`archived_fact` — a Brain archive file of many
  facts, written at once, for a workspace of a given size without remembering its
  facts one by one, and a fact as that file holds it.
* :func:`read_locomo`, :func:`iter_longmemeval` and :class:`LongMemEvalQuestion` —
  the readers ``kronika import`` uses for the public benchmarks' files.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from kronika.core.model import MemoryItem, RecallFilter, RecallResult
from kronika.importers.locomo import read_locomo
from kronika.importers.longmemeval import LongMemEvalQuestion, iter_longmemeval
from kronika.ports import SourceRows
from kronika.stores.postgres.connect import is_postgres_url
from kronika.stores.postgres.embedded import LocalPostgres

if TYPE_CHECKING:
    from kronika.memory import Memory
    from kronika.ports import Vector
    from kronika.settings import Settings

__all__ = [
    "LocalPostgres",
    "LongMemEvalQuestion",
    "RecallReplay",
    "SourceRows",
    "archive_document",
    "empty_index_like",
    "exact_index_like",
    "is_postgres_url",
    "iter_longmemeval",
    "postgres_database",
    "postgres_index",
    "read_locomo",
]


class RecallReplay:
    """Recall over ``memory``'s index under the recall settings of ``settings``.

    The fusion, weights, depth, relevance floor and recency of ``settings`` are used;
    the index, embedder, token counter and clock are the memory's. Nothing is
    recorded (``record_access=False``), so replays do not disturb one another.
    """

    def __init__(self, memory: Memory, settings: Settings) -> None:
        from kronika.engine.recall import Recaller, RecallSettings

        self._recaller = Recaller(
            index=memory.index,
            embedder=memory.embedder,
            tokens=memory.tokens,
            clock=memory.clock,
            settings=RecallSettings.of(settings.recall, settings.reranker, settings.embedder),
        )

    def recall(
        self,
        query: str,
        *,
        agent: str,
        k: int,
        now: datetime,
        query_vector: Vector | None = None,
    ) -> RecallResult:
        """``agent``'s memories for ``query`` as of ``now``, the best ``k``."""
        return self._recaller.recall(
            query,
            RecallFilter(agents=(agent,)),
            k=k,
            now=now,
            record_access=False,
            query_vector=query_vector,
        )


@contextmanager
def empty_index_like(index: Any, *, ann_threshold: int) -> Iterator[Any]:
    """A fresh, empty index of ``index``'s kind, model and dimension, gone on the way out.

    A SQLite index gets a file in a temporary folder; a PostgreSQL index a new database
    on the same server (:func:`postgres_database`). ``ann_threshold`` is the copy's: the
    item count from which it builds its vector graph.
    """
    import tempfile

    from kronika.stores.sqlite import SqliteIndex

    if isinstance(index, SqliteIndex):
        with (
            tempfile.TemporaryDirectory(prefix="kronika-ingest-") as tmp,
            SqliteIndex(
                Path(tmp) / "index.sqlite",
                embedding_model=index.embedding_model,
                dim=index.dim,
                ann_threshold=ann_threshold,
                restart_copies=False,
            ) as copy,
        ):
            yield copy
        return
    from kronika.stores.postgres.index import PostgresIndex

    if not isinstance(index, PostgresIndex):
        raise TypeError(f"no empty copy of a {type(index).__name__}: SQLite or PostgreSQL only")
    with (
        postgres_database(index.url) as url,
        PostgresIndex(
            url,
            embedding_model=index.embedding_model,
            dim=index.dim,
            ann_threshold=ann_threshold,
            hnsw=index.state.hnsw,
        ) as copy,
    ):
        yield copy


@contextmanager
def exact_index_like(index: Any) -> Iterator[Any | None]:
    """``index``'s own file or database opened a second time with no vector graph
    (``ann_threshold`` 0), so its vector search is exact; ``None`` for another kind of
    index. Closed on the way out; ``index`` stays open."""
    from kronika.stores.sqlite import SqliteIndex

    if isinstance(index, SqliteIndex):
        path = Path(index.stats()["path"])
        with SqliteIndex(
            path, embedding_model=index.embedding_model, dim=index.dim, ann_threshold=0
        ) as exact:
            yield exact
        return
    from kronika.stores.postgres.index import PostgresIndex

    if not isinstance(index, PostgresIndex):
        yield None
        return
    with PostgresIndex(  # ann_threshold 0 leaves the graph as it was built
        index.url,
        embedding_model=index.embedding_model,
        dim=index.dim,
        ann_threshold=0,
        hnsw=index.state.hnsw,
    ) as exact:
        yield exact


def _database_url(base: str, name: str) -> str:
    """``base`` naming database ``name``, without the schema ``options`` of an index's
    URL (a fresh database has not that schema: its index makes its own)."""
    parts = urlsplit(base)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "options"]
    return urlunsplit(parts._replace(path=f"/{name}", query=urlencode(query, quote_via=quote)))


@contextmanager
def postgres_database(server_url: str) -> Iterator[str]:
    """The URL of a new, empty database on the server of ``server_url``, dropped (with
    whoever is still connected to it) on the way out."""
    from kronika.stores.postgres.connect import connect

    name = f"kronika_bench_{secrets.token_hex(6)}"
    with connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _database_url(server_url, name)
    finally:
        with connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def postgres_index(
    url: str,
    *,
    embedding_model: str,
    dim: int,
    ann_threshold: int,
    lexical: str = "bm25",
    hnsw: tuple[int, int, int] | None = None,
) -> Any:
    """The PostgreSQL search index in the database at ``url`` (its schema migrated on
    open), as team mode uses it; ``lexical`` is its keyword scoring (``bm25`` ranks as
    the SQLite index does; ``simple`` and ``trigram`` are measured alternatives);
    ``hnsw`` its graph's ``(m, ef_construction, search_margin)`` (the settings
    ``postgres_hnsw_*``; pgvector's defaults when None)."""
    from kronika.stores.postgres.index import HnswOptions, PostgresIndex

    return PostgresIndex(
        url,
        embedding_model=embedding_model,
        dim=dim,
        ann_threshold=ann_threshold,
        lexical=lexical,
        hnsw=HnswOptions() if hnsw is None else HnswOptions(*hnsw),
    )


def archived_fact(
    key: str, value: str, at: datetime, *, id: str, agent: str = "default", section: str = "User"
) -> MemoryItem:
    """A keyed fact of ``agent`` as the Brain archive holds it (``key: value``, stated
    by the user at ``at``), for :func:`archive_document`."""
    from kronika.core.model import ItemType, Layer, Provenance, Source, Tier
    from kronika.stores.markdown.facts.brain import ARCHIVE

    return MemoryItem(
        id=id,
        agent=agent,
        content=f"{key}: {value}",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=at,
        updated_at=at,
        provenance=Provenance(ARCHIVE.path),
        key=key,
        value=value,
        source=Source.EXPLICIT,
        section=section,
        valid_from=at,
    )


def history_document(
    facts: Iterable[MemoryItem], section: str = "User", *, after: str | None = None
) -> str:
    """A fact history file (``history.md``) holding ``facts`` (earlier values: give
    them ``status=Status.SUPERSEDED`` and their ``valid_to``) in one ``section``, each
    written as kronika writes a fact; ``after``: the text of a history they are added
    to, under a heading of their own. Written into an agent's folder and synced, it
    gives a history of any length at once."""
    from kronika.stores.markdown.facts.brain import HISTORY, render_fact

    bullets = "".join(line for fact in facts for line in render_fact(fact))
    head = f"# {HISTORY.title}\n" if after is None else after.rstrip("\n") + "\n"
    return f"{head}\n## {section}\n{bullets}"


def archive_document(facts: Iterable[MemoryItem], section: str = "User") -> str:
    """A Brain archive file (``brain_archive.md``) holding ``facts`` in one ``section``,
    each written as kronika writes a fact. Written into an agent's folder and synced,
    it gives a memory of any size at once (remembering them one by one inserts each
    into the file, a cost growing with the square of their number)."""
    from kronika.stores.markdown.facts.brain import ARCHIVE, render_fact

    bullets = "".join(line for fact in facts for line in render_fact(fact))
    return f"# {ARCHIVE.title}\n\n## {section}\n{bullets}"
