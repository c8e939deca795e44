"""The :class:`~kronika.engine.sync.Indexer`'s state, and the vectors of what it
indexes: the texts each item is embedded from, those the index lacks embedded in
batches, and for a write while the embedding model is not in memory, its files listed
in the pending file (:data:`PENDING_FILE`) and embedded later by
:meth:`IndexerVectors.fill_vectors` (see :mod:`kronika.engine.sync`)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

from kronika.core.model import MemoryItem
from kronika.core.text import content_hash, embedding_texts
from kronika.engine.sync_report import SyncReport
from kronika.errors import KronikaError
from kronika.ports import Embedder, IndexSources, SourceTail, Vector
from kronika.settings import EmbeddingGroup
from kronika.stores.markdown.workspace import MarkdownWorkspace, ParsedSource
from kronika.stores.private import open_private

if TYPE_CHECKING:
    from kronika.engine.sync_marks import Seen as _Seen

PENDING_FILE = "index.sqlite.pending"
"""Beside the index: the files whose rows wait for vectors, one JSON ``[agent, path]``
per line."""


@runtime_checkable
class LazyModel(Protocol):
    """An embedder whose model loads on first use (``loaded`` says whether it has)."""

    @property
    def loaded(self) -> bool: ...


class IndexerVectors:
    """The Indexer's state, and the vectors of what it indexes, got now or later."""

    def __init__(
        self,
        *,
        workspace: MarkdownWorkspace,
        index: IndexSources,
        embedder: Embedder,
        embedding: EmbeddingGroup,
        pending: Path | None = None,
    ) -> None:
        self._workspace = workspace
        self._pending = pending
        self._index = index
        self._embedder = embedder
        self._embed_batch = max(1, embedding.embed_batch)
        self._context_words = embedding.embed_context_words
        self._seen: dict[str, _Seen] = {}
        # an isinstance of a runtime Protocol is slow: asked once, not at every write
        self._lazy = isinstance(embedder, LazyModel)
        # the tail of a session file read for a turn about to be appended to it
        self._tails: dict[tuple[str, str], SourceTail | None] = {}
        # the facts each fact file held before a rebuild emptied the index
        self._before: dict[tuple[str, str], list[MemoryItem]] = {}

    def _texts(self, parsed: ParsedSource) -> list[tuple[str, str]]:
        """``(hash, text)`` of what each item of ``parsed`` is embedded from, in item order."""
        texts = embedding_texts(parsed.items, context_words=self._context_words)
        return [(content_hash(text), text) for text in texts]

    def _embed_missing(self, wanted: dict[str, str]) -> int:
        # similar lengths in one batch: the encoder pads every text to the longest
        missing = sorted(self._index.embeddings_missing(wanted), key=lambda h: (len(wanted[h]), h))
        for start in range(0, len(missing), self._embed_batch):
            chunk = missing[start : start + self._embed_batch]
            vectors = self._embedder.embed_documents([wanted[h] for h in chunk])
            self._index.store_embeddings(dict(zip(chunk, vectors, strict=True)))
        return len(missing)

    def _vectors_of(
        self, agent: str, path: str, wanted: dict[str, str], report: SyncReport, embed: bool
    ) -> dict[str, Vector]:
        """The vectors ``wanted`` (texts by hash) lacks in the index, to be stored in the
        transaction that writes their rows (so no other process can drop one as unused
        in between); without ``embed`` none, and ``path`` is listed as pending."""
        if not embed:
            self._list_pending(agent, [path])
            return {}
        missing = sorted(self._index.embeddings_missing(wanted), key=lambda h: (len(wanted[h]), h))
        vectors: dict[str, Vector] = {}
        for start in range(0, len(missing), self._embed_batch):
            chunk = missing[start : start + self._embed_batch]
            embedded = self._embedder.embed_documents([wanted[h] for h in chunk])
            vectors.update(zip(chunk, embedded, strict=True))
        report.texts_embedded += len(vectors)
        return vectors

    def _may_defer(self) -> bool:
        if self._pending is None or not self._lazy:
            return False
        return not cast(LazyModel, self._embedder).loaded

    def _list_pending(self, agent: str, paths: Sequence[str]) -> None:
        """Add ``paths`` to the pending file, durably, before their rows are written."""
        if not paths or self._pending is None:
            return
        # a line torn by a crash stays a line of its own (and is passed over)
        lines = "\n" + "".join(json.dumps([agent, path]) + "\n" for path in paths)
        fd = open_private(self._pending, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, lines.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def waiting(self) -> bool:
        """Whether some file's rows may wait for vectors."""
        return self._pending is not None and self._pending.exists()

    def fill_vectors(self) -> int:
        """Embed what the files in the pending file lack, then empty it; the number of
        texts embedded (0 at the cost of one failed open when nothing waits)."""
        if self._pending is None:
            return 0
        try:
            listed = self._pending.read_text(encoding="utf-8")
        except FileNotFoundError:
            return 0
        wanted: dict[str, str] = {}
        notes = len(self._workspace.notes)
        for line in dict.fromkeys(listed.splitlines()):
            try:
                agent, path = json.loads(line)
                parsed = self._workspace.parse_source(str(agent), str(path))
            except (ValueError, TypeError, KronikaError):
                continue  # a line cut short by a crash, or a file or agent gone since
            wanted.update(self._texts(parsed))
        # damage in these files was reported by the sync that indexed them
        del self._workspace.notes[notes:]
        embedded = self._embed_missing(wanted)
        self._pending.unlink(missing_ok=True)
        return embedded
