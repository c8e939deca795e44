"""kronika — long-term memory for LLM agents.

Markdown files are the truth, a derived SQLite index makes recall fast, and
everything runs offline::

    from kronika import build_memory, load_settings

    with build_memory(load_settings("./.kronika"), create=True) as memory:
        memory.remember("prefiere TypeScript", key="preferencia")
        for hit in memory.recall("what language does he like?", k=5).hits:
            print(hit.score.total, hit.item.content, hit.citation)
"""

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
from kronika.engine.forgetting import ForgetPlace, ForgetReceipt
from kronika.errors import KronikaError
from kronika.memory import ImportReport, Memory
from kronika.settings import Settings, load_settings

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
