"""Finding forgotten words in written text and replacing them with a visible marker.

A *phrase* (a forgotten value, or the sentence it came from) matches wherever its words
appear in the same order, case-insensitively, with any run of whitespace (line breaks
included) between them, and never inside a longer word: forgetting ``tea`` redacts
"Tea" and "tea," but not "steak" or "teapot". Phrases shorter than
:data:`MIN_PHRASE_CHARS` are not looked for (two letters match too much unrelated text).

In a Markdown document the structure is kept: frontmatter field names, turn headers
(``### [id] speaker · time``) and metadata comments (``<!-- … -->``) are never changed;
only the text between them is.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass

MARKER = "[forgotten]"
MIN_PHRASE_CHARS = 3

_TURN_HEADER = re.compile(r"^### \[[^\]]+\] ")
_FIELD = re.compile(r"^(?P<name>[A-Za-z_][\w-]*:[ \t]*)(?P<value>.*)$", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->")


def phrase_pattern(phrases: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for every phrase (longest first, so a sentence wins over a word in
    it); ``None`` when no phrase is long enough to look for.

    A phrase of words w1 … wn becomes ``w1\\s+w2 … \\s+wn`` (each word escaped), fenced by
    ``(?<!\\w)`` / ``(?!\\w)`` where it starts or ends with a word character.
    """
    wanted = {" ".join(p.split()) for p in phrases}
    wanted = {p for p in wanted if len(p) >= MIN_PHRASE_CHARS and p != MARKER}
    if not wanted:
        return None
    parts = []
    for phrase in sorted(wanted, key=lambda p: (-len(p), p)):
        body = r"\s+".join(re.escape(w) for w in phrase.split())
        head = r"(?<!\w)" if re.match(r"\w", phrase) else ""
        tail = r"(?!\w)" if re.search(r"\w$", phrase) else ""
        parts.append(f"{head}{body}{tail}")
    return re.compile("|".join(parts), re.IGNORECASE)


def redact(text: str, pattern: re.Pattern[str]) -> tuple[str, int]:
    """``text`` with every match replaced by :data:`MARKER`, and how many there were."""
    return pattern.subn(MARKER, text)


def mentions(text: str, pattern: re.Pattern[str]) -> bool:
    return pattern.search(text) is not None


@dataclass(frozen=True, slots=True)
class Redacted:
    """A redacted document: its new text, how many matches were replaced and how many of
    its original lines they touched."""

    text: str
    matches: int
    lines: int


def redact_document(text: str, pattern: re.Pattern[str]) -> Redacted:
    """Redact a Markdown document, keeping its frontmatter names, turn headers and
    metadata comments (see the module docstring)."""
    lines = text.split("\n")
    kept: list[str] = []
    block: list[str] = []
    matches = touched = 0

    def flush() -> None:
        nonlocal matches, touched
        if block:
            new, found, hit = _redact_block("\n".join(block), pattern)
            kept.extend(new.split("\n"))
            matches += found
            touched += hit
            block.clear()

    closing = [n for n, line in enumerate(lines) if n and line.rstrip("\r") == "---"]
    header_end = closing[0] if lines and lines[0].rstrip("\r") == "---" and closing else 0
    for number, line in enumerate(lines):
        if number <= header_end and header_end > 0:  # the frontmatter: values only
            if number == header_end:
                kept.append(line)
                continue
            field = _FIELD.match(line)
            if number == 0:
                kept.append(line)
                continue
            name, value = (field["name"], field["value"]) if field else ("", line)
            value, found, hit = _redact_block(value, pattern)
            kept.append(name + value)
            matches += found
            touched += hit
            continue
        if _TURN_HEADER.match(line):
            flush()
            kept.append(line)
            continue
        block.append(line)
    flush()
    return Redacted("\n".join(kept), matches, touched)


def _redact_block(text: str, pattern: re.Pattern[str]) -> tuple[str, int, int]:
    """Redact ``text`` outside its ``<!-- … -->`` comments: (new text, matches, lines hit)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    hit: set[int] = set()
    found = 0
    out: list[str] = []
    at = 0
    for piece_start, piece_end, is_comment in _pieces(text):
        if is_comment:
            out.append(text[piece_start:piece_end])
            at = piece_end
            continue
        for m in pattern.finditer(text, piece_start, piece_end):
            found += 1
            first = bisect.bisect_right(starts, m.start()) - 1
            last = bisect.bisect_right(starts, max(m.start(), m.end() - 1)) - 1
            hit.update(range(first, last + 1))
            out.append(text[at : m.start()])
            out.append(MARKER)
            at = m.end()
        out.append(text[at:piece_end])
        at = piece_end
    if not found:
        return text, 0, 0
    return "".join(out), found, len(hit)


def _pieces(text: str) -> list[tuple[int, int, bool]]:
    """``text`` cut into (start, end, is_comment) runs."""
    pieces: list[tuple[int, int, bool]] = []
    at = 0
    for m in _COMMENT.finditer(text):
        if m.start() > at:
            pieces.append((at, m.start(), False))
        pieces.append((m.start(), m.end(), True))
        at = m.end()
    if at < len(text) or not pieces:
        pieces.append((at, len(text), False))
    return pieces
