"""Converting :class:`MemoryItem` to and from rows of the ``items`` table.

Datetimes are stored as REAL seconds since the epoch (UTC) so time filters are
plain numeric comparisons, and come back timezone-aware UTC. Tuples are stored
as JSON arrays (``ensure_ascii=False`` keeps the text readable in the file).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
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
from kronika.core.text import fold, key_words, searchable_content
from kronika.ports import SourceState
from kronika.stores.sqlite.query import from_epoch, normalise_name, to_epoch

# Order of the columns written by item_row(); rowid comes first.
INSERT_COLUMNS: tuple[str, ...] = (
    "rowid",
    "id",
    "source_agent",
    "source_path",
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
    "user",
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
    "tags",
    "content",
    "text_hash",
    "team",
    "pos",
)
INSERT_ITEM_SQL = (
    f"INSERT INTO items ({', '.join(INSERT_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(INSERT_COLUMNS))})"
)
INSERT_FTS_SQL = (
    "INSERT INTO items_fts (rowid, content, key, entities, speaker) VALUES (?, ?, ?, ?, ?)"
)

# What select_items() reads: the item columns plus usage statistics.
SELECT_ITEM_SQL = (
    "SELECT i.id, i.agent, i.content, i.type, i.layer, i.tier, i.created_at, i.updated_at,"
    " i.path, i.line, i.session_id, i.turn_ids, i.tenant, i.scope, i.channel, i.user, i.key,"
    " i.value, i.multi, i.source, i.section, i.kind, i.confidence, i.importance, i.status,"
    " i.valid_from, i.valid_to, i.superseded_by, i.speaker, i.entities, i.tags,"
    " u.last_accessed_at, u.access_count, i.team"
    " FROM items AS i LEFT JOIN usage AS u ON u.item_id = i.id"
)


def default_text_hash(item: MemoryItem) -> str:
    """``sha256(content)`` as 32 hex digits: the cache key when the caller supplies none."""
    return hashlib.sha256(item.content.encode("utf-8")).hexdigest()[:32]


def _epoch_or_none(value: datetime | None) -> float | None:
    return None if value is None else to_epoch(value)


def _optional_norm(value: str | None) -> str | None:
    return None if value is None else normalise_name(value)


def _json_list(values: Sequence[str]) -> str:
    """``values`` as a JSON array (most are empty: no encoder call for those)."""
    return json.dumps(list(values), ensure_ascii=False) if values else "[]"


def item_row(
    rowid: int, item: MemoryItem, state: SourceState, text_hash: str, pos: int
) -> tuple[object, ...]:
    """The ``items`` row for ``item``, the ``pos``-th item of its file (from 0), in the
    order of :data:`INSERT_COLUMNS`."""
    prov = item.provenance
    return (
        rowid,
        item.id,
        state.agent,
        state.path,
        item.agent,
        item.tenant,
        prov.path,
        prov.line,
        prov.session_id,
        _json_list(prov.turn_ids),
        str(item.type),
        int(item.layer),
        str(item.tier),
        str(item.scope),
        item.channel,
        item.user,
        item.key,
        _optional_norm(item.key),
        item.value,
        int(item.multi),
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
        _optional_norm(item.speaker),
        _json_list(item.entities),
        _json_list(item.tags),
        item.content,
        text_hash,
        item.team,
        pos,
    )


def fts_row(rowid: int, item: MemoryItem) -> tuple[object, ...]:
    """The ``items_fts`` row: accent-folded content (a keyed fact's value), key words,
    entities and speaker (whose words count towards how common a word is, and score
    nothing: :data:`~kronika.stores.sqlite.lexical.COLUMN_WEIGHTS`)."""
    return (
        rowid,
        fold(searchable_content(item)),
        fold(key_words(item.key or "")),
        fold(" ".join(item.entities)),
        fold(item.speaker or ""),
    )


def entity_rows(rowid: int, item: MemoryItem) -> list[tuple[int, str]]:
    return [(rowid, norm) for norm in sorted({normalise_name(e) for e in item.entities}) if norm]


def item_from_row(row: sqlite3.Row | Sequence[Any]) -> MemoryItem:
    """Rebuild a :class:`MemoryItem` from a row selected by :data:`SELECT_ITEM_SQL`."""
    (
        id_, agent, content, type_, layer, tier, created_at, updated_at,
        path, line, session_id, turn_ids, tenant, scope, channel, user, key,
        value, multi, source, section, kind, confidence, importance, status,
        valid_from, valid_to, superseded_by, speaker, entities, tags,
        last_accessed_at, access_count, team,
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
            path=path,
            line=line,
            session_id=session_id,
            turn_ids=tuple(json.loads(turn_ids)),
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
        entities=tuple(json.loads(entities)),
        tags=tuple(json.loads(tags)),
        last_accessed_at=from_epoch(last_accessed_at),
        access_count=access_count or 0,
    )
