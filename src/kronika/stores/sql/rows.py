"""Items to and from rows of the SQL indexes' item tables.

Times are float seconds since the epoch (UTC) so time filters are plain numeric
comparisons, and come back timezone-aware UTC; keys and speakers are kept beside their
:func:`~kronika.stores.filters.normalise_name` forms; lists are stored as the dialect
stores them (:meth:`~.dialect.Dialect.encode_list`). Nothing here touches a connection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

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
from kronika.errors import IndexError_
from kronika.ports import FeatureRow, SourceState, Vector
from kronika.stores.filters import from_epoch, normalise_name, to_epoch
from kronika.stores.sql.dialect import Dialect


def item_columns(d: Dialect) -> tuple[str, ...]:
    """The columns :func:`item_values` fills, in its order."""
    return (
        *("id", "source_agent", "source_path", "pos", "agent", "tenant", "path", "line"),
        *("session_id", "turn_ids", "type", "layer", "tier", "scope", "channel", d.user),
        *("team", "key", "key_norm", "value", "multi", "source", "section", "kind"),
        *("confidence", "importance", "status", "created_at", "updated_at", "valid_from"),
        *("valid_to", "superseded_by", "speaker", "speaker_norm", "entities", "tags"),
        *("content", "text_hash"),
    )


def select_item(d: Dialect) -> str:
    """What :func:`item_from_row` reads: an item's columns and its usage statistics, from
    ``<items> AS i``; a caller may add columns before `` FROM``."""
    return (
        "SELECT i.id, i.agent, i.content, i.type, i.layer, i.tier, i.created_at, i.updated_at,"
        " i.path, i.line, i.session_id, i.turn_ids, i.tenant, i.scope, i.channel,"
        f" i.{d.user}, i.team, i.key, i.value, i.multi, i.source, i.section, i.kind,"
        " i.confidence, i.importance, i.status, i.valid_from, i.valid_to, i.superseded_by,"
        " i.speaker, i.entities, i.tags, u.last_accessed_at, u.access_count"
        f" FROM {d.items} AS i LEFT JOIN {d.usage} AS u ON u.item_id = i.id"
    )


def default_text_hash(item: MemoryItem) -> str:
    """``sha256(content)`` as 32 hex digits: the cache key when the caller supplies none."""
    return hashlib.sha256(item.content.encode("utf-8")).hexdigest()[:32]


def _epoch_or_none(value: datetime | None) -> float | None:
    return None if value is None else to_epoch(value)


def _norm_or_none(value: str | None) -> str | None:
    return None if value is None else normalise_name(value)


def item_values(
    d: Dialect, item: MemoryItem, state: SourceState, pos: int, text_hash: str
) -> tuple[object, ...]:
    """The values of ``item``'s row (:func:`item_columns` order), the ``pos``-th item of
    its source (from 0)."""
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
        d.encode_list(prov.turn_ids),
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
        d.encode_bool(bool(item.multi)),
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
        d.encode_list(item.entities),
        d.encode_list(item.tags),
        item.content,
        text_hash,
    )


def entity_norms(item: MemoryItem) -> list[str]:
    """The item's entities in their :func:`normalise_name` forms, sorted, each once."""
    return sorted({n for n in (normalise_name(e) for e in item.entities) if n})


def item_from_row(d: Dialect, row: Sequence[Any]) -> MemoryItem:
    """The :class:`MemoryItem` of a row selected by :func:`select_item` (its first
    columns: what a caller added after them is not read)."""
    (
        id_, agent, content, type_, layer, tier, created_at, updated_at,
        path, line, session_id, turn_ids, tenant, scope, channel, user, team, key,
        value, multi, source, section, kind, confidence, importance, status,
        valid_from, valid_to, superseded_by, speaker, entities, tags,
        last_accessed_at, access_count,
    ) = row[:34]  # fmt: skip
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
            path=path, line=line, session_id=session_id, turn_ids=d.decode_list(turn_ids)
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
        entities=d.decode_list(entities),
        tags=d.decode_list(tags),
        last_accessed_at=from_epoch(last_accessed_at),
        access_count=int(access_count or 0),
    )


def source_states(
    d: Dialect, conn: Any, agent: str, paths: Sequence[str] | None = None
) -> dict[str, SourceState]:
    """The states of ``agent``'s indexed sources (of those at ``paths`` alone, when
    given: one look-up for a few files), by path."""
    sql = (
        f"SELECT agent, path, content_hash, mtime_ns, size FROM {d.sources} WHERE agent = {d.mark}"
    )
    params: list[str] = [agent]
    if paths is not None:
        if not paths:
            return {}
        sql += f" AND path IN ({', '.join([d.mark] * len(paths))})"
        params.extend(paths)
    found = conn.execute(sql, params).fetchall()
    return {row[1]: SourceState(*row) for row in found}


def source_state(d: Dialect, conn: Any, agent: str, path: str) -> SourceState | None:
    """The state of one indexed source (``None`` when the index holds none)."""
    row = conn.execute(
        f"SELECT agent, path, content_hash, mtime_ns, size FROM {d.sources}"
        f" WHERE agent = {d.mark} AND path = {d.mark}",
        (agent, path),
    ).fetchone()
    return None if row is None else SourceState(*row)


def feature_row(row: Sequence[Any]) -> FeatureRow:
    """An item's score features from ``importance, created_at, last_accessed_at,
    access_count, speaker, session_id``."""
    importance, created, accessed, count, speaker, session = row
    return (
        float(importance),
        float(created),
        None if accessed is None else float(accessed),
        int(count),
        speaker,
        session,
    )


def cached_vector(text_hash: str, vec: Vector, *, dim: int, model: str) -> npt.NDArray[np.float32]:
    """``vec`` as the embedding cache keeps it: little-endian ``float32`` scaled to unit
    length (a zero vector stays zero), so a cosine is a dot product at search time.
    :class:`~kronika.errors.IndexError_` when it has not the model's ``dim`` dimensions."""
    flat = np.asarray(vec, dtype=np.float64).reshape(-1)
    if flat.size != dim:
        raise IndexError_(
            f"embedding for {text_hash} has {flat.size} dimensions; model {model} has {dim}"
        )
    norm = float(np.linalg.norm(flat))
    unit: npt.NDArray[np.float32] = (flat / norm if norm > 0 else flat).astype("<f4")
    return unit
