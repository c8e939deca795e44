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

A turn kronika appends to a session file is indexed alone (:meth:`.appends.Appends.appended`):
the rows of the turns already there stay as they are, so saving a turn costs the same
whatever the session's length. Whenever the file changed in any other way, it is
re-indexed whole, as above.

Vectors of kronika's own writes may wait (:mod:`.vectors`, ``pending``): when the
embedding model is not in memory yet, a write indexes its rows for keyword search at
once and lists its file in the pending file; :meth:`.vectors.Vectors.fill_vectors` embeds what
they lack before the next vector search, so a command that embeds nothing never loads
the model. The file is listed (and flushed to disk) before the rows are written, so a
crash in between leaves at most a file that is embedded again for nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from kronika.core.alias import Alias
from kronika.engine.indexer.appends import Appends
from kronika.engine.indexer.losses import Losses
from kronika.engine.indexer.marks import Seen as _Seen
from kronika.engine.indexer.report import Progress, SyncReport
from kronika.engine.indexer.state import EMBEDDING_DEFAULTS, IndexerState
from kronika.engine.indexer.vectors import Vectors
from kronika.engine.lost import lost_at_once
from kronika.ports import Embedder, IndexSources, SourceRows, SourceState
from kronika.settings import EmbeddingGroup
from kronika.stores.markdown.facts.brain import BRAIN, FACT_FILES, HISTORY
from kronika.stores.markdown.layout import FOLDERS_ON_THE_WAY, SourceKind, classify
from kronika.stores.markdown.workspace import MarkdownWorkspace, ParsedSource, SourceFile

__all__ = ["Indexer", "sudden_loss"]

_ITEMS_PER_BATCH = 2_000


def sudden_loss(before: int, lost: int, after: int) -> bool:
    """Whether a fact file losing ``lost`` of its ``before`` facts (``after`` left)
    looks like damage rather than an edit: it lost them all, or at least 3 and at
    least half. Deleting a fact or two by hand is an edit."""
    return lost_at_once(SourceKind.FACTS, before, lost, after)


def _folder_marks(folder: Path) -> tuple[int | None, ...]:
    marks: list[int | None] = []
    for rel in FOLDERS_ON_THE_WAY:
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


class Indexer:
    """Brings the index up to date with the workspace, file by file.

    A small object over named parts sharing one :class:`~.state.IndexerState`:
    ``indexer.vectors`` (:mod:`.vectors`), ``indexer.appends`` (:mod:`.appends`) and
    ``indexer.losses`` (:mod:`.losses`); none inherits from another."""

    state: IndexerState
    """The workspace, the index, the embedder and what the last syncs left."""
    vectors: Vectors
    """The vectors of what is indexed, got now or later (the pending file)."""
    appends: Appends
    """Turns and facts kronika appended, and facts it patched, indexed alone."""
    losses: Losses
    """What a file lost all at once, kept aside and reported."""

    def __init__(
        self,
        *,
        workspace: MarkdownWorkspace,
        index: IndexSources,
        embedder: Embedder,
        embedding: EmbeddingGroup = EMBEDDING_DEFAULTS,
        pending: Path | None = None,
        from_record: Callable[[str, str], bool] | None = None,
    ) -> None:
        self.state = IndexerState(
            workspace=workspace,
            index=index,
            embedder=embedder,
            embedding=embedding,
            pending=pending,
            from_record=from_record,
        )
        self.vectors = Vectors(self.state)
        self.appends = Appends(self.state, self.vectors)
        self.losses = Losses(self.state)

    # ------------------------------------------------ flat names of the parts' verbs
    session_tail = Alias("appends", Appends.session_tail)
    forget_tail = Alias("appends", Appends.forget_tail)
    waiting = Alias("vectors", Vectors.waiting)
    fill_vectors = Alias("vectors", Vectors.fill_vectors)

    def sync_agent(
        self,
        agent: str,
        *,
        paths: Sequence[str] | None = None,
        progress: Progress | None = None,
        defer_vectors: bool = False,
        drop_unused: bool = True,
    ) -> SyncReport:
        """Re-index the files of ``agent`` that changed (only ``paths`` when given).

        ``defer_vectors`` (a write's own ``paths``): when the model is not in memory,
        leave their vectors to :meth:`fill_vectors` (see the module docstring).
        ``drop_unused`` False: leave what the rows deleted no longer use (cached vectors,
        the statistics and recall-log entries of ids gone) to a later drop."""
        started = time.perf_counter()
        report = SyncReport()
        folder = self.state.workspace.require_agent(agent)
        # the files as the index last matched them all (kept through a write's own sync,
        # which changes some: a quiet sync finds them changed, or the watch says so)
        seen = self.state.seen.pop(agent, None) if paths is None else self.state.seen.get(agent)
        watched = False  # the listing below follows a look of the folder watch
        if paths is None:
            # the files the watch says changed; None: it cannot say (a link among the
            # files, a watch that lost track, none here): every file is looked at
            changed = self.state.workspace.changed_sources(agent)
            watched = self.state.workspace.watched
            if seen is not None and changed:
                self.state.seen[agent] = seen
                try:
                    return self._sync_changed(agent, sorted(changed), report, started)
                except BaseException:
                    self.state.workspace.forget_changes()  # what it said is not indexed
                    raise
            if seen is not None and (changed is not None or _unchanged(folder, seen)):
                self.state.seen[agent] = seen
                report.files_seen = len(seen.files)
                report.seconds = time.perf_counter() - started
                return report
        if paths is not None and len(set(paths)) > 1:
            # facts appended to the archive or history may come from the Brain in the
            # same write: the Brain is indexed first, so they are no longer indexed there
            # and the archive before the history: a value an archived fact had moves
            # there, and the history's append needs it out of the archive's rows
            later = sorted(
                (p for p in dict.fromkeys(paths) if _appendable_facts(p)), key=_fact_order
            )
            if later and len(later) < len(set(paths)):
                first = [p for p in dict.fromkeys(paths) if p not in later]
                report = self.sync_agent(
                    agent, paths=first, defer_vectors=defer_vectors, drop_unused=False
                )
                report.merge(
                    self.sync_agent(
                        agent, paths=later, defer_vectors=defer_vectors, drop_unused=False
                    )
                )
                # one drop after both: a fact the Brain let go is deleted by the first
                # and written by the second, and keeps its usage statistics, its
                # entries in the recall log and its vectors
                if drop_unused:
                    report.vectors_dropped = self.state.index.drop_unused_embeddings()
                return report
        read: dict[str, SourceState] | None = None
        if paths is not None:  # turns appended by kronika: index them alone, list nothing
            embed = not defer_vectors or not self.vectors.may_defer()
            unique = sorted(dict.fromkeys(paths), key=_fact_order)
            # a fact file's state is read once, for the append and the sync alike
            if any(classify(p) is SourceKind.FACTS for p in unique):
                read = self.state.index.source_states(agent, unique)
            paths = [p for p in unique if not self.appends.appended(agent, p, report, embed, read)]
            if not paths:
                if drop_unused:  # a patch may have deleted a text no row holds any more
                    report.vectors_dropped = self.state.index.drop_unused_embeddings()
                report.seconds = time.perf_counter() - started
                return report
        folders = _folder_marks(folder)  # before listing: a change while listing shows next time
        # a write's own files: their states alone (a read that does not grow with the agent);
        # those of files not appended to are as read above
        if paths is not None and read is not None:
            known = {p: found for p, found in read.items() if p in paths}
        else:
            known = self.state.index.source_states(
                agent, None if paths is None else list(dict.fromkeys(paths))
            )
        if paths is None:
            listed = self.state.workspace.list_sources(agent, watched=watched)
            files = {f.path: f for f in listed}
        else:  # a write's own files: their status alone, not a listing of the folder
            found = (self.state.workspace.source_file(agent, p) for p in dict.fromkeys(paths))
            files = {f.path: f for f in found if f is not None}
        report.files_seen = len(files)
        if paths is None:
            self._remove_gone(agent, sorted(set(known) - set(files)), report)
            candidates = list(files.values())
        else:
            candidates = []
            for path in dict.fromkeys(paths):
                if path in files:
                    candidates.append(files[path])
                elif path in known:
                    self.state.index.remove_source(agent, path)
                    report.files_removed += 1
        stale = [f for f in candidates if _changed(known.get(f.path), f, forced=paths is not None)]
        embed = paths is None or not defer_vectors or not self.vectors.may_defer()
        if not embed:
            self.vectors.list_pending(agent, [f.path for f in stale])
        # kronika's own writes (``paths``) remove facts on purpose; hand edits and
        # damage come in through a full sync
        self._index_files(agent, stale, known, report, progress, watch=paths is None, embed=embed)
        if drop_unused:
            report.vectors_dropped = self.state.index.drop_unused_embeddings()
        if paths is None:  # the index now matches every file as listed
            self.state.seen[agent] = _Seen(
                folders, tuple((f.path, f.mtime_ns, f.size) for f in files.values())
            )
            if watched:  # from now on the watch says what changed since
                self.state.workspace.sources_listed(agent)
        report.seconds = time.perf_counter() - started
        return report

    def _sync_changed(
        self, agent: str, paths: Sequence[str], report: SyncReport, started: float
    ) -> SyncReport:
        """:meth:`sync_agent` of the files the folder watch says changed since its last
        look (by this process, another or an editor): each read again when its time or
        size is not what the index holds, as a full sync would, removed when gone; the
        other files are not looked at."""
        known = self.state.index.source_states(agent, list(paths))
        files = {
            f.path: f
            for f in (self.state.workspace.source_file(agent, p) for p in paths)
            if f is not None
        }
        report.files_seen = len(files)
        self._remove_gone(agent, [p for p in paths if p not in files and p in known], report)
        stale = [f for f in files.values() if _changed(known.get(f.path), f, forced=False)]
        self._index_files(agent, stale, known, report, None, watch=True, embed=True)
        report.vectors_dropped = self.state.index.drop_unused_embeddings()
        report.seconds = time.perf_counter() - started
        return report

    def _remove_gone(self, agent: str, paths: Sequence[str], report: SyncReport) -> None:
        """Take the rows of files no longer there out of the index (their facts watched
        for loss first)."""
        for gone in paths:
            self.losses.watch(agent, gone, (), report)
            self.state.index.remove_source(agent, gone)
            report.files_removed += 1

    def catch_up_facts(self, agent: str, *, defer_vectors: bool = False) -> SyncReport:
        """Read the fact files of ``agent`` changed since they were indexed (by hand, or
        damaged), watching for lost facts, before kronika rewrites them: three ``stat``
        calls and one look-up when nothing changed. ``defer_vectors`` as for
        :meth:`sync_agent`.

        A file that is the store of record's version (team mode) is left to the writer
        that wrote it, who indexes it once the record holds it: no edit of this folder
        is there to find, and the index may not have it yet. With all three such, the
        index is not asked at all."""
        report = SyncReport()
        known: dict[str, SourceState] = {}
        stale: list[SourceFile] = []
        paths = [s.path for s in FACT_FILES if not self.state.from_record(agent, s.path)]
        if not paths:
            return report
        states = self.state.index.source_states(agent, paths)
        for path in paths:
            state = states.get(path)
            source = self.state.workspace.source_file(agent, path)
            if state is not None:
                known[path] = state
            if source is None:
                if state is not None:
                    self.losses.watch(agent, path, (), report)
                    self.state.index.remove_source(agent, path)
            # the Brain and the archive are read even when their times and sizes match
            # (a hand edit of the same size within the file system's time granularity)
            elif _changed(state, source, forced=path != HISTORY.path):
                stale.append(source)
        if stale:
            embed = not defer_vectors or not self.vectors.may_defer()
            if not embed:
                self.vectors.list_pending(agent, [f.path for f in stale])
            self._index_files(agent, stale, known, report, None, embed=embed)
        return report

    def sync_all(self, *, progress: Progress | None = None) -> SyncReport:
        report = SyncReport()
        agents = self.state.workspace.agents()
        for gone in sorted(set(self.state.index.agents()) - set(agents)):
            for path in self.state.index.source_states(gone):
                self.state.index.remove_source(gone, path)
        totals = {agent: len(self.state.workspace.list_sources(agent)) for agent in agents}
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
        report.vectors_dropped += self.state.index.drop_unused_embeddings()
        if progress is not None:
            progress(grand_total, grand_total)
        return report

    def rebuild(self, *, progress: Progress | None = None) -> SyncReport:
        """Forget the whole index and build it again from the Markdown alone."""
        self.state.seen.clear()
        self.state.before = {
            (agent, path): self.state.index.source_items(agent, path)
            for agent in self.state.index.agents()
            for path in self.state.index.source_states(agent)
            if classify(path) is not None
        }
        self.state.index.reset()
        try:
            report = self.sync_all(progress=progress)
            for agent, path in sorted(self.state.before):  # files no longer there at all
                if self.state.workspace.has_agent(agent):
                    self.losses.watch(agent, path, (), report)
        finally:
            self.state.before = {}
        # the texts of before that the Markdown no longer holds (or that were embedded
        # otherwise: another exchange context) have no use left
        report.vectors_dropped += self.state.index.drop_unused_embeddings(everywhere=True)
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
                source = self.state.workspace.stamp_hand_facts(agent, source)
            parsed = self.state.workspace.parse_source(agent, source.path)
            report.warnings.extend(parsed.warnings)
            previous = known.get(source.path)
            same = previous is not None and previous.content_hash == parsed.content_hash
            watched = watch and not self.state.from_record(agent, source.path)
            if not same and (watched or (agent, source.path) in self.state.before):
                self.losses.watch(
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
            texts = self.vectors.texts(parsed)
            wanted.update(texts)
            hashed.append((source, parsed, [h for h, _text in texts]))
        # the texts not cached yet are embedded now and cached by the transaction that
        # writes their rows; a vector another process dropped as unused between the
        # look-up and the write comes back as lacking, and is embedded again
        vectors = self.vectors.embedded(wanted, report) if embed else None
        files: list[SourceRows] = []
        for source, parsed, hashes in hashed:
            state = SourceState(
                agent=agent,
                path=source.path,
                content_hash=parsed.content_hash,
                mtime_ns=source.mtime_ns,
                size=source.size,
            )
            mine = None if vectors is None else {h: vectors[h] for h in hashes if h in vectors}
            files.append(SourceRows(state, parsed.items, hashes, mine))
        # the batch's files in one transaction: one commit, not one a file
        lacking = self.state.index.replace_sources(files)
        report.files_indexed += len(files)
        report.items_indexed += sum(len(f.items) for f in files)
        if lacking:
            report.texts_embedded += self.vectors.embed_missing(
                {h: wanted[h] for h in lacking if h in wanted}
            )
        return len(batch)


def _fact_order(path: str) -> int:
    """A fact file's place in the order facts move in: the Brain, the archive, the
    history (the order their copies of an id win in); 0 for any other file."""
    return next((n for n, spec in enumerate(FACT_FILES) if spec.path == path), 0)


def _appendable_facts(path: str) -> bool:
    """A fact file kronika appends to (the archive, the history; not the Brain)."""
    return classify(path) is SourceKind.FACTS and path != BRAIN.path


def _changed(state: SourceState | None, source: SourceFile, *, forced: bool) -> bool:
    if state is None or forced:
        return True
    return state.mtime_ns != source.mtime_ns or state.size != source.size
