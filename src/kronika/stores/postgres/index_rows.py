"""Items to and from rows of ``idx_items``, and :class:`RecallFilter` as a SQL condition.

The values are those of the SQLite index (:mod:`kronika.stores.sqlite.rows`): times as
float seconds since the epoch, names compared in their :func:`normalise_name` forms,
so both indexes answer every filter alike. Nothing here touches a connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RecallFilter,
    RetainKind,
    Scope,
    Source,
    Status,
    Tier,
)
from kronika.ports import SourceState
from kronika.stores.sqlite.query import (
    entity_forms,
    excluded_statuses,
    from_epoch,
    normalise_name,
    to_epoch,
)

COLUMNS: tuple[str, ...] = (
    "id",
    "source_agent",
    "source_path",
    "pos",
    "agent",
    "tenant",
    "path",
    "line",
    "session_id",
    "turn_ids",
    "type",
    "layer",
    "tier",
    "scope",
    "channel",
    "user_id",
    "team",
    "key",
    "key_norm",
    "value",
    "multi",
    "source",
    "section",
    "kind",
    "confidence",
    "importance",
    "status",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "superseded_by",
    "speaker",
    "speaker_norm",
    "entities",
    "entity_norms",
    "tags",
    "content",
    "text_hash",
    "doc_len",
)
"""The columns :func:`item_row` fills, in its order (``rowid`` and ``vec`` are not)."""

SELECT_ITEM = (
    "SELECT i.id, i.agent, i.content, i.type, i.layer, i.tier, i.created_at, i.updated_at,"
    " i.path, i.line, i.session_id, i.turn_ids, i.tenant, i.scope, i.channel, i.user_id,"
    " i.team, i.key, i.value, i.multi, i.source, i.section, i.kind, i.confidence,"
    " i.importance, i.status, i.valid_from, i.valid_to, i.superseded_by, i.speaker,"
    " i.entities, i.tags, u.last_accessed_at, u.access_count"
    " FROM idx_items AS i LEFT JOIN idx_usage AS u ON u.item_id = i.id"
)
"""What :func:`item_from_row` reads: the item's columns and its usage statistics."""


def _epoch_or_none(value: Any) -> float | None:
    return None if value is None else to_epoch(value)


def _norm_or_none(value: str | None) -> str | None:
    return None if value is None else normalise_name(value)


def item_row(
    item: MemoryItem, state: SourceState, pos: int, text_hash: str, doc_len: int
) -> tuple[object, ...]:
    """The ``idx_items`` row of ``item`` (:data:`COLUMNS` order), at ``pos`` in its source."""
    prov = item.provenance
    return (
        item.id,
        state.agent,
        state.path,
        pos,
        item.agent,
        item.tenant,
        prov.path,
        prov.line,
        prov.session_id,
        list(prov.turn_ids),
        str(item.type),
        int(item.layer),
        str(item.tier),
        str(item.scope),
        item.channel,
        item.user,
        item.team,
        item.key,
        _norm_or_none(item.key),
        item.value,
        bool(item.multi),
        str(item.source),
        item.section,
        None if item.kind is None else str(item.kind),
        item.confidence,
        item.importance,
        str(item.status),
        to_epoch(item.created_at),
        to_epoch(item.updated_at),
        _epoch_or_none(item.valid_from),
        _epoch_or_none(item.valid_to),
        item.superseded_by,
        item.speaker,
        _norm_or_none(item.speaker),
        list(item.entities),
        sorted({n for n in (normalise_name(e) for e in item.entities) if n}),
        list(item.tags),
        item.content,
        text_hash,
        doc_len,
    )


def item_from_row(row: Sequence[Any]) -> MemoryItem:
    """The :class:`MemoryItem` of a row selected by :data:`SELECT_ITEM`."""
    (
        id_, agent, content, type_, layer, tier, created_at, updated_at,
        path, line, session_id, turn_ids, tenant, scope, channel, user, team, key,
        value, multi, source, section, kind, confidence, importance, status,
        valid_from, valid_to, superseded_by, speaker, entities, tags,
        last_accessed_at, access_count,
    ) = row  # fmt: skip
    created = from_epoch(created_at)
    updated = from_epoch(updated_at)
    assert created is not None and updated is not None  # NOT NULL columns
    return MemoryItem(
        id=id_,
        agent=agent,
        content=content,
        type=ItemType(type_),
        layer=Layer(layer),
        tier=Tier(tier),
        created_at=created,
        updated_at=updated,
        provenance=Provenance(
            path=path, line=line, session_id=session_id, turn_ids=tuple(turn_ids)
        ),
        tenant=tenant,
        scope=Scope(scope),
        channel=channel,
        user=user,
        team=team,
        key=key,
        value=value,
        multi=bool(multi),
        source=Source(source),
        section=section,
        kind=None if kind is None else RetainKind(kind),
        confidence=confidence,
        importance=importance,
        status=Status(status),
        valid_from=from_epoch(valid_from),
        valid_to=from_epoch(valid_to),
        superseded_by=superseded_by,
        speaker=speaker,
        entities=tuple(entities),
        tags=tuple(tags),
        last_accessed_at=from_epoch(last_accessed_at),
        access_count=int(access_count or 0),
    )


def visibility_clause(reader: Reader, alias: str = "i") -> tuple[str, list[object]]:
    """:func:`kronika.core.visibility.visible` as SQL over ``idx_items AS <alias>``.

    Same tenant, and: global; team among the reader's teams; channel equal to the
    reader's (none for a reader outside channels); otherwise (personal) the same user,
    an item without a user belonging to a reader without one.
    """
    a = alias
    sql = (
        f"({a}.tenant = %s AND CASE {a}.scope"
        f" WHEN 'global' THEN true"
        f" WHEN 'team' THEN coalesce({a}.team = ANY(%s), false)"
        f" WHEN 'channel' THEN coalesce({a}.channel = %s, false)"
        f" ELSE {a}.user_id IS NOT DISTINCT FROM %s END)"
    )
    return sql, [reader.tenant, list(reader.teams), reader.channel, reader.user]


def filter_clause(flt: RecallFilter, alias: str = "i") -> tuple[str, list[object]]:
    """A condition over ``idx_items AS <alias>`` implementing ``flt``, and its parameters.

    The same rules as :func:`kronika.stores.sqlite.query.filter_clause`, plus the
    reader's visibility (:func:`visibility_clause`).
    """
    a = alias
    parts: list[str] = []
    params: list[object] = []

    def one_of(column: str, values: Iterable[object]) -> None:
        parts.append(f"{column} = ANY(%s)")
        params.append(list(values))

    if flt.agents:
        one_of(f"{a}.agent", flt.agents)
    if flt.tenant is not None:
        parts.append(f"{a}.tenant = %s")
        params.append(flt.tenant)
    if flt.scopes:
        one_of(f"{a}.scope", (str(s) for s in flt.scopes))
    if flt.types:
        one_of(f"{a}.type", (str(t) for t in flt.types))
    if flt.keys:
        one_of(f"{a}.key_norm", sorted({normalise_name(k) for k in flt.keys}))
    if flt.speakers:
        one_of(f"{a}.speaker_norm", sorted({normalise_name(s) for s in flt.speakers}))
    if flt.entities:
        parts.append(f"{a}.entity_norms && %s::text[]")
        params.append(sorted({form for e in flt.entities for form in entity_forms(e)}))
    if flt.channel is not None:
        parts.append(f"{a}.channel = %s")
        params.append(flt.channel)
    if flt.since is not None:
        parts.append(f"{a}.created_at >= %s")
        params.append(to_epoch(flt.since))
    if flt.until is not None:
        parts.append(f"{a}.created_at <= %s")
        params.append(to_epoch(flt.until))
    if flt.as_of is not None:
        moment = to_epoch(flt.as_of)
        parts.append(
            f"coalesce({a}.valid_from, {a}.created_at) <= %s"
            f" AND ({a}.valid_to IS NULL OR {a}.valid_to > %s)"
        )
        params.extend((moment, moment))
    excluded = excluded_statuses(flt)
    if excluded:
        parts.append(f"NOT ({a}.status = ANY(%s))")
        params.append(list(excluded))
    if flt.reader is not None:
        sql, values = visibility_clause(flt.reader, a)
        parts.append(sql)
        params.extend(values)
    return (" AND ".join(parts) or "true"), params
