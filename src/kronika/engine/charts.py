"""Deprecated alias of :mod:`kronika.workflows.charts`."""

import warnings

from kronika.workflows.charts import (
    Growth,
    RecallUse,
    TopItem,
    growth,
    recall_entries,
    recall_use,
)

warnings.warn(
    "kronika.engine.charts is deprecated: import from kronika.workflows.charts",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "Growth",
    "RecallUse",
    "TopItem",
    "growth",
    "recall_entries",
    "recall_use",
]
