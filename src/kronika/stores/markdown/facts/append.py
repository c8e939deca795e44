"""Appending facts to ``brain_archive.md`` or ``history.md`` in place.

Both files only grow while kronika runs (facts the Brain lets go of, values a newer
one replaced), so new bullets are written after the file's last byte instead of the
whole file being rewritten, whose cost would grow with every fact stored. The file
is append-only: a fact goes at its end, under a new ``## Section`` heading when the
last section of the file is not its own (a section may then appear more than once;
it reads the same). The write is one ``os.write`` then ``fsync``. A crash in the
middle leaves whole bullets and maybe the start of one: the facts are still in the
Brain, which is rewritten after the archive, so a bullet that made it reads as the
leftover of an interrupted move, and the cut-off start of one (no line end, maybe no
metadata comment) as a *torn tail* (:mod:`~kronika.stores.markdown.facts.moves`): never a
fact, and cut off (a copy of the file kept in ``.corrupt/``) before the next append.

The kept parse of the file (:mod:`~kronika.stores.markdown.facts.cache`) is extended by
the parse of the appended lines alone, and its hash by the appended bytes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from kronika.core.model import BrainSection, MemoryItem
from kronika.errors import WorkspaceError
from kronika.stores import batch
from kronika.stores.durable import sync_file
from kronika.stores.markdown.atomic import stamp_own_write
from kronika.stores.markdown.facts import brain, lookup
from kronika.stores.markdown.facts.cache import KEPT_APPENDS, FactParse, Stat, file_stat
from kronika.stores.markdown.facts.reads import FactReads
from kronika.stores.markdown.facts.splice import section_at
from kronika.stores.markdown.files import CONTROL
from kronika.stores.markdown.lines import ParsedItems, bare, split_lines

_HEADING = "## "


def _last_section(lines: list[str]) -> str | None:
    """The canonical section of the file's end: its last level-1 or level-2 heading."""
    heading = section_at(lines, len(lines))
    return None if heading is None else brain.canonical_section(heading)


def append_facts(
    reads: FactReads,
    agent: str,
    spec: brain.FactsFile,
    items: Sequence[MemoryItem],
    *,
    cut_torn_tail: Callable[[str, brain.FactsFile], bool],
) -> list[MemoryItem] | None:
    """Append ``items`` to ``spec``'s file in place and extend its kept parse; ``None``
    (nothing written) when the file must be rewritten whole instead: missing, damaged,
    not ending in a line end, or already holding one of the ids. A batch holding the
    Brain has written it first (:meth:`~.write.FactWriter.release_brain`): the facts
    moved now must be in the Brain on disk before they reach their destination
    (:mod:`.moves`); a torn tail is cut off by ``cut_torn_tail``."""
    entry = reads.kept(agent, spec.path)
    if entry is not None and entry.lines and not entry.lines[-1].endswith("\n"):
        if not cut_torn_tail(agent, spec):
            return None
        entry = reads.kept(agent, spec.path)
    if entry is None or entry.read_warnings or entry.parsed.damage or not entry.lines:
        return None
    if not entry.lines[-1].endswith("\n"):
        return None
    held = lookup.ids(entry)
    if any(item.id in held for item in items):
        return None
    section = file_tail(entry)
    new: list[str] = []
    for item in items:
        wanted = brain.canonical_section(item.section or BrainSection.USER.value)
        if wanted != section:
            if new or bare(entry.lines[-1]).strip():
                new.append("\n")
            new.append(f"{_HEADING}{wanted}\n")
            section = wanted
        new.extend(brain.render_fact(item))
    data = "".join(new).encode("utf-8")
    folder = reads.files.agent_dir(agent)
    file = folder / spec.path
    began = time.time_ns()
    try:
        if file_stat(os.stat(file)) != entry.stat:
            return None  # changed since it was read: rewritten whole, from its bytes
        batch.keep(file)  # inside a batch: how to put the file back, first
        # the journal's hard link to the file changes its change time, nothing else
        kept = file_stat(os.stat(file))
        fd = os.open(file, os.O_WRONLY | os.O_APPEND)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {file}: {exc}") from exc
    try:
        if file_stat(os.fstat(fd)) != kept or kept[:3] != entry.stat[:3]:
            return None  # changed since it was read: rewritten whole, from its bytes
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        stamp = stamp_own_write(fd)
        unsynced = reads.state.holding.get(os.fspath(folder))  # a batch's own files
        if unsynced is None:
            sync_file(fd)
        else:  # synced when the batch ends, before the Brain is written
            unsynced.add(spec.path)
        stat = file_stat(os.fstat(fd))
    except OSError as exc:
        raise WorkspaceError(f"cannot write {file}: {exc}") from exc
    finally:
        os.close(fd)
    own = stamp == stat[2] and stat[1] == entry.stat[1] + len(data)
    added = extend_parse(reads, agent, spec, entry, new, data, stat, began, tail=section, own=own)
    return [replace(it, status=spec.status) for it in added]


def extend_parse(
    reads: FactReads,
    agent: str,
    spec: brain.FactsFile,
    entry: FactParse,
    new: list[str],
    data: bytes,
    stat: Stat,
    began: int,
    *,
    tail: str | None,
    own: bool,
) -> list[MemoryItem]:
    """Extend the kept parse ``entry`` of ``spec``'s file by ``new`` (its lines,
    ``data`` their bytes) now written after its end, the file's status then being
    ``stat`` (known at ``began``): the appended lines are parsed alone, under the
    heading they continue, and its hash extended by their bytes. ``tail`` is the
    section the file now ends in; ``own``: the status holds kronika's own stamp.
    Returns the items added, as the file's parse has them."""
    first_line = len(entry.lines)
    first_item = len(entry.parsed.items)
    # the appended lines parsed alone, under the heading they continue
    continues = not new[0].startswith(_HEADING) and new[0] != "\n"
    # kept with the parse: looked for from the end, it costs the whole of a long file
    heading: str = entry.derive("lead", lambda: _lead_section(entry.lines))
    lead = [f"{_HEADING}{heading}\n"] if continues else []
    parsed = brain.parse_facts(
        "".join(lead + new),
        spec=spec,
        agent=agent,
        tenant=reads.state.tenant_of(agent),
        mtime=entry.mtime,
    )
    shift = first_line - len(lead)
    added = [
        brain.with_line(it, spec.path, (it.provenance.line or 1) - 1 + shift) for it in parsed.items
    ]
    # the kept parse owns its spans: extended in place, not copied (the file may be long)
    spans = entry.parsed.spans
    if not isinstance(spans, dict):
        spans = dict(spans)
    spans.update({i: (a + shift, b + shift) for i, (a, b) in parsed.spans.items()})
    before = entry.content_hash
    entry.digest.update(data)
    joined = "".join(new)
    entry.lines.extend(split_lines(joined))
    entry.clean = entry.clean and CONTROL.search(joined) is None
    if "marks" in entry.derived:
        entry.derived["marks"] += brain.moved_out_lines(new)
    entry.parsed = ParsedItems((*entry.parsed.items, *added), spans, entry.parsed.warnings)
    entry.own = own
    entry.stat = stat
    entry.checked_ns = began
    entry.derived["tail"] = tail
    headings = [line[len(_HEADING) :].strip() for line in new if line.startswith(_HEADING)]
    entry.derived["lead"] = headings[-1] if headings else heading
    lookup.extend(entry, first_item, added)
    entry.appends.append((before, tuple(added)))
    del entry.appends[:-KEPT_APPENDS]
    return added


def file_tail(entry: FactParse) -> str | None:
    """The canonical section the file of ``entry`` ends in (kept with its parse)."""
    found: str | None = entry.derive("tail", lambda: _last_section(entry.lines))
    return found


def last_section(lines: list[str], before: str | None) -> str | None:
    """The canonical section a file ends in once ``lines`` follow its end, where it
    ended in ``before``."""
    if any(line[:1] == "#" for line in lines):
        return _last_section(lines)
    return before


def _lead_section(lines: list[str]) -> str:
    """The heading text of the section the file ends in (as written)."""
    for line in reversed(lines):
        if line[:1] != "#":
            continue
        text = bare(line)
        if text.startswith(_HEADING):
            return text[len(_HEADING) :].strip()
    return BrainSection.USER.value
