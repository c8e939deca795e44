"""Deprecated alias of :mod:`kronika.workflows.session`."""

import warnings

from kronika.workflows.session import (
    ROLES,
    Session,
    Turn,
    Wake,
    extract_from_conversation,
    lesson_line,
    new_session_id,
    wake_context,
)

warnings.warn(
    "kronika.engine.session is deprecated: import from kronika.workflows.session",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "ROLES",
    "Session",
    "Turn",
    "Wake",
    "extract_from_conversation",
    "lesson_line",
    "new_session_id",
    "wake_context",
]
