"""Line-level view of a Markdown file, the basis of exact round trips.

A file is kept as its list of lines (each with its own ``\\n``, the last one maybe
without). Parsers report which lines each item occupies; edits replace exactly those
lines, so ``"".join(lines)`` of an untouched file is the file byte for byte and an
edit changes only the lines it touches.

Blocks recognised by :func:`scan_blocks`:

* heading — ``#``…``######`` then a space; a level-2 heading opens a section;
* bullet — ``-``, ``*`` or ``+`` then a space at column 0, plus its continuation lines
  (indented lines right below it; whitespace-only lines count only when indented
  content follows them, an empty line ends the bullet);
* paragraph — consecutive non-empty lines that are neither headings nor bullets;
* blank — an empty or whitespace-only line outside a bullet.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum

from kronika.core.model import MemoryItem

_HEADING_RE = re.compile(r"^(?P<marks>#{1,6})[ \t]+(?P<text>.*?)[ \t]*$")
_BULLET_RE = re.compile(r"^[-*+][ \t](?P<text>.*)$")
CONTINUATION_INDENT = "  "


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping line ends (unlike ``str.splitlines``, which also
    splits on form feeds and Unicode separators that editors show inside a line)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def bare(line: str) -> str:
    """The line without its line end (``\\n`` or ``\\r\\n``)."""
    return line.rstrip("\r\n")


def normalize_text(text: str) -> str:
    """Whitespace-collapsed text, the form hashed into deterministic ids."""
    return " ".join(text.split())


class BlockKind(StrEnum):
    HEADING = "heading"
    BULLET = "bullet"
    PARAGRAPH = "paragraph"
    BLANK = "blank"


@dataclass(frozen=True, slots=True)
class Block:
    """Lines ``[start, end)`` (0-based) of one block.

    ``first`` is the first line's text (after the bullet marker for bullets, the
    heading text for headings), ``rest`` the following lines (continuations
    dedented by up to two spaces or one tab), ``section`` the text of the enclosing
    level-2 heading as written (``None`` before the first one).
    """

    kind: BlockKind
    start: int
    end: int
    first: str
    rest: tuple[str, ...]
    section: str | None
    level: int = 0


def _dedent(line: str) -> str:
    if line.startswith(CONTINUATION_INDENT):
        return line[len(CONTINUATION_INDENT) :]
    return line[1:] if line[:1] in {" ", "\t"} else line


def scan_blocks(lines: list[str], start: int = 0) -> Iterator[Block]:
    """Yield the blocks of ``lines[start:]`` in file order."""
    section: str | None = None
    i, n = start, len(lines)
    while i < n:
        text = bare(lines[i])
        heading = _HEADING_RE.match(text)
        bullet = _BULLET_RE.match(text)
        if heading:
            level = len(heading.group("marks"))
            if level <= 2:
                section = heading.group("text") if level == 2 else None
            yield Block(BlockKind.HEADING, i, i + 1, heading.group("text"), (), section, level)
            i += 1
        elif bullet:
            last, j = i, i + 1
            while j < n and lines[j][:1] in {" ", "\t"}:
                if bare(lines[j]).strip():
                    last = j
                elif not _indented_follows(lines, j):
                    break
                j += 1
            rest = tuple(_dedent(bare(line)) for line in lines[i + 1 : last + 1])
            yield Block(BlockKind.BULLET, i, last + 1, bullet.group("text"), rest, section)
            i = last + 1
        elif not text.strip():
            yield Block(BlockKind.BLANK, i, i + 1, "", (), section)
            i += 1
        else:
            j = i + 1
            while j < n:
                nxt = bare(lines[j])
                if not nxt.strip() or _HEADING_RE.match(nxt) or _BULLET_RE.match(nxt):
                    break
                j += 1
            rest = tuple(bare(line) for line in lines[i + 1 : j])
            yield Block(BlockKind.PARAGRAPH, i, j, text, rest, section)
            i = j


def _indented_follows(lines: list[str], j: int) -> bool:
    """Whether indented content follows the whitespace-only run starting at ``j``."""
    while j < len(lines) and lines[j][:1] in {" ", "\t"}:
        if bare(lines[j]).strip():
            return True
        j += 1
    return False


def section_insert_point(lines: list[str], matches: set[str]) -> int | None:
    """Index at which a new bullet goes at the end of a level-2 section.

    ``matches`` holds the casefolded heading texts that count as the section. The
    point is after the section's last non-blank line, so blank lines before the next
    heading stay; ``None`` when no such section exists.

    Read line by line, not block by block (:func:`scan_blocks`): a heading is a line
    of its own wherever it stands (a bullet's continuation is indented, a paragraph
    ends before a heading), and the last line of every block but a blank one is the
    last line of it that is not blank, so the section ends at its last non-blank
    line before the next heading of level 1 or 2.
    """
    found: int | None = None
    last: int | None = None
    for i, line in enumerate(lines):
        if line[:1] == "#":
            heading = _HEADING_RE.match(bare(line))
            if heading is not None and len(heading.group("marks")) <= 2:
                if found is not None:
                    break
                level, text = len(heading.group("marks")), heading.group("text")
                if level == 2 and text.casefold() in matches:
                    found = last = i
                continue
        if found is not None and line.strip():
            last = i
    return None if last is None else last + 1


def insert_lines(lines: list[str], at: int, new: list[str]) -> list[str]:
    """``lines`` with ``new`` inserted before index ``at`` (a missing final newline
    on the preceding line is added first, so the insert starts on its own line)."""
    out = list(lines)
    if at > 0 and not out[at - 1].endswith("\n"):
        out[at - 1] += "\n"
    return out[:at] + new + out[at:]


def append_section(lines: list[str], heading: str, new: list[str]) -> tuple[list[str], int]:
    """Add ``## heading`` and ``new`` at the end; returns lines and where ``new`` starts."""
    out = list(lines)
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    if out and bare(out[-1]).strip():
        out.append("\n")
    out.append(f"## {heading}\n")
    return out + new, len(out)


def hashed_id(prefix: str, *parts: str) -> str:
    """``prefix-`` + the first 12 hex digits of sha256 over ``|``-joined ``parts``.

    Used for items written by hand (no ``id=`` metadata) so that parsing the same
    file twice gives the same ids.
    """
    digest = hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:12]}"


@dataclass(frozen=True, slots=True)
class ParsedItems:
    """What a pure parser returns: items in file order, the 0-based line span
    ``[start, end)`` of each item id, and human-readable warnings; ``damage`` are the
    warnings that say the file was damaged (a torn line), not merely unusual."""

    items: tuple[MemoryItem, ...]
    spans: Mapping[str, tuple[int, int]]
    warnings: tuple[str, ...] = ()
    damage: tuple[str, ...] = ()

    def span(self, item_id: str) -> tuple[int, int] | None:
        return self.spans.get(item_id)
