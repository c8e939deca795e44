"""Deprecated alias of :mod:`kronika.workflows.consolidate`."""

import warnings

from kronika.workflows.consolidate import (
    NO_MODEL,
    ConsolidationReport,
    Consolidator,
    SessionOutcome,
    extractive_summary,
)

warnings.warn(
    "kronika.engine.consolidate is deprecated: import from kronika.workflows.consolidate",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "ConsolidationReport",
    "Consolidator",
    "NO_MODEL",
    "SessionOutcome",
    "extractive_summary",
]
