"""The reading side of the fact files (``workspace.fact_reads``): each file's parse,
kept while the file is unchanged (:mod:`.cache`) and spliced when another writer
changed a few lines (:mod:`.splice`); the facts of each file without the leftovers of
an interrupted move or a torn tail (:mod:`.moves`); the lookups a write asks for
(:mod:`.lookup`); and the parse of any indexed file, the fact files through their
kept parse."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Collection, Iterator, Sequence
from typing import NamedTuple

from kronika.core.model import MemoryItem
from kronika.errors import WorkspaceError
from kronika.stores.markdown.agentfiles import AgentFiles, ParsedSource, checked_path
from kronika.stores.markdown.facts import brain, lookup, moves, splice
from kronika.stores.markdown.facts.cache import FactParse, file_stat
from kronika.stores.markdown.files import SourceText, read_source
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.lines import ParsedItems, split_lines
from kronika.stores.markdown.state import WorkspaceState


class FactSplice(NamedTuple):
    """The one place where kronika's last rewrite changed the archive
    (:meth:`FactReads.spliced_facts`): ``cut`` characters of the text before, from
    character ``at``, became ``text``; the ids of the items of the text replaced
    (``gone``) and the items of ``text`` (``added``); the file's sha256, modification
    time and size now."""

    at: int
    cut: int
    text: str
    gone: tuple[str, ...]
    added: tuple[MemoryItem, ...]
    sha256: str
    mtime_ns: int
    size: int


class FactReads:
    """The fact files' parses and what is read from them (see the module docstring)."""

    def __init__(self, state: WorkspaceState, files: AgentFiles) -> None:
        self.state = state
        self.files = files

    def appended_facts(self, agent: str, path: str, content_hash: str) -> list[MemoryItem] | None:
        """The facts kronika appended to fact file ``path`` since its bytes hashed to
        ``content_hash``, when appends alone changed it (else ``None``); none of them
        a leftover of an interrupted move."""
        if classify(checked_path(path)) is not SourceKind.FACTS:
            return None
        folder = os.fspath(self.files.require_agent(agent))
        items = self.state.facts.appended_since(folder, path, content_hash)
        if not items:
            return items
        wanted = {item.id for item in items}
        for other in moves.files_ahead(spec_of(path)):
            if not self.ids(agent, other.path).isdisjoint(wanted):
                return None
        return items

    def rewritten_facts(
        self, agent: str, path: str, content_hash: str
    ) -> tuple[tuple[MemoryItem, ...], tuple[MemoryItem, ...]] | None:
        """``(items then, items now)`` of a fact file when kronika's own rewrites alone
        changed it since its bytes hashed to ``content_hash`` (else ``None``); none of
        the facts of the archive or the history a leftover of an interrupted move (held
        by a file before it too)."""
        specs = [spec.path for spec in brain.FACT_FILES]
        if path not in specs:
            return None
        folder = os.fspath(self.files.require_agent(agent))
        found = self.state.facts.rewritten_since(folder, path, content_hash)
        if found is None or path == brain.BRAIN.path:
            return found
        ids = self.ids(agent, path)
        if any(not self.ids(agent, ahead).isdisjoint(ids) for ahead in specs[: specs.index(path)]):
            return None
        return found

    def spliced_facts(self, agent: str, path: str, content_hash: str) -> FactSplice | None:
        """Where the archive changed since its bytes hashed to ``content_hash``, when one
        rewrite by kronika that moved no line did it (:attr:`FactParse.delta`); else
        ``None``. Its cost grows with the lines replaced and the lines above them (the
        characters they hold are counted), not with what the facts hold; ``None`` too
        when a fact of the archive is a leftover of an interrupted move, or its last
        line was cut short (its items then are not the parse's alone)."""
        if path != brain.ARCHIVE.path:
            return None
        folder = os.fspath(self.files.require_agent(agent))
        entry = self.state.facts.get(folder, path)
        if entry is None or not entry.whole_lines:
            return None
        delta = entry.delta
        if delta is None or (delta.before, delta.after) != (content_hash, entry.content_hash):
            return None
        if not self.ids(agent, brain.BRAIN.path).isdisjoint(lookup.ids(entry)):
            return None
        return FactSplice(
            sum(map(len, entry.lines[: delta.start])),
            delta.cut,
            "".join(entry.lines[delta.start : delta.stop]),
            tuple(item.id for item in delta.gone),
            delta.added,
            entry.content_hash,
            entry.stat[2],
            entry.stat[1],
        )

    def fact_file_hash(self, agent: str, path: str) -> str | None:
        """The sha256 of fact file ``path`` as its kept parse holds it (what
        :meth:`parse_source` would give as ``content_hash``), without resolving its
        items; ``None`` when it is no fact file or is missing."""
        if classify(checked_path(path)) is not SourceKind.FACTS:
            return None
        entry = self.kept(agent, path)
        return None if entry is None else entry.content_hash

    def parse_source(self, agent: str, path: str) -> ParsedSource:
        """Parse one indexed file; damage is reported in ``warnings``, never raised."""
        folder = self.files.require_agent(agent)
        if classify(checked_path(path)) is SourceKind.FACTS:
            entry = self.kept(agent, path)
            if entry is None:
                raise WorkspaceError(f"{agent}/{path} does not exist")
            resolved = self.resolved(agent, spec_of(path), entry.parsed, entry.lines)
            return ParsedSource(
                path,
                resolved.items,
                entry.content_hash,
                entry.read_warnings + resolved.warnings,
                resolved.damage,
            )
        read = read_source(folder, checked_path(path))
        if read is None:
            raise WorkspaceError(f"{agent}/{path} does not exist")
        parsed = self.files.parse(folder, agent, path, read)
        if classify(path) is SourceKind.FACTS:
            parsed = self.resolved(agent, spec_of(path), parsed, split_lines(read.text))
        self.state.notes.extend(read.warnings + parsed.damage)
        return ParsedSource(
            path,
            parsed.items,
            hashlib.sha256(read.raw).hexdigest(),
            read.warnings + parsed.warnings,
            parsed.damage,
        )

    def parsed(self, agent: str, path: str) -> tuple[list[str], ParsedItems]:
        if classify(path) is SourceKind.FACTS:
            entry = self.kept(agent, path)
            if entry is None:
                return [], ParsedItems((), {})
            return list(entry.lines), entry.parsed
        folder = self.files.require_agent(agent)
        read = read_source(folder, path)
        if read is None:
            return [], ParsedItems((), {})
        parsed = self.files.parse(folder, agent, path, read)
        self.state.notes.extend(read.warnings + parsed.damage)
        return split_lines(read.text), parsed

    def held(self, agent: str, path: str) -> tuple[Sequence[str], ParsedItems] | None:
        """The lines and parse of fact file ``path`` when a sound parse of it is kept and
        the file is unchanged since; ``None`` otherwise (nothing is read or parsed)."""
        entry = self.state.facts.get(os.fspath(self.files.require_agent(agent)), path)
        if entry is None or entry.read_warnings or entry.parsed.damage:
            return None
        return entry.lines, entry.parsed

    def kept(self, agent: str, path: str) -> FactParse | None:
        """The parse of fact file ``path`` (``None`` when it is missing): the kept one
        while the file is unchanged (:mod:`~kronika.stores.markdown.facts.cache`), else
        the file is read and parsed again. Damaged files are parsed at every read, as
        before, so their damage is reported and a copy kept each time it is met."""
        folder = self.files.require_agent(agent)
        key = os.fspath(folder)
        entry = self.state.facts.get(key, path)
        if entry is not None:
            return entry
        began = time.time_ns()
        try:
            before = file_stat(os.stat(folder / path))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise WorkspaceError(f"cannot read {folder / path}: {exc}") from exc
        read = read_source(folder, path)
        if read is None:
            return None
        lines = split_lines(read.text)
        parsed = self.spliced(agent, path, self.state.facts.outdated(key, path), read, lines)
        if parsed is None:
            parsed = self.files.parse(folder, agent, path, read)
        self.state.notes.extend(read.warnings + parsed.damage)
        try:
            after = file_stat(os.stat(folder / path))
        except OSError:
            after = None
        entry = FactParse(
            stat=after or before,
            checked_ns=began,
            lines=lines,
            parsed=parsed,
            digest=hashlib.sha256(read.raw),
            mtime=read.mtime,
            read_warnings=read.warnings,
            clean=not read.warnings,  # decoded without warnings: no control characters
        )
        if after == before and not read.warnings and not parsed.damage:
            self.state.facts.put(key, path, entry)
        return entry

    def spliced(
        self,
        agent: str,
        path: str,
        old: FactParse | None,
        read: SourceText,
        lines: list[str],
    ) -> ParsedItems | None:
        """The parse of fact file ``path`` as ``read`` (its ``lines``), spliced from
        ``old``, the parse of its content before another writer changed it (another
        worker of a server, say): only the lines that differ are parsed
        (:func:`splice.splice`). ``None`` when only a full parse can say: no earlier
        parse, either text damaged or unreadable, or a change the splice gives up on."""
        if old is None or old.pending is not None or old.read_warnings or old.parsed.damage:
            return None
        if read.warnings:
            return None
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        return splice.splice(
            old.parsed,
            old.lines,
            lines,
            spec=spec,
            agent=agent,
            tenant=self.state.tenant_of(agent),
            mtimes=(old.mtime, read.mtime),
        )

    def ids(self, agent: str, path: str) -> set[str]:
        entry = self.kept(agent, path)
        if entry is None:
            return set()
        return lookup.ids(entry)

    def brain_facts(self, agent: str) -> list[MemoryItem]:
        return list(self.parsed(agent, brain.BRAIN.path)[1].items)

    def archived_facts(self, agent: str) -> list[MemoryItem]:
        lines, parsed = self.parsed(agent, brain.ARCHIVE.path)
        return list(self.resolved(agent, brain.ARCHIVE, parsed, lines).items)

    def archived_facts_like(self, agent: str, item: MemoryItem) -> list[MemoryItem]:
        """The archived facts that the rules of :func:`kronika.core.dedup.place_fact` could
        pick for ``item``, in file order: those of its key, of its key's concept (an
        extracted keyed fact), or of its text (a fact without a key). Found in lookups
        kept with the archive's parse, so the cost does not grow with the archive."""
        entry = self.kept(agent, brain.ARCHIVE.path)
        if entry is None:
            return []
        brain_ids = self.ids(agent, brain.BRAIN.path)
        found = lookup.candidates(entry, item)
        return [fact for fact in found if fact.id not in brain_ids]

    def fact_history(self, agent: str) -> list[MemoryItem]:
        lines, parsed = self.parsed(agent, brain.HISTORY.path)
        return list(self.resolved(agent, brain.HISTORY, parsed, lines).items)

    def resolved(
        self, agent: str, spec: brain.FactsFile, parsed: ParsedItems, lines: Sequence[str]
    ) -> ParsedItems:
        """``parsed`` (of ``lines``) without the leftovers of an interrupted move and the
        start of a fact a crash cut off (see :mod:`kronika.stores.markdown.facts.moves`)."""
        if not parsed.items:
            return parsed
        ahead: set[str] = set()
        for other in moves.files_ahead(spec):
            ahead.update(held(self.ids(agent, other.path), parsed))
        torn = self.torn_tail(agent, spec, parsed, lines, ahead)
        return moves.without_leftovers(
            spec, moves.without_torn_tail(spec, parsed, torn), frozenset(ahead)
        )

    def torn_tail(
        self,
        agent: str,
        spec: brain.FactsFile,
        parsed: ParsedItems,
        lines: Sequence[str],
        ahead: Collection[str],
    ) -> str | None:
        """:func:`moves.torn_tail` of a fact file's ``lines``."""
        if spec is brain.BRAIN or not lines or lines[-1].endswith("\n"):
            return None

        def lines_ahead() -> Iterator[str]:
            for other in moves.files_ahead(spec):
                entry = self.kept(agent, other.path)
                if entry is not None:
                    yield from entry.lines

        return moves.torn_tail(lines, parsed, ahead, lines_ahead)


def held(ids: set[str], parsed: ParsedItems) -> set[str]:
    """The ids of ``parsed`` that ``ids`` holds, looked up from the smaller side."""
    if len(ids) < len(parsed.spans):
        return {i for i in ids if i in parsed.spans}
    return {item.id for item in parsed.items if item.id in ids}


def spec_of(path: str) -> brain.FactsFile:
    """The fact file at ``path``."""
    return next(spec for spec in brain.FACT_FILES if spec.path == path)
