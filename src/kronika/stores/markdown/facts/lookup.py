"""Lookups kept with a fact file's parse (:class:`~kronika.stores.markdown.facts.cache.FactParse`).

Each is built from the parse the first time it is asked for, and extended (never
rebuilt) when kronika appends facts to the file, so asking again costs the same
whatever the file's length:

* ``ids``: the set of the file's fact ids;
* ``hand``: whether a bullet was written by hand (no metadata comment yet);
* ``times``: how many facts have a hand-written id, and how many each creation time
  (for :func:`borrows`);
* ``marks``: how many lines facts that left the file left (:func:`marks`);
* ``by_key`` / ``by_concept`` / ``by_form``: the facts of each normalized key, of each
  key concept (:func:`kronika.core.dedup.key_concept`), and, for facts without a key,
  of each text form (:func:`kronika.core.dedup.same_form`), with their positions in
  the file, for :func:`candidates`.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kronika.core.dedup import key_concept, same_form
from kronika.core.model import MemoryItem, Source
from kronika.core.text import normalize_key
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.facts.cache import FactParse
from kronika.stores.markdown.facts.splice import HAND_PREFIX, Spliced
from kronika.stores.markdown.lines import bare

Placed = list[tuple[int, MemoryItem]]


def ids(entry: FactParse) -> set[str]:
    found: set[str] = entry.derive("ids", lambda: {item.id for item in entry.parsed.items})
    return found


def hand_written(entry: FactParse) -> bool:
    """Whether a bullet of the file has no metadata comment yet (see
    :func:`kronika.stores.markdown.facts.brain.stamp_hand_facts`)."""

    def build() -> bool:
        spans = entry.parsed.spans
        return any("<!--" not in bare(entry.lines[start]) for start, _ in spans.values())

    return bool(entry.derive("hand", build))


@dataclass(slots=True)
class _Times:
    """The facts with a hand-written id, and the facts of each creation time."""

    hand: int
    created: Counter[datetime]

    @classmethod
    def of(cls, items: Iterable[MemoryItem]) -> _Times:
        times = cls(0, Counter())
        times.add(items)
        return times

    def add(self, items: Iterable[MemoryItem], sign: int = 1) -> None:
        for item in items:
            self.hand += sign * item.id.startswith(HAND_PREFIX)
            self.created[item.created_at] += sign

    def after(self, gone: Iterable[MemoryItem], came: Iterable[MemoryItem]) -> _Times:
        times = _Times(self.hand, self.created.copy())
        times.add(gone, -1)
        times.add(came)
        return times


def borrows(entry: FactParse, mtime: datetime) -> bool:
    """Whether a fact of the parse may read its id or time from the rest of its file
    (:func:`~kronika.stores.markdown.facts.splice.splice` gives up then): one written
    by hand, or one created at ``mtime``, the file's time. Asking costs the same
    whatever the file's length."""
    times: _Times = entry.derive("times", lambda: _Times.of(entry.parsed.items))
    return times.hand > 0 or times.created[mtime] > 0


def marks(entry: FactParse) -> int:
    """How many lines of the file say a fact moved out of it
    (:func:`~kronika.stores.markdown.facts.brain.moved_out`)."""
    count: int = entry.derive("marks", lambda: brain.moved_out_lines(entry.lines))
    return count


def _key_of(item: MemoryItem) -> str | None:
    return normalize_key(item.key) if item.key else None


def _concept_of(item: MemoryItem) -> str | None:
    return key_concept(item.key) if item.key else None


def _form_of(item: MemoryItem) -> str | None:
    return None if item.key else same_form(item.value or item.content)


_GROUPS: dict[str, Callable[[MemoryItem], str | None]] = {
    "by_key": _key_of,
    "by_concept": _concept_of,
    "by_form": _form_of,
}


def _group(entry: FactParse, name: str) -> dict[str, Placed]:
    def build() -> dict[str, Placed]:
        found: dict[str, Placed] = {}
        of = _GROUPS[name]
        for n, item in enumerate(entry.parsed.items):
            label = of(item)
            if label is not None:
                found.setdefault(label, []).append((n, item))
        return found

    group: dict[str, Placed] = entry.derive(name, build)
    return group


def extend(entry: FactParse, first: int, items: Sequence[MemoryItem]) -> None:
    """Add ``items`` (appended to the file, the first at item position ``first``) to
    every lookup already built."""
    derived: dict[str, Any] = entry.derived
    if "ids" in derived:
        derived["ids"].update(item.id for item in items)
    if "times" in derived:
        derived["times"].add(items)
    # "hand" stays as it is: kronika's own bullets always carry their metadata
    for name, of in _GROUPS.items():
        group = derived.get(name)
        if group is None:
            continue
        for n, item in enumerate(items, first):
            label = of(item)
            if label is not None:
                group.setdefault(label, []).append((n, item))


def carry(before: FactParse, after: FactParse, change: Spliced | None = None) -> None:
    """Give ``after`` (the parse of a rewrite of ``before``'s file) the lookups built for
    ``before``, when the rewrite only dropped facts or wrote facts over themselves
    under the same key and text: the dropped ones are taken out, the rewritten ones
    put in. A fact added, or one whose key or text changed, leaves ``after`` without
    them (built again when asked for). Positions stay as they were: they only order a
    lookup's facts, and a drop keeps the order. ``change``: ``after`` was spliced from
    ``before`` so; when no line moved, only the facts of the lines replaced are looked
    at (else every fact of the two parses)."""
    if not before.derived:
        return
    if change is not None and not change.shifted:
        old = {item.id: item for item in change.gone}
        now: Sequence[MemoryItem] = change.added
    else:
        old = {item.id: item for item in before.parsed.items}
        now = after.parsed.items
    if any(item.id not in old for item in now):
        return
    changed = [item for item in now if old[item.id] is not item]
    gone = set(old).difference(item.id for item in now)
    derived: dict[str, Any] = {}
    for name, built in before.derived.items():
        if name == "ids":
            derived[name] = built - gone
        elif name == "marks" and change is not None:
            start, end, stop = change.region
            derived[name] = (
                built
                - brain.moved_out_lines(before.lines[start:end])
                + brain.moved_out_lines(after.lines[start:stop])
            )
        elif name == "times":
            left = [old[fact_id] for fact_id in gone] + [old[item.id] for item in changed]
            derived[name] = built.after(left, changed)
        elif name == "hand":
            if not built:  # a rewrite writes the metadata of every fact it writes
                derived[name] = built
        elif name in _GROUPS:
            group = _carried(built, _GROUPS[name], old, changed, gone)
            if group is None:
                return
            derived[name] = group
    after.derived = derived


def _carried(
    group: dict[str, Placed],
    of: Callable[[MemoryItem], str | None],
    old: dict[str, MemoryItem],
    changed: Sequence[MemoryItem],
    gone: set[str],
) -> dict[str, Placed] | None:
    """``group`` with the facts of ``gone`` out and those of ``changed`` in (``None``
    when one of them changed its label)."""
    fresh = {item.id: item for item in changed}
    touched: set[str] = set()
    for fact_id in (*gone, *fresh):
        label = of(old[fact_id])
        if fact_id in fresh and of(fresh[fact_id]) != label:
            return None
        if label is not None:
            touched.add(label)
    out = dict(group)
    for label in touched:
        kept = [(n, fresh.get(f.id, f)) for n, f in group.get(label, []) if f.id not in gone]
        if kept:
            out[label] = kept
        else:
            out.pop(label, None)
    return out


def candidates(entry: FactParse, item: MemoryItem) -> list[MemoryItem]:
    """The facts of the file :func:`kronika.core.dedup.place_fact` could pick for
    ``item``, in file order: those under its key, those whose key names its key's
    concept (and those under their keys) when it was extracted, those of its text
    when it has no key. Every fact the rules compare with ``item`` is among them."""
    found: list[Placed] = []
    if item.key:
        by_key = _group(entry, "by_key")
        found.append(by_key.get(normalize_key(item.key), []))
        concept = key_concept(normalize_key(item.key)) if item.source is Source.AUTO else None
        if concept is not None:
            same = _group(entry, "by_concept").get(concept, [])
            found.append(same)
            keys = {normalize_key(fact.key) for _, fact in same if fact.key}
            found.extend(by_key.get(key, []) for key in keys)
    else:
        form = same_form(item.value or item.content)
        found.append(_group(entry, "by_form").get(form, []))
    seen: set[int] = set()
    out: list[MemoryItem] = []
    for n, fact in heapq.merge(*found, key=lambda pair: pair[0]):
        if n not in seen:
            seen.add(n)
            out.append(fact)
    return out
