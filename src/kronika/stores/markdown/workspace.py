"""The Markdown workspace: the canonical, hand-editable store of every agent's memory.

``<home>/agents/<agent>/`` holds the files described in
:mod:`kronika.stores.markdown.layout`. This class is the only code that touches them:
it lists and parses the indexed files for the derived index, and applies every
change as a minimal line edit followed by an atomic write, so a hand-edited file
keeps everything the person wrote and a crash never leaves half a file.

Damaged files (invalid UTF-8, NUL bytes, a broken frontmatter header) never stop an
agent: the original bytes are copied to ``<agent>/.corrupt/<path>.<UTC time>``, the
problem is reported in the warnings, and the readable rest is used (bad bytes become
U+FFFD). The next write to such a file stores the repaired text.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from kronika.core.lessons import Lesson
from kronika.core.model import ItemType, MemoryItem, SessionRecord, Status, TurnRecord
from kronika.core.visibility import OWNER, Audience
from kronika.errors import InvalidAgentName, NotFound, UnknownAgent, WorkspaceError
from kronika.stores.markdown import (
    brain,
    documents,
    factappend,
    factlookup,
    factsplice,
    frontmatter,
    lessons,
    moves,
    notes,
    proposals,
    sessions,
)
from kronika.stores.markdown.atomic import is_temp_name
from kronika.stores.markdown.factcache import FactCache, FactParse, file_stat
from kronika.stores.markdown.files import SourceText, keep_copy, read_source, write_text
from kronika.stores.markdown.layout import (
    BANK_KINDS,
    IDENTITY,
    SOURCE_GLOBS,
    SourceKind,
    classify,
    validate_agent_name,
)
from kronika.stores.markdown.lines import ParsedItems, split_lines
from kronika.stores.private import make_private_dir

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # any time: only the ids of a parse are used

IDENTITY_TEMPLATE = (
    "# Identity\n\n"
    "Who this agent is: persona, tone, and rules it always follows.\n"
    "Edit this file freely; it is loaded at the start of every session.\n"
)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """An indexed file: ``path`` relative to the agent folder (posix), its stat."""

    path: str
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class ParsedSource:
    """Items parsed from one file; ``content_hash`` is sha256 of the file's bytes."""

    path: str
    items: tuple[MemoryItem, ...]
    content_hash: str
    warnings: tuple[str, ...]
    damage: tuple[str, ...] = ()  # the warnings that say a line is torn


class MarkdownWorkspace:
    """Every agent's Markdown files under ``home/agents``; an agent's items carry its
    tenant: ``tenants[agent]``, else ``tenant`` (several tenants share one workspace,
    each agent belonging to one)."""

    def __init__(
        self,
        home: Path,
        *,
        tenant: str = "default",
        message_importance: float = 0.3,
        tenants: Mapping[str, str] | None = None,
    ) -> None:
        self.home = Path(home)
        self.tenant = tenant
        self.tenants = dict(tenants or {})
        self.message_importance = message_importance
        self.notes: list[str] = []  # damage met while reading (see the module docstring)
        self._facts = FactCache()  # fact files' parses (stores/markdown/factcache.py)

    def tenant_of(self, agent: str) -> str:
        """The tenant ``agent`` (and so every item of it) belongs to."""
        return self.tenants.get(agent, self.tenant)

    # -- agents ---------------------------------------------------------------------

    @property
    def _root(self) -> Path:
        return self.home / "agents"

    def exists(self) -> bool:
        return self._root.is_dir()

    def initialize(self) -> None:
        make_private_dir(self._root)

    def agents(self) -> list[str]:
        if not self._root.is_dir():
            return []
        names = []
        for entry in self._root.iterdir():
            try:
                validate_agent_name(entry.name, existing=True)
            except InvalidAgentName:  # a stray folder, not an agent
                continue
            if entry.is_dir():
                names.append(entry.name)
        return sorted(names)

    def agent_dir(self, agent: str) -> Path:
        folder = self._root / validate_agent_name(agent, existing=True)
        return folder if folder.is_dir() else self._root / validate_agent_name(agent)

    def has_agent(self, agent: str) -> bool:
        return self.agent_dir(agent).is_dir()

    def require_agent(self, agent: str) -> Path:
        folder = self.agent_dir(agent)
        if not folder.is_dir():
            raise UnknownAgent(agent, self.agents())
        return folder

    def create_agent(self, agent: str) -> None:
        """Create the agent's folders, a short ``identity.md`` and an empty Brain
        (existing files are left alone)."""
        folder = self.agent_dir(agent)
        for sub in ("sessions", "memory", "summaries/L1", "summaries/L2", "bank/entities"):
            make_private_dir(folder / sub)
        if not (folder / IDENTITY).exists():
            write_text(folder / IDENTITY, IDENTITY_TEMPLATE)
        if not (folder / brain.BRAIN.path).exists():
            write_text(folder / brain.BRAIN.path, brain.empty_document(brain.BRAIN))

    # -- listing and parsing ----------------------------------------------------------

    def list_sources(self, agent: str) -> list[SourceFile]:
        """Every indexed file of the agent (not identity, temp files or ``.corrupt``)."""
        folder = self.require_agent(agent)
        found: dict[str, SourceFile] = {}
        for pattern in SOURCE_GLOBS:
            for path in folder.glob(pattern):
                rel = path.relative_to(folder).as_posix()
                if classify(rel) is None or not path.is_file():
                    continue
                stat = path.stat()
                found[rel] = SourceFile(rel, stat.st_mtime_ns, stat.st_size)
        return [found[rel] for rel in sorted(found)]

    def source_file(self, agent: str, path: str) -> SourceFile | None:
        """The status of one indexed file (``None`` when missing or not indexed)."""
        if classify(_checked_path(path)) is None:
            return None
        try:
            stat = os.stat(self.require_agent(agent) / path)
        except OSError:
            return None
        if stat.st_mode & 0o170000 != 0o100000:  # not a regular file
            return None
        return SourceFile(path, stat.st_mtime_ns, stat.st_size)

    def appended_facts(self, agent: str, path: str, content_hash: str) -> list[MemoryItem] | None:
        """The facts kronika appended to fact file ``path`` since its bytes hashed to
        ``content_hash``, when appends alone changed it (else ``None``); none of them
        a leftover of an interrupted move."""
        if classify(_checked_path(path)) is not SourceKind.FACTS:
            return None
        folder = os.fspath(self.require_agent(agent))
        items = self._facts.appended_since(folder, path, content_hash)
        if not items:
            return items
        wanted = {item.id for item in items}
        for other in moves.files_ahead(_facts_file(path)):
            if not self._fact_ids(agent, other.path).isdisjoint(wanted):
                return None
        return items

    def rewritten_facts(
        self, agent: str, path: str, content_hash: str
    ) -> tuple[tuple[MemoryItem, ...], tuple[MemoryItem, ...]] | None:
        """``(items then, items now)`` of the Brain when kronika's own rewrites alone
        changed it since its bytes hashed to ``content_hash`` (else ``None``)."""
        if path != brain.BRAIN.path:
            return None
        folder = os.fspath(self.require_agent(agent))
        return self._facts.rewritten_since(folder, path, content_hash)

    def parse_source(self, agent: str, path: str) -> ParsedSource:
        """Parse one indexed file; damage is reported in ``warnings``, never raised."""
        folder = self.require_agent(agent)
        if classify(_checked_path(path)) is SourceKind.FACTS:
            entry = self._fact_parse(agent, path)
            if entry is None:
                raise WorkspaceError(f"{agent}/{path} does not exist")
            resolved = self._resolved(agent, _facts_file(path), entry.parsed, entry.lines)
            return ParsedSource(
                path,
                resolved.items,
                entry.content_hash,
                entry.read_warnings + resolved.warnings,
                resolved.damage,
            )
        read = read_source(folder, _checked_path(path))
        if read is None:
            raise WorkspaceError(f"{agent}/{path} does not exist")
        parsed = self._parse(folder, agent, path, read)
        if classify(path) is SourceKind.FACTS:
            parsed = self._resolved(agent, _facts_file(path), parsed, split_lines(read.text))
        self.notes.extend(read.warnings + parsed.damage)
        return ParsedSource(
            path,
            parsed.items,
            hashlib.sha256(read.raw).hexdigest(),
            read.warnings + parsed.warnings,
            parsed.damage,
        )

    def _parse(self, folder: Path, agent: str, path: str, read: SourceText) -> ParsedItems:
        kind = classify(path)
        stem = PurePosixPath(path).stem
        match kind:
            case SourceKind.FACTS:
                spec = next(s for s in brain.FACT_FILES if s.path == path)
                facts = brain.parse_facts(
                    read.text,
                    spec=spec,
                    agent=agent,
                    tenant=self.tenant_of(agent),
                    mtime=read.mtime,
                )
                return self._keep_damaged(folder, path, read, facts)
            case SourceKind.DAILY_LOG | SourceKind.SENSORY:
                day = datetime.fromisoformat(stem).replace(tzinfo=UTC)
                return notes.parse_notes(
                    read.text,
                    path=path,
                    agent=agent,
                    tenant=self.tenant_of(agent),
                    default_created=day,
                    sensory=kind is SourceKind.SENSORY,
                )
            case SourceKind.BANK | SourceKind.ENTITY:
                return notes.parse_notes(
                    read.text,
                    path=path,
                    agent=agent,
                    tenant=self.tenant_of(agent),
                    default_created=read.mtime,
                    default_kind=BANK_KINDS.get(PurePosixPath(path).name),
                    entity=stem if kind is SourceKind.ENTITY else None,
                )
            case SourceKind.SESSION:
                session = sessions.parse_session(
                    read.text,
                    path=path,
                    agent=agent,
                    tenant=self.tenant_of(agent),
                    fallback_id=stem,
                    fallback_start=read.mtime,
                    importance=self.message_importance,
                )
                broken = self._header_damage(folder, path, read, session.frontmatter_error)
                return ParsedItems(session.items, session.spans, session.warnings + broken, broken)
            case SourceKind.LESSONS:
                found, at, warned = lessons.parse_lessons(read.text, agent=agent, mtime=read.mtime)
                items = lessons.lesson_items(found, at, tenant=self.tenant)
                spans = {it.id: (at[it.id] - 1, at[it.id]) for it in items}
                return ParsedItems(tuple(items), spans, tuple(warned), ())
            case SourceKind.SUMMARY | SourceKind.ACTIVE_CONTEXT:
                if kind is SourceKind.SUMMARY:
                    doc = documents.parse_summary(
                        read.text,
                        path=path,
                        agent=agent,
                        tenant=self.tenant_of(agent),
                        mtime=read.mtime,
                    )
                else:
                    doc = documents.parse_active_context(
                        read.text, agent=agent, tenant=self.tenant_of(agent), mtime=read.mtime
                    )
                broken = self._header_damage(folder, path, read, doc.frontmatter_error)
                warnings = doc.warnings + broken
                if doc.item is None:
                    return ParsedItems((), {}, warnings, broken)
                whole = (0, len(split_lines(read.text)))
                return ParsedItems((doc.item,), {doc.item.id: whole}, warnings, broken)
        raise WorkspaceError(f"{path} is not a file kronika indexes")

    def _keep_damaged(
        self, folder: Path, path: str, read: SourceText, parsed: ParsedItems
    ) -> ParsedItems:
        """A copy of a file whose lines are torn, named in its damage warnings."""
        if not parsed.damage:
            return parsed
        backup = folder / keep_copy(folder, path, read.raw)
        damage = tuple(f"{w}; a copy of the original was kept at {backup}" for w in parsed.damage)
        rest = tuple(w for w in parsed.warnings if w not in parsed.damage)
        return replace(parsed, warnings=rest + damage, damage=damage)

    def _header_damage(
        self, folder: Path, path: str, read: SourceText, error: str | None
    ) -> tuple[str, ...]:
        if error is None:
            return ()
        backup = keep_copy(folder, path, read.raw)
        return (
            f"{path}: broken frontmatter header ({error}); a copy of the original was kept "
            f"at {backup} and the rest of the file was read",
        )

    def keep_lost_facts(self, agent: str, path: str, items: Sequence[MemoryItem]) -> Path:
        """Write ``items`` (facts ``path`` no longer holds) as a fact file under
        ``.corrupt/``, ready to be copied back; returns its path."""
        folder = self.require_agent(agent)
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        text = brain.render_facts_document(spec, list(items))
        return folder / keep_copy(folder, f"{path}.lost", text.encode("utf-8"))

    # -- editing ----------------------------------------------------------------------

    def _edit(
        self,
        agent: str,
        path: str,
        change: Callable[[list[str]], list[str]],
        template: str = "",
    ) -> None:
        """Apply ``change`` to the lines of ``path`` (``template`` if it is missing)."""
        folder = self.require_agent(agent)
        read = read_source(folder, path)
        if read is not None:
            self.notes.extend(read.warnings)
        lines = split_lines(read.text if read is not None else template)
        write_text(folder / path, "".join(change(lines)))

    def _parsed(self, agent: str, path: str) -> tuple[list[str], ParsedItems]:
        if classify(path) is SourceKind.FACTS:
            entry = self._fact_parse(agent, path)
            if entry is None:
                return [], ParsedItems((), {})
            return list(entry.lines), entry.parsed
        folder = self.require_agent(agent)
        read = read_source(folder, path)
        if read is None:
            return [], ParsedItems((), {})
        parsed = self._parse(folder, agent, path, read)
        self.notes.extend(read.warnings + parsed.damage)
        return split_lines(read.text), parsed

    # -- facts ------------------------------------------------------------------------

    def _fact_parse(self, agent: str, path: str) -> FactParse | None:
        """The parse of fact file ``path`` (``None`` when it is missing): the kept one
        while the file is unchanged (:mod:`~kronika.stores.markdown.factcache`), else
        the file is read and parsed again. Damaged files are parsed at every read, as
        before, so their damage is reported and a copy kept each time it is met."""
        folder = self.require_agent(agent)
        key = os.fspath(folder)
        entry = self._facts.get(key, path)
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
        parsed = self._parse(folder, agent, path, read)
        self.notes.extend(read.warnings + parsed.damage)
        try:
            after = file_stat(os.stat(folder / path))
        except OSError:
            after = None
        entry = FactParse(
            stat=after or before,
            checked_ns=began,
            lines=split_lines(read.text),
            parsed=parsed,
            digest=hashlib.sha256(read.raw),
            mtime=read.mtime,
            read_warnings=read.warnings,
        )
        if after == before and not read.warnings and not parsed.damage:
            self._facts.put(key, path, entry)
        return entry

    def _fact_ids(self, agent: str, path: str) -> set[str]:
        entry = self._fact_parse(agent, path)
        if entry is None:
            return set()
        return factlookup.ids(entry)

    def brain_facts(self, agent: str) -> list[MemoryItem]:
        return list(self._parsed(agent, brain.BRAIN.path)[1].items)

    def archived_facts(self, agent: str) -> list[MemoryItem]:
        lines, parsed = self._parsed(agent, brain.ARCHIVE.path)
        return list(self._resolved(agent, brain.ARCHIVE, parsed, lines).items)

    def archived_facts_like(self, agent: str, item: MemoryItem) -> list[MemoryItem]:
        """The archived facts that the rules of :func:`kronika.core.dedup.place_fact` could
        pick for ``item``, in file order: those of its key, of its key's concept (an
        extracted keyed fact), or of its text (a fact without a key). Found in lookups
        kept with the archive's parse, so the cost does not grow with the archive."""
        entry = self._fact_parse(agent, brain.ARCHIVE.path)
        if entry is None:
            return []
        brain_ids = self._fact_ids(agent, brain.BRAIN.path)
        found = factlookup.candidates(entry, item)
        return [fact for fact in found if fact.id not in brain_ids]

    def fact_history(self, agent: str) -> list[MemoryItem]:
        lines, parsed = self._parsed(agent, brain.HISTORY.path)
        return list(self._resolved(agent, brain.HISTORY, parsed, lines).items)

    def _resolved(
        self, agent: str, spec: brain.FactsFile, parsed: ParsedItems, lines: Sequence[str]
    ) -> ParsedItems:
        """``parsed`` (of ``lines``) without the leftovers of an interrupted move and the
        start of a fact a crash cut off (see :mod:`kronika.stores.markdown.moves`)."""
        if not parsed.items:
            return parsed
        ahead: set[str] = set()
        for other in moves.files_ahead(spec):
            ahead.update(_held(self._fact_ids(agent, other.path), parsed))
        torn = self._torn_tail(agent, spec, parsed, lines, ahead)
        return moves.without_leftovers(
            spec, moves.without_torn_tail(spec, parsed, torn), frozenset(ahead)
        )

    def cut_torn_tail(self, agent: str, spec: brain.FactsFile) -> bool:
        """Cut off the torn last line of an archive or history (:func:`moves.torn_tail`),
        keeping a copy of the file in ``.corrupt/``; False when it does not end torn."""
        entry = self._fact_parse(agent, spec.path)
        if entry is None:
            return False
        ahead: set[str] = set()
        for other in moves.files_ahead(spec):
            ahead.update(self._fact_ids(agent, other.path))
        if self._torn_tail(agent, spec, entry.parsed, entry.lines, ahead) is None:
            return False
        folder = self.require_agent(agent)
        read = read_source(folder, spec.path)
        if read is None or split_lines(read.text) != entry.lines:
            return False
        copy = keep_copy(folder, spec.path, read.raw)
        whole = "".join(entry.lines[:-1]).encode("utf-8")
        self._facts.drop(os.fspath(folder), spec.path)
        try:
            with open(folder / spec.path, "r+b") as handle:
                handle.truncate(len(whole))
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise WorkspaceError(f"cannot write {folder / spec.path}: {exc}") from exc
        self.notes.append(
            f"{spec.path} ended in the start of a fact cut off by a crash; it was removed "
            f"(a copy of the file was kept at {copy})"
        )
        return True

    def _torn_tail(
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
                entry = self._fact_parse(agent, other.path)
                if entry is not None:
                    yield from entry.lines

        return moves.torn_tail(lines, parsed, ahead, lines_ahead)

    def settle_moves(self, agent: str) -> tuple[str, ...]:
        """Delete the leftovers of interrupted moves from the archive and the history;
        returns the paths of the files rewritten. Call it under the workspace lock."""
        changed: list[str] = []
        ahead: list[set[str]] = []
        for spec in brain.FACT_FILES:
            entry = self._fact_parse(agent, spec.path)
            if entry is None:
                continue
            stale: set[str] = set()
            for ids in ahead:
                stale.update(_held(ids, entry.parsed))
            if stale:
                lines = moves.drop_bullets(list(entry.lines), entry.parsed, stale)
                self._write_facts(agent, spec.path, "".join(lines))
                changed.append(spec.path)
                entry = self._fact_parse(agent, spec.path)
            if entry is not None:
                ahead.append(factlookup.ids(entry))
        return tuple(changed)

    def _write_facts(self, agent: str, path: str, text: str) -> None:
        """Replace fact file ``path`` whole (atomically). The Brain's kept parse becomes
        the parse of ``text`` (it is read at once, by the next step of every write);
        another file's is dropped, to be read again when it is asked for."""
        folder = self.agent_dir(agent)
        key = os.fspath(folder)
        before = self._facts.get(key, path) if path == brain.BRAIN.path else None
        self._facts.drop(key, path)
        began = time.time_ns()
        write_text(folder / path, text)
        if path != brain.BRAIN.path:
            return
        try:
            stat = file_stat(os.stat(folder / path))
        except OSError:
            return
        mtime = datetime.fromtimestamp(stat[2] // 1_000_000_000, UTC)
        lines = split_lines(text)
        tenant = self.tenant_of(agent)
        parsed = None
        if before is not None and not before.read_warnings:
            parsed = factsplice.splice(
                before.parsed,
                before.lines,
                lines,
                spec=brain.BRAIN,
                agent=agent,
                tenant=tenant,
                mtimes=(before.mtime, mtime),
            )
        if parsed is None:
            parsed = brain.parse_facts(
                text, spec=brain.BRAIN, agent=agent, tenant=tenant, mtime=mtime
            )
        if parsed.damage:
            return
        raw = text.encode("utf-8")
        entry = FactParse(stat, began, lines, parsed, hashlib.sha256(raw), mtime, ())
        self._facts.rewrite(key, path, before, entry)

    def stamp_hand_facts(self, agent: str, source: SourceFile) -> SourceFile:
        """Give the hand-written bullets of a fact file their metadata, so they keep
        the time they were first read (:func:`brain.stamp_hand_facts`); returns the
        file's new stat, or ``source`` when nothing was written. A damaged file, one
        edited again meanwhile, or one that cannot be written is left as it is."""
        spec = next((s for s in brain.FACT_FILES if s.path == source.path), None)
        folder = self.require_agent(agent)
        if spec is not None and spec is not brain.BRAIN and self.cut_torn_tail(agent, spec):
            stat = (folder / source.path).stat()  # a torn start is never stamped
            source = SourceFile(source.path, stat.st_mtime_ns, stat.st_size)
        entry = self._fact_parse(agent, source.path) if spec is not None else None
        if entry is not None and not factlookup.hand_written(entry):
            return source
        read = read_source(folder, source.path) if spec is not None else None
        if spec is None or read is None or read.warnings:
            return source
        text = brain.stamp_hand_facts(
            read.text, spec=spec, agent=agent, tenant=self.tenant_of(agent), mtime=read.mtime
        )
        again = read_source(folder, source.path) if text is not None else None
        if text is None or again is None or again.raw != read.raw:
            return source
        try:
            self._write_facts(agent, source.path, text)
        except WorkspaceError:
            return source
        stat = (folder / source.path).stat()
        return SourceFile(source.path, stat.st_mtime_ns, stat.st_size)

    def _append_facts(
        self, agent: str, spec: brain.FactsFile, items: Sequence[MemoryItem]
    ) -> list[MemoryItem]:
        """Append ``items`` to ``spec``'s file; a copy of one of them already there (left
        by an interrupted move) is replaced in the same write. The archive and the
        history are appended to in place (:func:`factappend.append_facts`) when they
        can be; the Brain, and a file that cannot be, are rewritten whole."""
        if spec is not brain.BRAIN:
            appended = factappend.append_facts(self, agent, spec, items)
            if appended is not None:
                return appended
        stored: list[MemoryItem] = []
        entry = self._fact_parse(agent, spec.path) if spec is brain.BRAIN else None

        def change(lines: list[str]) -> list[str]:
            if entry is not None and entry.lines == lines:  # its kept parse: not parsed again
                here = entry.parsed
            else:
                here = brain.parse_facts(
                    "".join(lines),
                    spec=spec,
                    agent=agent,
                    tenant=self.tenant_of(agent),
                    mtime=_EPOCH,
                )
            lines = moves.drop_bullets(lines, here, (item.id for item in items))
            for item in items:
                lines, at = brain.insert_fact(lines, item)
                stored.append(brain.with_line(replace(item, status=spec.status), spec.path, at))
            return lines

        if entry is not None and not entry.read_warnings:
            self._write_facts(agent, spec.path, "".join(change(list(entry.lines))))
            return stored
        self._facts.drop(os.fspath(self.agent_dir(agent)), spec.path)
        self._edit(agent, spec.path, change, brain.empty_document(spec))
        return stored

    def add_fact(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Append ``item`` to its Brain section (``User`` if none); ``brain.md`` is
        created when missing. Returns the item citing its new line."""
        return self._append_facts(agent, brain.BRAIN, [item])[0]

    def update_fact(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Rewrite the bullet with ``item.id`` in place (Brain or archive)."""
        for spec in (brain.BRAIN, brain.ARCHIVE):
            lines, parsed = self._parsed(agent, spec.path)
            span = parsed.span(item.id)
            if span is None:
                continue
            start, end = span
            lines[start:end] = brain.render_fact(item)
            self._write_facts(agent, spec.path, "".join(lines))
            return brain.with_line(replace(item, status=spec.status), spec.path, start)
        raise NotFound(f"no fact with id {item.id!r} in {agent}'s Brain or archive")

    def supersede_fact(self, agent: str, old_id: str, new: MemoryItem) -> MemoryItem:
        """Move fact ``old_id`` to ``history.md`` with validity ``[valid_from,
        new.valid_from)`` and ``superseded_by=new.id``; ``new`` takes its line.

        ``new`` starts no earlier than ``old`` did (a clock set back, or a writer whose
        time was taken before another's, would otherwise make an interval run
        backwards and two values current at once). An archived ``old_id`` comes back
        to the Brain first. History is written before the Brain: a crash between the
        two leaves a copy that :mod:`~kronika.stores.markdown.moves` reads as not
        moved, so the key keeps exactly one current value at every point.
        """
        lines, parsed = self._parsed(agent, brain.BRAIN.path)
        if parsed.span(old_id) is None and self._unarchive(agent, old_id):
            lines, parsed = self._parsed(agent, brain.BRAIN.path)
        span = parsed.span(old_id)
        if span is None:
            raise NotFound(f"no current fact with id {old_id!r} in {agent}'s Brain")
        old = next(item for item in parsed.items if item.id == old_id)
        old_since = old.valid_from or old.created_at
        since = max(new.valid_from or new.created_at, old_since)
        new = replace(new, valid_from=since, section=new.section or old.section)
        retired = replace(old, valid_from=old_since, valid_to=since, superseded_by=new.id)
        self._append_facts(agent, brain.HISTORY, [retired])
        start, end = span
        lines[start:end] = brain.render_fact(new)
        self._write_facts(agent, brain.BRAIN.path, "".join(lines))
        return brain.with_line(replace(new, status=Status.CURRENT), brain.BRAIN.path, start)

    def _unarchive(self, agent: str, fact_id: str) -> bool:
        """Move an archived fact back to the Brain (Brain first: a crash in between
        leaves a leftover that reads as already moved). False if it is not archived."""
        lines, parsed = self._parsed(agent, brain.ARCHIVE.path)
        fact = next((item for item in parsed.items if item.id == fact_id), None)
        if fact is None:
            return False
        self._append_facts(agent, brain.BRAIN, [fact])
        lines = moves.drop_bullets(lines, parsed, [fact_id])
        self._write_facts(agent, brain.ARCHIVE.path, "".join(lines))
        return True

    def move_to_archive(self, agent: str, ids: Sequence[str]) -> list[MemoryItem]:
        """Move the Brain facts with these ids to ``brain_archive.md`` (unknown ids are
        skipped); returns them as archived items."""
        lines, parsed = self._parsed(agent, brain.BRAIN.path)
        wanted = set(ids)
        moving = [item for item in parsed.items if item.id in wanted]
        if not moving:
            return []
        archived = self._append_facts(agent, brain.ARCHIVE, moving)
        for item in sorted(moving, key=lambda i: parsed.spans[i.id][0], reverse=True):
            start, end = parsed.spans[item.id]
            del lines[start:end]
        self._write_facts(agent, brain.BRAIN.path, "".join(lines))
        return archived

    # -- removal ----------------------------------------------------------------------

    def remove_item(self, agent: str, item: MemoryItem) -> bool:
        """Delete ``item`` (by id) from the file its provenance names: its bullet,
        paragraph or turn block, or the whole summary file. A fact whose provenance
        is out of date is looked for in the other fact files. False if not found."""
        path = _checked_path(item.provenance.path)
        kind = classify(path)
        candidates = [path]
        if kind is SourceKind.FACTS:
            candidates += [s.path for s in brain.FACT_FILES if s.path != path]
        folder = self.require_agent(agent)
        if kind is SourceKind.FACTS:
            self._drop_leftovers(agent, item.id)
        for candidate in candidates:
            lines, parsed = self._parsed(agent, candidate)
            span = parsed.span(item.id)
            if span is None:
                continue
            if kind is SourceKind.SUMMARY:
                (folder / candidate).unlink()
            elif kind is SourceKind.ACTIVE_CONTEXT:
                write_text(folder / candidate, "")
            else:
                del lines[span[0] : span[1]]
                self._facts.drop(os.fspath(folder), candidate)
                write_text(folder / candidate, "".join(lines))
            return True
        return False

    def _drop_leftovers(self, agent: str, fact_id: str) -> None:
        """Delete the copies of ``fact_id`` behind its first file (the leftovers of an
        interrupted move), so removing the fact does not bring one of them to light."""
        held = [
            spec for spec in brain.FACT_FILES if self._parsed(agent, spec.path)[1].span(fact_id)
        ]
        for spec in held[1:]:
            lines, parsed = self._parsed(agent, spec.path)
            lines = moves.drop_bullets(lines, parsed, [fact_id])
            self._write_facts(agent, spec.path, "".join(lines))

    # -- notes, sessions, summaries -----------------------------------------------------

    def append_note(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Append ``item`` under ``## Retain`` of ``memory/<created_at date>.md``
        (file and section created as needed); returns it citing its line."""
        day = item.created_at.astimezone(UTC).date().isoformat()
        folder = "sensory" if item.type is ItemType.SENSORY else "memory"
        path = f"{folder}/{day}.md"
        at = 0

        def change(lines: list[str]) -> list[str]:
            nonlocal at
            lines, at = notes.insert_note(lines, item)
            return lines

        self._edit(agent, path, change, notes.daily_log_template(day))
        return brain.with_line(item, path, at)

    def update_note(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Rewrite the note ``item.id`` where it stands (its kind, confidence, text,
        metadata); :class:`NotFound` when the file no longer holds it."""
        path = item.provenance.path
        if classify(path) not in (SourceKind.DAILY_LOG, SourceKind.BANK, SourceKind.ENTITY):
            raise WorkspaceError(f"{path} holds no notes")
        lines, parsed = self._parsed(agent, path)
        span = parsed.span(item.id)
        if span is None:
            raise NotFound(f"no note {item.id!r} in {path} any more")
        start, end = span
        write_text(
            self.require_agent(agent) / path,
            "".join(lines[:start] + notes.render_note(item) + lines[end:]),
        )
        return brain.with_line(item, path, start)

    def write_session(self, agent: str, session: SessionRecord) -> str:
        """Write a whole session file (replacing an earlier import); returns its path."""
        folder = self.require_agent(agent)
        path = sessions.session_filename(session.session_id)
        write_text(folder / path, sessions.render_session(session))
        return path

    def append_turn(
        self,
        agent: str,
        session_id: str,
        turn: TurnRecord,
        *,
        started_at: datetime,
        header_fields: Mapping[str, str] | None = None,
    ) -> str:
        """Append one turn to the session file (created with its header if absent)."""
        path = sessions.session_filename(session_id)
        header = sessions.session_header(session_id, started_at, extra=header_fields)

        def change(lines: list[str]) -> list[str]:
            text = "".join(lines)
            if text and not text.endswith("\n"):
                text += "\n"
            return split_lines(text + "\n" + sessions.render_turn(turn))

        self._edit(agent, path, change, header)
        return path

    def session_headers(self, agent: str) -> list[sessions.SessionHeader]:
        """Headers of the sessions kronika recorded itself, oldest first (imports, whose
        ids have another shape, are not listed)."""
        folder = self.require_agent(agent) / "sessions"
        found: list[sessions.SessionHeader] = []
        if not folder.is_dir():
            return found
        for file in sorted(folder.glob("*.md")):
            if not sessions.LIVE_ID_RE.match(file.stem):
                continue
            read = read_source(folder.parent, f"sessions/{file.name}")
            if read is not None:
                fields = sessions.read_header(read.text)
                found.append(sessions.SessionHeader(file.stem, f"sessions/{file.name}", fields))
        return found

    def set_session_fields(
        self, agent: str, session_id: str, fields: Mapping[str, str | None]
    ) -> str:
        """Change header fields of an existing session file; returns its path."""
        path = sessions.session_filename(session_id)
        if not (self.require_agent(agent) / path).is_file():
            raise NotFound(f"agent {agent!r} has no session {session_id!r}")
        self._edit(agent, path, lambda lines: frontmatter.set_fields(lines, fields))
        return path

    def summary_headers(self, agent: str, level: str) -> list[tuple[str, Mapping[str, str]]]:
        """``(path, header fields)`` of every ``summaries/<level>/*.md``, by name."""
        folder = self.require_agent(agent)
        found = []
        for file in sorted((folder / "summaries" / level).glob("*.md")):
            rel = f"summaries/{level}/{file.name}"
            read = read_source(folder, rel)
            if read is not None:
                found.append((rel, sessions.read_header(read.text)))
        return found

    def write_summary(self, agent: str, path: str, text: str, fields: dict[str, str]) -> str:
        """Write ``summaries/L1|L2/<name>.md`` with a header of ``fields``."""
        if classify(_checked_path(path)) is not SourceKind.SUMMARY:
            raise WorkspaceError(f"{path} is not a summaries/L1 or summaries/L2 Markdown file")
        write_text(self.require_agent(agent) / path, documents.render_summary(text, fields))
        return path

    def read_identity(self, agent: str) -> str:
        """``identity.md`` as written (empty when missing)."""
        read = read_source(self.require_agent(agent), IDENTITY)
        return read.text if read is not None else ""

    def read_active_context(self, agent: str) -> str:
        """``active_context.md`` as written (empty when missing)."""
        read = read_source(self.require_agent(agent), documents.ACTIVE_CONTEXT)
        return read.text if read is not None else ""

    def active_context_item(self, agent: str) -> MemoryItem | None:
        """The active context as its item (with the audience it was made for), if any."""
        read = read_source(self.require_agent(agent), documents.ACTIVE_CONTEXT)
        if read is None:
            return None
        tenant = self.tenant_of(agent)
        return documents.parse_active_context(
            read.text, agent=agent, tenant=tenant, mtime=read.mtime
        ).item

    def write_active_context(self, agent: str, text: str, owners: Audience = OWNER) -> None:
        """Replace the active context (the summary of the last session, made for ``owners``)."""
        write_text(
            self.require_agent(agent) / documents.ACTIVE_CONTEXT,
            documents.render_active_context(text, owners),
        )

    # -- lessons ---------------------------------------------------------------------------

    def read_lessons(self, agent: str) -> list[Lesson]:
        """The agent's lessons (``lessons.md``), in file order."""
        read = read_source(self.require_agent(agent), lessons.LESSONS_FILE)
        if read is None:
            return []
        found, _, warned = lessons.parse_lessons(read.text, agent=agent, mtime=read.mtime)
        self.notes.extend(warned)
        return found

    def write_lessons(self, agent: str, changed: Sequence[Lesson]) -> None:
        """Add or replace (by id) ``changed`` in ``lessons.md``, keeping the others."""
        kept = self.read_lessons(agent)
        index = {lesson.id: n for n, lesson in enumerate(kept)}
        for lesson in changed:
            if lesson.id in index:
                kept[index[lesson.id]] = lesson
            else:
                index[lesson.id] = len(kept)
                kept.append(lesson)
        write_text(self.require_agent(agent) / lessons.LESSONS_FILE, lessons.render_lessons(kept))

    # -- proposals (changes waiting for the person; never indexed) -------------------------

    def read_proposals(self, agent: str) -> proposals.ParsedProposals:
        """The proposals in ``proposals.md``; damaged lines are reported in ``warnings``."""
        read = read_source(self.require_agent(agent), proposals.PATH)
        if read is None:
            return proposals.ParsedProposals((), ())
        parsed = proposals.parse_proposals(read.text)
        return replace(parsed, warnings=read.warnings + parsed.warnings)

    def add_proposal(self, agent: str, entry: proposals.ProposalEntry) -> None:
        """Append ``entry`` to ``proposals.md`` (created when missing)."""
        self._edit(
            agent, proposals.PATH, lambda ls: proposals.append_entry(ls, entry), proposals.TEMPLATE
        )

    def remove_proposal(self, agent: str, proposal_id: str) -> None:
        """Delete the line of proposal ``proposal_id``; every other line is kept."""
        self._edit(agent, proposals.PATH, lambda lines: proposals.remove_entry(lines, proposal_id))

    def cleanup_temp(self) -> int:
        """Delete temporary files left by interrupted writes; returns how many."""
        if not self._root.is_dir():
            return 0
        removed = 0
        for path in self._root.rglob("*"):
            if is_temp_name(path.name) and path.is_file():
                path.unlink(missing_ok=True)
                removed += 1
        return removed


def _held(ids: set[str], parsed: ParsedItems) -> set[str]:
    """The ids of ``parsed`` that ``ids`` holds, looked up from the smaller side."""
    if len(ids) < len(parsed.spans):
        return {i for i in ids if i in parsed.spans}
    return {item.id for item in parsed.items if item.id in ids}


def _facts_file(path: str) -> brain.FactsFile:
    return next(spec for spec in brain.FACT_FILES if spec.path == path)


def _checked_path(path: str) -> str:
    """``path`` if it is a relative posix path inside the agent folder."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path or not pure.parts:
        raise WorkspaceError(f"{path!r} is not a path inside an agent folder")
    return pure.as_posix()
