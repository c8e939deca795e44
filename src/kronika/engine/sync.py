"""Keep the derived index in step with the Markdown workspace (SPEC S1, S2).

A file is re-read only when its size or modification time changed, and re-indexed
only when its content hash changed; text whose embedding is already cached (same
text, same model) is never embedded again, and the vectors of texts no item uses
any more (a forgotten memory, a turn embedded again once it was answered) are
dropped after each sync. ``rebuild`` throws the index away and builds it from the
Markdown alone, finding its unchanged texts still embedded.

Before listing an agent's files, a sync compares what it saw last time: the
modification times of the folders files live in (adding, removing or renaming a
file changes them) and the size and modification time of every file it indexed
(an edit in place changes those). When nothing differs, the listing, the index
look-up and the comparison are skipped.

A turn kronika appends to a session file is indexed alone (:meth:`Indexer._appended`):
the rows of the turns already there stay as they are, so saving a turn costs the same
whatever the session's length. Whenever the file changed in any other way, it is
re-indexed whole, as above.

Vectors of kronika's own writes may wait (:class:`Indexer` ``pending``): when the
embedding model is not in memory yet, a write indexes its rows for keyword search at
once and lists its file in the pending file; :meth:`Indexer.fill_vectors` embeds what
they lack before the next vector search, so a command that embeds nothing never loads
the model. The file is listed (and flushed to disk) before the rows are written, so a
crash in between leaves at most a file that is embedded again for nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from kronika.core.model import MemoryItem
from kronika.engine import forget_journal
from kronika.engine.lost import (
    cut_inside_a_line,
    garbled,
    keep_lost,
    lost_at_once,
    torn_items,
)
from kronika.engine.sync_appends import IndexerAppends
from kronika.engine.sync_marks import Seen as _Seen
from kronika.engine.sync_report import Progress, SyncReport
from kronika.engine.sync_vectors import PENDING_FILE, LazyModel
from kronika.ports import SourceState
from kronika.stores.markdown.facts.brain import ARCHIVE, BRAIN, FACT_FILES, HISTORY
from kronika.stores.markdown.layout import SOURCE_GLOBS, SourceKind, classify
from kronika.stores.markdown.workspace import ParsedSource, SourceFile

__all__ = ["PENDING_FILE", "Indexer", "LazyModel", "Progress", "SyncReport", "sudden_loss"]

_ITEMS_PER_BATCH = 2_000

# Every folder an indexed file can be in, relative to the agent folder ("" is itself).
_FOLDERS = tuple(
    dict.fromkeys(
        str(parent) if str(parent) != "." else ""
        for pattern in SOURCE_GLOBS
        for parent in reversed(PurePosixPath(pattern).parents)
    )
)


def sudden_loss(before: int, lost: int, after: int) -> bool:
    """Whether a fact file losing ``lost`` of its ``before`` facts (``after`` left)
    looks like damage rather than an edit: it lost them all, or at least 3 and at
    least half. Deleting a fact or two by hand is an edit."""
    return lost_at_once(SourceKind.FACTS, before, lost, after)


def _folder_marks(folder: Path) -> tuple[int | None, ...]:
    marks: list[int | None] = []
    for rel in _FOLDERS:
        try:
            marks.append(os.stat(os.path.join(folder, rel)).st_mtime_ns)
        except OSError:
            marks.append(None)
    return tuple(marks)


def _unchanged(folder: Path, seen: _Seen) -> bool:
    if _folder_marks(folder) != seen.folders:
        return False
    base = os.fspath(folder)
    for rel, mtime_ns, size in seen.files:
        try:
            stat = os.stat(os.path.join(base, rel))
        except OSError:
            return False
        if stat.st_mtime_ns != mtime_ns or stat.st_size != size:
            return False
    return True


class Indexer(IndexerAppends):
    """Brings the index up to date with the workspace, file by file."""

    def sync_agent(
        self,
        agent: str,
        *,
        paths: Sequence[str] | None = None,
        progress: Progress | None = None,
        defer_vectors: bool = False,
    ) -> SyncReport:
        """Re-index the files of ``agent`` that changed (only ``paths`` when given).

        ``defer_vectors`` (a write's own ``paths``): when the model is not in memory,
        leave their vectors to :meth:`fill_vectors` (see the module docstring)."""
        started = time.perf_counter()
        report = SyncReport()
        folder = self._workspace.require_agent(agent)
        seen = self._seen.pop(agent, None)
        if paths is None and seen is not None and _unchanged(folder, seen):
            self._seen[agent] = seen
            report.files_seen = len(seen.files)
            report.seconds = time.perf_counter() - started
            return report
        if paths is not None and len(set(paths)) > 1:
            # facts appended to the archive or history may come from the Brain in the
            # same write: the Brain is indexed first, so they are no longer indexed there
            later = [p for p in dict.fromkeys(paths) if _appendable_facts(p)]
            if later and len(later) < len(set(paths)):
                first = [p for p in dict.fromkeys(paths) if p not in later]
                report = self.sync_agent(agent, paths=first, defer_vectors=defer_vectors)
                report.merge(self.sync_agent(agent, paths=later, defer_vectors=defer_vectors))
                return report
        if paths is not None:  # turns appended by kronika: index them alone, list nothing
            embed = not defer_vectors or not self._may_defer()
            paths = [p for p in dict.fromkeys(paths) if not self._appended(agent, p, report, embed)]
            if not paths:
                report.seconds = time.perf_counter() - started
                return report
        folders = _folder_marks(folder)  # before listing: a change while listing shows next time
        known = self._index.source_states(agent)
        if paths is None:
            files = {f.path: f for f in self._workspace.list_sources(agent)}
        else:  # a write's own files: their status alone, not a listing of the folder
            found = (self._workspace.source_file(agent, p) for p in dict.fromkeys(paths))
            files = {f.path: f for f in found if f is not None}
        report.files_seen = len(files)
        if paths is None:
            for gone in sorted(set(known) - set(files)):
                self._watch_loss(agent, gone, (), report)
                self._index.remove_source(agent, gone)
                report.files_removed += 1
            candidates = list(files.values())
        else:
            candidates = []
            for path in dict.fromkeys(paths):
                if path in files:
                    candidates.append(files[path])
                elif path in known:
                    self._index.remove_source(agent, path)
                    report.files_removed += 1
        stale = [f for f in candidates if _changed(known.get(f.path), f, forced=paths is not None)]
        embed = paths is None or not defer_vectors or not self._may_defer()
        if not embed:
            self._list_pending(agent, [f.path for f in stale])
        # kronika's own writes (``paths``) remove facts on purpose; hand edits and
        # damage come in through a full sync
        self._index_files(agent, stale, known, report, progress, watch=paths is None, embed=embed)
        report.vectors_dropped = self._index.drop_unused_embeddings()
        if paths is None:  # the index now matches every file as listed
            self._seen[agent] = _Seen(
                folders, tuple((f.path, f.mtime_ns, f.size) for f in files.values())
            )
        report.seconds = time.perf_counter() - started
        return report

    def catch_up_facts(self, agent: str, *, defer_vectors: bool = False) -> SyncReport:
        """Read the fact files of ``agent`` changed since they were indexed (by hand, or
        damaged), watching for lost facts, before kronika rewrites them: three ``stat``
        calls and three look-ups when nothing changed. ``defer_vectors`` as for
        :meth:`sync_agent`."""
        report = SyncReport()
        known: dict[str, SourceState] = {}
        stale: list[SourceFile] = []
        for path in (s.path for s in FACT_FILES):
            state = self._index.source_state(agent, path)
            source = self._workspace.source_file(agent, path)
            if state is not None:
                known[path] = state
            if source is None:
                if state is not None:
                    self._watch_loss(agent, path, (), report)
                    self._index.remove_source(agent, path)
            # the Brain and the archive are read even when their times and sizes match
            # (a hand edit of the same size within the file system's time granularity)
            elif _changed(state, source, forced=path != HISTORY.path):
                stale.append(source)
        if stale:
            embed = not defer_vectors or not self._may_defer()
            if not embed:
                self._list_pending(agent, [f.path for f in stale])
            self._index_files(agent, stale, known, report, None, embed=embed)
        return report

    def sync_all(self, *, progress: Progress | None = None) -> SyncReport:
        report = SyncReport()
        agents = self._workspace.agents()
        for gone in sorted(set(self._index.agents()) - set(agents)):
            for path in self._index.source_states(gone):
                self._index.remove_source(gone, path)
        totals = {agent: len(self._workspace.list_sources(agent)) for agent in agents}
        grand_total = sum(totals.values())
        offset = 0
        for agent in agents:
            scoped: Progress | None = None
            if progress is not None:
                base = offset

                def scoped(done: int, _total: int, base: int = base) -> None:
                    progress(base + done, grand_total)

            report.merge(self.sync_agent(agent, progress=scoped))
            offset += totals[agent]
        # each sync_agent above drops what it and the removals of agents gone left
        # unused; this covers a workspace with no agent left to sync (else a no-op)
        report.vectors_dropped += self._index.drop_unused_embeddings()
        if progress is not None:
            progress(grand_total, grand_total)
        return report

    def rebuild(self, *, progress: Progress | None = None) -> SyncReport:
        """Forget the whole index and build it again from the Markdown alone."""
        self._seen.clear()
        self._before = {
            (agent, path): self._index.source_items(agent, path)
            for agent in self._index.agents()
            for path in self._index.source_states(agent)
            if classify(path) is not None
        }
        self._index.reset()
        try:
            report = self.sync_all(progress=progress)
            for agent, path in sorted(self._before):  # files no longer there at all
                if self._workspace.has_agent(agent):
                    self._watch_loss(agent, path, (), report)
        finally:
            self._before = {}
        # the texts of before that the Markdown no longer holds (or that were embedded
        # otherwise: another exchange context) have no use left
        report.vectors_dropped += self._index.drop_unused_embeddings(everywhere=True)
        return report

    def _index_files(
        self,
        agent: str,
        files: list[SourceFile],
        known: dict[str, SourceState],
        report: SyncReport,
        progress: Progress | None,
        *,
        watch: bool = True,
        embed: bool = True,
    ) -> None:
        pending: list[tuple[SourceFile, ParsedSource]] = []
        pending_items = 0
        done = 0
        for source in files:
            if classify(source.path) is SourceKind.FACTS:
                source = self._workspace.stamp_hand_facts(agent, source)
            parsed = self._workspace.parse_source(agent, source.path)
            report.warnings.extend(parsed.warnings)
            previous = known.get(source.path)
            same = previous is not None and previous.content_hash == parsed.content_hash
            if not same and (watch or (agent, source.path) in self._before):
                self._watch_loss(
                    agent, source.path, parsed.items, report
                )  # the same text lost nothing
            if (
                previous is not None
                and same
                and (previous.mtime_ns == source.mtime_ns and previous.size == source.size)
            ):
                done += 1
                continue
            pending.append((source, parsed))
            pending_items += len(parsed.items)
            if pending_items >= _ITEMS_PER_BATCH:
                done += self._flush(agent, pending, report, embed=embed)
                pending, pending_items = [], 0
                if progress is not None:
                    progress(done, len(files))
        done += self._flush(agent, pending, report, embed=embed)
        if progress is not None:
            progress(done, len(files))

    def _flush(
        self,
        agent: str,
        batch: list[tuple[SourceFile, ParsedSource]],
        report: SyncReport,
        *,
        embed: bool = True,
    ) -> int:
        if not batch:
            return 0
        hashed: list[tuple[SourceFile, ParsedSource, list[str]]] = []
        wanted: dict[str, str] = {}
        for source, parsed in batch:
            texts = self._texts(parsed)
            wanted.update(texts)
            hashed.append((source, parsed, [h for h, _text in texts]))
        if embed:
            report.texts_embedded += self._embed_missing(wanted)
        for source, parsed, hashes in hashed:
            state = SourceState(
                agent=agent,
                path=source.path,
                content_hash=parsed.content_hash,
                mtime_ns=source.mtime_ns,
                size=source.size,
            )
            self._index.replace_source(state, parsed.items, text_hashes=hashes)
            report.files_indexed += 1
            report.items_indexed += len(parsed.items)
        if embed:
            # Another process may have dropped a vector as unused between storing and use.
            report.texts_embedded += self._embed_missing(wanted)
        return len(batch)

    def _watch_loss(
        self, agent: str, path: str, now: Sequence[MemoryItem], report: SyncReport
    ) -> None:
        """Keep and report the items a file lost all at once (:func:`lost_at_once`): a
        truncated, emptied or deleted file must not lose its memories silently."""
        kind = classify(path)
        if kind is None:
            return
        before = self._before.pop((agent, path), None)
        if before is None:
            before = self._index.source_items(agent, path)
        kept = {item.id for item in now}
        lost = [item for item in before if item.id not in kept]
        cut = cut_inside_a_line(self._workspace.agent_dir(agent) / path)
        torn = torn_items(before, now, cut=cut)
        texts = [i.content for i in now]
        damaged = cut or bool(torn) or garbled((i.content for i in before), texts)
        if not torn and not lost_at_once(kind, len(before), len(lost), len(now), damaged=damaged):
            return
        forgetting = forget_journal.pending_ids(self._workspace.agent_dir(agent))
        lost = [item for item in lost if item.id not in forgetting]  # a forget cut short
        if kind is SourceKind.FACTS:
            # facts moved to another fact file (archived, superseded by another
            # process) are not lost
            # (the other files only: this one's facts are ``now``, and a write may hold
            # the Brain as it was before the file was damaged)
            ws = self._workspace
            others = {
                BRAIN.path: ws.brain_facts,
                ARCHIVE.path: ws.archived_facts,
                HISTORY.path: ws.fact_history,
            }
            moved = {
                item.id for other, facts in others.items() if other != path for item in facts(agent)
            }
            lost = [item for item in lost if item.id not in moved]
        if not torn and not lost_at_once(kind, len(before), len(lost), len(now), damaged=damaged):
            return
        lost += torn
        copy = keep_lost(self._workspace, agent, path, lost)
        self._workspace.damaged.add((agent, path))
        what = "facts" if kind is SourceKind.FACTS else "items"
        note = (
            f"{agent}/{path} lost {len(lost)} of its {len(before)} {what} at once (was it "
            "truncated or emptied?); `kronika doctor --fix` puts back what it can; the "
            f"index's copy of them was kept at {copy}"
        )
        report.warnings.append(note)
        self._workspace.notes.append(note)


def _appendable_facts(path: str) -> bool:
    """A fact file kronika appends to (the archive, the history; not the Brain)."""
    return classify(path) is SourceKind.FACTS and path != BRAIN.path


def _changed(state: SourceState | None, source: SourceFile, *, forced: bool) -> bool:
    if state is None or forced:
        return True
    return state.mtime_ns != source.mtime_ns or state.size != source.size
