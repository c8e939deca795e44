"""Deprecated alias of :mod:`kronika.workflows.context`."""

import warnings

from kronika.workflows.context import (
    ReadingContext,
    TenantRecord,
)

warnings.warn(
    "kronika.memory.context is deprecated: import from kronika.workflows.context",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "ReadingContext",
    "TenantRecord",
]
