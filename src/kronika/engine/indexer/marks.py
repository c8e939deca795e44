"""What an agent's files looked like when the index last matched them all: the marks
:mod:`~kronika.engine.indexer` compares before it reads any file."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Seen:
    """What an agent's files looked like when the index last matched them all."""

    folders: tuple[int | None, ...]
    files: tuple[tuple[str, int, int], ...]  # path, mtime_ns, size
