"""How a fact moves between ``brain.md``, ``brain_archive.md`` and ``history.md``,
and how a move that a crash cut in half is read.

A keyed update moves the old value from the Brain to ``history.md`` and puts the new
value on its line; archiving moves facts from the Brain to ``brain_archive.md``. Each
file is replaced atomically, but a move touches two files, so a process killed between
the two writes leaves the same fact id in both. Moves therefore always write the
destination first and the Brain second, and the files are read by one rule:

    a fact id belongs to the first file that holds it, in the order
    ``brain.md`` → ``brain_archive.md`` → ``history.md``;

any later copy is the leftover of an interrupted move and is not a fact. A crash
between the two writes thus reads exactly as if the move had not started (the old
value is still the one current value), and a crash after the second write reads as the
finished move. The leftover lines are deleted at the next fact write (under the
workspace lock), or replaced when the same fact is moved again.

The archive and the history are appended to in place
(:mod:`~kronika.stores.markdown.facts.append`), and a process killed inside an append may
leave the start of a bullet without its line end, maybe without its metadata comment.
Such a *torn tail* is the start of a line the Brain (a file ahead) still holds, since
the Brain is rewritten after the append: an unterminated last line whose fact a file
ahead holds, or whose text begins a line of a file ahead, or that is a heading or
blank, is torn (:func:`torn_tail`). It is never read as a fact (without its comment it
would pass for one written by hand) and the next write cuts it off.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from kronika.stores.markdown.facts.brain import ARCHIVE, BRAIN, FACT_FILES, FactsFile
from kronika.stores.markdown.lines import ParsedItems, bare

HAND_PREFIX = "h-"


def files_ahead(spec: FactsFile) -> tuple[FactsFile, ...]:
    """The fact files whose copy of an id wins over ``spec``'s (none for the Brain)."""
    return FACT_FILES[: FACT_FILES.index(spec)]


def without_leftovers(spec: FactsFile, parsed: ParsedItems, ahead: frozenset[str]) -> ParsedItems:
    """``parsed`` (a fact file) without the facts whose id a file ahead of it holds,
    each reported in a warning."""
    if not ahead or not any(item.id in ahead for item in parsed.items):
        return parsed
    kept = tuple(item for item in parsed.items if item.id not in ahead)
    warnings = [
        f"{spec.path} line {parsed.spans[item.id][0] + 1}: {item.id} is still in "
        f"{_holder(spec)}; this copy, left by an interrupted update, is ignored and "
        "removed at the next write"
        for item in parsed.items
        if item.id in ahead
    ]
    spans = {item.id: parsed.spans[item.id] for item in kept}
    return ParsedItems(kept, spans, (*parsed.warnings, *warnings), parsed.damage)


def _holder(spec: FactsFile) -> str:
    return BRAIN.path if spec is ARCHIVE else f"{BRAIN.path} or {ARCHIVE.path}"


def drop_bullets(lines: list[str], parsed: ParsedItems, ids: Iterable[str]) -> list[str]:
    """``lines`` without the bullets of ``ids`` (ids ``parsed`` does not hold are skipped)."""
    spans = sorted((parsed.spans[i] for i in set(ids) if i in parsed.spans), reverse=True)
    out = list(lines)
    for start, end in spans:
        del out[start:end]
    return out


def torn_tail(
    lines: Sequence[str],
    parsed: ParsedItems,
    ahead: Collection[str],
    lines_ahead: Callable[[], Iterable[str]],
) -> str | None:
    """The id of the fact on the torn last line of an archive or history (``""`` when
    the torn line holds none), or ``None`` when the file does not end torn; ``ahead``
    holds the ids of the files ahead, ``lines_ahead()`` yields their lines."""
    if not lines or lines[-1].endswith("\n"):
        return None
    text = bare(lines[-1]).rstrip("\ufffd")  # a character cut in half reads as U+FFFD
    last = parsed.items[-1] if parsed.items else None
    span = parsed.spans[last.id] if last is not None else None
    if last is not None and span == (len(lines) - 1, len(lines)):
        if last.id in ahead:
            return last.id
        if last.id.startswith(HAND_PREFIX) and _begins_a_line(text, lines_ahead()):
            return last.id
        return None
    if span is not None and span[1] == len(lines):
        return None  # the last line continues a whole bullet
    if not text.strip() or text.startswith("#") or _begins_a_line(text, lines_ahead()):
        return ""
    return None


def without_torn_tail(spec: FactsFile, parsed: ParsedItems, torn: str | None) -> ParsedItems:
    """``parsed`` without the fact of a torn last line (:func:`torn_tail`), reported."""
    if not torn or torn not in parsed.spans:
        return parsed
    line = parsed.spans[torn][0] + 1
    kept = tuple(item for item in parsed.items if item.id != torn)
    spans = {item.id: parsed.spans[item.id] for item in kept}
    warning = (
        f"{spec.path} line {line}: the start of a fact cut off by a crash while it was "
        f"moved from {_holder(spec)}, which still holds it; ignored and removed at the next write"
    )
    return ParsedItems(kept, spans, (*parsed.warnings, warning), parsed.damage)


def _begins_a_line(text: str, lines: Iterable[str]) -> bool:
    return any(line.startswith(text) for line in lines)
