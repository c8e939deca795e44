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
"""

from __future__ import annotations

from collections.abc import Iterable

from kronika.stores.markdown.brain import ARCHIVE, BRAIN, FACT_FILES, FactsFile
from kronika.stores.markdown.lines import ParsedItems


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
