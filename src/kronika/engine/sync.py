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

import hashlib
import json
import operator
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import Protocol, cast, runtime_checkable

from kronika.core.model import MemoryItem
from kronika.core.text import content_hash, embedding_texts
from kronika.core.visibility import Audience
from kronika.errors import KronikaError
from kronika.ports import Embedder, ItemIndex, SourceState, SourceTail, Vector
from kronika.stores.markdown import sessions
from kronika.stores.markdown.appending import appended_since
from kronika.stores.markdown.brain import BRAIN
from kronika.stores.markdown.layout import SOURCE_GLOBS, SourceKind, classify
from kronika.stores.markdown.lines import bare, split_lines
from kronika.stores.markdown.sessions import TURN_RE
from kronika.stores.markdown.workspace import MarkdownWorkspace, ParsedSource, SourceFile
from kronika.stores.private import open_private

Progress = Callable[[int, int], None]
"""``progress(done, total)`` — called as files are indexed."""

_ITEMS_PER_BATCH = 2_000

PENDING_FILE = "index.sqlite.pending"
"""Beside the index: the files whose rows wait for vectors, one JSON ``[agent, path]``
per line."""

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
    return lost > 0 and (after == 0 or (lost >= 3 and 2 * lost >= before))


@runtime_checkable
class LazyModel(Protocol):
    """An embedder whose model loads on first use (``loaded`` says whether it has)."""

    @property
    def loaded(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class _Seen:
    """What an agent's files looked like when the index last matched them all."""

    folders: tuple[int | None, ...]
    files: tuple[tuple[str, int, int], ...]  # path, mtime_ns, size


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


@dataclass(slots=True)
class SyncReport:
    """What one sync or rebuild did."""

    files_seen: int = 0
    files_indexed: int = 0
    files_removed: int = 0
    items_indexed: int = 0
    texts_embedded: int = 0
    vectors_dropped: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def merge(self, other: SyncReport) -> None:
        self.files_seen += other.files_seen
        self.files_indexed += other.files_indexed
        self.files_removed += other.files_removed
        self.items_indexed += other.items_indexed
        self.texts_embedded += other.texts_embedded
        self.vectors_dropped += other.vectors_dropped
        self.seconds += other.seconds
        self.warnings.extend(other.warnings)


class Indexer:
    """Brings the index up to date with the workspace, file by file."""

    def __init__(
        self,
        *,
        workspace: MarkdownWorkspace,
        index: ItemIndex,
        embedder: Embedder,
        embed_batch: int = 64,
        context_words: int = 0,
        pending: Path | None = None,
    ) -> None:
        self._workspace = workspace
        self._pending = pending
        self._index = index
        self._embedder = embedder
        self._embed_batch = max(1, embed_batch)
        self._context_words = context_words
        self._seen: dict[str, _Seen] = {}
        # an isinstance of a runtime Protocol is slow: asked once, not at every write
        self._lazy = isinstance(embedder, LazyModel)
        # the tail of a session file read for a turn about to be appended to it
        self._tails: dict[tuple[str, str], SourceTail | None] = {}
        # the facts each fact file held before a rebuild emptied the index
        self._before: dict[tuple[str, str], list[MemoryItem]] = {}

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

    def session_tail(self, agent: str, path: str) -> SourceTail | None:
        """The end of a session file as the index holds it, kept for the sync of the turn
        about to be appended to it (:meth:`forget_tail` once that write is done), so a
        saved turn reads its file's last rows once. A tail the index no longer holds is
        harmless: the rows are only written while the index holds the state it was
        read with."""
        tail = self._index.source_tail(agent, path)
        self._tails[(agent, path)] = tail
        return tail

    def forget_tail(self, agent: str, path: str) -> None:
        self._tails.pop((agent, path), None)

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
            if classify(path) is SourceKind.FACTS
        }
        self._index.reset()
        try:
            report = self.sync_all(progress=progress)
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
            if watch or (agent, source.path) in self._before:
                self._watch_loss(agent, source.path, parsed.items, report)
            previous = known.get(source.path)
            if (
                previous is not None
                and previous.content_hash == parsed.content_hash
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

    def _texts(self, parsed: ParsedSource) -> list[tuple[str, str]]:
        """``(hash, text)`` of what each item of ``parsed`` is embedded from, in item order."""
        texts = embedding_texts(parsed.items, context_words=self._context_words)
        return [(content_hash(text), text) for text in texts]

    def _appended(self, agent: str, path: str, report: SyncReport, embed: bool = True) -> bool:
        """Index only the turns added at the end of a session file, if that is all that
        changed since it was indexed; ``False`` (nothing done) otherwise.

        The bytes the index was built from must still start the file (same hash), end
        a line, and be followed by whole turns only, and the turn before the new ones
        must keep its embedded text (a reply from another person changes its exchange
        context, and rows are never updated in place). The rows are then the ones a
        full re-index of the file would make. When this process's own append is all
        that changed, its bytes are taken from :func:`appended_since` instead of
        reading and hashing the file. Without ``embed`` their vectors wait, as a
        write's may (see the module docstring)."""
        if classify(path) is SourceKind.FACTS:
            state = self._index.source_state(agent, path)
            source = self._workspace.source_file(agent, path)
            return self._appended_facts(
                agent, path, state, source, report, embed
            ) or self._patched_facts(agent, path, state, source, report, embed)
        if classify(path) is not SourceKind.SESSION:
            return False
        key = (agent, path)
        tail = self._tails.pop(key) if key in self._tails else self._index.source_tail(agent, path)
        if tail is None or not tail.at_end or not tail.items:
            return False
        file = self._workspace.agent_dir(agent) / path
        read = self._read_appended(file, tail.state)
        if read is None:
            return False
        added, first_line, digest, stat = read
        new = self._added_turns(agent, path, added, first_line, tail.items)
        if new is None:
            return False
        texts = embedding_texts([*tail.items, *new], context_words=self._context_words)
        if content_hash(texts[len(tail.items) - 1]) != tail.text_hashes[-1]:
            return False
        hashes = [content_hash(text) for text in texts[len(tail.items) :]]
        wanted = dict(zip(hashes, texts[len(tail.items) :], strict=True))
        vectors = self._vectors_of(agent, path, wanted, report, embed)
        state = SourceState(agent, path, digest, stat.st_mtime_ns, stat.st_size)
        if not self._index.append_to_source(tail.state, state, new, hashes, vectors=vectors):
            return False
        report.files_indexed += 1
        report.items_indexed += len(new)
        return True

    @staticmethod
    def _read_appended(
        file: Path, state: SourceState
    ) -> tuple[str, int, str, os.stat_result] | None:
        """The text added to ``file`` since the index's ``state`` of it, the lines before
        it, the SHA-256 of the whole file and its status; ``None`` when more than that
        changed (the bytes indexed must start the file and end a line)."""
        try:
            stat = file.stat()
            known = appended_since(stat, state)
            if known is not None:
                return known.text, known.first_line, known.digest, stat
            raw = file.read_bytes()
        except (OSError, UnicodeDecodeError):
            return None
        done = state.size
        if (
            len(raw) != stat.st_size
            or stat.st_size <= done
            or raw[done - 1 : done] != b"\n"
            or hashlib.sha256(raw[:done]).hexdigest() != state.content_hash
        ):
            return None
        try:
            added = raw[done:].decode("utf-8")
        except UnicodeDecodeError:
            return None
        return added, raw[:done].count(b"\n"), hashlib.sha256(raw).hexdigest(), stat

    def _appended_facts(
        self,
        agent: str,
        path: str,
        state: SourceState | None,
        source: SourceFile | None,
        report: SyncReport,
        embed: bool,
    ) -> bool:
        """Index only the facts kronika appended to a fact file since it was indexed as
        ``state`` (:meth:`MarkdownWorkspace.appended_facts`), or nothing when the file
        (``source``) is as indexed (or neither there nor indexed); ``False`` (nothing
        done) when it changed in any other way."""
        if state is None and source is None:
            return True  # no archive or history yet
        if state is None or source is None:
            return False
        new = self._workspace.appended_facts(agent, path, state.content_hash)
        if new is None:
            return False
        if not new:
            return (state.mtime_ns, state.size) == (source.mtime_ns, source.size)
        hashes, vectors, after = self._ready(agent, path, new, source, report, embed)
        if not self._index.append_to_source(state, after, new, hashes, vectors=vectors):
            return False
        report.files_indexed += 1
        report.items_indexed += len(new)
        return True

    def _ready(
        self,
        agent: str,
        path: str,
        items: list[MemoryItem],
        source: SourceFile,
        report: SyncReport,
        embed: bool,
    ) -> tuple[list[str], dict[str, Vector], SourceState]:
        """Before a fact file's new rows are written in place: their texts' hashes, the
        vectors to store with them (or the file listed as pending), and the file's new
        state (its hash that of the parse the workspace keeps: the file is not read)."""
        known = self._workspace.fact_file_hash(agent, path)
        if known is None:
            known = self._workspace.parse_source(agent, path).content_hash
        texts = embedding_texts(items, context_words=self._context_words)
        hashes = [content_hash(text) for text in texts]
        wanted = dict(zip(hashes, texts, strict=True))
        vectors = self._vectors_of(agent, path, wanted, report, embed)
        return hashes, vectors, SourceState(agent, path, known, source.mtime_ns, source.size)

    def _vectors_of(
        self, agent: str, path: str, wanted: dict[str, str], report: SyncReport, embed: bool
    ) -> dict[str, Vector]:
        """The vectors ``wanted`` (texts by hash) lacks in the index, to be stored in the
        transaction that writes their rows (so no other process can drop one as unused
        in between); without ``embed`` none, and ``path`` is listed as pending."""
        if not embed:
            self._list_pending(agent, [path])
            return {}
        missing = sorted(self._index.embeddings_missing(wanted), key=lambda h: (len(wanted[h]), h))
        vectors: dict[str, Vector] = {}
        for start in range(0, len(missing), self._embed_batch):
            chunk = missing[start : start + self._embed_batch]
            embedded = self._embedder.embed_documents([wanted[h] for h in chunk])
            vectors.update(zip(chunk, embedded, strict=True))
        report.texts_embedded += len(vectors)
        return vectors

    def _patched_facts(
        self,
        agent: str,
        path: str,
        state: SourceState | None,
        source: SourceFile | None,
        report: SyncReport,
        embed: bool,
    ) -> bool:
        """Re-index only the facts that kronika's own rewrites of the Brain changed since
        it was indexed as ``state`` (:meth:`MarkdownWorkspace.rewritten_facts`): rows of
        facts added or changed are replaced, facts that only moved get their new line;
        ``False`` (nothing done) when the file changed in any other way or the index
        cannot patch rows."""
        if state is None or source is None:
            return False
        found = self._workspace.rewritten_facts(agent, path, state.content_hash)
        if found is None:
            return False
        then, now = found
        before = {item.id: item for item in then}
        changed: list[MemoryItem] = []
        lines: dict[str, int | None] = {}
        for item in now:
            old = before.pop(item.id, None)
            if old is item or old == item:  # the lines above the edit: the same objects
                continue
            if old is not None and _but_provenance(old) == _but_provenance(item):
                lines[item.id] = item.provenance.line
            else:
                changed.append(item)
        hashes, vectors, after = self._ready(agent, path, changed, source, report, embed)
        if not self._index.patch_source(
            state, after, list(before), changed, hashes, lines, vectors=vectors
        ):
            return False
        report.files_indexed += 1
        report.items_indexed += len(changed)
        return True

    def _added_turns(
        self, agent: str, path: str, added: str, first_line: int, before: Sequence[MemoryItem]
    ) -> list[MemoryItem] | None:
        """The turns of ``added`` (text appended after line ``first_line``), or ``None``
        when it holds anything else: text that continues the last turn, a turn without a
        readable time, a cut-off header."""
        lines = split_lines(added)
        headers = [i for i, line in enumerate(lines) if TURN_RE.match(bare(line))]
        if (
            "\x00" in added
            or not headers
            or any(line.strip() for line in lines[: headers[0]])
            or sessions.torn_header(added)
        ):
            return None
        session_id = before[-1].provenance.session_id
        if session_id is None:
            return None
        for match in (TURN_RE.match(bare(lines[i])) for i in headers):
            assert match is not None
            if match.group("at") is None:
                return None
        # the ids are numbered as if none were in the file yet: a turn id already there
        # gives an id the index holds, which the append refuses (the file is re-indexed)
        seen: Counter[str] = Counter()
        warnings: list[str] = []
        found = sessions.turn_items(
            lines,
            headers,
            path=path,
            agent=agent,
            tenant=self._workspace.tenant_of(agent),
            session_id=session_id,
            started=before[-1].created_at,
            importance=self._workspace.message_importance,
            seen=seen,
            warnings=warnings,
            first_line=first_line,
            owners=Audience.of(before[-1]),  # one header: every turn has the same audience
        )
        return None if warnings else [item for item, _ in found]

    def _watch_loss(
        self, agent: str, path: str, now: Sequence[MemoryItem], report: SyncReport
    ) -> None:
        """Keep and report the facts a fact file lost all at once (:func:`sudden_loss`):
        a truncated, emptied or deleted Brain must not lose its facts silently."""
        if classify(path) is not SourceKind.FACTS:
            return
        before = self._before.pop((agent, path), None)
        if before is None:
            before = self._index.source_items(agent, path)
        kept = {item.id for item in now}
        lost = [item for item in before if item.id not in kept]
        if not sudden_loss(len(before), len(lost), len(now)):
            return
        # facts moved to another fact file (archived, superseded by another process)
        # are not lost
        ws = self._workspace
        moved = {
            item.id
            for items in (ws.brain_facts(agent), ws.archived_facts(agent), ws.fact_history(agent))
            for item in items
        }
        lost = [item for item in lost if item.id not in moved]
        if not sudden_loss(len(before), len(lost), len(now)):
            return
        copy = self._workspace.keep_lost_facts(agent, path, lost)
        note = (
            f"{agent}/{path} lost {len(lost)} of its {len(before)} facts at once (was it "
            f"truncated or emptied?); the index's copy of them was kept at {copy}"
        )
        report.warnings.append(note)
        self._workspace.notes.append(note)

    def _may_defer(self) -> bool:
        if self._pending is None or not self._lazy:
            return False
        return not cast(LazyModel, self._embedder).loaded

    def _list_pending(self, agent: str, paths: Sequence[str]) -> None:
        """Add ``paths`` to the pending file, durably, before their rows are written."""
        if not paths or self._pending is None:
            return
        # a line torn by a crash stays a line of its own (and is passed over)
        lines = "\n" + "".join(json.dumps([agent, path]) + "\n" for path in paths)
        fd = open_private(self._pending, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, lines.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def waiting(self) -> bool:
        """Whether some file's rows may wait for vectors."""
        return self._pending is not None and self._pending.exists()

    def fill_vectors(self) -> int:
        """Embed what the files in the pending file lack, then empty it; the number of
        texts embedded (0 at the cost of one failed open when nothing waits)."""
        if self._pending is None:
            return 0
        try:
            listed = self._pending.read_text(encoding="utf-8")
        except FileNotFoundError:
            return 0
        wanted: dict[str, str] = {}
        notes = len(self._workspace.notes)
        for line in dict.fromkeys(listed.splitlines()):
            try:
                agent, path = json.loads(line)
                parsed = self._workspace.parse_source(str(agent), str(path))
            except (ValueError, TypeError, KronikaError):
                continue  # a line cut short by a crash, or a file or agent gone since
            wanted.update(self._texts(parsed))
        # damage in these files was reported by the sync that indexed them
        del self._workspace.notes[notes:]
        embedded = self._embed_missing(wanted)
        self._pending.unlink(missing_ok=True)
        return embedded

    def _embed_missing(self, wanted: dict[str, str]) -> int:
        # similar lengths in one batch: the encoder pads every text to the longest
        missing = sorted(self._index.embeddings_missing(wanted), key=lambda h: (len(wanted[h]), h))
        for start in range(0, len(missing), self._embed_batch):
            chunk = missing[start : start + self._embed_batch]
            vectors = self._embedder.embed_documents([wanted[h] for h in chunk])
            self._index.store_embeddings(dict(zip(chunk, vectors, strict=True)))
        return len(missing)


_but_provenance = operator.attrgetter(
    *(f.name for f in fields(MemoryItem) if f.name != "provenance")
)
"""An item's fields but where it is written: equal for a fact that only moved."""


def _appendable_facts(path: str) -> bool:
    """A fact file kronika appends to (the archive, the history; not the Brain)."""
    return classify(path) is SourceKind.FACTS and path != BRAIN.path


def _changed(state: SourceState | None, source: SourceFile, *, forced: bool) -> bool:
    if state is None or forced:
        return True
    return state.mtime_ns != source.mtime_ns or state.size != source.size
