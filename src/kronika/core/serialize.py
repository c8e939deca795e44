"""Memory items as plain JSON-ready dicts (export, ``--json`` output) and back."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from enum import Enum
from typing import Any

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RetainKind,
    Scope,
    Source,
    Status,
    Tier,
)

_PLAIN = frozenset({str, int, float, bool})
"""Types of field values that go into JSON as they are (not their subclasses: an enum
member may be a ``str``)."""
_DATES = ("created_at", "updated_at", "valid_from", "valid_to", "last_accessed_at")
_ENUMS: dict[str, Any] = {
    "type": ItemType,
    "layer": Layer,
    "tier": Tier,
    "scope": Scope,
    "source": Source,
    "status": Status,
    "kind": RetainKind,
}


_FIELDS = tuple(f.name for f in fields(MemoryItem))
"""The fields of an item in their declared order (read once: a server answers every
recall with ten items)."""


def item_to_dict(item: MemoryItem) -> dict[str, Any]:
    """A JSON-ready dict with every field of ``item`` plus its ``citation``."""
    out: dict[str, Any] = {}
    for name in _FIELDS:
        value = getattr(item, name)
        if value is None or type(value) in _PLAIN:
            out[name] = value
            continue
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, Enum):
            value = value.value
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Provenance):
            value = {
                "path": value.path,
                "line": value.line,
                "session_id": value.session_id,
                "turn_ids": list(value.turn_ids),
            }
        out[name] = value
    out["citation"] = item.provenance.citation()
    return out


def item_from_dict(data: dict[str, Any]) -> MemoryItem:
    """The inverse of :func:`item_to_dict` (unknown keys are ignored)."""
    names = {f.name for f in fields(MemoryItem)}
    raw = {k: v for k, v in data.items() if k in names}
    for name in _DATES:
        if raw.get(name) is not None:
            raw[name] = datetime.fromisoformat(raw[name])
    for name, enum in _ENUMS.items():
        if raw.get(name) is not None:
            raw[name] = enum(raw[name])
    prov = raw.get("provenance") or {}
    raw["provenance"] = Provenance(
        path=prov.get("path", ""),
        line=prov.get("line"),
        session_id=prov.get("session_id"),
        turn_ids=tuple(prov.get("turn_ids", ())),
    )
    raw["entities"] = tuple(raw.get("entities", ()))
    raw["tags"] = tuple(raw.get("tags", ()))
    return MemoryItem(**raw)
