"""The SQLite implementation of :class:`kronika.ports.ItemIndex` (SPEC S2, R1, R5).

The index is derived: everything but the embedding cache and usage statistics
can be rebuilt from the Markdown workspace, so a corrupt file is moved aside and
replaced by an empty index (:meth:`SqliteIndex.open_or_rebuild`).

Concurrency: WAL journal, ``synchronous=NORMAL``, a busy timeout, and every
write in one ``BEGIN IMMEDIATE`` transaction, so several processes can share one
file. The in-memory vector snapshot is dropped after this connection writes and
whenever ``PRAGMA data_version`` shows another connection committed.

The index is a small object holding named parts over one shared
:class:`~.index_base.IndexState` (the connection, its lock and the in-memory state):
``index.snapshots`` (:mod:`.index_snapshots`), ``index.reads`` (:mod:`.index_reads`),
``index.search`` (:mod:`.index_search`), ``index.writes`` (:mod:`.index_writes`) and
``index.upkeep`` (:mod:`.index_upkeep`); none inherits from another. Every verb of a
part also has its flat name on the index (``index.get_items`` is
``index.reads.get_items``), so it is an :class:`~kronika.ports.ItemIndex`: the table at
the end of the class, one :class:`~kronika.core.alias.Alias` a line. This module opens,
recreates and closes it.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import suppress
from pathlib import Path
from typing import Any

from kronika.core.alias import Alias
from kronika.errors import CorruptIndexError, IndexError_
from kronika.stores.sqlite.index_base import ANN_THRESHOLD, BUSY_TIMEOUT_S, MEMORY, IndexState
from kronika.stores.sqlite.index_reads import SqliteReads
from kronika.stores.sqlite.index_search import SqliteSearch
from kronika.stores.sqlite.index_snapshots import Snapshots
from kronika.stores.sqlite.index_upkeep import SqliteUpkeep
from kronika.stores.sqlite.index_writes import SqliteWrites
from kronika.stores.sqlite.recall_log import SqliteRecallLog
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
    reads: SqliteReads
    """Sources, items by id, filter or file, score features, neighbours, statistics."""
    search: SqliteSearch
    """Keyword and vector search, the candidates' vectors and families."""
    writes: SqliteWrites
    """A file's rows replaced, appended to, patched or removed; vectors, usage, meta."""
    upkeep: SqliteUpkeep
    """Unused vectors dropped, deleted text scrubbed, the integrity check."""

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
        self.reads = SqliteReads(self.state, self.snapshots)
        self.search = SqliteSearch(self.state, self.snapshots)
        self.writes = SqliteWrites(self.state)
        self.upkeep = SqliteUpkeep(self.state)

    @property
    def embedding_model(self) -> str:
        return self.state.model

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

    def recreate(self) -> str | None:
        """Move the damaged file aside and continue on a fresh, empty one.

        Returns where the old file went (``None`` for an in-memory index, which is
        only emptied). Nothing of the old connection is saved on the way out: its
        snapshots, graph and copies may hold what the damage garbled. The caller
        refills the items from the Markdown.
        """
        with self.state.lock:
            with suppress(sqlite3.Error):  # a damaged file may refuse even that
                self.state.conn.close()
            aside = None if isinstance(self.state.path, str) else move_aside(self.state.path)
            self.state.reopen()  # the parts (and methods of them callers hold) stay valid
            return None if aside is None else str(aside)

    def close(self) -> None:
        with self.state.lock:
            if self.snapshots.graph_outlived_a_scrub():
                self.state.ann.discard()
            self.state.ann.save_if_changed()
            try:
                self.snapshots.save_copies()
            except (IndexError_, OSError, ValueError) as exc:  # a cache: never stop a close
                log.warning("could not save the index's copies beside %s: %s", self.state.path, exc)
            self.state.snapshot = None
            self.state.bm25 = None
            self.state.conn.close()

    def __enter__(self) -> SqliteIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def recall_log(self) -> SqliteRecallLog:
        """The recall log kept beside the items (:class:`~kronika.ports.RecallLog`)."""
        return self.state.recall_log()

    # ------------------------------------------------ flat names of the parts' verbs
    items_mark = Alias("reads", SqliteReads.items_mark)
    source_states = Alias("reads", SqliteReads.source_states)
    source_state = Alias("reads", SqliteReads.source_state)
    source_tail = Alias("reads", SqliteReads.source_tail)
    source_items = Alias("reads", SqliteReads.source_items)
    get_items = Alias("reads", SqliteReads.get_items)
    item_texts = Alias("reads", SqliteReads.item_texts)
    list_items = Alias("reads", SqliteReads.list_items)
    count_items = Alias("reads", SqliteReads.count_items)
    created_per_day = Alias("reads", SqliteReads.created_per_day)
    agents = Alias("reads", SqliteReads.agents)
    score_features = Alias("reads", SqliteReads.score_features)
    score_columns = Alias("reads", SqliteReads.score_columns)
    usage = Alias("reads", SqliteReads.usage)
    neighbours = Alias("reads", SqliteReads.neighbours)
    meta_value = Alias("reads", SqliteReads.meta_value)
    embeddings_missing = Alias("reads", SqliteReads.embeddings_missing)
    vector_points = Alias("reads", SqliteReads.vector_points)
    stats = Alias("reads", SqliteReads.stats)
    search_lexical = Alias("search", SqliteSearch.search_lexical)
    search_vector = Alias("search", SqliteSearch.search_vector)
    vectors_of = Alias("search", SqliteSearch.vectors_of)
    families_of = Alias("search", SqliteSearch.families_of)
    score_together = Alias("search", SqliteSearch.score_together)
    wait_for_vector_graph = Alias("search", SqliteSearch.wait_for_vector_graph)
    replace_source = Alias("writes", SqliteWrites.replace_source)
    append_to_source = Alias("writes", SqliteWrites.append_to_source)
    patch_source = Alias("writes", SqliteWrites.patch_source)
    remove_source = Alias("writes", SqliteWrites.remove_source)
    store_embeddings = Alias("writes", SqliteWrites.store_embeddings)
    record_access = Alias("writes", SqliteWrites.record_access)
    restore_usage = Alias("writes", SqliteWrites.restore_usage)
    set_meta_value = Alias("writes", SqliteWrites.set_meta_value)
    reset = Alias("writes", SqliteWrites.reset)
    drop_unused_embeddings = Alias("upkeep", SqliteUpkeep.drop_unused_embeddings)
    scrub = Alias("upkeep", SqliteUpkeep.scrub)
    integrity_problems = Alias("upkeep", SqliteUpkeep.integrity_problems)
