"""Writes indexed in place: the turns kronika appended to a session file, the facts it
appended to a fact file or changed in the Brain become rows added to, or patched in,
those the index holds (:meth:`~kronika.ports.ItemIndex.append_to_source`,
:meth:`~kronika.ports.ItemIndex.patch_source`), so a write costs the same whatever
the file's length. When the file changed in any other way, nothing is done here and
:mod:`kronika.engine.indexer.indexer` re-indexes it whole (``indexer.appends``)."""

from __future__ import annotations

import hashlib
import operator
import os
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path

from kronika.core.model import MemoryItem
from kronika.core.text import content_hash, embedding_texts
from kronika.core.visibility import Audience
from kronika.engine.indexer.report import SyncReport
from kronika.engine.indexer.state import IndexerState
from kronika.engine.indexer.vectors import Vectors
from kronika.ports import SourceState, SourceTail, Vector
from kronika.stores.markdown.appending import appended_since
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.session_appends import SessionHead, appended_turns
from kronika.stores.markdown.workspace import SourceFile


class Appends:
    """Index appended turns and facts, and patched facts, alone."""

    def __init__(self, state: IndexerState, vectors: Vectors) -> None:
        self.state = state
        self.vectors = vectors

    def session_tail(self, agent: str, path: str) -> SourceTail | None:
        """The end of a session file as the index holds it, kept for the sync of the turn
        about to be appended to it (:meth:`forget_tail` once that write is done), so a
        saved turn reads its file's last rows once. A tail the index no longer holds is
        harmless: the rows are only written while the index holds the state it was
        read with."""
        tail = self.state.index.source_tail(agent, path)
        self.state.tails[(agent, path)] = tail
        return tail

    def forget_tail(self, agent: str, path: str) -> None:
        self.state.tails.pop((agent, path), None)

    def appended(
        self,
        agent: str,
        path: str,
        report: SyncReport,
        embed: bool = True,
        known: Mapping[str, SourceState] | None = None,
    ) -> bool:
        """Index only the turns added at the end of a session file, if that is all that
        changed since it was indexed; ``False`` (nothing done) otherwise.

        The bytes the index was built from must still start the file (same hash), end
        a line, and be followed by whole turns only, and the turn before the new ones
        must keep its embedded text (a reply from another person changes its exchange
        context, and rows are never updated in place). The rows are then the ones a
        full re-index of the file would make. When this process's own append is all
        that changed, its bytes are taken from :func:`appended_since` instead of
        reading and hashing the file. Without ``embed`` their vectors wait, as a
        write's may (see the module docstring). ``known``: the states of the agent's
        files as just read from the index (else a fact file's is read here)."""
        if classify(path) is SourceKind.FACTS:
            state = self.state.index.source_state(agent, path) if known is None else known.get(path)
            source = self.state.workspace.source_file(agent, path)
            return self.appended_facts(
                agent, path, state, source, report, embed
            ) or self.patched_facts(agent, path, state, source, report, embed)
        if classify(path) is not SourceKind.SESSION:
            return False
        key = (agent, path)
        tail = (
            self.state.tails.pop(key)
            if key in self.state.tails
            else self.state.index.source_tail(agent, path)
        )
        if tail is None or not tail.at_end or not tail.items:
            return False
        file = self.state.workspace.agent_dir(agent) / path
        read = self.read_appended(file, tail.state)
        if read is None:
            return False
        added, first_line, digest, stat = read
        new = self.added_turns(agent, path, added, first_line, tail.items)
        if new is None:
            return False
        texts = embedding_texts([*tail.items, *new], context_words=self.state.context_words)
        if content_hash(texts[len(tail.items) - 1]) != tail.text_hashes[-1]:
            return False
        hashes = [content_hash(text) for text in texts[len(tail.items) :]]
        wanted = dict(zip(hashes, texts[len(tail.items) :], strict=True))
        vectors = self.vectors.vectors_of(agent, path, wanted, report, embed)
        state = SourceState(agent, path, digest, stat.st_mtime_ns, stat.st_size)
        if not self.state.index.append_to_source(tail.state, state, new, hashes, vectors=vectors):
            return False
        report.files_indexed += 1
        report.items_indexed += len(new)
        return True

    @staticmethod
    def read_appended(
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

    def appended_facts(
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
        new = self.state.workspace.appended_facts(agent, path, state.content_hash)
        if new is None:
            return False
        if not new:
            return (state.mtime_ns, state.size) == (source.mtime_ns, source.size)
        hashes, vectors, after = self.ready(agent, path, new, source, report, embed)
        if not self.state.index.append_to_source(state, after, new, hashes, vectors=vectors):
            return False
        report.files_indexed += 1
        report.items_indexed += len(new)
        return True

    def ready(
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
        known = self.state.workspace.fact_file_hash(agent, path)
        if known is None:
            known = self.state.workspace.parse_source(agent, path).content_hash
        texts = embedding_texts(items, context_words=self.state.context_words)
        hashes = [content_hash(text) for text in texts]
        wanted = dict(zip(hashes, texts, strict=True))
        vectors = self.vectors.vectors_of(agent, path, wanted, report, embed)
        return hashes, vectors, SourceState(agent, path, known, source.mtime_ns, source.size)

    def patched_facts(
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
        cannot patch rows (``patches_rows``: then nothing is prepared, no vector made)."""
        if state is None or source is None or not self.state.index.patches_rows:
            return False
        found = self.state.workspace.rewritten_facts(agent, path, state.content_hash)
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
        hashes, vectors, after = self.ready(agent, path, changed, source, report, embed)
        # every id the Brain holds now: an index that wrote none of its rows (another
        # worker wrote it last) checks them against its own. Not an archive's: its set
        # of ids may have to be built again, as long as the archive is
        held = self.state.workspace.fact_ids(agent, path) if path == brain.BRAIN.path else None
        if not self.state.index.patch_source(
            state, after, list(before), changed, hashes, lines, vectors=vectors, held=held
        ):
            return False
        report.files_indexed += 1
        report.items_indexed += len(changed)
        return True

    def added_turns(
        self, agent: str, path: str, added: str, first_line: int, before: Sequence[MemoryItem]
    ) -> list[MemoryItem] | None:
        """The turns of ``added`` (text appended after line ``first_line``), or ``None``
        when it holds anything else (:func:`appended_turns`). A turn id already in the
        file gives an id the index holds, which the append refuses (the file is
        re-indexed)."""
        session_id = before[-1].provenance.session_id
        if session_id is None:
            return None
        # one header: every turn has the session's start and audience
        head = SessionHead(session_id, before[-1].created_at, Audience.of(before[-1]))
        return appended_turns(
            added,
            first_line,
            head,
            path=path,
            agent=agent,
            tenant=self.state.workspace.tenant_of(agent),
            importance=self.state.workspace.message_importance,
        )


_but_provenance = operator.attrgetter(
    *(f.name for f in fields(MemoryItem) if f.name != "provenance")
)
"""An item's fields but where it is written: equal for a fact that only moved."""
