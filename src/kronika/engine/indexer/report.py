"""What a sync reports: :class:`SyncReport`, and the :data:`Progress` callback it
calls as files are indexed (:mod:`kronika.engine.indexer`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Progress = Callable[[int, int], None]
"""``progress(done, total)`` — called as files are indexed."""


@dataclass(slots=True)
class SyncReport:
    """What one sync or rebuild did."""

    files_seen: int = 0
    files_indexed: int = 0
    files_removed: int = 0
    items_indexed: int = 0
    texts_embedded: int = 0
    vectors_dropped: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def merge(self, other: SyncReport) -> None:
        self.files_seen += other.files_seen
        self.files_indexed += other.files_indexed
        self.files_removed += other.files_removed
        self.items_indexed += other.items_indexed
        self.texts_embedded += other.texts_embedded
        self.vectors_dropped += other.vectors_dropped
        self.seconds += other.seconds
        self.warnings.extend(other.warnings)
