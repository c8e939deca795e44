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
holding the id of a bullet outside the edit (a full parse warns of it). A property test
(``tests/property/test_fact_splice.py``) checks on random edits that a splice is the
full parse whenever it does not give up.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

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
    then, now = mtimes
    if parsed.warnings or any(_borrowed(item, then) for item in parsed.items):
        return None
    start, limit = 0, min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end, stop = len(old), len(new)
    while end > start and stop > start and old[end - 1] == new[stop - 1]:
        end, stop = end - 1, stop - 1
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
    items: list[MemoryItem] = []
    spans: dict[str, tuple[int, int]] = {}
    placed = False
    for item in parsed.items:
        first, last = parsed.spans[item.id]
        if last <= start:
            items.append(item)
            spans[item.id] = (first, last)
            continue
        if first < end:
            if start <= first and last <= end:
                continue  # among the lines replaced
            return None  # the edit cuts this bullet
        if not placed:
            placed = _add(alone, offset, spec.path, items, spans)
            if not placed:
                return None
        spans[item.id] = (first + shift, last + shift)
        items.append(item if shift == 0 else brain.with_line(item, spec.path, first + shift))
    if not placed and not _add(alone, offset, spec.path, items, spans):
        return None
    if len(spans) != len(items):
        return None  # a new line holds the id of a bullet outside the edit: a full parse warns
    return ParsedItems(tuple(items), spans)


def _borrowed(item: MemoryItem, mtime: datetime) -> bool:
    """Whether ``item``'s reading may depend on the rest of its file: written by hand,
    or timed like the file (maybe from it)."""
    return item.id.startswith(HAND_PREFIX) or item.created_at == mtime


def _add(
    alone: ParsedItems,
    offset: int,
    path: str,
    items: list[MemoryItem],
    spans: dict[str, tuple[int, int]],
) -> bool:
    """Put the new lines' items in (False when one's id is already there)."""
    for item in alone.items:
        if item.id in spans:
            return False
        first, last = alone.spans[item.id]
        spans[item.id] = (first + offset, last + offset)
        items.append(brain.with_line(item, path, first + offset))
    return True
