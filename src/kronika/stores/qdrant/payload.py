"""What a Qdrant point carries, and :class:`RecallFilter` as a Qdrant payload filter.

The payload holds SPEC S3's fields (``memory_item_id``, ``tenant``, ``type``,
``layer``, ``tags``, ``source``, ``confidence``) and what filtering needs (``agent``,
``scope``, ``user``, ``channel``, ``team``, ``status``, times as Unix epoch seconds,
the file the item came from). It never holds an item's text: keys, speakers and
entities are filtered on through hashes of their folded forms, so a copy of the
storage shows which points match a name only to someone who already knows the name.

:func:`render` writes the predicates of :mod:`kronika.stores.filters` (what every index
filters by) as a payload filter; the tests compare the visibility filter with
:func:`kronika.core.visibility.visible` on generated items.
"""

from __future__ import annotations

import hashlib
from typing import Any

from qdrant_client.http import models as qm

from kronika.core.model import MemoryItem, Reader, RecallFilter
from kronika.stores.filters import (
    All,
    AnyOf,
    Equals,
    Not,
    OneOf,
    Predicate,
    normalise_name,
    recall_predicate,
    to_epoch,
    visibility,
)


def name_hash(name: str) -> str:
    """``sha256`` of an already folded name, 24 hex digits: equal names match, no text."""
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:24]


def payload(item: MemoryItem, text_hash: str) -> dict[str, Any]:
    """The payload of ``item``'s point (no text of the item; see the module docstring)."""
    valid_start = item.valid_from or item.created_at
    return {
        "memory_item_id": item.id,
        "tenant": item.tenant,
        "type": item.type.value,
        "layer": int(item.layer),
        "tier": item.tier.value,
        "tags": list(item.tags),
        "source": item.source.value,
        "confidence": item.confidence,
        "agent": item.agent,
        "scope": item.scope.value,
        "user": item.user,
        "channel": item.channel,
        "team": item.team,
        "status": item.status.value,
        "created_at": to_epoch(item.created_at),
        "valid_start": to_epoch(valid_start),
        "valid_to": None if item.valid_to is None else to_epoch(item.valid_to),
        "path": item.provenance.path,
        "key_h": None if item.key is None else name_hash(normalise_name(item.key)),
        "speaker_h": None if item.speaker is None else name_hash(normalise_name(item.speaker)),
        # the forms the SQL indexes store, matched against entity_forms of a query
        "entities_h": sorted({name_hash(n) for n in map(normalise_name, item.entities) if n}),
        "text_hash": text_hash,
    }


def _is(key: str, value: str | int) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))


def _empty(key: str) -> qm.IsEmptyCondition:
    return qm.IsEmptyCondition(is_empty=qm.PayloadField(key=key))


_NOTHING = qm.Filter(must=[_is("scope", "\x00none")])
"""Matches no point: every stored scope is one of :class:`Scope`'s values."""

_HASHED = {"key": "key_h", "speaker": "speaker_h", "entities": "entities_h"}
"""Fields the payload holds as :func:`name_hash` of their folded forms."""


def render(pred: Predicate) -> qm.Filter:
    """A predicate of :mod:`kronika.stores.filters` as a payload filter."""
    condition = _condition(pred)
    return condition if isinstance(condition, qm.Filter) else qm.Filter(must=[condition])


def _condition(pred: Predicate) -> qm.Condition:
    if isinstance(pred, All):
        return qm.Filter(must=[_condition(p) for p in pred.parts] or None)
    if isinstance(pred, AnyOf):
        return qm.Filter(should=[_condition(p) for p in pred.parts]) if pred.parts else _NOTHING
    if isinstance(pred, Not):
        return qm.Filter(must_not=[_condition(pred.part)])
    if isinstance(pred, Equals):
        if pred.value is None:
            return _empty(pred.field)
        return _is(_HASHED.get(pred.field, pred.field), _stored(pred.field, pred.value))
    if isinstance(pred, OneOf):
        if not pred.values:
            return _NOTHING
        values = sorted({_stored(pred.field, v) for v in pred.values})
        return qm.FieldCondition(
            key=_HASHED.get(pred.field, pred.field), match=qm.MatchAny(any=values)
        )
    return qm.FieldCondition(key=pred.field, range=qm.Range(gte=pred.gte, lte=pred.lte, gt=pred.gt))


def _stored(field: str, value: str) -> str:
    """``value`` as the payload holds it in ``field``."""
    return name_hash(value) if field in _HASHED else value


def visibility_filter(reader: Reader) -> qm.Filter:
    """The points ``reader`` may see (:func:`kronika.stores.filters.visibility`)."""
    return render(visibility(reader))


def recall_filter(flt: RecallFilter) -> qm.Filter:
    """Every restriction of ``flt`` as one payload filter
    (:func:`kronika.stores.filters.recall_predicate`, as the SQL indexes apply it)."""
    return render(recall_predicate(flt))
