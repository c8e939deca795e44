"""Deprecated alias of :mod:`kronika.workflows.tools`."""

import warnings

from kronika.workflows.tools import (
    DESCRIPTIONS,
    PARAMETERS,
    TOOLS,
    call_tool,
)

warnings.warn(
    "kronika.engine.tools is deprecated: import from kronika.workflows.tools",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "DESCRIPTIONS",
    "PARAMETERS",
    "TOOLS",
    "call_tool",
]
