"""The SQLite implementation of :class:`kronika.ports.ItemIndex` (SPEC S2, R1, R5).

The index is derived: everything but the embedding cache and usage statistics
can be rebuilt from the Markdown workspace, so a corrupt file is moved aside and
replaced by an empty index (:meth:`SqliteIndex.open_or_rebuild`).

Concurrency: WAL journal, ``synchronous=NORMAL``, a busy timeout, and every
write in one ``BEGIN IMMEDIATE`` transaction, so several processes can share one
file. The in-memory vector snapshot is dropped after this connection writes and
whenever ``PRAGMA data_version`` shows another connection committed.

The index is a small object holding named parts over one shared
:class:`~.index_base.IndexState` (the connection, its lock and the in-memory state),
one part per port of :mod:`kronika.ports` and one module each: ``index.sources``
(:mod:`.index_sources`, :class:`~kronika.ports.IndexSources`), ``index.search``
(:mod:`.index_search`, :class:`~kronika.ports.IndexSearch`), ``index.reads``
(:mod:`.index_reads`, :class:`~kronika.ports.IndexReads`), ``index.usage_stats``
(:mod:`.index_usage`, :class:`~kronika.ports.IndexUsage`) and ``index.upkeep``
(:mod:`.index_upkeep`, :class:`~kronika.ports.IndexUpkeep`), over ``index.snapshots``
(:mod:`.index_snapshots`), the in-memory copies search reads. None inherits from
another. Every verb of a part also has its flat name on the index (``index.get_items``
is ``index.reads.get_items``), so the index is an :class:`~kronika.ports.ItemIndex`:
the table at the end of the class, one :class:`~kronika.core.alias.Alias` a line. This
module builds the parts and opens the file.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from kronika.core.alias import Alias
from kronika.errors import CorruptIndexError
from kronika.stores.sqlite.index_base import ANN_THRESHOLD, BUSY_TIMEOUT_S, MEMORY, IndexState
from kronika.stores.sqlite.index_reads import SqliteReads
from kronika.stores.sqlite.index_search import SqliteSearch
from kronika.stores.sqlite.index_snapshots import Snapshots
from kronika.stores.sqlite.index_sources import SqliteSources
from kronika.stores.sqlite.index_upkeep import SqliteUpkeep
from kronika.stores.sqlite.index_usage import SqliteUsage
from kronika.stores.sqlite.recovery import move_aside

log = logging.getLogger("kronika")

__all__ = ["ANN_THRESHOLD", "BUSY_TIMEOUT_S", "MEMORY", "SqliteIndex"]


class SqliteIndex:
    """Items, their FTS5 index, an embedding cache and usage statistics in one SQLite file.

    ``embedding_model`` selects which cached vectors vector search uses; vectors of
    other models stay in the cache untouched. ``dim`` is that model's dimension.
    From ``ann_threshold`` embedded items on (0: never), vector search takes its
    candidates from an HNSW graph saved beside the file (:mod:`.ann`); ``ann_background``
    False builds that graph in the searching thread instead of a background one. From
    the same size on, ``restart_copies`` saves the in-memory vectors and keyword
    postings beside the file on close, and the next process reads them (:mod:`.saved`).
    """

    state: IndexState
    """The connection, its lock, the options and the in-memory state every part shares."""
    snapshots: Snapshots
    """The vector and BM25 snapshots, the vector graph and their copies, kept current."""
    sources: SqliteSources
    """Each file's rows and state, the vector cache (:class:`~kronika.ports.IndexSources`)."""
    search: SqliteSearch
    """Keyword and vector search, score features, neighbours, the candidates' vectors
    (:class:`~kronika.ports.IndexSearch`)."""
    reads: SqliteReads
    """Items by id or filter, counts per day (:class:`~kronika.ports.IndexReads`)."""
    usage_stats: SqliteUsage
    """Access counts and the recall log (:class:`~kronika.ports.IndexUsage`)."""
    upkeep: SqliteUpkeep
    """Meta values, statistics, scrubbing, integrity, recreate and close
    (:class:`~kronika.ports.IndexUpkeep`)."""

    def __init__(
        self,
        path: Path | str,
        *,
        embedding_model: str,
        dim: int,
        ann_threshold: int = ANN_THRESHOLD,
        ann_background: bool = True,
        restart_copies: bool = True,
    ) -> None:
        self.state = IndexState(
            path,
            embedding_model=embedding_model,
            dim=dim,
            ann_threshold=ann_threshold,
            ann_background=ann_background,
            restart_copies=restart_copies,
        )
        self.snapshots = Snapshots(self.state)
        self.upkeep = SqliteUpkeep(self.state, self.snapshots)
        self.sources = SqliteSources(self.state, self.upkeep)
        self.search = SqliteSearch(self.state, self.snapshots)
        self.reads = SqliteReads(self.state)
        self.usage_stats = SqliteUsage(self.state)

    @property
    def embedding_model(self) -> str:
        return self.state.model

    @property
    def patches_rows(self) -> bool:
        return self.sources.patches_rows

    @property
    def dim(self) -> int:
        return self.state.dim

    @classmethod
    def open_or_rebuild(
        cls,
        path: Path | str,
        *,
        embedding_model: str,
        dim: int,
        ann_threshold: int = ANN_THRESHOLD,
        restart_copies: bool = True,
    ) -> tuple[SqliteIndex, bool]:
        """Open the index at ``path``; if the file is corrupt, move it aside and start empty.

        Returns ``(index, recreated)``. The corrupt file (and its ``-wal``/``-shm``)
        is renamed ``<name>.corrupt-<UTC timestamp>``; the caller then rebuilds the
        items from Markdown. Errors other than corruption (a locked or unreadable
        file) are raised as :class:`IndexError_` without touching anything.
        """
        options: dict[str, Any] = {
            "embedding_model": embedding_model,
            "dim": dim,
            "ann_threshold": ann_threshold,
            "restart_copies": restart_copies,
        }
        try:
            return cls(path, **options), False
        except CorruptIndexError:
            if str(path) == MEMORY:
                raise
        move_aside(Path(path))
        return cls(path, **options), True

    def __enter__(self) -> SqliteIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------ flat names of the parts' verbs
    source_states = Alias("sources", SqliteSources.source_states)
    source_state = Alias("sources", SqliteSources.source_state)
    source_tail = Alias("sources", SqliteSources.source_tail)
    source_items = Alias("sources", SqliteSources.source_items)
    replace_source = Alias("sources", SqliteSources.replace_source)
    replace_sources = Alias("sources", SqliteSources.replace_sources)
    append_to_source = Alias("sources", SqliteSources.append_to_source)
    patch_source = Alias("sources", SqliteSources.patch_source)
    remove_source = Alias("sources", SqliteSources.remove_source)
    embeddings_missing = Alias("sources", SqliteSources.embeddings_missing)
    store_embeddings = Alias("sources", SqliteSources.store_embeddings)
    drop_unused_embeddings = Alias("sources", SqliteSources.drop_unused_embeddings)
    vector_points = Alias("sources", SqliteSources.vector_points)
    agents = Alias("sources", SqliteSources.agents)
    reset = Alias("sources", SqliteSources.reset)
    search_lexical = Alias("search", SqliteSearch.search_lexical)
    search_vector = Alias("search", SqliteSearch.search_vector)
    score_features = Alias("search", SqliteSearch.score_features)
    score_columns = Alias("search", SqliteSearch.score_columns)
    usage = Alias("search", SqliteSearch.usage)
    neighbours = Alias("search", SqliteSearch.neighbours)
    item_texts = Alias("search", SqliteSearch.item_texts)
    vectors_of = Alias("search", SqliteSearch.vectors_of)
    families_of = Alias("search", SqliteSearch.families_of)
    score_together = Alias("search", SqliteSearch.score_together)
    wait_for_vector_graph = Alias("search", SqliteSearch.wait_for_vector_graph)
    get_items = Alias("reads", SqliteReads.get_items)
    list_items = Alias("reads", SqliteReads.list_items)
    count_items = Alias("reads", SqliteReads.count_items)
    list_keys = Alias("reads", SqliteReads.list_keys)
    created_per_day = Alias("reads", SqliteReads.created_per_day)
    items_mark = Alias("reads", SqliteReads.items_mark)
    record_access = Alias("usage_stats", SqliteUsage.record_access)
    restore_usage = Alias("usage_stats", SqliteUsage.restore_usage)
    recall_log = Alias("usage_stats", SqliteUsage.recall_log)
    meta_value = Alias("upkeep", SqliteUpkeep.meta_value)
    set_meta_value = Alias("upkeep", SqliteUpkeep.set_meta_value)
    integrity_problems = Alias("upkeep", SqliteUpkeep.integrity_problems)
    scrub = Alias("upkeep", SqliteUpkeep.scrub)
    stats = Alias("upkeep", SqliteUpkeep.stats)
    recreate = Alias("upkeep", SqliteUpkeep.recreate)
    close = Alias("upkeep", SqliteUpkeep.close)
