"""What recall reads of the settings: :func:`recall_settings`."""

from __future__ import annotations

from kronika.engine.recall import RecallSettings
from kronika.settings import Settings

__all__ = ["recall_settings"]


def recall_settings(settings: Settings) -> RecallSettings:
    """What recall reads of ``settings``: its group, the reranker's and the embedder's name."""
    return RecallSettings.of(settings.recall, settings.reranker, settings.embedder)
