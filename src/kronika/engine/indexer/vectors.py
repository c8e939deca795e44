"""The vectors of what the :class:`~kronika.engine.indexer.Indexer` indexes
(``indexer.vectors``): the texts each item is embedded from, those the index lacks
embedded in batches, and for a write while the embedding model is not in memory, its
files listed in the pending file (:data:`PENDING_FILE`) and embedded later by
:meth:`Vectors.fill_vectors` (see :mod:`kronika.engine.indexer.indexer`)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Protocol, cast, runtime_checkable

from kronika.core.text import content_hash, embedding_texts
from kronika.engine.indexer.report import SyncReport
from kronika.engine.indexer.state import IndexerState
from kronika.errors import KronikaError
from kronika.ports import Vector
from kronika.stores.markdown.workspace import ParsedSource
from kronika.stores.private import open_private

PENDING_FILE = "index.sqlite.pending"
"""Beside the index: the files whose rows wait for vectors, one JSON ``[agent, path]``
per line."""


@runtime_checkable
class LazyModel(Protocol):
    """An embedder whose model loads on first use (``loaded`` says whether it has)."""

    @property
    def loaded(self) -> bool: ...


class Vectors:
    """The vectors of what the Indexer indexes, got now or later."""

    def __init__(self, state: IndexerState) -> None:
        self.state = state
        # an isinstance of a runtime Protocol is slow: asked once, not at every write
        self.lazy = isinstance(state.embedder, LazyModel)

    def texts(self, parsed: ParsedSource) -> list[tuple[str, str]]:
        """``(hash, text)`` of what each item of ``parsed`` is embedded from, in item order."""
        texts = embedding_texts(parsed.items, context_words=self.state.context_words)
        return [(content_hash(text), text) for text in texts]

    def embed_missing(self, wanted: dict[str, str]) -> int:
        # similar lengths in one batch: the encoder pads every text to the longest
        missing = sorted(
            self.state.index.embeddings_missing(wanted), key=lambda h: (len(wanted[h]), h)
        )
        for start in range(0, len(missing), self.state.embed_batch):
            chunk = missing[start : start + self.state.embed_batch]
            vectors = self.state.embedder.embed_documents([wanted[h] for h in chunk])
            self.state.index.store_embeddings(dict(zip(chunk, vectors, strict=True)))
        return len(missing)

    def vectors_of(
        self, agent: str, path: str, wanted: dict[str, str], report: SyncReport, embed: bool
    ) -> dict[str, Vector]:
        """The vectors ``wanted`` (texts by hash) lacks in the index, to be stored in the
        transaction that writes their rows (so no other process can drop one as unused
        in between); without ``embed`` none, and ``path`` is listed as pending."""
        if not embed:
            self.list_pending(agent, [path])
            return {}
        return self.embedded(wanted, report)

    def embedded(self, wanted: dict[str, str], report: SyncReport) -> dict[str, Vector]:
        """The vectors of the texts of ``wanted`` (by hash) the index has not cached,
        embedded now (to be cached with their rows)."""
        missing = sorted(
            self.state.index.embeddings_missing(wanted), key=lambda h: (len(wanted[h]), h)
        )
        vectors: dict[str, Vector] = {}
        for start in range(0, len(missing), self.state.embed_batch):
            chunk = missing[start : start + self.state.embed_batch]
            embedded = self.state.embedder.embed_documents([wanted[h] for h in chunk])
            vectors.update(zip(chunk, embedded, strict=True))
        report.texts_embedded += len(vectors)
        return vectors

    def may_defer(self) -> bool:
        if self.state.pending is None or not self.lazy:
            return False
        return not cast(LazyModel, self.state.embedder).loaded

    def list_pending(self, agent: str, paths: Sequence[str]) -> None:
        """Add ``paths`` to the pending file, durably, before their rows are written."""
        if not paths or self.state.pending is None:
            return
        # a line torn by a crash stays a line of its own (and is passed over)
        lines = "\n" + "".join(json.dumps([agent, path]) + "\n" for path in paths)
        fd = open_private(self.state.pending, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, lines.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def waiting(self) -> bool:
        """Whether some file's rows may wait for vectors."""
        return self.state.pending is not None and self.state.pending.exists()

    def fill_vectors(self) -> int:
        """Embed what the files in the pending file lack, then empty it; the number of
        texts embedded (0 at the cost of one failed open when nothing waits)."""
        if self.state.pending is None:
            return 0
        try:
            listed = self.state.pending.read_text(encoding="utf-8")
        except FileNotFoundError:
            return 0
        wanted: dict[str, str] = {}
        notes = len(self.state.workspace.notes)
        for line in dict.fromkeys(listed.splitlines()):
            try:
                agent, path = json.loads(line)
                parsed = self.state.workspace.parse_source(str(agent), str(path))
            except (ValueError, TypeError, KronikaError):
                continue  # a line cut short by a crash, or a file or agent gone since
            wanted.update(self.texts(parsed))
        # damage in these files was reported by the sync that indexed them
        del self.state.workspace.notes[notes:]
        embedded = self.embed_missing(wanted)
        self.state.pending.unlink(missing_ok=True)
        return embedded
