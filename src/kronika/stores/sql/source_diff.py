"""What re-indexing one file changes in the rows an SQL index holds of it.

Replacing a file's rows whole costs as much as the file is long, however little of it
changed: the archive of a Brain in use holds nearly every fact stored, and gains a few
at a time. Given the rows as the index last wrote them (:class:`KeptRows`: each id's
item, text hash and place) and the file's items now, :func:`plan` finds the rows a
full replace would write differently:

- an id no longer in the file: its row is deleted (``gone``);
- an id that is new, or whose item or text hash changed in any way but its line: its
  row is written again (``fresh``; an old row of that id, from any file, deleted first);
- an id whose item only moved (another place in the file, another line): its row keeps
  everything but ``pos`` and ``line``, which are set (``moved``);
- any other row is left as it is: a full replace would write it again unchanged.

The rows then are the ones a full replace makes (ids unique, a repeated id keeping its
first occurrence, places as :func:`places_by_line` says: each item's line in a file of
no conversation turns, else 0, 1, 2… in file order). Nothing here touches a
connection.

When this process did not write the file's rows last (another worker did, sharing the
index), :func:`plan_stored` finds the same difference against the rows as the index
holds them, read back as their column values: what another writer left is compared,
not rewritten whole.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TypeVar

from kronika.core.model import ItemType, MemoryItem, Provenance
from kronika.ports import SourceState

Row = tuple[MemoryItem, str, int]
"""An indexed item, its text hash and its place in the file (``pos``)."""


@dataclass
class KeptRows:
    """The rows of one file as an index wrote them, with the file's state then."""

    state: SourceState
    rows: dict[str, Row]
    by_line: bool = False
    """The rows take their line as their place (:func:`places_by_line`)."""


@dataclass
class SourcePlan:
    """What to write so that a file's rows become those of a full replace."""

    gone: list[str] = field(default_factory=list)
    fresh: list[Row] = field(default_factory=list)
    moved: list[tuple[str, int, int | None]] = field(default_factory=list)
    """``(id, pos, line)`` of the rows that only moved."""
    rows: dict[str, Row] = field(default_factory=dict)
    """Every row of the file once the plan is written (the next :class:`KeptRows`)."""

    @property
    def touched(self) -> int:
        return len(self.gone) + len(self.fresh) + len(self.moved)


PLACE_LIMIT = 1 << 24
"""Places stay below this: the SQLite index packs a row's place into 24 bits of a key."""


def places_by_line(items: Sequence[MemoryItem]) -> bool:
    """Whether the items of a file take their line as their place (``pos``): a file of
    no conversation turns whose every item has a line, lines rising in file order and
    below :data:`PLACE_LIMIT` (a fact file, notes). An item leaving such a file then
    moves no other item's place: an archived fact given a new value leaves a mark on
    its lines, so the rows after it keep theirs, however many there are. A session's
    turns are numbered 0, 1, 2… instead: a turn's neighbours are the places beside it."""
    last = -1
    for item in items:
        line = item.provenance.line
        if item.type is ItemType.MESSAGE or line is None or line <= last:
            return False
        last = line
    return last < PLACE_LIMIT


def place(item: MemoryItem, by_line: bool, number: int) -> int:
    """``item``'s place in its file: its line when the file's rows go by line
    (:func:`places_by_line`), else ``number``, its number in file order."""
    line = item.provenance.line
    return line if by_line and line is not None else number


def unique_rows(
    items: Sequence[MemoryItem], text_hashes: Sequence[str], *, by_line: bool | None = None
) -> dict[str, Row]:
    """The rows a full replace writes of ``items``: a repeated id keeps its first
    occurrence; places are lines or numbers in file order (``by_line``, else as
    :func:`places_by_line` says)."""
    if by_line is None:
        by_line = places_by_line(items)
    rows: dict[str, Row] = {}
    for item, text_hash in zip(items, text_hashes, strict=True):
        if item.id not in rows:
            rows[item.id] = (item, text_hash, place(item, by_line, len(rows)))
    return rows


def at_line(item: MemoryItem, line: int) -> MemoryItem:
    """``item`` on another line of its file."""
    return replace(item, provenance=replace(item.provenance, line=line))


_BUT_PROVENANCE = operator.attrgetter(
    *(f.name for f in fields(MemoryItem) if f.name != "provenance")
)
_BUT_LINE = operator.attrgetter(*(f.name for f in fields(Provenance) if f.name != "line"))


def same_but_line(old: MemoryItem, new: MemoryItem) -> bool:
    """Whether ``new`` holds what ``old`` holds but, maybe, its line in the file (every
    field compared at C speed: a long document's items are compared at each write)."""
    return _BUT_LINE(old.provenance) == _BUT_LINE(new.provenance) and _BUT_PROVENANCE(
        old
    ) == _BUT_PROVENANCE(new)


def _only_moved(old: MemoryItem, new: MemoryItem) -> bool:
    """Whether ``new`` is ``old`` but for its line."""
    return old.provenance.line != new.provenance.line and same_but_line(old, new)


_SAME, _MOVED, _FRESH = "same", "moved", "fresh"
T = TypeVar("T")


def plan(kept: dict[str, Row], now: dict[str, Row]) -> SourcePlan:
    """The difference between the rows ``kept`` and the rows ``now`` (both by id, as
    :func:`unique_rows` makes them)."""

    def verdict(old: Row, row: Row) -> str:
        item, text_hash, pos = row
        if old[1] != text_hash:
            return _FRESH
        if old[0] is item or old[0] == item:
            return _MOVED if old[2] != pos else _SAME
        return _MOVED if _only_moved(old[0], item) else _FRESH

    return _planned(kept, now, verdict)


def plan_stored(
    stored: Mapping[str, Sequence[object]],
    now: dict[str, Row],
    values: Callable[[Row], Sequence[object]],
    place: tuple[int, int],
) -> SourcePlan:
    """The difference between the rows an index holds of a file and the rows ``now``.

    ``stored``: each id's row as read back, its values in the order ``values`` gives a
    row of ``now`` (:func:`kronika.stores.sql.rows.item_values`); ``place``: where in
    those values the row's place (``pos``) and line are. A row whose values are all the
    same is left; one that differs only in its place and line moved; any other
    difference writes it again."""

    def verdict(old: Sequence[object], row: Row) -> str:
        new, held = tuple(values(row)), tuple(old)
        if held == new:
            return _SAME
        if len(held) == len(new) and all(
            a == b for n, (a, b) in enumerate(zip(held, new, strict=True)) if n not in place
        ):
            return _MOVED
        return _FRESH

    return _planned(stored, now, verdict)


def _planned(
    before: Mapping[str, T], now: dict[str, Row], verdict: Callable[[T, Row], str]
) -> SourcePlan:
    """The plan from the rows ``before`` (by id) to ``now``: an id new to the file is
    written, an id gone is deleted, and ``verdict`` says of each other row whether it
    is the same, only moved, or to be written again."""
    out = SourcePlan(rows=now)
    for item_id, row in now.items():
        old = before.get(item_id)
        said = _FRESH if old is None else verdict(old, row)
        if said == _FRESH:
            out.fresh.append(row)
        elif said == _MOVED:
            out.moved.append((item_id, row[2], row[0].provenance.line))
    out.gone = [item_id for item_id in before if item_id not in now]
    return out
