"""What every prompt is: a versioned text with a response schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kronika.ports import ChatMessage


@dataclass(frozen=True, slots=True)
class Prompt:
    """``system`` text (a ``str.format`` template), the JSON ``schema`` of the reply,
    and ``coerce``, which repairs harmless near-misses before validation."""

    name: str
    version: int
    system: str
    schema: Mapping[str, Any]
    coerce: Callable[[Any], Any]

    @property
    def id(self) -> str:
        """``name@version``, recorded on what the prompt produced."""
        return f"{self.name}@{self.version}"

    def messages(self, user: str, **values: object) -> list[ChatMessage]:
        return [
            ChatMessage(role="system", content=self.system.format(**values)),
            ChatMessage(role="user", content=user),
        ]


def keep(value: Any) -> Any:
    return value
