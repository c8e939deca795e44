"""Deprecated alias of :mod:`kronika.workflows.chat`."""

import warnings

from kronika.workflows.chat import (
    ChatAgent,
    ChatReply,
    ToolUse,
    guess_language,
)

warnings.warn(
    "kronika.engine.chat is deprecated: import from kronika.workflows.chat",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "ChatAgent",
    "ChatReply",
    "ToolUse",
    "guess_language",
]
