"""Deprecated alias of :mod:`kronika.engine.indexer`."""

import warnings

from kronika.engine.indexer import (
    PENDING_FILE,
    Indexer,
    LazyModel,
    Progress,
    SyncReport,
    sudden_loss,
)

warnings.warn(
    "kronika.engine.sync is deprecated: import from kronika.engine.indexer",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Indexer", "LazyModel", "PENDING_FILE", "Progress", "SyncReport", "sudden_loss"]
