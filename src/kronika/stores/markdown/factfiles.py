"""The fact files of a Markdown workspace: ``brain.md``, ``brain_archive.md`` and
``history.md`` read through their kept parse, and every change to them (see
:mod:`~kronika.stores.markdown.facts.moves` for the order of a move and how a crash reads)."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from kronika.core.model import MemoryItem, Status
from kronika.errors import NotFound, WorkspaceError
from kronika.stores.markdown.agentfiles import (
    AgentFiles,
    ParsedSource,
    SourceFile,
    _checked_path,
)
from kronika.stores.markdown.facts import append as factappend
from kronika.stores.markdown.facts import brain, moves
from kronika.stores.markdown.facts import lookup as factlookup
from kronika.stores.markdown.facts import splice as factsplice
from kronika.stores.markdown.facts.cache import FactParse, file_stat
from kronika.stores.markdown.files import SourceText, keep_copy, read_source, write_text
from kronika.stores.markdown.layout import (
    SourceKind,
    classify,
)
from kronika.stores.markdown.lines import ParsedItems, split_lines

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # any time: only the ids of a parse are used


class FactFiles(AgentFiles):
    """The fact files of every agent, and the parsing of any indexed file."""

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

    def fact_file_hash(self, agent: str, path: str) -> str | None:
        """The sha256 of fact file ``path`` as its kept parse holds it (what
        :meth:`parse_source` would give as ``content_hash``), without resolving its
        items; ``None`` when it is no fact file or is missing."""
        if classify(_checked_path(path)) is not SourceKind.FACTS:
            return None
        entry = self._fact_parse(agent, path)
        return None if entry is None else entry.content_hash

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

    def keep_lost_facts(self, agent: str, path: str, items: Sequence[MemoryItem]) -> Path:
        """Write ``items`` (facts ``path`` no longer holds) as a fact file under
        ``.corrupt/``, ready to be copied back; returns its path."""
        folder = self.require_agent(agent)
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        text = brain.render_facts_document(spec, list(items))
        return folder / keep_copy(folder, f"{path}.lost", text.encode("utf-8"))

    def put_back_facts(self, agent: str, path: str, items: Sequence[MemoryItem]) -> None:
        """Append ``items`` (facts kept aside when ``path`` lost them) to ``path`` again."""
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        self._append_facts(agent, spec, list(items))

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
        while the file is unchanged (:mod:`~kronika.stores.markdown.facts.cache`), else
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
        lines = split_lines(read.text)
        parsed = self._spliced(agent, path, self._facts.outdated(key, path), read, lines)
        if parsed is None:
            parsed = self._parse(folder, agent, path, read)
        self.notes.extend(read.warnings + parsed.damage)
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
        )
        if after == before and not read.warnings and not parsed.damage:
            self._facts.put(key, path, entry)
        return entry

    def _spliced(
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
        (:func:`factsplice.splice`). ``None`` when only a full parse can say: no earlier
        parse, either text damaged or unreadable, or a change the splice gives up on."""
        if old is None or old.pending is not None or old.read_warnings or old.parsed.damage:
            return None
        if read.warnings:
            return None
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        return factsplice.splice(
            old.parsed,
            old.lines,
            lines,
            spec=spec,
            agent=agent,
            tenant=self.tenant_of(agent),
            mtimes=(old.mtime, read.mtime),
        )

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
        start of a fact a crash cut off (see :mod:`kronika.stores.markdown.facts.moves`)."""
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

    def steady_facts(self) -> AbstractContextManager[None]:
        """Within the block (one write, under the workspace lock) each fact file is
        checked against its kept parse once (:meth:`FactCache.steady`)."""
        return self._facts.steady()

    @contextmanager
    def holding_brain(self, agent: str) -> Iterator[None]:
        """Within the block, rewrites of ``agent``'s Brain are kept in memory (its kept
        parse is of the new text) and written when the block ends, or before a fact
        moves out of it; appends to the archive and the history are synced before the
        Brain is written next.

        A batch of facts so costs a Brain write per move, not per fact. The order that
        keeps a crash harmless (:mod:`~kronika.stores.markdown.facts.moves`) holds: the
        Brain on disk holds a moving fact before its destination gets it, the
        destination is on disk before the Brain that lets it go, and any other
        rewrite of a fact file writes the Brain first. Call it under the workspace
        lock."""
        folder = self.require_agent(agent)
        key = os.fspath(folder)
        if key in self._holding:
            yield
            return
        self._holding[key] = set()
        try:
            yield
        finally:
            try:
                self._release_brain(agent, key)
            finally:
                del self._holding[key]

    def _release_brain(self, agent: str, key: str) -> None:
        """Sync the files appended to while the Brain was held, then write the Brain."""
        appended = self._holding.get(key)
        if appended is None:
            return
        folder = self.agent_dir(agent)
        for path in sorted(appended):
            try:
                fd = os.open(folder / path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                raise WorkspaceError(f"cannot write {folder / path}: {exc}") from exc
        appended.clear()
        entry = self._facts.get(key, brain.BRAIN.path)
        if entry is None or entry.pending is None:
            return
        began = time.time_ns()
        try:
            stamp = write_text(folder / brain.BRAIN.path, entry.pending)
            stat = file_stat(os.stat(folder / brain.BRAIN.path))
        except BaseException:
            self._facts.drop(key, brain.BRAIN.path)
            raise
        entry.stat, entry.checked_ns, entry.pending = stat, began, None
        entry.own = stamp is not None and stat[2] == stamp

    def _write_facts(self, agent: str, path: str, text: str) -> None:
        """Replace fact file ``path`` whole (atomically). The Brain's kept parse becomes
        the parse of ``text`` (it is read at once, by the next step of every write);
        another file's is dropped, to be read again when it is asked for. While a batch
        holds the Brain (:meth:`holding_brain`) the Brain's text waits in memory."""
        folder = self.agent_dir(agent)
        key = os.fspath(folder)
        held = key in self._holding
        if held and path != brain.BRAIN.path:
            self._release_brain(agent, key)  # the Brain before any other rewrite
        before = self._facts.get(key, path) if path == brain.BRAIN.path else None
        self._facts.drop(key, path)
        began = time.time_ns()
        stamp: int | None = None
        if held and path == brain.BRAIN.path and before is not None:
            stat, mtime = before.stat, before.mtime
        else:
            stamp = write_text(folder / path, text)
            if path != brain.BRAIN.path:
                return
            try:
                stat = file_stat(os.stat(folder / path))
            except OSError:
                return
            mtime = datetime.fromtimestamp(stat[2] // 1_000_000_000, UTC)
            held = False
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
        if parsed.damage and held:  # not kept in memory: written now, as it is
            write_text(folder / path, text)
            return
        if parsed.damage:
            return
        raw = text.encode("utf-8")
        entry = FactParse(stat, began, lines, parsed, hashlib.sha256(raw), mtime, ())
        entry.own = stamp is not None and stat[2] == stamp
        if held:
            entry.pending = text
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
        key = os.fspath(self.agent_dir(agent))
        if spec is not brain.BRAIN:
            self._release_brain(agent, key)  # the Brain before any other rewrite
        self._facts.drop(key, spec.path)
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
        two leaves a copy that :mod:`~kronika.stores.markdown.facts.moves` reads as not
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
        self._release_brain(agent, os.fspath(folder))  # files are edited on disk below
        if kind is SourceKind.FACTS:
            self._drop_leftovers(agent, item.id)
        for candidate in candidates:
            lines, parsed = self._parsed(agent, candidate)
            span = parsed.span(item.id)
            if span is None:
                continue
            if kind is SourceKind.SUMMARY:
                (folder / candidate).unlink()
                self.removed.add((agent, candidate))
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


def _held(ids: set[str], parsed: ParsedItems) -> set[str]:
    """The ids of ``parsed`` that ``ids`` holds, looked up from the smaller side."""
    if len(ids) < len(parsed.spans):
        return {i for i in ids if i in parsed.spans}
    return {item.id for item in parsed.items if item.id in ids}


def _facts_file(path: str) -> brain.FactsFile:
    return next(spec for spec in brain.FACT_FILES if spec.path == path)
