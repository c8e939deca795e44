"""What recall reads of the memory for its reader, kept between recalls.

A few things recall needs are read from the memory itself, not from the question: the
user's names (:mod:`kronika.engine.owner`), the keys of their facts
(:mod:`kronika.engine.keys`). They change only when an item is written, so they are
kept per reader and read again only when the index's items may have changed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

from kronika.core.model import ItemType, MemoryItem, Reader, RecallFilter
from kronika.core.visibility import visible
from kronika.ports import IndexReads, ItemsMark

log = logging.getLogger("kronika")

HELD = 64
"""Readers (agents, tenant, channel, reader) whose reading :class:`HeldPerReader` keeps
at once."""

ReaderKey = tuple[tuple[str, ...], str | None, str | None, Reader | None]
"""Whose reading is kept: a recall's agents, tenant, channel and reader."""
T = TypeVar("T")


def reader_scope(
    flt: RecallFilter, *, keys: tuple[str, ...] = (), types: tuple[ItemType, ...] = ()
) -> RecallFilter:
    """The recall's agents, tenant, channel and reader (not its types, keys or times),
    and ``keys`` and ``types`` when given: what is read of the memory for the reader."""
    return RecallFilter(
        agents=flt.agents,
        tenant=flt.tenant,
        types=types,
        keys=keys,
        channel=flt.channel,
        reader=flt.reader,
    )


def own_facts(items: Iterable[MemoryItem], flt: RecallFilter) -> list[MemoryItem]:
    """The profile facts among ``items`` within the recall's agents, tenant and channel
    that its reader may see: what the index gave, checked once more (fail closed)."""
    return own_items(items, flt, ItemType.PROFILE)


def own_items(items: Iterable[MemoryItem], flt: RecallFilter, kind: ItemType) -> list[MemoryItem]:
    """The items of type ``kind`` among ``items`` within the recall's agents, tenant and
    channel that its reader may see: what the index gave, checked once more (fail
    closed)."""
    return [
        item for item in items if item.type == kind and within_audience(item, flt, scopes=False)
    ]


def within_audience(item: MemoryItem, flt: RecallFilter, *, scopes: bool = True) -> bool:
    """Whether ``item`` is within the recall's agents, tenant, channel and (``scopes``)
    scopes, and visible to its reader: who may have it, whatever else the filter asks."""
    return (
        (not flt.agents or item.agent in flt.agents)
        and (flt.tenant is None or item.tenant == flt.tenant)
        and (flt.channel is None or item.channel == flt.channel)
        and (not scopes or not flt.scopes or item.scope in flt.scopes)
        and (flt.reader is None or visible(item, flt.reader))
    )


def audience_of(items: Iterable[MemoryItem], flt: RecallFilter) -> dict[str, MemoryItem]:
    """``items`` by id, those outside the recall's audience (:func:`within_audience`) left
    out and logged: every index applies the filter itself, so one left out is an
    index's defect, contained here (fail closed)."""
    kept: dict[str, MemoryItem] = {}
    for item in items:
        if within_audience(item, flt):
            kept[item.id] = item
        else:
            log.error("the index gave item %s outside the recall's audience; left out", item.id)
    return kept


class RecallMark:
    """The index's mark of its items (:class:`~kronika.ports.ItemsMark`), asked at most
    once per recall however many of its readings (:class:`HeldPerReader`: the user's
    names, their keys) look at it: the recall calls :meth:`renew` as it starts. Each
    reading is made after the mark was asked, so none is older than its mark."""

    def __init__(self, index: IndexReads) -> None:
        # an isinstance of a runtime Protocol is slow: asked once, not at every recall
        self._ask = index.items_mark if isinstance(index, ItemsMark) else None
        self._asked: tuple[Hashable] | None = None

    @property
    def known(self) -> bool:
        """Whether the index has a mark (else every reading is made at every call)."""
        return self._ask is not None

    def renew(self) -> None:
        """Ask the index again at the next call: a new recall starts."""
        self._asked = None

    def __call__(self) -> Hashable:
        asked = self._asked
        if asked is None:
            assert self._ask is not None, "an index without a mark: see known"
            asked = self._asked = (self._ask(),)
        return asked[0]


class HeldPerReader(Generic[T]):
    """What ``read`` gives for a recall's reader, kept between recalls, per reader, and
    read again only when the index's items may have changed.

    An index with a mark of its items (:class:`~kronika.ports.ItemsMark`: SQLite and
    PostgreSQL) is asked for that mark at each call, which any write of an item, by
    this process or another, moves; while it is the one the reading was made at, it is
    used again. The mark is asked before reading, so what is kept is never older than
    its mark; readings of one recall share one asking of it (:class:`RecallMark`). An
    index without a mark is read at each call."""

    def __init__(
        self,
        index: IndexReads,
        read: Callable[[IndexReads, RecallFilter], T],
        mark: RecallMark | None = None,
    ) -> None:
        self._index = index
        self._read = read
        # a mark shared with the recall's other readings, renewed by the recall; else
        # one of its own, asked again at every call
        self._shared = mark is not None
        self._mark = mark if mark is not None else RecallMark(index)
        self._held: tuple[Hashable, dict[ReaderKey, T]] = (object(), {})

    def of(self, flt: RecallFilter) -> T:
        """What ``read`` gives for the reader of the recall ``flt``."""
        if not self._mark.known:
            return self._read(self._index, flt)
        if not self._shared:
            self._mark.renew()
        mark = self._mark()
        held_at, held = self._held
        if held_at != mark:
            held = {}
            self._held = (mark, held)
        scope: ReaderKey = (flt.agents, flt.tenant, flt.channel, flt.reader)
        found = held.get(scope)
        if found is None:
            found = self._read(self._index, flt)
            if len(held) >= HELD:
                held.clear()
            held[scope] = found
        return found


__all__ = [
    "HELD",
    "HeldPerReader",
    "ReaderKey",
    "RecallMark",
    "audience_of",
    "own_facts",
    "own_items",
    "reader_scope",
    "within_audience",
]
