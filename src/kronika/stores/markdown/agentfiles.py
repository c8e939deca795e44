"""The agents of a Markdown workspace and the reading of their files: the part of
:class:`~kronika.stores.markdown.workspace.MarkdownWorkspace` every kind of file shares
(``workspace.agent_files``: folders, listing, parsing by kind, damage kept in
``.corrupt/``, line edits), and the values a listing and a parse give."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath

from kronika.core.model import MemoryItem
from kronika.errors import InvalidAgentName, UnknownAgent, WorkspaceError
from kronika.stores.folder_watch import FolderWatch
from kronika.stores.markdown import (
    documents,
    lessons,
    notes,
    sessions,
)
from kronika.stores.markdown.atomic import is_temp_name
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.files import SourceText, keep_copy, read_source, write_text
from kronika.stores.markdown.layout import (
    BANK_KINDS,
    IDENTITY,
    SOURCE_FOLDERS,
    SOURCE_NAMES,
    SourceKind,
    classify,
    validate_agent_name,
)
from kronika.stores.markdown.lines import ParsedItems, split_lines
from kronika.stores.markdown.state import WorkspaceState
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


KEPT_SESSION = 4 << 20
"""The longest session file (bytes) whose parse :class:`AgentFiles` keeps for the next
read of the same bytes: about 35,000 turns, their items some tens of MB."""


class AgentFiles:
    """The agents' folders and the reading of their files: listing, parsing by kind
    (damage kept in ``.corrupt/``), line edits; over the workspace's shared state."""

    def __init__(self, state: WorkspaceState) -> None:
        self.state = state
        self._watch = FolderWatch(state.root)
        """Which files changed since the index last looked (:meth:`changed_sources`)."""
        self._linked: dict[str, bool] = {}  # a link among an agent's files, as last listed
        self._session: tuple[tuple[object, ...], bytes, ParsedItems] | None = None
        """The last sound parse of a session file: its key (folder, path, time, tenant,
        importance), bytes and parse (:meth:`parse`)."""

    # -- agents ---------------------------------------------------------------------

    def exists(self) -> bool:
        return self.state.root.is_dir()

    def initialize(self) -> None:
        make_private_dir(self.state.root)

    def agents(self) -> list[str]:
        if not self.state.root.is_dir():
            return []
        names = []
        for entry in self.state.root.iterdir():
            try:
                validate_agent_name(entry.name, existing=True)
            except InvalidAgentName:  # a stray folder, not an agent
                continue
            if entry.is_dir():
                names.append(entry.name)
        return sorted(names)

    def agent_dir(self, agent: str) -> Path:
        # the path of an existing folder is kept: a write asks for it dozens of times
        known = self.state.dirs.get(agent)
        if known is not None and os.path.isdir(known[1]):
            return known[0]
        folder = self.state.root / validate_agent_name(agent, existing=True)
        if folder.is_dir():
            self.state.dirs[agent] = (folder, os.fspath(folder))
            return folder
        return self.state.root / validate_agent_name(agent)

    def has_agent(self, agent: str) -> bool:
        return self.agent_dir(agent).is_dir()

    def require_agent(self, agent: str) -> Path:
        known = self.state.dirs.get(agent)
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

    def list_sources(self, agent: str, *, watched: bool = False) -> list[SourceFile]:
        """Every indexed file of the agent (not identity, temp files or ``.corrupt``).

        ``watched``: the listing follows a :meth:`changed_sources` that could not say
        what changed; it notes whether a file or folder among them is a link (which may
        change where no watch sees), for :meth:`sources_listed`."""
        folder = self.require_agent(agent)
        base = os.fspath(folder)
        found: dict[str, SourceFile] = {}
        linked = watched and folder.is_symlink()
        folders: dict[str, bool] = {}
        # one scandir a folder, one stat a file (a Path made for each file cost as much
        # again as its stat: 3,000 chats listed in a fifth of the time)
        for sub in ("", *SOURCE_FOLDERS):
            try:
                entries = list(os.scandir(os.path.join(base, sub) if sub else base))
            except OSError:  # no such folder (or not one): nothing of it is indexed
                continue
            if watched and sub and not linked:
                linked = _in_link(sub, folder, folders)
            for entry in entries:
                name = entry.name
                if not name.endswith(".md") or (not sub and name not in SOURCE_NAMES):
                    continue
                rel = f"{sub}/{name}" if sub else name
                if classify(rel) is None:
                    continue
                try:
                    if not entry.is_file():
                        continue
                    stat = entry.stat()
                except OSError:  # gone since the folder was read
                    continue
                found[rel] = SourceFile(rel, stat.st_mtime_ns, stat.st_size)
                if watched and not linked:
                    linked = stat.st_nlink > 1 or entry.is_symlink()
        if watched:
            self._linked[agent] = linked
        return [found[rel] for rel in sorted(found)]

    def sources_listed(self, agent: str) -> None:
        """The index now holds ``agent``'s files as ``list_sources(agent, watched=True)``
        found them: from now on :meth:`changed_sources` says what changed since (unless
        a link was among them)."""
        self._watch.listed(agent, linked=self._linked.pop(agent, True))

    def forget_changes(self) -> None:
        """What :meth:`changed_sources` said may not be in the index: every agent is
        listed whole next."""
        self._watch.forget()

    def changed_sources(self, agent: str) -> set[str] | None:
        """The paths of ``agent``'s Markdown files written, made, renamed or removed since
        the last call, by anyone (this process, another, an editor), as the system's
        folder watch tells them (:mod:`~kronika.stores.folder_watch`); ``None`` when it
        cannot say (no watch here, the agent not listed whole since it began, a link
        among its files): list them all then (``list_sources(agent, watched=True)``),
        and say so once the index holds them (:meth:`sources_listed`)."""
        return self._watch.look(agent)

    @property
    def watched(self) -> bool:
        """Whether :meth:`changed_sources` can say what changed, once an agent is listed."""
        return self._watch.watching

    def close(self) -> None:
        """Let go of the folder watch."""
        self._watch.close()

    def source_file(self, agent: str, path: str) -> SourceFile | None:
        """The status of one indexed file (``None`` when missing or not indexed)."""
        if classify(checked_path(path)) is None:
            return None
        try:
            stat = os.stat(os.path.join(self.require_agent(agent), path))
        except OSError:
            return None
        if stat.st_mode & 0o170000 != 0o100000:  # not a regular file
            return None
        return SourceFile(path, stat.st_mtime_ns, stat.st_size)

    def parse(self, folder: Path, agent: str, path: str, read: SourceText) -> ParsedItems:
        kind = classify(path)
        stem = PurePosixPath(path).stem
        match kind:
            case SourceKind.FACTS:
                spec = next(s for s in brain.FACT_FILES if s.path == path)
                facts = brain.parse_facts(
                    read.text,
                    spec=spec,
                    agent=agent,
                    tenant=self.state.tenant_of(agent),
                    mtime=read.mtime,
                )
                return self._keep_damaged(folder, path, read, facts)
            case SourceKind.DAILY_LOG | SourceKind.SENSORY:
                day = datetime.fromisoformat(stem).replace(tzinfo=UTC)
                return notes.parse_notes(
                    read.text,
                    path=path,
                    agent=agent,
                    tenant=self.state.tenant_of(agent),
                    default_created=day,
                    sensory=kind is SourceKind.SENSORY,
                )
            case SourceKind.BANK | SourceKind.ENTITY:
                return notes.parse_notes(
                    read.text,
                    path=path,
                    agent=agent,
                    tenant=self.state.tenant_of(agent),
                    default_created=read.mtime,
                    default_kind=BANK_KINDS.get(PurePosixPath(path).name),
                    entity=stem if kind is SourceKind.ENTITY else None,
                )
            case SourceKind.SESSION:
                # a session written is read twice in a row on PostgreSQL (for the index
                # and for the record): the same bytes are parsed once
                tenant = self.state.tenant_of(agent)
                importance = self.state.message_importance
                key = (os.fspath(folder), path, read.mtime, tenant, importance, agent)
                held = self._session
                if held is not None and held[0] == key and held[1] == read.raw:
                    return held[2]
                session = sessions.parse_session(
                    read.text,
                    path=path,
                    agent=agent,
                    tenant=tenant,
                    fallback_id=stem,
                    fallback_start=read.mtime,
                    importance=importance,
                )
                broken = self._header_damage(folder, path, read, session.frontmatter_error)
                noted = session.warnings + broken
                parsed = ParsedItems(session.items, session.spans, noted, broken)
                kept = not (read.warnings or parsed.warnings) and len(read.raw) <= KEPT_SESSION
                self._session = (key, read.raw, parsed) if kept else None
                return parsed
            case SourceKind.LESSONS:
                found, at, warned = lessons.parse_lessons(read.text, agent=agent, mtime=read.mtime)
                items = lessons.lesson_items(found, at, tenant=self.state.tenant_of(agent))
                spans = {it.id: (at[it.id] - 1, at[it.id]) for it in items}
                return ParsedItems(tuple(items), spans, tuple(warned), ())
            case SourceKind.SUMMARY | SourceKind.ACTIVE_CONTEXT:
                if kind is SourceKind.SUMMARY:
                    doc = documents.parse_summary(
                        read.text,
                        path=path,
                        agent=agent,
                        tenant=self.state.tenant_of(agent),
                        mtime=read.mtime,
                    )
                else:
                    doc = documents.parse_active_context(
                        read.text, agent=agent, tenant=self.state.tenant_of(agent), mtime=read.mtime
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

    def edit(
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
            self.state.notes.extend(read.warnings)
        lines = split_lines(read.text if read is not None else template)
        write_text(folder / path, "".join(change(lines)))

    def cleanup_temp(self) -> int:
        """Delete temporary files left by interrupted writes; returns how many."""
        if not self.state.root.is_dir():
            return 0
        removed = 0
        for path in self.state.root.rglob("*"):
            if is_temp_name(path.name) and path.is_file():
                path.unlink(missing_ok=True)
                removed += 1
        return removed


@lru_cache(maxsize=4096)  # a write checks the same few paths a dozen times
def checked_path(path: str) -> str:
    """``path`` if it is a relative posix path inside the agent folder."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path or not pure.parts:
        raise WorkspaceError(f"{path!r} is not a path inside an agent folder")
    return pure.as_posix()


def _in_link(sub: str, folder: Path, known: dict[str, bool]) -> bool:
    """Whether ``sub`` (a folder under ``folder``) or a folder on the way to it is a
    symbolic link (``known``: the folders asked already)."""
    parts = sub.split("/")
    for n in range(1, len(parts) + 1):
        step = "/".join(parts[:n])
        if step not in known:
            known[step] = os.path.islink(os.path.join(folder, step))
        if known[step]:
            return True
    return False
