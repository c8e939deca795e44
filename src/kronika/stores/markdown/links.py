"""Links between items, kept in ``<agent>/links.md`` (the store of record's local form).

One link a line, readable and editable by hand::

    - t-3f2a9c -[reflection]-> r-91bc0d <!-- created=2026-11-22T09:00:00Z -->
    - r-91bc0d -[strategy]-> s-77aa01 <!-- created=2026-11-22T09:05:00Z -->
    - f-0a1b2c <-[related]-> f-9d8e7f <!-- created=2026-11-22T09:10:00Z -->

The file holds item ids only, never an item's text, so forgetting an item needs no
redaction here: its links are removed (:meth:`MarkdownLinks.remove_links`). A line that
does not read as a link is kept as it is when the file is rewritten. The parsed file is
cached by its size and modification time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kronika.core.model import ItemLink, LinkKind
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.meta import format_time, parse_time
from kronika.stores.markdown.workspace import MarkdownWorkspace

LINKS_FILE = "links.md"
HEADER = (
    "# Links\n\n"
    "Links between this agent's memories, one a line: `- <from id> -[kind]-> <to id>`"
    " (`<-[related]->` for two items that belong together). Kinds: reflection (an event"
    " and the reflection drawn from it), strategy (an error or a reflection and the"
    " strategy that answers it), related.\n\n"
)
_LINE_RE = re.compile(
    r"^- (?P<from>\S+) (?P<both><?)-\[(?P<kind>[a-z]+)\]-> (?P<to>\S+)"
    r"(?: <!-- created=(?P<at>\S+) -->)?[ \t]*$"
)


def format_link(link: ItemLink) -> str:
    link = link.normalised()
    arrow = f"<-[{link.kind.value}]->" if link.kind is LinkKind.RELATED else f"-[{link.kind}]->"
    when = f" <!-- created={format_time(link.created_at)} -->" if link.created_at else ""
    return f"- {link.from_id} {arrow} {link.to_id}{when}"


def parse_link(line: str) -> ItemLink | None:
    """The link one line states, or ``None`` when it states none."""
    match = _LINE_RE.match(line.rstrip("\r\n"))
    if match is None:
        return None
    try:
        kind = LinkKind(match["kind"])
        at = parse_time(match["at"]) if match["at"] else None
    except ValueError:
        return None
    if (kind is LinkKind.RELATED) != bool(match["both"]):
        return None
    return ItemLink(match["from"], match["to"], kind, at).normalised()


@dataclass(frozen=True, slots=True)
class _Parsed:
    mark: tuple[int, int]
    lines: tuple[str, ...]
    links: tuple[ItemLink | None, ...]


class MarkdownLinks:
    """:class:`kronika.ports.LinkStore` over each agent's ``links.md``.

    Callers hold the workspace lock while they write (as for every other file)."""

    def __init__(self, workspace: MarkdownWorkspace) -> None:
        self._workspace = workspace
        self._cache: dict[Path, _Parsed] = {}

    def _path(self, agent: str) -> Path:
        return self._workspace.require_agent(agent) / LINKS_FILE

    def _read(self, path: Path) -> _Parsed:
        try:
            stat = path.stat()
        except FileNotFoundError:
            return _Parsed((-1, -1), (), ())
        mark = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached.mark == mark:
            return cached
        lines = tuple(path.read_text(encoding="utf-8", errors="replace").splitlines())
        parsed = _Parsed(mark, lines, tuple(parse_link(line) for line in lines))
        self._cache[path] = parsed
        return parsed

    def _write(self, path: Path, lines: Sequence[str]) -> None:
        atomic_write_text(path, "\n".join(lines) + "\n")
        self._cache.pop(path, None)

    def links(self, agent: str, item_id: str | None = None) -> list[ItemLink]:
        found = [link for link in self._read(self._path(agent)).links if link is not None]
        if item_id is not None:
            found = [link for link in found if link.touches(item_id)]
        seen: set[tuple[str, str, str]] = set()
        unique = []
        for link in found:  # a link written twice by hand counts once
            if link.identity not in seen:
                seen.add(link.identity)
                unique.append(link)
        return unique

    def add_links(self, agent: str, links: Sequence[ItemLink]) -> int:
        path = self._path(agent)
        parsed = self._read(path)
        known = {link.identity for link in parsed.links if link is not None}
        new: list[str] = []
        for link in links:
            if link.identity not in known:
                known.add(link.identity)
                new.append(format_link(link))
        if new:
            lines = list(parsed.lines) or HEADER.rstrip("\n").split("\n")
            self._write(path, [*lines, *new])
        return len(new)

    def remove_links(self, agent: str, item_ids: Iterable[str]) -> int:
        gone = set(item_ids)
        path = self._path(agent)
        parsed = self._read(path)
        kept = [
            line
            for line, link in zip(parsed.lines, parsed.links, strict=True)
            if link is None or not (link.from_id in gone or link.to_id in gone)
        ]
        removed = len(parsed.lines) - len(kept)
        if removed:
            self._write(path, kept)
        return removed
