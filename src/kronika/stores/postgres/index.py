"""The PostgreSQL implementation of :class:`kronika.ports.ItemIndex` (tables ``idx_*``).

It behaves as the SQLite index does (the conformance tests run both): the same items,
filters, scores and caches, in a database that many workers share. Differences that
follow from the server, each deliberate:

* Concurrency: every write is one transaction. Writes to one source take a
  transaction-level advisory lock on it, so two workers replacing or appending to the
  same file queue instead of interleaving; a deadlock or a unique-key race with a
  worker writing another file (an id moving between files) is retried. Usage
  statistics are counted by ``INSERT … ON CONFLICT DO UPDATE``: no access is lost.
* Order within a source is ``pos`` (0, 1, 2…), not the row id: ids come from a
  sequence that concurrent writers share. A source's rows can therefore always be
  followed by appended ones (``SourceTail.at_end`` is true whenever it has rows).
* Vectors: the cache ``idx_embeddings`` keeps every model's; each item row holds the
  vector of this index's model (``vec``), so a search reads one table. One database
  serves one embedding model at a time: opening it with another model re-fills ``vec``
  from the cache. From ``ann_threshold`` items on, searches walk an HNSW index built
  in the background (:meth:`wait_for_vector_graph`); until it is ready they are exact.
* Forgetting: rows are deleted in the write's transaction, so no live table holds a
  forgotten item's text, vector or id once :meth:`drop_unused_embeddings` has run
  (it also drops the usage statistics of ids gone for good). The deleted tuples stay
  in the data files until VACUUM prunes them: that call runs a plain ``VACUUM`` of
  the tables that lost rows (``VACUUM FULL``, which rewrites the files, is
  :meth:`vacuum` with ``full=True``; it locks the tables).

The index is a small object holding named parts over one shared
:class:`~.index_base.PostgresState`, one part per port of :mod:`kronika.ports` and one
module each, as :class:`~kronika.stores.sqlite.SqliteIndex` is laid out:
``index.sources`` (:mod:`.index_sources`), ``index.search`` (:mod:`.index_search`),
``index.reads`` (:mod:`.index_reads`), ``index.usage_stats`` (:mod:`.index_usage`) and
``index.upkeep`` (:mod:`.index_upkeep`). Every verb of a part also has its flat name
on the index (``index.get_items`` is ``index.reads.get_items``).
"""

from __future__ import annotations

from kronika.core.alias import Alias
from kronika.stores.postgres.forget_due import ForgetsDue
from kronika.stores.postgres.index_base import (
    ANN_THRESHOLD,
    GRAPH_RECHECK_S,
    HNSW_EF_CONSTRUCTION,
    HNSW_M,
    ITEMS_AHEAD,
    LEXICAL,
    PostgresState,
)
from kronika.stores.postgres.index_reads import PostgresReads
from kronika.stores.postgres.index_search import PostgresSearch
from kronika.stores.postgres.index_sources import PostgresSources
from kronika.stores.postgres.index_upkeep import PostgresUpkeep
from kronika.stores.postgres.index_usage import PostgresUsage
from kronika.stores.postgres.replica import ReplayMark
from kronika.stores.postgres.search import HnswOptions

__all__ = [
    "ANN_THRESHOLD",
    "GRAPH_RECHECK_S",
    "HNSW_EF_CONSTRUCTION",
    "HNSW_M",
    "HnswOptions",
    "ITEMS_AHEAD",
    "LEXICAL",
    "PostgresIndex",
]


class PostgresIndex:
    """Items, keyword postings, an embedding cache and usage statistics in PostgreSQL.

    ``url`` names the database (migrated on open). ``embedding_model`` and ``dim`` as
    for :class:`kronika.stores.sqlite.SqliteIndex`; ``ann_threshold`` items and more
    (0: never) make vector search walk an HNSW index, built by a background thread
    (``ann_background`` False: by the searching one). ``lexical`` ``bm25`` scores
    keywords as the SQLite index does; ``simple`` (``ts_rank``) and ``trigram`` are the
    PostgreSQL-native alternatives it was measured against (``docs/postgres.md``).
    ``tenant`` names whose index it is: each tenant's tables live in a schema of their
    own (:func:`~kronika.stores.postgres.connect.index_schema`), so tenants of one
    database never read or write each other's rows. ``read_url`` names a streaming
    replica of the database's server: searches and item reads go there while it has
    replayed ``mark`` (the worker's :class:`~.replica.ReplayMark`, which its record
    raises), to the primary otherwise (:mod:`.replica`). ``hnsw`` says how the HNSW
    index is built and walked (pgvector's defaults when None); one built with another
    ``m`` or ``ef_construction`` is dropped on open and built again with these.
    """

    state: PostgresState
    """The connection, its lock, the options and what the parts keep between calls."""
    sources: PostgresSources
    """Each file's rows and state, the vector cache (:class:`~kronika.ports.IndexSources`)."""
    search: PostgresSearch
    """Keyword and vector search, what recall reads of candidates, the HNSW index
    (:class:`~kronika.ports.IndexSearch`)."""
    reads: PostgresReads
    """Items by id or filter, counts per day (:class:`~kronika.ports.IndexReads`)."""
    usage_stats: PostgresUsage
    """Access counts and the recall log (:class:`~kronika.ports.IndexUsage`)."""
    upkeep: PostgresUpkeep
    """Meta values, health, statistics, VACUUM, recreate and close
    (:class:`~kronika.ports.IndexUpkeep`)."""
    due: ForgetsDue
    """The rewrites after a forget noted as due until done (a kill cannot skip one)."""

    def __init__(
        self,
        url: str,
        *,
        embedding_model: str,
        dim: int,
        ann_threshold: int = ANN_THRESHOLD,
        ann_background: bool = True,
        lexical: str = "bm25",
        tenant: str = "default",
        read_url: str = "",
        mark: ReplayMark | None = None,
        hnsw: HnswOptions | None = None,
    ) -> None:
        self.state = PostgresState(
            url,
            embedding_model=embedding_model,
            dim=dim,
            ann_threshold=ann_threshold,
            ann_background=ann_background,
            lexical=lexical,
            tenant=tenant,
            read_url=read_url,
            mark=mark,
            hnsw=hnsw,
        )
        self.search = PostgresSearch(self.state)
        self.due = ForgetsDue(self.state)
        self.upkeep = PostgresUpkeep(self.state, self.search, self.due)
        self.sources = PostgresSources(self.state, self.upkeep)
        self.reads = PostgresReads(self.state)
        self.usage_stats = PostgresUsage(self.state)

    @property
    def embedding_model(self) -> str:
        return self.state.model

    @property
    def patches_rows(self) -> bool:
        return self.sources.patches_rows

    @property
    def dim(self) -> int:
        return self.state.dim

    @property
    def url(self) -> str:
        """The database's URL, with this tenant's schema first on the search path."""
        return self.state.url

    @property
    def tenant(self) -> str:
        return self.state.tenant

    @property
    def schema(self) -> str:
        """The schema holding this tenant's index tables."""
        return self.state.schema

    def __enter__(self) -> PostgresIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------ flat names of the parts' verbs
    source_states = Alias("sources", PostgresSources.source_states)
    source_state = Alias("sources", PostgresSources.source_state)
    source_tail = Alias("sources", PostgresSources.source_tail)
    source_items = Alias("sources", PostgresSources.source_items)
    replace_source = Alias("sources", PostgresSources.replace_source)
    replace_sources = Alias("sources", PostgresSources.replace_sources)
    append_to_source = Alias("sources", PostgresSources.append_to_source)
    patch_source = Alias("sources", PostgresSources.patch_source)
    remove_source = Alias("sources", PostgresSources.remove_source)
    embeddings_missing = Alias("sources", PostgresSources.embeddings_missing)
    store_embeddings = Alias("sources", PostgresSources.store_embeddings)
    drop_unused_embeddings = Alias("sources", PostgresSources.drop_unused_embeddings)
    vector_points = Alias("sources", PostgresSources.vector_points)
    agents = Alias("sources", PostgresSources.agents)
    reset = Alias("sources", PostgresSources.reset)
    search_lexical = Alias("search", PostgresSearch.search_lexical)
    search_vector = Alias("search", PostgresSearch.search_vector)
    search_hybrid = Alias("search", PostgresSearch.search_hybrid)
    score_features = Alias("search", PostgresSearch.score_features)
    neighbours = Alias("search", PostgresSearch.neighbours)
    read_candidates = Alias("search", PostgresSearch.read_candidates)
    vectors_of = Alias("search", PostgresSearch.vectors_of)
    families_of = Alias("search", PostgresSearch.families_of)
    wait_for_vector_graph = Alias("search", PostgresSearch.wait_for_vector_graph)
    get_items = Alias("reads", PostgresReads.get_items)
    list_items = Alias("reads", PostgresReads.list_items)
    count_items = Alias("reads", PostgresReads.count_items)
    list_keys = Alias("reads", PostgresReads.list_keys)
    items_mark = Alias("reads", PostgresReads.items_mark)
    created_per_day = Alias("reads", PostgresReads.created_per_day)
    record_access = Alias("usage_stats", PostgresUsage.record_access)
    restore_usage = Alias("usage_stats", PostgresUsage.restore_usage)
    recall_log = Alias("usage_stats", PostgresUsage.recall_log)
    meta_value = Alias("upkeep", PostgresUpkeep.meta_value)
    set_meta_value = Alias("upkeep", PostgresUpkeep.set_meta_value)
    integrity_problems = Alias("upkeep", PostgresUpkeep.integrity_problems)
    stats = Alias("upkeep", PostgresUpkeep.stats)
    vacuum = Alias("upkeep", PostgresUpkeep.vacuum)
    compact_after_forget = Alias("upkeep", PostgresUpkeep.compact_after_forget)
    rewrite_due = Alias("due", ForgetsDue.note)
    rewrites_left = Alias("due", ForgetsDue.taken_over)
    rewrite_written = Alias("due", ForgetsDue.written)
    rewrites_done = Alias("due", ForgetsDue.done)
    rewrites_pending = Alias("due", ForgetsDue.pending)
    recreate = Alias("upkeep", PostgresUpkeep.recreate)
    close = Alias("upkeep", PostgresUpkeep.close)
