"""The item columns recall filters need, held as numpy arrays beside an in-memory snapshot.

Both in-memory searches (vectors, BM25) keep one row per item they hold and turn a
:class:`RecallFilter` into a boolean mask over those rows with :meth:`ItemColumns.mask`.
Filters that need a join (keys, entities) are passed in as allowed rowids instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.core.model import Reader, RecallFilter, Scope
from kronika.stores.filters import excluded_statuses, normalise_name, to_epoch

Codes = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
Rowids = npt.NDArray[np.int64]

COLUMNS_SQL = """
SELECT i.rowid, i.id, i.agent, i.tenant, i.scope, i.type, i.status, i.channel,
       i.speaker_norm, i.created_at, coalesce(i.valid_from, i.created_at), i.valid_to,
       i.user, i.team"""
"""The select list :meth:`ItemColumns.from_rows` reads (over ``items AS i``)."""

COLUMN_COUNT = 14

CONTEXT_SQL = """,
       i.importance, i.session_id, i.speaker, i.source_agent, i.source_path, i.pos"""
"""The select list :meth:`ContextColumns.from_rows` reads after :data:`COLUMNS_SQL`."""


@dataclass(frozen=True, slots=True)
class CodedColumn:
    """A string column as small integer codes: ``values[codes[i]]`` is row ``i``'s value."""

    codes: Codes
    index: dict[str | None, int]
    _values: list[str | None] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def encode(cls, values: Iterable[str | None]) -> CodedColumn:
        index: dict[str | None, int] = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int32)
        return cls(codes, index)

    def mask(self, allowed: Iterable[str | None]) -> Mask:
        wanted = [self.index[v] for v in set(allowed) if v in self.index]
        if len(wanted) == 1:
            one: Mask = self.codes == wanted[0]
            return one
        return np.isin(self.codes, np.asarray(wanted, dtype=np.int32))

    def values(self) -> list[str | None]:
        """The value of each code (``values()[code]``), listed once per column object."""
        if len(self._values) != len(self.index):
            self._values[:] = list(self.index)  # codes are given in insertion order
        return self._values

    def code(self, value: str | None) -> int:
        """The code of ``value``; −1 (no row's code) if no row holds it."""
        return self.index.get(value, -1)

    def take(self, keep: Mask) -> CodedColumn:
        return CodedColumn(self.codes[keep], self.index)

    def concat(self, other: CodedColumn) -> CodedColumn:
        index = dict(self.index)
        remap = np.fromiter((index.setdefault(v, len(index)) for v in other.index), dtype=np.int32)
        return CodedColumn(np.concatenate([self.codes, remap[other.codes]]), index)


def _static_key(flt: RecallFilter) -> tuple[Any, ...]:
    """The parts of ``flt`` whose mask depends on the rows only, not on a moment."""
    return (
        frozenset(flt.agents),
        flt.tenant,
        frozenset(str(s) for s in flt.scopes),
        frozenset(str(t) for t in flt.types),
        flt.channel,
        frozenset(normalise_name(s) for s in flt.speakers),
        tuple(excluded_statuses(flt)),
        flt.reader,
    )


@dataclass(frozen=True, slots=True)
class ItemColumns:
    """One row per item: its rowid, id and every column a non-join filter reads.

    Immutable: a snapshot that changes gets new columns, so the masks cached per
    filter (agent, type, status…) stay valid for the life of the object.
    """

    rowids: Rowids
    ids: npt.NDArray[np.object_]
    agent: CodedColumn
    tenant: CodedColumn
    scope: CodedColumn
    type: CodedColumn
    status: CodedColumn
    channel: CodedColumn
    speaker: CodedColumn
    created_at: Floats
    valid_from: Floats  # valid_from, else created_at
    valid_to: Floats  # +inf when open-ended
    user: CodedColumn
    team: CodedColumn
    _masks: dict[tuple[Any, ...], Mask | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    # the sort of the rowids (None: already ascending) and the sorted rowids
    _order: list[tuple[npt.NDArray[np.int64] | None, Rowids]] = field(
        default_factory=list, compare=False, repr=False
    )

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]]) -> ItemColumns:
        """Columns from rows selected with :data:`COLUMNS_SQL` (extra trailing values ignored)."""
        columns = list(zip(*rows, strict=False)) if rows else [()] * COLUMN_COUNT
        return cls(
            rowids=np.asarray(columns[0], dtype=np.int64),
            ids=np.asarray(columns[1], dtype=object),
            agent=CodedColumn.encode(columns[2]),
            tenant=CodedColumn.encode(columns[3]),
            scope=CodedColumn.encode(columns[4]),
            type=CodedColumn.encode(columns[5]),
            status=CodedColumn.encode(columns[6]),
            channel=CodedColumn.encode(columns[7]),
            speaker=CodedColumn.encode(columns[8]),
            created_at=np.asarray(columns[9], dtype=np.float64),
            valid_from=np.asarray(columns[10], dtype=np.float64),
            valid_to=np.asarray([np.inf if v is None else v for v in columns[11]], np.float64),
            user=CodedColumn.encode(columns[12]),
            team=CodedColumn.encode(columns[13]),
        )

    def __len__(self) -> int:
        return len(self.ids)

    def positions(self, rowids: Rowids) -> npt.NDArray[np.int64]:
        """The row holding each of ``rowids`` (−1 if none; the last row if several do).

        A rowid appears twice only while an item's replaced vector waits for
        compaction; the newer row comes later. The sort is done once per columns object.
        """
        if not self._order:
            ascending = bool(np.all(self.rowids[1:] > self.rowids[:-1]))
            sort = None if ascending else np.argsort(self.rowids, kind="stable")
            self._order.append((sort, self.rowids if sort is None else self.rowids[sort]))
        order, keys = self._order[0]
        found = np.searchsorted(keys, rowids, side="right") - 1
        hit = (found >= 0) & (keys[np.maximum(found, 0)] == rowids) if len(keys) else found >= 0
        rows = found if order is None else order[np.maximum(found, 0)]
        return np.where(hit, rows, -1).astype(np.int64)

    def take(self, keep: Mask) -> ItemColumns:
        return ItemColumns(
            rowids=self.rowids[keep],
            ids=self.ids[keep],
            agent=self.agent.take(keep),
            tenant=self.tenant.take(keep),
            scope=self.scope.take(keep),
            type=self.type.take(keep),
            status=self.status.take(keep),
            channel=self.channel.take(keep),
            speaker=self.speaker.take(keep),
            created_at=self.created_at[keep],
            valid_from=self.valid_from[keep],
            valid_to=self.valid_to[keep],
            user=self.user.take(keep),
            team=self.team.take(keep),
        )

    def concat(self, other: ItemColumns) -> ItemColumns:
        if len(other) == 0:
            return self
        return ItemColumns(
            rowids=np.concatenate([self.rowids, other.rowids]),
            ids=np.concatenate([self.ids, other.ids]),
            agent=self.agent.concat(other.agent),
            tenant=self.tenant.concat(other.tenant),
            scope=self.scope.concat(other.scope),
            type=self.type.concat(other.type),
            status=self.status.concat(other.status),
            channel=self.channel.concat(other.channel),
            speaker=self.speaker.concat(other.speaker),
            created_at=np.concatenate([self.created_at, other.created_at]),
            valid_from=np.concatenate([self.valid_from, other.valid_from]),
            valid_to=np.concatenate([self.valid_to, other.valid_to]),
            user=self.user.concat(other.user),
            team=self.team.concat(other.team),
        )

    def mask(self, flt: RecallFilter, live: Mask | None = None) -> Mask | None:
        """Rows passing every non-join filter of ``flt`` (and ``live``); ``None`` means all.

        Mirrors :func:`kronika.stores.filters.recall_predicate` (the tests check both
        agree). The part that does not depend on a moment is computed once per filter.
        """
        key = _static_key(flt)
        if key not in self._masks:
            if len(self._masks) >= 64:
                self._masks.clear()
            self._masks[key] = self._static_mask(flt)
        masks: list[Mask] = []
        static = self._masks[key]
        if static is not None:
            masks.append(static)
        if flt.since is not None:
            masks.append(self.created_at >= to_epoch(flt.since))
        if flt.until is not None:
            masks.append(self.created_at <= to_epoch(flt.until))
        if flt.as_of is not None:
            moment = to_epoch(flt.as_of)
            masks.append((self.valid_from <= moment) & (self.valid_to > moment))
        if live is not None:
            masks.append(live)
        if not masks:
            return None
        if len(masks) == 1:
            return masks[0]
        combined = masks[0] & masks[1]
        for m in masks[2:]:
            combined &= m
        return combined

    def _static_mask(self, flt: RecallFilter) -> Mask | None:
        masks: list[Mask] = []
        if flt.agents:
            masks.append(self.agent.mask(flt.agents))
        if flt.tenant is not None:
            masks.append(self.tenant.mask([flt.tenant]))
        if flt.scopes:
            masks.append(self.scope.mask(str(s) for s in flt.scopes))
        if flt.types:
            masks.append(self.type.mask(str(t) for t in flt.types))
        if flt.channel is not None:
            masks.append(self.channel.mask([flt.channel]))
        if flt.speakers:
            masks.append(self.speaker.mask(normalise_name(s) for s in flt.speakers))
        excluded = excluded_statuses(flt)
        if excluded:
            masks.append(~self.status.mask(excluded))
        if flt.reader is not None:
            masks.append(self.visible_to(flt.reader))
        if not masks:
            return None
        combined = masks[0]
        for m in masks[1:]:
            combined = combined & m
        combined.setflags(write=False)
        return combined

    def visible_to(self, reader: Reader) -> Mask:
        """Rows :func:`kronika.core.visibility.visible` to ``reader``, as
        :func:`kronika.stores.filters.visibility` says it as a predicate."""
        shared = self.scope.mask([Scope.GLOBAL.value])
        if reader.teams:
            shared = shared | (self.scope.mask([Scope.TEAM.value]) & self.team.mask(reader.teams))
        if reader.channel is not None:
            in_channel = self.scope.mask([Scope.CHANNEL.value]) & self.channel.mask(
                [reader.channel]
            )
            shared = shared | in_channel
        others = (Scope.GLOBAL.value, Scope.TEAM.value, Scope.CHANNEL.value)
        own = ~self.scope.mask(others) & self.user.mask([reader.user])
        found: Mask = self.tenant.mask([reader.tenant]) & (shared | own)
        return found


# A place key packs (source_agent code, source_path code, pos) into one int64:
# 16 + 23 + 24 bits. Beyond that (65k agents, 8M files, 16M items in one file) the
# columns give no place keys and neighbours are asked of SQLite instead.
_AGENT_BITS, _PATH_BITS, _POS_BITS = 16, 23, 24


@dataclass(frozen=True, slots=True)
class ContextColumns:
    """What recall reads of every candidate beside the filter columns, one row per item.

    The score's importance, the session and displayed speaker of conversation
    context, and the source file and place in it (``pos``) that give a turn's
    neighbours. Rows are those of an :class:`ItemColumns` read with the same select;
    only the BM25 snapshot keeps them (the vector snapshot, a million rows and more,
    does not need them).
    """

    importance: Floats
    session: CodedColumn
    speaker: CodedColumn  # as written, not normalised
    source_agent: CodedColumn
    source_path: CodedColumn
    pos: npt.NDArray[np.int64]
    # the place keys in ascending order and the row of each (see :meth:`at_places`)
    _places: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None] = field(
        default_factory=list, compare=False, repr=False
    )

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]]) -> ContextColumns:
        """Columns from rows selected with :data:`COLUMNS_SQL` + :data:`CONTEXT_SQL`."""
        # six list comprehensions cost less than transposing all twenty columns
        columns = [[row[n] for row in rows] for n in range(COLUMN_COUNT, COLUMN_COUNT + 6)]
        return cls(
            importance=np.asarray(columns[0], dtype=np.float64),
            session=CodedColumn.encode(columns[1]),
            speaker=CodedColumn.encode(columns[2]),
            source_agent=CodedColumn.encode(columns[3]),
            source_path=CodedColumn.encode(columns[4]),
            pos=np.asarray(columns[5], dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.importance)

    def take(self, keep: Mask) -> ContextColumns:
        return ContextColumns(
            importance=self.importance[keep],
            session=self.session.take(keep),
            speaker=self.speaker.take(keep),
            source_agent=self.source_agent.take(keep),
            source_path=self.source_path.take(keep),
            pos=self.pos[keep],
        )

    def concat(self, other: ContextColumns) -> ContextColumns:
        if len(other) == 0:
            return self
        joined = ContextColumns(
            importance=np.concatenate([self.importance, other.importance]),
            session=self.session.concat(other.session),
            speaker=self.speaker.concat(other.speaker),
            source_agent=self.source_agent.concat(other.source_agent),
            source_path=self.source_path.concat(other.source_path),
            pos=np.concatenate([self.pos, other.pos]),
        )
        if self._places and self._places[0] is not None:
            # the rows added go into the sorted keys (O(n)) rather than a new sort
            keys, rows = self._places[0]
            added = np.arange(len(self), len(joined), dtype=np.int64)
            new = joined._place_keys(added)
            if new is not None:
                order = np.argsort(new, kind="stable")
                # after equal keys: among rows at one place the newest comes last
                at = np.searchsorted(keys, new[order], side="right")
                joined._places.append(
                    (np.insert(keys, at, new[order]), np.insert(rows, at, added[order]))
                )
        return joined

    def _place_keys(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """The place key of each of ``rows``; ``None`` when a part does not fit its bits."""
        if (
            len(self.source_agent.index) >= 1 << _AGENT_BITS
            or len(self.source_path.index) >= 1 << _PATH_BITS
            or (rows.size and int(self.pos[rows].max()) >= 1 << _POS_BITS)
            or (rows.size and int(self.pos[rows].min()) < 0)
        ):
            return None
        agent = self.source_agent.codes[rows].astype(np.int64)
        path = self.source_path.codes[rows].astype(np.int64)
        keys: npt.NDArray[np.int64] = (
            (agent << (_PATH_BITS + _POS_BITS)) | (path << _POS_BITS) | self.pos[rows]
        )
        return keys

    def at_places(
        self, seeds: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64] | None:
        """The row at place ``pos + offset`` of each seed row's file, one row per seed
        and a column per offset (−1: no row there; the newest row when several are:
        the others were replaced and are dead). ``None`` when the columns cannot say
        (see the place key's bits). The sort is done once per columns object, and a
        :meth:`concat` carries it over."""
        if not self._places:
            every = np.arange(len(self), dtype=np.int64)
            keys = self._place_keys(every)
            if keys is None:
                self._places.append(None)
            else:
                order = np.argsort(keys, kind="stable")
                self._places.append((keys[order], every[order]))
        places = self._places[0]
        base = self._place_keys(seeds)
        if places is None or base is None:
            return None
        keys, rows = places
        wanted = self.pos[seeds][:, None] + offsets[None, :]
        inside = (wanted >= 0) & (wanted < 1 << _POS_BITS)
        targets = base[:, None] + offsets[None, :]
        found = np.searchsorted(keys, targets, side="right") - 1
        safe = np.maximum(found, 0)
        hit = inside & (found >= 0) & (keys[safe] == targets) if len(keys) else inside & False
        near: npt.NDArray[np.int64] = np.where(hit, rows[safe], -1).astype(np.int64)
        return near
