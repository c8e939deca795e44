"""Writing the fact files (``workspace.fact_writer``): a file replaced whole with its
kept parse made from the new text, facts appended (in place when :mod:`.append`
can), hand-written bullets stamped, a torn tail cut off, and the Brain held in
memory through a batch (:meth:`FactWriter.holding_brain`). The order of a move and
how a crash reads: :mod:`.moves`."""

from __future__ import annotations

import bisect
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from itertools import accumulate

from kronika.core.model import MemoryItem
from kronika.errors import WorkspaceError
from kronika.stores import batch
from kronika.stores.durable import sync_file
from kronika.stores.markdown.agentfiles import AgentFiles, SourceFile
from kronika.stores.markdown.atomic import set_pulled_time
from kronika.stores.markdown.facts import append as append_parse
from kronika.stores.markdown.facts import brain, lookup, moves, splice
from kronika.stores.markdown.facts.append import append_facts
from kronika.stores.markdown.facts.cache import FactDelta, FactParse, file_stat
from kronika.stores.markdown.facts.reads import FactReads
from kronika.stores.markdown.files import (
    CONTROL,
    encoded,
    keep_copy,
    read_source,
    write_bytes,
    write_text,
)
from kronika.stores.markdown.lines import ParsedItems, split_lines
from kronika.stores.markdown.state import WorkspaceState

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # any time: only the ids of a parse are used


class FactWriter:
    """Every write of a fact file goes through here (see the module docstring)."""

    def __init__(self, state: WorkspaceState, files: AgentFiles, reads: FactReads) -> None:
        self.state = state
        self.files = files
        self.reads = reads

    def steady_facts(self) -> AbstractContextManager[None]:
        """Within the block (one write, under the workspace lock) each fact file is
        checked against its kept parse once (:meth:`FactCache.steady`)."""
        return self.state.facts.steady()

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
        folder = self.files.require_agent(agent)
        key = os.fspath(folder)
        if key in self.state.holding:
            yield
            return
        self.state.holding[key] = set()
        try:
            yield
        finally:
            try:
                self.release_brain(agent, key, last=True)
            finally:
                del self.state.holding[key]

    def release_brain(self, agent: str, key: str, *, last: bool = False) -> None:
        """Sync the files appended to while the Brain was held, then write the Brain.

        Inside a batch (:func:`~kronika.stores.batch.recording`) a release before the
        ``last`` one syncs nothing: the files reach other readers in the order they are
        written all the same, and a crash before the batch ends puts every file back
        (its journal); the last release syncs what was appended meanwhile and writes
        the Brain durably (a move of facts out of the Brain would otherwise cost two
        ``fsync``, 66 moves in a batch of 1,000 facts at the default budget)."""
        appended = self.state.holding.get(key)
        if appended is None:
            return
        folder = self.files.agent_dir(agent)
        interim = not last and batch.recording()
        for path in [] if interim else sorted(appended):
            try:
                fd = os.open(folder / path, os.O_RDONLY)
                try:
                    sync_file(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                raise WorkspaceError(f"cannot write {folder / path}: {exc}") from exc
        if not interim:
            appended.clear()
        entry = self.state.facts.get(key, brain.BRAIN.path)
        if entry is None or entry.pending is None:
            return
        began = time.time_ns()
        try:
            stamp = write_text(folder / brain.BRAIN.path, entry.pending, durable=not interim)
            stat = file_stat(os.stat(folder / brain.BRAIN.path))
        except BaseException:
            self.state.facts.drop(key, brain.BRAIN.path)
            raise
        entry.stat, entry.checked_ns, entry.pending = stat, began, None
        entry.own = stamp is not None and stat[2] == stamp

    def write(
        self,
        agent: str,
        path: str,
        text: str,
        lines: list[str] | None = None,
        *,
        mtime_ns: int | None = None,
    ) -> None:
        """Replace fact file ``path`` whole (atomically). The kept parse of the file
        becomes the parse of ``text``, spliced from the one before (:mod:`.splice`: a
        fact leaving a long archive, or a key's values forgotten from a long history, do
        not parse it again, and the index patches the rows it changed); an archive or a
        history with no kept parse is parsed when it is asked for. While a batch holds
        the Brain (:meth:`holding_brain`) the Brain's text waits in memory. ``lines``:
        ``text`` as its lines, when the caller made it from the kept parse's lines:
        those it kept are not split or looked at again (:func:`_cleaned`).
        ``mtime_ns``: the file's modification time, given once it is written (a pulled
        file takes the record's)."""
        folder = self.files.agent_dir(agent)
        key = os.fspath(folder)
        held = key in self.state.holding
        if held and path != brain.BRAIN.path:
            self.release_brain(agent, key)  # the Brain before any other rewrite
        spec = next((s for s in brain.FACT_FILES if s.path == path), None)
        before = self.state.facts.get(key, path) if spec is not None else None
        text, lines = _cleaned(before, text, lines)
        raw = encoded(folder / path, text)
        self.state.facts.drop(key, path)
        began = time.time_ns()
        stamp: int | None = None
        if held and path == brain.BRAIN.path and before is not None:
            stat, mtime = before.stat, before.mtime
        else:
            stamp = write_bytes(folder / path, raw)
            if mtime_ns is not None:  # the record's time, kronika's stamp when it is one
                stamp = set_pulled_time(folder / path, mtime_ns)
            if spec is None or (spec is not brain.BRAIN and before is None):
                return  # parsed when it is asked for
            try:
                stat = file_stat(os.stat(folder / path))
            except OSError:
                return
            mtime = datetime.fromtimestamp(stat[2] // 1_000_000_000, UTC)
            held = False
        if spec is None:
            return
        tenant = self.state.tenant_of(agent)
        change = None
        if before is not None and not before.read_warnings:
            change = splice.splice_change(
                before.parsed,
                before.lines,
                lines,
                spec=spec,
                agent=agent,
                tenant=tenant,
                mtimes=(before.mtime, mtime),
                borrowed=lookup.borrows(before, before.mtime),
            )
        if change is not None:
            parsed = change.parsed
        else:
            parsed = brain.parse_facts(text, spec=spec, agent=agent, tenant=tenant, mtime=mtime)
        if parsed.damage and held:  # not kept in memory: written now, as it is
            write_text(folder / path, text)
            return
        if parsed.damage:
            return
        entry = FactParse(stat, began, lines, parsed, hashlib.sha256(raw), mtime, (), clean=True)
        entry.own = stamp is not None and stat[2] == stamp
        if held:
            entry.pending = text
        if change is not None and before is not None:
            lookup.carry(before, entry, change)
            if not change.shifted:
                start, end, stop = change.region
                cut = sum(map(len, before.lines[start:end]))
                entry.delta = FactDelta(
                    before.content_hash,
                    entry.content_hash,
                    change.gone,
                    change.added,
                    cut,
                    start,
                    stop,
                )
        self.state.facts.rewrite(key, path, before, entry)

    def append(
        self, agent: str, spec: brain.FactsFile, items: Sequence[MemoryItem]
    ) -> list[MemoryItem]:
        """Append ``items`` to ``spec``'s file; a copy of one of them already there (left
        by an interrupted move) is replaced in the same write. The archive and the
        history are appended to in place (:func:`~.append.append_facts`) when they
        can be; the Brain, and a file that cannot be, are rewritten whole."""
        if spec is not brain.BRAIN:
            # a batch holding the Brain writes it first: the facts moved now must be in
            # the Brain on disk before they reach their destination (:mod:`.moves`)
            self.release_brain(agent, os.fspath(self.files.require_agent(agent)))
            appended = append_facts(
                self.reads, agent, spec, items, cut_torn_tail=self.cut_torn_tail
            )
            if appended is not None:
                return appended
        stored: list[MemoryItem] = []

        def change(lines: list[str], here: ParsedItems) -> list[str]:
            lines = moves.drop_bullets(lines, here, (item.id for item in items))
            for item in items:
                lines, at = brain.insert_fact(lines, item)
                stored.append(brain.with_line(replace(item, status=spec.status), spec.path, at))
            return lines

        self.edit(agent, spec, change, kept=spec is brain.BRAIN)
        return stored

    def edit(
        self,
        agent: str,
        spec: brain.FactsFile,
        change: Callable[[list[str], ParsedItems], list[str]],
        *,
        kept: bool = True,
    ) -> None:
        """Rewrite ``spec``'s file whole as ``change`` makes its lines (given with their
        parse); a missing file is created first. ``kept``: the kept parse is used when
        the file is as it holds it (else the file is read and parsed again)."""
        entry = self.reads.kept(agent, spec.path) if kept else None
        if entry is not None and not entry.read_warnings:
            lines = change(list(entry.lines), entry.parsed)
            self.write(agent, spec.path, "".join(lines), lines)
            return
        key = os.fspath(self.files.agent_dir(agent))
        if spec is not brain.BRAIN:
            self.release_brain(agent, key)  # the Brain before any other rewrite
        self.state.facts.drop(key, spec.path)

        def parsed_change(lines: list[str]) -> list[str]:
            here = brain.parse_facts(
                "".join(lines),
                spec=spec,
                agent=agent,
                tenant=self.state.tenant_of(agent),
                mtime=_EPOCH,
            )
            return change(lines, here)

        self.files.edit(agent, spec.path, parsed_change, brain.empty_document(spec))

    def kept_before_pull(self, agent: str, path: str, base: str) -> FactParse | None:
        """The kept parse of archive or history ``path`` when the file is as it holds it
        and hashes to ``base`` (a working copy is about to add the record's new text
        after its end: :meth:`facts_pulled`); ``None`` otherwise (read it whole)."""
        spec = next((s for s in brain.FACT_FILES if s.path == path), None)
        if spec is None or spec is brain.BRAIN:
            return None
        entry = self.reads.kept(agent, path)
        if entry is None or not entry.whole_lines or entry.content_hash != base:
            return None
        return entry

    def splice_pulled(
        self,
        agent: str,
        path: str,
        digests: tuple[str, str],
        splice: tuple[int, int, str],
        mtime_ns: int,
    ) -> os.stat_result | None:
        """Put ``text`` over the ``cut`` characters from character ``at`` of the archive
        (``splice``), when its kept parse is of the file as it is and hashes to the first
        of ``digests``, and the text so made hashes to the second (a working copy pulling
        an archived fact another worker gave a new value); then give the file the
        modification time ``mtime_ns``. The file is written whole, the parse spliced
        (:meth:`write`). Its status then, or ``None`` when nothing was written."""
        before, after = digests
        at, cut, text = splice
        entry = self.kept_before_pull(agent, path, before)
        if entry is None or path != brain.ARCHIVE.path:
            return None
        if CONTROL.search(text) is not None:
            return None  # the record's text is a workspace's, which holds none
        ends = list(accumulate(map(len, entry.lines), initial=0))  # where each line starts
        start, end = bisect.bisect_left(ends, at), bisect.bisect_left(ends, at + cut)
        if end >= len(ends) or (ends[start], ends[end]) != (at, at + cut):
            return None  # not whole lines
        lines = [*entry.lines[:start], *split_lines(text), *entry.lines[end:]]
        new = "".join(lines)
        if hashlib.sha256(new.encode("utf-8")).hexdigest() != after:
            return None
        self.write(agent, path, new, lines, mtime_ns=mtime_ns)
        try:
            return os.stat(self.files.agent_dir(agent) / path)
        except OSError:
            return None

    def facts_pulled(
        self,
        agent: str,
        path: str,
        entry: FactParse,
        text: str,
        stat: os.stat_result,
        *,
        own: bool = False,
    ) -> None:
        """``text`` was added after the end of the file ``entry`` is the kept parse of
        (:meth:`kept_before_pull`), which now has status ``stat``: the parse is extended
        by the added lines alone, as after kronika's own append, so the next write does
        not read a long archive again. ``own``: the file's time is one no later write
        leaves (:func:`~kronika.stores.markdown.atomic.set_pulled_time`), so the parse is
        used without hashing the file again. Facts whose ids it held already: it is
        dropped (read whole next time)."""
        new = split_lines(text)
        if not new:
            return
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        held = len(lookup.ids(entry))  # the set itself grows with the parse
        tail = append_parse.last_section(new, append_parse.file_tail(entry))
        added = append_parse.extend_parse(
            self.reads,
            agent,
            spec,
            entry,
            new,
            text.encode("utf-8"),
            file_stat(stat),
            time.time_ns(),
            tail=tail,
            own=own,
        )
        if any(line.startswith("- ") and "<!--" not in line for line in new):
            entry.derived.pop("hand", None)  # a bullet without metadata: looked for again
        if len(lookup.ids(entry)) != held + len(added):  # an id it held already
            self.state.facts.drop(os.fspath(self.files.require_agent(agent)), path)

    def stamp_hand_facts(self, agent: str, source: SourceFile) -> SourceFile:
        """Give the hand-written bullets of a fact file their metadata, so they keep
        the time they were first read (:func:`brain.stamp_hand_facts`); returns the
        file's new stat, or ``source`` when nothing was written. A damaged file, one
        edited again meanwhile, or one that cannot be written is left as it is."""
        spec = next((s for s in brain.FACT_FILES if s.path == source.path), None)
        folder = self.files.require_agent(agent)
        if spec is not None and spec is not brain.BRAIN and self.cut_torn_tail(agent, spec):
            stat = (folder / source.path).stat()  # a torn start is never stamped
            source = SourceFile(source.path, stat.st_mtime_ns, stat.st_size)
        entry = self.reads.kept(agent, source.path) if spec is not None else None
        if entry is not None and not lookup.hand_written(entry):
            return source
        read = read_source(folder, source.path) if spec is not None else None
        if spec is None or read is None or read.warnings:
            return source
        text = brain.stamp_hand_facts(
            read.text, spec=spec, agent=agent, tenant=self.state.tenant_of(agent), mtime=read.mtime
        )
        again = read_source(folder, source.path) if text is not None else None
        if text is None or again is None or again.raw != read.raw:
            return source
        try:
            self.write(agent, source.path, text)
        except WorkspaceError:
            return source
        stat = (folder / source.path).stat()
        return SourceFile(source.path, stat.st_mtime_ns, stat.st_size)

    def cut_torn_tail(self, agent: str, spec: brain.FactsFile) -> bool:
        """Cut off the torn last line of an archive or history (:func:`moves.torn_tail`),
        keeping a copy of the file in ``.corrupt/``; False when it does not end torn."""
        entry = self.reads.kept(agent, spec.path)
        if entry is None:
            return False
        ahead: set[str] = set()
        for other in moves.files_ahead(spec):
            ahead.update(self.reads.ids(agent, other.path))
        if self.reads.torn_tail(agent, spec, entry.parsed, entry.lines, ahead) is None:
            return False
        folder = self.files.require_agent(agent)
        read = read_source(folder, spec.path)
        if read is None or split_lines(read.text) != entry.lines:
            return False
        copy = keep_copy(folder, spec.path, read.raw)
        whole = "".join(entry.lines[:-1]).encode("utf-8")
        self.state.facts.drop(os.fspath(folder), spec.path)
        try:
            batch.keep(folder / spec.path, cutting=True)
            with open(folder / spec.path, "r+b") as handle:
                handle.truncate(len(whole))
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise WorkspaceError(f"cannot write {folder / spec.path}: {exc}") from exc
        self.state.notes.append(
            f"{spec.path} ended in the start of a fact cut off by a crash; it was removed "
            f"(a copy of the file was kept at {copy})"
        )
        return True


def _cleaned(before: FactParse | None, text: str, lines: list[str] | None) -> tuple[str, list[str]]:
    """``text`` without control characters, and its lines. When ``before`` (the kept
    parse of the file being rewritten) holds none and ``lines`` (the caller's lines of
    ``text``) differ from its lines only where they were replaced by whole lines, only
    those lines are looked at: a fact leaving a long archive does not scan it whole."""
    if before is not None and before.clean and lines is not None:
        start = splice.common_start(before.lines, lines)
        stop = splice.common_end(before.lines, lines, start)[1]
        new = lines[start:stop]
        last = len(lines) - 1
        whole = all(
            "\n" not in line[:-1] and (line[-1:] == "\n" or (n == last and line))
            for n, line in enumerate(new, start)
        )
        if whole and CONTROL.search("".join(new)) is None:
            return text, lines
    text = CONTROL.sub("", text)
    return text, split_lines(text)
