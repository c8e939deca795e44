"""The agents of a Markdown workspace and the reading of their files: the part of
:class:`~kronika.stores.markdown.workspace.MarkdownWorkspace` every kind of file shares
(folders, listing, parsing by kind, damage kept in ``.corrupt/``, line edits)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath

from kronika.core.model import MemoryItem
from kronika.errors import InvalidAgentName, UnknownAgent, WorkspaceError
from kronika.stores.markdown import (
    documents,
    lessons,
    notes,
    sessions,
)
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.facts.cache import FactCache
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


class AgentFiles:
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
        # files found to have lost items at once (kronika.engine.lost): a working copy
        # does not push them to its store of record (kronika.stores.working_copy)
        self.damaged: set[tuple[str, str]] = set()
        # files a forget removed or rewrote (read by a working copy, as ``damaged``)
        self.removed: set[tuple[str, str]] = set()
        self._dirs: dict[str, tuple[Path, str]] = {}  # agent -> its folder, as path and str
        self._facts = FactCache()
        # agent folder -> fact files appended to but not yet synced, while a batch
        # holds the Brain (stores/markdown/factfiles.py)
        self._holding: dict[str, set[str]] = {}

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
        # the path of an existing folder is kept: a write asks for it dozens of times
        known = self._dirs.get(agent)
        if known is not None and os.path.isdir(known[1]):
            return known[0]
        folder = self._root / validate_agent_name(agent, existing=True)
        if folder.is_dir():
            self._dirs[agent] = (folder, os.fspath(folder))
            return folder
        return self._root / validate_agent_name(agent)

    def has_agent(self, agent: str) -> bool:
        return self.agent_dir(agent).is_dir()

    def require_agent(self, agent: str) -> Path:
        known = self._dirs.get(agent)
        if known is not None and os.path.isdir(known[1]):
            return known[0]
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
            stat = os.stat(os.path.join(self.require_agent(agent), path))
        except OSError:
            return None
        if stat.st_mode & 0o170000 != 0o100000:  # not a regular file
            return None
        return SourceFile(path, stat.st_mtime_ns, stat.st_size)

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
                items = lessons.lesson_items(found, at, tenant=self.tenant_of(agent))
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


@lru_cache(maxsize=4096)  # a write checks the same few paths a dozen times
def _checked_path(path: str) -> str:
    """``path`` if it is a relative posix path inside the agent folder."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path or not pure.parts:
        raise WorkspaceError(f"{path!r} is not a path inside an agent folder")
    return pure.as_posix()
