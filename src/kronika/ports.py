"""The small interfaces the engine talks to. Adapters live in ``stores/`` and ``providers/``.

Only the composition root (:mod:`kronika.app`) picks concrete classes; everything
else receives them through its constructor.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kronika.core.model import ItemLink, MemoryItem, RecallFilter
from kronika.core.recall_log import RecallDay, RecallEntry
from kronika.core.redaction import Phrases

Vector = npt.NDArray[np.float32]
"""A float32 array: one embedding ``(dim,)`` or a batch ``(n, dim)``, L2-normalised."""


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class TokenCounter(Protocol):
    def count(self, text: str) -> int:
        """How many tokens ``text`` costs in the prompt."""
        ...


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors."""

    @property
    def model_id(self) -> str:
        """A stable name of the model *and* its settings; a change triggers re-embedding."""
        ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """Embed stored text; returns ``(len(texts), dim)``."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Embed a search query; returns ``(dim,)``."""
        ...


class Reranker(Protocol):
    """Reads a query beside each candidate and scores how well it answers (a
    cross-encoder, usually behind a service); recall blends it into its own order."""

    @property
    def model(self) -> str: ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score per document, in their order (higher answers better).

        Raises :class:`kronika.errors.RerankerError` when it cannot score them.
        """
        ...


@dataclass(frozen=True, slots=True)
class SourceState:
    """What the index knows of one Markdown file it was built from."""

    agent: str
    path: str  # relative to the agent's folder
    content_hash: str
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class SourceTail:
    """The end of one indexed file: its state, how many items it holds, its last
    items (file order) with their text hashes, and whether rows can follow them."""

    state: SourceState
    count: int
    items: tuple[MemoryItem, ...]
    text_hashes: tuple[str, ...]
    at_end: bool


@dataclass(frozen=True, slots=True)
class SourceRows:
    """One file's rows for :meth:`IndexSources.replace_sources`: the arguments of
    :meth:`IndexSources.replace_source` for that file."""

    state: SourceState
    items: Sequence[MemoryItem]
    text_hashes: Sequence[str] | None = None
    vectors: Mapping[str, Vector] | None = None


FeatureRow = tuple[float, float, float | None, int, str | None, str | None]
"""importance, created_at, last_accessed_at, access_count, speaker, session_id."""


@dataclass(frozen=True, slots=True, eq=False)
class ScoreFeatures:
    """What the recall score needs of some items, as columns: entry ``n`` is ``ids[n]``'s.

    Times are Unix epoch seconds; ``last_accessed_at`` is NaN for an item never
    accessed. Columns rather than one object per item: recall scores a few hundred
    candidates at once (:func:`kronika.core.scoring.recencies`).
    """

    ids: tuple[str, ...]
    importance: npt.NDArray[np.float64]
    created_at: npt.NDArray[np.float64]
    last_accessed_at: npt.NDArray[np.float64]
    access_count: npt.NDArray[np.int64]
    speaker: tuple[str | None, ...]
    session_id: tuple[str | None, ...]
    usage_read: bool = True
    """False when the two usage columns were left unread (NaN and 0): an index that keeps
    them apart (:class:`UsageApart`) is asked for them only for the candidates that can
    still reach the top."""

    @classmethod
    def from_rows(cls, rows: Mapping[str, FeatureRow]) -> ScoreFeatures:
        """Columns of ``{id: row}`` in the mapping's order (``None``: never accessed)."""
        values = list(rows.values())
        return cls(
            ids=tuple(rows),
            importance=np.asarray([r[0] for r in values], dtype=np.float64),
            created_at=np.asarray([r[1] for r in values], dtype=np.float64),
            last_accessed_at=np.asarray(
                [np.nan if r[2] is None else r[2] for r in values], dtype=np.float64
            ),
            access_count=np.asarray([r[3] for r in values], dtype=np.int64),
            speaker=tuple(r[4] for r in values),
            session_id=tuple(r[5] for r in values),
        )

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self) -> dict[str, FeatureRow]:
        """One row per id, as :meth:`from_rows` takes them (to compare or inspect)."""
        accessed = [None if np.isnan(t) else t for t in self.last_accessed_at.tolist()]
        return dict(
            zip(
                self.ids,
                zip(
                    self.importance.tolist(),
                    self.created_at.tolist(),
                    accessed,
                    self.access_count.tolist(),
                    self.speaker,
                    self.session_id,
                    strict=True,
                ),
                strict=True,
            )
        )


@dataclass(frozen=True, slots=True)
class CandidateRows:
    """What an index read in one go of one recall's candidates (:class:`CandidateReader`):
    the seeds' neighbours, the score features of the candidates and of those neighbours
    (unknown ids absent), and the seeds' items."""

    neighbours: dict[str, list[tuple[str, int]]]
    features: dict[str, FeatureRow]
    items: Mapping[str, MemoryItem]


@runtime_checkable
class ItemTexts(Protocol):
    """An index that reads items' text alone, without building whole items: recall
    reads the text of some candidates (the questions that were answered) to weigh
    them, and builds whole items only for its hits."""

    def item_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: content}`` of the items of ``ids`` (unknown ids absent)."""
        ...


Usage = Mapping[str, tuple[float | None, int]]
"""``{id: (last_accessed_at, access_count)}`` of the items that have usage statistics."""


def usage_columns(
    ids: Sequence[str], usage: Usage
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """The :class:`ScoreFeatures` usage columns of ``ids`` (in their order) from
    ``usage``: ``last_accessed_at`` (NaN: never accessed) and ``access_count``."""
    accessed = np.full(len(ids), np.nan, dtype=np.float64)
    count = np.zeros(len(ids), dtype=np.int64)
    if usage:
        for n, item_id in enumerate(ids):
            found = usage.get(item_id)
            if found is not None:
                last, times = found
                accessed[n] = np.nan if last is None else last
                count[n] = times
    return accessed, count


@runtime_checkable
class UsageApart(Protocol):
    """An index whose usage statistics cost more to read than its other score columns
    (SQLite: a lookup per item, where the rest is read from memory). Recall reads the
    columns of every candidate without them, then the usage of just the candidates
    that can still reach the top (:func:`kronika.engine.best.best`): the same
    scores, a fraction of the lookups."""

    def score_columns(self, ids: Sequence[str]) -> ScoreFeatures:
        """As :meth:`ItemIndex.score_features`, the usage columns possibly unread
        (then ``usage_read`` is False)."""
        ...

    def usage(self, ids: Sequence[str]) -> Usage:
        """``last_accessed_at`` and ``access_count`` of the items of ``ids`` that have
        them (others absent: never accessed)."""
        ...


@runtime_checkable
class CandidateVectors(Protocol):
    """An index that can give the stored vectors of the candidates of a vector search
    (SQLite: from the snapshot it searched, in memory). Recall reads each vector
    candidate against the others with them (:mod:`kronika.core.hubness`); with an index
    without it, it ranks by the cosines alone."""

    def vectors_of(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The unit vector of each of ``ids`` that has one (others absent)."""
        ...

    def families_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The family of each of ``ids`` that has one (:func:`kronika.core.hubness.family`:
        its fact's key, else its session): with ``hub_scope = "others"`` recall reads a
        candidate against candidates of other families only."""
        ...


@runtime_checkable
class ItemsMark(Protocol):
    """An index that can say cheaply whether its items changed (SQLite: two counters and
    the identity of the file; PostgreSQL: each agent's generation of items). Recall
    keeps what it reads of the items between recalls (the user's names,
    :mod:`kronika.engine.owner`; their keys, :mod:`kronika.engine.keys`) while the mark
    stays the same; with an index without it, it reads them again at every recall."""

    def items_mark(self) -> Hashable:
        """A value that differs after any write that adds, replaces or removes an item,
        made by this process or another; other writes (usage statistics, the recall log)
        may leave it as it was."""
        ...


@runtime_checkable
class CandidateReader(Protocol):
    """An index whose reads cost a round trip each (a server) reads what recall needs of
    its candidates at once; recall asks an index without it one question at a time."""

    def read_candidates(
        self, ids: Sequence[str], seeds: Sequence[str], flt: RecallFilter, window: int
    ) -> CandidateRows:
        """``neighbours(seeds, flt, window)``, the score features of ``ids`` and of those
        neighbours, and the items of ``seeds``."""
        ...


Found = list[tuple[str, float]]
"""``(item id, score)`` pairs a search found, best first."""


@runtime_checkable
class HybridSearch(Protocol):
    """An index whose searches cost a round trip each (a server) runs recall's keyword
    and vector search together; recall asks an index without it one search at a time
    (:mod:`kronika.engine.searches`). Either way the answers are the same."""

    def search_hybrid(
        self, words: str, vector: Vector, flt: RecallFilter, limit: int, *, whole_phrase: bool
    ) -> tuple[Found, Found]:
        """``search_lexical(words, flt, limit, whole_phrase=whole_phrase)`` and
        ``search_vector(vector, flt, limit)``, as those give them."""
        ...


@runtime_checkable
class VectorGraph(Protocol):
    """An index whose vector search walks a graph of its vectors once it holds enough
    of them (SQLite: ``ann_threshold``; PostgreSQL: ``postgres_ann_threshold``), built
    in the background; searches stay exact until it is ready and never wait for it."""

    def wait_for_vector_graph(self, timeout: float | None = None) -> bool:
        """Build the graph now if the index is large enough for one and wait for it
        (``timeout`` seconds at most, None: as long as it takes); True once a graph
        serves the searches, False when the index is too small for one or it is not
        ready within ``timeout``."""
        ...


@dataclass(frozen=True, slots=True)
class DayCount:
    """Items created on one UTC day (``YYYY-MM-DD``) in one tier and of one type."""

    day: str
    tier: str
    type: str
    count: int


ItemUses = tuple[str, int, datetime]
"""An item's id, how many recalls used it, and when the last one did."""


class RecallLog(Protocol):
    """Where each recall is logged (:mod:`kronika.core.recall_log`): beside the index's
    items, so what a viewer is shown of it is filtered by the same visibility rule as
    the items, in the same query.

    Every read takes ``flt``: one agent (``flt.agents``) and the viewer (``flt.reader``,
    ``None``: every recall); an item counts or is named only when it passes ``flt``.
    An item forgotten for good takes its ids out of the log (and the query of each
    recall that used it) when the index drops its usage statistics."""

    def append(self, entries: Sequence[RecallEntry]) -> None:
        """Keep ``entries``; an item id the index no longer holds is left out."""
        ...

    def per_day(self, flt: RecallFilter, since: datetime) -> list[RecallDay]:
        """Per UTC day from ``since`` on, the recalls that count for the viewer and the
        uses of items it may see (days without any are left out), oldest first."""
        ...

    def top(self, flt: RecallFilter, since: datetime, limit: int) -> list[ItemUses]:
        """The ``limit`` items passing ``flt`` used most since ``since``, most first."""
        ...

    def entries(self, flt: RecallFilter, since: datetime | None = None) -> list[RecallEntry]:
        """The recalls that count for the viewer, oldest first: its own whole, another
        reader's with no user, channel or query and only the item ids it may see."""
        ...

    def prune(self, before: datetime) -> int:
        """Forget the recalls made before ``before``; returns how many."""
        ...


class IndexSources(Protocol):
    """What the index holds of each Markdown file, kept in step with it (sync and the
    write path, :mod:`kronika.engine.indexer`, :mod:`kronika.engine.indexer.appends`).

    A file's items are replaced, appended to, patched or removed at once, each file's
    :class:`SourceState` says what was indexed of it, and the vectors of the items'
    texts are cached by text hash and ``embedding_model`` (unchanged text is never
    re-embedded; a vector no item uses any more is dropped). :meth:`reset` forgets
    every item and source before a rebuild.
    """

    @property
    def embedding_model(self) -> str: ...

    @property
    def patches_rows(self) -> bool:
        """Whether :meth:`patch_source` changes a file's rows in place. An index that
        answers ``False`` re-indexes a file whole (as a diff of its rows) where a few
        of them changed, and the write path does not prepare a patch it would refuse."""
        ...

    def source_states(
        self, agent: str, paths: Sequence[str] | None = None
    ) -> dict[str, SourceState]:
        """The states of ``agent``'s indexed files (of those at ``paths`` alone, when
        given), by path."""
        ...

    def source_state(self, agent: str, path: str) -> SourceState | None:
        """The state of one indexed file (``None`` when the index holds none), looked up
        alone: a write must not cost more with every file the agent has."""
        ...

    def source_tail(self, agent: str, path: str, last: int = 2) -> SourceTail | None:
        """The state of one indexed file, its item count and its ``last`` items."""
        ...

    def source_items(self, agent: str, path: str) -> list[MemoryItem]:
        """The items indexed from one file, in file order."""
        ...

    def replace_source(
        self,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str] | None = None,
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> set[str]:
        """Atomically replace every item that came from ``(state.agent, state.path)``.

        ``text_hashes[i]`` is the hash of the text embedded for ``items[i]`` (the key of
        the embedding cache). ``vectors`` (by text hash) are cached in the same
        transaction, before the rows are written, so no other process can drop one as
        unused in between. With ``vectors`` (even empty), returns the text hashes of the
        file's rows that have no cached vector once written (another process dropped
        one this process found cached before the write); else an empty set.
        """
        ...

    def replace_sources(self, files: Sequence[SourceRows]) -> set[str]:
        """:meth:`replace_source` of each of ``files``, in order, in one transaction
        where the index can (a sync's batch of files: one commit, not one a file); the
        text hashes lacking a vector, of every file given its ``vectors``."""
        ...

    def append_to_source(
        self,
        expected: SourceState,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> bool:
        """Add ``items`` after a file's rows if the index still holds it as ``expected``,
        and cache ``vectors`` (by text hash) with them; ``False`` (nothing written)
        otherwise. A vector is usable once this returns ``True``."""
        ...

    def patch_source(
        self,
        expected: SourceState,
        state: SourceState,
        gone: Sequence[str],
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        lines: Mapping[str, int | None],
        *,
        vectors: Mapping[str, Vector] | None = None,
        held: Collection[str] | None = None,
    ) -> bool:
        """Change a few items of a file the index holds as ``expected``: remove the ids
        ``gone``, replace the rows of ``items`` (from any file), give the ids of
        ``lines`` their new line, record ``state``, cache ``vectors``. ``held``, when
        the caller knows it: every id the file holds now (an index may check its rows
        against it). ``False`` (nothing written) when the index no longer holds
        ``expected`` or cannot patch rows: the file is then re-indexed whole."""
        ...

    def remove_source(self, agent: str, path: str) -> None: ...

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]: ...

    def store_embeddings(self, vectors: Mapping[str, Vector]) -> None: ...

    def drop_unused_embeddings(self, *, everywhere: bool = False) -> int:
        """Delete the cached vectors of replaced or removed items' texts that no item
        uses any more (a forgotten memory leaves no vector behind); ``everywhere``: of
        every cached text (after a rebuild). Returns how many."""
        ...

    def agents(self) -> list[str]:
        """The agents the index holds sources or items of, sorted."""
        ...

    def reset(self) -> None:
        """Forget every item and source (keeps the embedding cache and usage statistics)."""
        ...


class IndexSearch(Protocol):
    """Where recall finds its candidates and what it scores them with
    (:mod:`kronika.engine.recall`, :mod:`kronika.engine.candidates`): keyword and vector
    search under a :class:`RecallFilter`, the score features of candidates, a turn's
    neighbours. The optional faster ways in (:class:`UsageApart`, :class:`CandidateVectors`,
    :class:`CandidateReader`, :class:`ItemTexts`, :class:`ItemsMark`) extend it.
    """

    def search_lexical(
        self, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
    ) -> list[tuple[str, float]]:
        """``(item id, score)`` best first; higher score is better. With ``whole_phrase``
        the query's words also count as one phrase (when they occur side by side)."""
        ...

    def search_vector(
        self, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """``(item id, cosine similarity)`` best first."""
        ...

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        """Importance, creation, usage, speaker and session of each known id.

        In the order of ``ids``; unknown ids are absent, repeated ones listed once.
        """
        ...

    def neighbours(
        self, ids: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """The other party's turns at most ``window`` turns before and after each message.

        ``{id: [(neighbour id, offset), …]}`` with offset −1 for the turn just before;
        only messages of the same session, by another speaker, passing ``flt`` count.
        """
        ...


class IndexReads(Protocol):
    """Items read by id, by filter or as counts: what ``Memory.get``, ``items``,
    ``count``, ``history``, the forget path and the charts read, never ranked.
    """

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]: ...

    def list_items(
        self, flt: RecallFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryItem]:
        """Items matching ``flt``, newest first."""
        ...

    def count_items(self, flt: RecallFilter) -> int: ...

    def list_keys(self, flt: RecallFilter, *, limit: int) -> list[str]:
        """The keys of the newest ``limit`` keyed items matching ``flt``, each once, the
        key of the newest such item first (ties by key): the keys :meth:`list_items`
        would show, without the items. Its cost is bounded by ``limit``, whatever the
        memory's size."""
        ...

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        """How many items passing ``flt`` were created on each UTC day from ``since`` on,
        per tier and type: the counts :meth:`list_items` would give, without the items."""
        ...


class IndexUsage(Protocol):
    """What use was made of the items: access counts and times (recall records each
    hit; they survive a rebuild and a backup restores them) and the log of recalls
    (:class:`RecallLog`).
    """

    def record_access(self, ids: Sequence[str], at: datetime) -> None: ...

    def restore_usage(self, rows: Sequence[tuple[str, int, datetime | None]]) -> None:
        """Set ``(item id, access_count, last_accessed_at)`` as given (restoring a backup);
        a row of ``0, None`` removes that item's statistics."""
        ...

    def recall_log(self) -> RecallLog:
        """The recall log kept beside the items (:class:`RecallLog`)."""
        ...


class IndexUpkeep(Protocol):
    """The index as a file to look after (``Memory.admin``, ``kronika doctor``, the
    derivation mark): values it keeps about itself, its health, its statistics, starting
    it anew when damaged, closing it.
    """

    def meta_value(self, key: str) -> str | None:
        """A value the index keeps about itself (``None`` when it keeps none)."""
        ...

    def set_meta_value(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` (it survives :meth:`reset`)."""
        ...

    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What is wrong with the index's storage; empty when it is healthy."""
        ...

    def recreate(self) -> str | None:
        """Keep the damaged storage aside (returns where) and start empty."""
        ...

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class ItemIndex(IndexSources, IndexSearch, IndexReads, IndexUsage, IndexUpkeep, Protocol):
    """The derived, rebuildable index of memory items (SQLite, PostgreSQL): every part
    at once, as the composition root hands it to :class:`kronika.memory.Memory`.

    It holds items parsed from Markdown, their lexical index, their embeddings
    (cached by content hash and model, so unchanged text is never re-embedded),
    and usage statistics (which survive a rebuild). Its parts, one concern each:
    :class:`IndexSources` (what sync writes), :class:`IndexSearch` (recall's
    candidates and scores), :class:`IndexReads` (items by id or filter),
    :class:`IndexUsage` (access counts, the recall log) and :class:`IndexUpkeep`
    (health, statistics, closing). A function that needs one part takes that part.
    """


@dataclass(frozen=True, slots=True, eq=False)
class VectorPoint:
    """One item as a vector index holds it: the item (its payload comes from it), the
    hash of the text its vector was made from, and that vector (unit length)."""

    item: MemoryItem
    text_hash: str
    vector: Vector


class VectorIndex(Protocol):
    """A search engine for item vectors kept outside the item index (Qdrant).

    Derived like the item index: it holds one point per embedded item and can be
    emptied and filled again from the store of record at any time. Searches filter
    with :class:`RecallFilter` (its ``reader`` included) inside the engine, so a
    point the reader may not see is never a candidate.
    """

    @property
    def embedding_model(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        """Add or replace one point per item (the item id is the key)."""
        ...

    def delete(self, ids: Sequence[str] = (), *, source: tuple[str, str] | None = None) -> None:
        """Remove the points of ``ids`` and, with ``source = (agent, path)``, of every
        item indexed from that file."""
        ...

    def search(self, query: Vector, flt: RecallFilter, limit: int) -> list[tuple[str, float]]:
        """``(item id, cosine similarity)`` of the points passing ``flt``, best first."""
        ...

    def count(self, flt: RecallFilter | None = None) -> int: ...

    def reset(self) -> None:
        """Remove every point (the collection starts empty)."""
        ...

    def compact(self) -> None:
        """Leave no readable copy of deleted points in the engine's storage, where it
        can; called after a write removed text from memory."""
        ...

    def close(self) -> None: ...


class PointSource(ItemIndex, Protocol):
    """An item index that can hand its items and cached vectors to a :class:`VectorIndex`."""

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        """The items embedded from ``text_hashes`` (every item when ``None``) that have a
        cached vector, with it."""
        ...


class LinkStore(Protocol):
    """Where the links between items live, beside the items in the store of record."""

    def add_links(self, agent: str, links: Sequence[ItemLink]) -> int:
        """Record ``links`` (one already there is kept once); returns how many were new."""
        ...

    def links(self, agent: str, item_id: str | None = None) -> list[ItemLink]:
        """``agent``'s links in the order they were made; only those touching
        ``item_id`` (either end) when it is given."""
        ...

    def remove_links(self, agent: str, item_ids: Iterable[str]) -> int:
        """Remove every link with either end among ``item_ids``; returns how many."""
        ...


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the audit trail: who changed what, where, and whether it was applied."""

    at: datetime
    action: str  # remember, supersede, forget, save_turn, archive, import, …
    target_agent: str
    source_agent: str
    section: str
    item_id: str | None
    summary: str
    outcome: str  # applied | proposed | denied
    api_key: str | None = None
    """The id of the API key the change came through (none: not through a server)."""
    user: str | None = None
    """The user the change was made for (the request's, or the key's when bound)."""


ACTING: ContextVar[tuple[str | None, str | None]] = ContextVar(
    "kronika_acting", default=(None, None)
)
"""``(API key id, user)`` of the request being served: the server sets it around each
call, and every audit entry made meanwhile names them (:func:`acting`)."""


def acting() -> dict[str, str | None]:
    """The ``api_key`` and ``user`` fields of an audit entry made now."""
    key, user = ACTING.get()
    return {"api_key": key, "user": user}


class AuditLog(Protocol):
    def append(self, entry: AuditEntry) -> None: ...

    def read(self, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]: ...

    def redact(self, agent: str, pattern: Phrases, marker: str) -> int:
        """Replace what ``pattern`` matches in the summaries of ``agent``'s entries with
        ``marker`` (forgetting); returns how many entries changed."""
        ...

    def mentioning(self, agent: str, pattern: Phrases) -> int:
        """How many of ``agent``'s entries hold a match of ``pattern`` in their summary:
        the entries :meth:`redact` would change (a forget's receipt)."""
        ...


@dataclass(frozen=True, slots=True)
class UndoneBatch:
    """A batch of writes put back whole (:mod:`kronika.stores.batch`): a kill cut it
    short, or it raised. None of it happened, though the audit may name its writes."""

    agents: tuple[str, ...]
    """The agents whose files it had changed, sorted."""
    files: int
    began: datetime | None
    """When it changed its first file (``None``: not known)."""


class WriteLock(Protocol):
    """The lock every write and sync holds (re-entrant, shared with other processes):
    a file lock on the workspace, or a working copy of a store of record."""

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def refresh(self) -> bool:
        """Bring what this process reads up to date with what other processes wrote
        (outside the lock); whether anything changed."""
        ...

    def batch(self) -> AbstractContextManager[object]:
        """Hold the lock for a batch of writes that lands whole or not at all: a kill
        or an error inside the block leaves none of it (:mod:`kronika.stores.batch`)."""
        ...

    def for_agent(self, agent: str) -> AbstractContextManager[object]:
        """Hold the lock for writes to ``agent``'s documents alone: in team mode,
        workers writing other agents of the tenant do not wait for this one. Inside
        it, the lock is entered again as usual; asking for another agent there is an
        error (:class:`~kronika.errors.StoreError`)."""
        ...

    def on_undone(self, report: Callable[[UndoneBatch], None]) -> None:
        """Call ``report`` (under the lock) for every batch of writes put back whole."""
        ...

    def after_release(self, run: Callable[[], None]) -> None:
        """Run ``run`` when the hold of one agent (:meth:`for_agent`) that is held now
        lets go of the store of record, after what it wrote is there: writers of the
        agent in other workers go on meanwhile, and such runs of one agent follow each
        other in the order of their holds (:meth:`StoreOfRecord.release`). Without a
        store of record, inside a hold of all agents, or inside a hold the agent's hold
        is nested in, ``run`` runs at once."""
        ...

    def from_record(self, agent: str, path: str) -> bool:
        """Whether ``agent``'s file ``path`` is, as far as its size and time tell, the
        store of record's version of it, not changed in this folder since (a file gone:
        ``False``). Always ``False`` without a record."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class RecordDocument:
    """One Markdown document of an agent as a store of record holds it.

    ``path`` is relative to the agent's folder (``memory/brain.md``,
    ``sessions/<id>.md``…); ``text`` is ``None`` once the document was removed;
    ``modified_ns`` is its modification time (nanoseconds since the epoch) and
    ``change`` the number of the change that wrote it (increasing per tenant).

    A document written with ``appends`` changes the text the record holds in one
    place: ``text`` is the text added there alone (:class:`RecordAppend`), at the end
    or over a span it replaces. :meth:`StoreOfRecord.changes` gives a document that
    only had such changes since as one document with ``appends`` for each, in order
    (those at its end one after the other as one).
    """

    agent: str
    path: str
    text: str | None
    modified_ns: int
    change: int = 0
    appends: RecordAppend | None = None


@dataclass(frozen=True, slots=True)
class RecordAppend:
    """A document changed in one place since the record last took it: the record's
    text hashes to ``base_sha256`` and, with the added text put in, to ``sha256``. The
    text goes at the end (``at`` is ``None``: the document grew), or replaces the
    ``cut`` characters from character ``at`` (a splice: an archived fact given a new
    value); the items given with it are those of the added text alone, and ``gone``
    the ids of the items of the text it replaced. A record whose text is not that one,
    that holds one of the added items elsewhere already, or that cannot take the
    change in place raises :class:`~kronika.errors.StaleAppend` (the document is then
    written whole)."""

    base_sha256: str
    sha256: str
    at: int | None = None
    cut: int = 0
    gone: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RecordWritten:
    """The changes of one :meth:`StoreOfRecord.write`, numbered ``first`` to ``last``
    (``0``, ``0``: nothing was written), and ``preceding``, the tenant's newest change
    when the write began. Changes of a tenant are numbered in the order they are
    committed: every other change of the tenant is numbered ``preceding`` or below
    (committed before this write) or above ``last`` (after it). A writer holding some
    agents that pulled up to ``preceding`` has missed nothing; else the changes after
    what it pulled and before ``first`` are other agents' writes made meanwhile."""

    first: int
    last: int
    preceding: int = 0


class StoreOfRecord(Protocol):
    """What is true for one tenant: every agent's Markdown documents, each with the
    number of the change that last wrote it (the team's truth; see ``docs/postgres.md``).

    The engine works on a Markdown workspace; in team mode that folder is a working
    copy of this store (:class:`kronika.stores.working_copy.WorkingCopy`), brought up
    to date when the write lock is taken and written back, in one transaction, before
    it is released. ``items`` are what the workspace parsed from each written document
    (facts with their history, notes, turns, summaries), kept beside it so the record
    can be queried without parsing Markdown.
    """

    @property
    def tenant(self) -> str: ...

    def hold(
        self, agents: frozenset[str] | None = None, *, since: int | None = None
    ) -> list[RecordDocument] | None:
        """Take the tenant's write lock (waits for another worker holding it): the
        whole tenant's, or with ``agents`` the lock of those agents alone, so writers
        of other agents go on meanwhile (a hold of the whole tenant waits for them,
        and they for it). With ``since``, also what :meth:`changes` gives for it (with
        ``grown`` when ``since`` is past 0), read once the lock is held, as a pull
        after the lock would: a store may ask for both at once."""
        ...

    def release(self, then: Callable[[], None] | None = None) -> None:
        """Let go of the write lock. With ``then`` (a hold of some agents), run it once
        the lock is let go, holding those agents' *follow-up* lock from before the
        write lock is let go until it returns: the next writer of the agents goes on
        meanwhile, and its own ``then`` waits for this one, so follow-up work (the index
        brought up to date with what the hold wrote) runs in the order the holds did.
        A hold of the whole tenant waits for every follow-up of the tenant, and runs its
        own ``then`` before it lets go."""
        ...

    def changes(
        self, since: int, *, grown: bool = False, before: int | None = None
    ) -> list[RecordDocument]:
        """Every document written after change ``since`` (and, with ``before``, by a
        change before that one), oldest change first.

        With ``grown``, a document written whole by change ``since`` that only had text
        added since, at its end or over a span, is given as that text alone, with
        ``appends`` (:class:`RecordAppend`: what the document hashed to before the text,
        and after, and where it went), one document for each place in order: a caller
        holding the document as it was puts each in, any other asks again without
        ``grown``. The pull of a grown session costs its new turns, that of an archive
        whose fact was given a new value the fact's lines."""
        ...

    def document(self, agent: str, path: str) -> RecordDocument | None:
        """The latest version of one document, whole (``text`` ``None``: removed), or
        ``None`` when the record never held it: what repairing one file reads."""
        ...

    def write(
        self,
        documents: Sequence[RecordDocument],
        items: Mapping[tuple[str, str], Sequence[MemoryItem]],
        *,
        fold: bool = False,
    ) -> RecordWritten:
        """Write ``documents`` (``text`` ``None``: remove) and the items parsed from
        each (by ``(agent, path)``) all at once, under the lock; returns the numbers of
        its changes. A document with ``appends`` adds its text and items to those
        held (:class:`RecordAppend`). ``fold`` (a forget's write): :meth:`fold_parts`
        in the same transaction, so the forget and the folding land together or not
        at all (with no documents, the folding alone)."""
        ...

    def fold_parts(self) -> int:
        """Under the lock: every document of the agents held whose parts went over a
        span of it keeps its text as one body, without parts, so the text a part went
        over (an archived fact's lines, the fact forgotten since) is no longer held
        anywhere. Its text and change are the same. Returns how many documents were
        folded."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call a chat model asked for."""

    id: str
    name: str
    arguments: str  # JSON text exactly as the model sent it


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a chat conversation (OpenAI roles)."""

    role: str  # system | user | assistant | tool
    content: str
    name: str | None = None
    tool_call_id: str | None = None  # on tool messages: the call this answers
    tool_calls: tuple[ToolCall, ...] = ()  # on assistant messages that called tools


@dataclass(frozen=True, slots=True)
class LLMReply:
    """What a chat model answered; token counts are ``None`` when the server did not say."""

    content: str
    model: str
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class LLM(Protocol):
    """A chat model (local or remote) that answers a conversation."""

    @property
    def model(self) -> str: ...

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_output: bool = False,
        tools: Sequence[Mapping[str, Any]] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMReply:
        """The model's reply to ``messages``.

        ``json_output`` asks for a JSON reply (best effort: parse it with
        :func:`kronika.providers.jsonout.parse_json_reply`); ``tools`` are OpenAI tool
        definitions the model may call instead of answering.
        """
        ...
