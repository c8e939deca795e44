"""kronika — long-term memory for LLM agents.

Markdown files are the truth, a derived SQLite index makes recall fast, and
everything runs offline::

    from kronika import build_memory, load_settings

    with build_memory(load_settings("./.kronika"), create=True) as memory:
        memory.remember("prefiere TypeScript", key="preferencia")
        for hit in memory.recall("what language does he like?", k=5).hits:
            print(hit.score.total, hit.item.content, hit.citation)
"""

from typing import TYPE_CHECKING, Any

from kronika.app import build_memory, init_workspace
from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RecallFilter,
    RecallHit,
    RecallResult,
    Scope,
    SessionRecord,
    Source,
    Status,
    Tier,
    TurnRecord,
)
from kronika.engine.redacting import ForgetPlace
from kronika.errors import KronikaError
from kronika.memory import ImportReport, Memory
from kronika.settings import Settings, load_settings

if TYPE_CHECKING:
    from kronika.engine.forgetting import ForgetReceipt


def __getattr__(name: str) -> Any:
    # the forget path and its phrase rules load when first asked for, not with kronika
    if name == "ForgetReceipt":
        from kronika.engine.forgetting import ForgetReceipt

        return ForgetReceipt
    raise AttributeError(f"module 'kronika' has no attribute {name!r}")


__all__ = [
    "ForgetPlace",
    "ForgetReceipt",
    "ImportReport",
    "ItemType",
    "KronikaError",
    "Layer",
    "Memory",
    "MemoryItem",
    "Provenance",
    "RecallFilter",
    "RecallHit",
    "RecallResult",
    "Scope",
    "SessionRecord",
    "Settings",
    "Source",
    "Status",
    "Tier",
    "TurnRecord",
    "build_memory",
    "init_workspace",
    "load_settings",
]
