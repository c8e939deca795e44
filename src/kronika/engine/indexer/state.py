"""What every part of the :class:`~kronika.engine.indexer.Indexer` shares: one
:class:`IndexerState` holding the workspace and the index it keeps in step, the
embedder and its options, and what the last syncs left (the marks of each agent's
files, the tails read for a turn about to be appended, the facts a rebuild forgot)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kronika.core.model import MemoryItem
from kronika.engine.indexer.marks import Seen
from kronika.ports import Embedder, IndexSources, SourceTail
from kronika.settings import EmbeddingGroup
from kronika.stores.markdown.workspace import MarkdownWorkspace

EMBEDDING_DEFAULTS = EmbeddingGroup()
"""The embedding group's defaults (batch size, context words), when none is given."""


class IndexerState:
    """The Indexer's options and the state its parts share (see the module docstring)."""

    def __init__(
        self,
        *,
        workspace: MarkdownWorkspace,
        index: IndexSources,
        embedder: Embedder,
        embedding: EmbeddingGroup = EMBEDDING_DEFAULTS,
        pending: Path | None = None,
        from_record: Callable[[str, str], bool] | None = None,
    ) -> None:
        self.workspace = workspace
        # whether an agent's file is the store of record's version, not changed here
        # (:meth:`kronika.ports.WriteLock.from_record`): what changed it is a write
        # indexed by its writer, never a hand edit or damage of this folder
        self.from_record = from_record or _never
        self.pending = pending
        self.index = index
        self.embedder = embedder
        self.embed_batch = max(1, embedding.embed_batch)
        self.context_words = embedding.embed_context_words
        self.seen: dict[str, Seen] = {}
        # the tail of a session file read for a turn about to be appended to it
        self.tails: dict[tuple[str, str], SourceTail | None] = {}
        # the facts each fact file held before a rebuild emptied the index
        self.before: dict[tuple[str, str], list[MemoryItem]] = {}


def _never(agent: str, path: str) -> bool:
    return False
