"""Files written to an index step by step, and rebuilt whole: what the tests of an
index that rewrites only the rows a file changed compare it with (SQLite's kept head,
PostgreSQL's row diff)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kronika.core.model import MemoryItem
from kronika.ports import SourceState


class SourceFiles:
    """The files as they are now, written to one index object step by step: each write
    a new state of the file, its items' vectors cached first."""

    def __init__(
        self,
        index: Any,
        *,
        text_hash: Callable[[MemoryItem], str],
        vectors: Callable[[Sequence[MemoryItem]], dict[str, list[float]]],
    ) -> None:
        self.index = index
        self.text_hash = text_hash
        self.vectors = vectors
        self.files: dict[str, list[MemoryItem]] = {}
        self.states: dict[str, SourceState] = {}
        self.version = 0

    def write(self, path: str, items: list[MemoryItem]) -> None:
        self.version += 1
        self.files[path] = items
        self.index.store_embeddings(self.vectors(items))
        state = SourceState("jaskier", path, f"c{self.version}", self.version, len(items))
        self.states[path] = state
        self.index.replace_source(state, items, [self.text_hash(it) for it in items])

    def rebuild(self, index: Any) -> None:
        """What a rebuild does: forget every row, write every file whole."""
        index.reset()
        for path, items in self.files.items():
            index.store_embeddings(self.vectors(items))
            index.replace_source(self.states[path], items, [self.text_hash(it) for it in items])
