"""What a Qdrant point carries, and :class:`RecallFilter` as a Qdrant payload filter.

The payload holds SPEC S3's fields (``memory_item_id``, ``tenant``, ``type``,
``layer``, ``tags``, ``source``, ``confidence``) and what filtering needs (``agent``,
``scope``, ``user``, ``channel``, ``team``, ``status``, times as Unix epoch seconds,
the file the item came from). It never holds an item's text: keys, speakers and
entities are filtered on through hashes of their folded forms, so a copy of the
storage shows which points match a name only to someone who already knows the name.

:func:`visibility_filter` is :func:`kronika.core.visibility.visible` written as a
filter; the tests compare the two on generated items.
"""

from __future__ import annotations

import hashlib
from typing import Any

from qdrant_client.http import models as qm

from kronika.core.model import MemoryItem, Reader, RecallFilter, Scope
from kronika.stores.sqlite.query import entity_forms, excluded_statuses, normalise_name, to_epoch


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
        # the forms the index stores (entity_rows), matched against entity_forms of a query
        "entities_h": sorted({name_hash(n) for n in map(normalise_name, item.entities) if n}),
        "text_hash": text_hash,
    }


def _is(key: str, value: str | int) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))


def _any(key: str, values: list[str]) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchAny(any=values))


def _empty(key: str) -> qm.IsEmptyCondition:
    return qm.IsEmptyCondition(is_empty=qm.PayloadField(key=key))


_NOTHING = qm.Filter(must=[_is("scope", "\x00none")])
"""Matches no point: every stored scope is one of :class:`Scope`'s values."""


def visibility_filter(reader: Reader) -> qm.Filter:
    """The points ``reader`` may see: tenant, then one of the four scope rules.

    ``tenant = T AND (scope = global OR (scope = team AND team IN Ts) OR
    (scope = channel AND channel = C) OR (scope = personal AND user = U))``, where a
    reader without teams or without a channel drops that branch and ``user = None``
    means the point has no user.
    """
    branches: list[qm.Condition] = [_is("scope", Scope.GLOBAL.value)]
    if reader.teams:
        branches.append(
            qm.Filter(must=[_is("scope", Scope.TEAM.value), _any("team", sorted(reader.teams))])
        )
    if reader.channel is not None:
        branches.append(
            qm.Filter(must=[_is("scope", Scope.CHANNEL.value), _is("channel", reader.channel)])
        )
    personal = _empty("user") if reader.user is None else _is("user", reader.user)
    branches.append(qm.Filter(must=[_is("scope", Scope.PERSONAL.value), personal]))
    return qm.Filter(must=[_is("tenant", reader.tenant), qm.Filter(should=branches)])


HANDLED_FIELDS = frozenset(
    ("agents", "tenant", "scopes", "types", "keys", "entities", "speakers", "channel")
    + ("since", "until", "as_of", "include_superseded", "include_archived", "reader")
)
"""The :class:`RecallFilter` fields :func:`recall_filter` applies (a test checks that no
field is left out)."""


def recall_filter(flt: RecallFilter) -> qm.Filter:
    """Every restriction of ``flt`` as one payload filter, as
    :func:`kronika.stores.sqlite.query.filter_clause` applies them in SQL:
    ``as_of`` is ``valid_start <= t AND (valid_to IS NULL OR valid_to > t)``, ``since``
    and ``until`` bound ``created_at`` inclusively, keys, speakers and entities compare
    the hashes of their folded forms."""
    must: list[qm.Condition] = []
    if flt.agents:
        must.append(_any("agent", sorted(set(flt.agents))))
    if flt.tenant is not None:
        must.append(_is("tenant", flt.tenant))
    if flt.scopes:
        must.append(_any("scope", sorted({s.value for s in flt.scopes})))
    if flt.types:
        must.append(_any("type", sorted({t.value for t in flt.types})))
    if flt.keys:
        must.append(_any("key_h", sorted({name_hash(normalise_name(k)) for k in flt.keys})))
    if flt.speakers:
        must.append(_any("speaker_h", sorted({name_hash(normalise_name(s)) for s in flt.speakers})))
    if flt.entities:
        forms = {name_hash(form) for e in flt.entities for form in entity_forms(e)}
        if not forms:
            return _NOTHING
        must.append(_any("entities_h", sorted(forms)))
    if flt.channel is not None:
        must.append(_is("channel", flt.channel))
    if flt.since is not None or flt.until is not None:
        must.append(
            qm.FieldCondition(
                key="created_at",
                range=qm.Range(
                    gte=None if flt.since is None else to_epoch(flt.since),
                    lte=None if flt.until is None else to_epoch(flt.until),
                ),
            )
        )
    if flt.as_of is not None:
        moment = to_epoch(flt.as_of)
        must.append(qm.FieldCondition(key="valid_start", range=qm.Range(lte=moment)))
        must.append(
            qm.Filter(
                should=[
                    _empty("valid_to"),
                    qm.FieldCondition(key="valid_to", range=qm.Range(gt=moment)),
                ]
            )
        )
    if flt.reader is not None:
        must.append(visibility_filter(flt.reader))
    excluded = list(excluded_statuses(flt))
    return qm.Filter(
        must=must or None,
        must_not=[_any("status", excluded)] if excluded else None,
    )
