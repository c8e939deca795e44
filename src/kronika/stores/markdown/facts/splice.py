"""The parse of a fact file after a few of its lines were replaced, without parsing
the whole file again.

Every remembered fact rewrites ``brain.md``; parsing the whole Brain after each
write (every bullet's metadata decoded again) cost more than the write. The same holds
when another writer changed the file (another worker of a server, or an editor): its
new text is spliced from the parse kronika kept of the old one. The parse of
the new text is the old parse with the replaced lines' items taken out, the items of
the new lines (parsed alone, under the heading they stand in) put in, and the items
below moved by the change in line count. That equals a full parse only when no item's
reading depends on the rest of the file, so :func:`splice` gives up (``None``: parse
the file whole) when it might: a fact written by hand (its id counts equal texts
before it, its time is the file's), a fact timed like its file, a file with warnings,
an edit that cuts a bullet or that an indented line below could continue, a new line
holding the id of a bullet outside the edit (a full parse warns of it). An edit that
only turned whole bullets into marks, line for line (a forget), takes their items out
wherever they are, without parsing the lines between them. A property test
(``tests/property/test_fact_splice.py``) checks on random edits that a splice is the
full parse whenever it does not give up.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from kronika.core.model import MemoryItem
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.lines import ParsedItems, bare

_HEADING = "## "
HAND_PREFIX = "h-"


def section_at(lines: Sequence[str], at: int) -> str | None:
    """The level-2 heading text (as written) the line ``at`` stands under, if any."""
    for line in reversed(lines[:at]):
        if line[:1] != "#":  # not a heading: most lines, passed over cheaply
            continue
        text = bare(line)
        if text.startswith("# "):
            return None
        if text.startswith(_HEADING):
            return text[len(_HEADING) :].strip()
    return None


class Spliced(NamedTuple):
    """A splice (:func:`splice_change`): the new parse, the old parse's items of the
    lines replaced (``gone``), the new lines' items (``added``), whether the items
    below moved (``shifted``: the edit changed the number of lines), and where."""

    parsed: ParsedItems
    gone: tuple[MemoryItem, ...]
    added: tuple[MemoryItem, ...]
    shifted: bool
    region: tuple[int, int, int]
    """``(start, end, stop)``: the lines ``start`` to ``end`` of the old text were
    replaced by the lines ``start`` to ``stop`` of the new."""


def splice(
    parsed: ParsedItems,
    old: Sequence[str],
    new: Sequence[str],
    *,
    spec: brain.FactsFile,
    agent: str,
    tenant: str,
    mtimes: tuple[datetime, datetime],
) -> ParsedItems | None:
    """The parse of the lines ``new``, given that the lines ``old`` parse as ``parsed``
    and that kronika made ``new`` from ``old``; ``None`` when only a full parse can say
    (see the module docstring). The lines between the common start and the common end
    of the two are parsed alone. ``mtimes`` are the modification times (whole
    seconds) of the file before and after: a fact without a time of its own takes it."""
    found = splice_change(parsed, old, new, spec=spec, agent=agent, tenant=tenant, mtimes=mtimes)
    return None if found is None else found.parsed


def splice_change(
    parsed: ParsedItems,
    old: Sequence[str],
    new: Sequence[str],
    *,
    spec: brain.FactsFile,
    agent: str,
    tenant: str,
    mtimes: tuple[datetime, datetime],
    borrowed: bool | None = None,
) -> Spliced | None:
    """:func:`splice`, with what changed. Its cost grows with the lines replaced, not
    with the file: the common start and end are found by comparing runs of lines at
    once, the items around the edit by bisection (``parsed.items`` are in file order),
    and the items above and below it (when no line moved) are taken over as they are.
    ``borrowed``: whether an item of ``parsed`` may take its reading from the rest of
    the file (:func:`~kronika.stores.markdown.facts.lookup.borrows`), when the caller
    knows; else each item is looked at."""
    then, now = mtimes
    if parsed.warnings:
        return None
    if borrowed is None:
        borrowed = any(_borrowed(item, then) for item in parsed.items)
    if borrowed:
        return None
    start = common_start(old, new)
    end, stop = common_end(old, new, start)
    if end == stop and start < end:
        marked = _marked_out(parsed, old, new, start, end)
        if marked is not None:
            return marked
    added = new[start:stop]
    if any(not line.endswith("\n") for line in (*old[max(0, start - 1) : end], *added)):
        return None
    following = new[stop] if stop < len(new) else ""
    if following[:1] in {" ", "\t"} or (added and added[0][:1] in {" ", "\t"}):
        return None  # a bullet could continue across the edge of the edit
    if stop < len(new) and any(line.startswith("#") for line in (*old[start:end], *added)):
        return None  # a heading added or taken away moves the lines below it
    heading = section_at(old, start)
    lead = [f"{_HEADING}{heading}\n"] if heading is not None else []
    alone = brain.parse_facts(
        "".join((*lead, *added)), spec=spec, agent=agent, tenant=tenant, mtime=now
    )
    if alone.warnings or any(_borrowed(item, now) for item in alone.items):
        return None
    shift = len(added) - (end - start)
    offset = start - len(lead)
    items, spans = parsed.items, parsed.spans
    # the items wholly above the edit, then those it replaced (none may cross its edges)
    above = bisect.bisect_right(items, start, key=lambda item: spans[item.id][1])
    below = above
    while below < len(items):
        first, last = spans[items[below].id]
        if first >= end:
            break
        if first < start or last > end:
            return None  # the edit cuts this bullet
        below += 1
    gone = items[above:below]
    fresh = dict(spans)
    for item in gone:
        del fresh[item.id]
    put: list[MemoryItem] = []
    for item in alone.items:
        if item.id in fresh:
            return None  # a new line holds the id of a bullet outside the edit
        first, last = alone.spans[item.id]
        fresh[item.id] = (first + offset, last + offset)
        put.append(brain.with_line(item, spec.path, first + offset))
    rest = items[below:]
    if shift:
        moved: list[MemoryItem] = []
        for item in rest:
            first, last = spans[item.id]
            fresh[item.id] = (first + shift, last + shift)
            moved.append(brain.with_line(item, spec.path, first + shift))
        rest = tuple(moved)
    return Spliced(
        ParsedItems((*items[:above], *put, *rest), fresh),
        gone,
        tuple(put),
        shift != 0,
        (start, end, stop),
    )


def _marked_out(
    parsed: ParsedItems, old: Sequence[str], new: Sequence[str], start: int, end: int
) -> Spliced | None:
    """The splice of an edit that only turned whole bullets into marks
    (:func:`~kronika.stores.markdown.facts.brain.moved_out`), line for line, between
    the lines ``start`` and ``end`` where ``old`` and ``new`` differ: the old parse
    without those bullets' items, every other item and span as it was. Facts forgotten
    all over a long file (a key's values in the history) are taken out without parsing
    the lines between them. ``None`` when the edit did anything else."""
    changed = [n for n in range(start, end) if new[n] is not old[n] and new[n] != old[n]]
    if not all(brain.is_moved_out(new[n]) and not brain.is_moved_out(old[n]) for n in changed):
        return None
    items, spans = parsed.items, parsed.spans
    at = bisect.bisect_right(items, start, key=lambda item: spans[item.id][1])
    gone: list[MemoryItem] = []
    marks = set(changed)
    for item in items[at:]:
        first, last = spans[item.id]
        if first >= end:
            break
        hit = sum(1 for n in range(first, last) if n in marks)
        if hit == last - first:
            gone.append(item)
        elif hit:
            return None  # a mark over part of a bullet
    if sum(spans[item.id][1] - spans[item.id][0] for item in gone) != len(changed):
        return None  # a mark over a line of no bullet
    ids = {item.id for item in gone}
    left = tuple(item for item in items if item.id not in ids)
    fresh = {item_id: span for item_id, span in spans.items() if item_id not in ids}
    return Spliced(ParsedItems(left, fresh), tuple(gone), (), False, (start, end, end))


_RUN = 64
"""The lines compared at once first when looking for where two texts part."""


def common_start(old: Sequence[str], new: Sequence[str]) -> int:
    """How many lines ``old`` and ``new`` begin with alike: runs of lines compared at
    once (a list comparison), doubling while they agree, then halved within the run
    that does not."""
    limit, start, step = min(len(old), len(new)), 0, _RUN
    while start < limit:
        n = min(step, limit - start)
        if old[start : start + n] != new[start : start + n]:
            break
        start, step = start + n, step * 2
    else:
        return start
    low, high = start, start + n  # alike before low; a difference before high
    while high - low > 1:
        middle = (low + high) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle
    return low


def common_end(old: Sequence[str], new: Sequence[str], start: int) -> tuple[int, int]:
    """Where the lines ``old`` and ``new`` end alike (after ``start``): the first line
    of that common end in each."""
    end, stop, step = len(old), len(new), _RUN
    while True:
        room = min(end, stop) - start
        if room <= 0:
            return end, stop
        n = min(step, room)
        if old[end - n : end] != new[stop - n : stop]:
            break
        end, stop, step = end - n, stop - n, step * 2
    low, high = 0, n  # the last low lines alike; the last high not
    while high - low > 1:
        middle = (low + high) // 2
        if old[end - middle : end] == new[stop - middle : stop]:
            low = middle
        else:
            high = middle
    return end - low, stop - low


def _borrowed(item: MemoryItem, mtime: datetime) -> bool:
    """Whether ``item``'s reading may depend on the rest of its file: written by hand,
    or timed like the file (maybe from it)."""
    return item.id.startswith(HAND_PREFIX) or item.created_at == mtime
