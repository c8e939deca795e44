"""The writes that add to a log: a note retained in the daily log, a turn appended to
its session file (auto-save, SPEC L4), whole sessions imported. Each is for the
audience its write names (:meth:`~kronika.memory.base.MemoryBase._audience`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from kronika.core.entities import extract_entities
from kronika.core.model import (
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RetainKind,
    Scope,
    SessionRecord,
    SessionStatus,
    Tier,
    TurnRecord,
    note_type,
)
from kronika.core.visibility import Audience, visible
from kronika.engine.changes import AppendNote, AppendTurn, WriteSession
from kronika.engine.sync import Progress, SyncReport
from kronika.engine.write import USER, SavedTurn, WriteReceipt
from kronika.errors import Conflict, InvalidInput
from kronika.memory import checks
from kronika.memory.base import MAX_VALUE_CHARS, MemoryBase, _clean, _new_id
from kronika.stores.markdown.sessions import SAVED_SOURCE, audience_fields, session_filename


@dataclass(frozen=True, slots=True)
class ImportReport:
    agent: str
    sessions: int
    turns: int
    sync: SyncReport


class MemoryAppends(MemoryBase):
    """Retain notes, save turns, import sessions."""

    def note(
        self,
        text: str,
        *,
        agent: str | None = None,
        at: datetime | None = None,
        source_agent: str = USER,
        kind: RetainKind | str | None = None,
        confidence: float | None = None,
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
        tags: Sequence[str] = (),
    ) -> WriteReceipt:
        """Retain a note in today's daily log (``memory/YYYY-MM-DD.md``, ``## Retain``),
        for the audience :meth:`remember` would give it.

        ``kind`` types it (SPEC M6): ``W`` world (semantic memory), ``B`` experience
        (first person), ``O`` opinion — with ``confidence`` from 0 to 1 —, ``S``
        observation. ``@Name`` mentions in the text are its entities. ``tags`` are kept
        with the note (consolidation tags a world note ``session:<id>``, the conversation
        it was learned in).
        """
        clean = _clean(text, what="the note", limit=MAX_VALUE_CHARS)
        at = checks.moment(at, what="at")
        retain = checks.retain_kind(kind)
        if confidence is not None:
            if retain is not RetainKind.OPINION:
                raise InvalidInput("a confidence belongs to an opinion: give kind O with it")
            confidence = checks.fraction(confidence, what="the confidence")
        name = self._agent(agent)
        owners = self._audience(name, scope, user, channel, team, reader)
        now = at or self.clock.now()
        item = MemoryItem(
            id=_new_id("n"),
            agent=name,
            content=clean,
            type=note_type(retain),
            layer=Layer.LONG_TERM,
            tier=Tier.MID,
            created_at=now,
            updated_at=now,
            provenance=Provenance(path=f"memory/{now.date().isoformat()}.md"),
            tenant=self.workspace.tenant_of(name),
            scope=owners.scope,
            user=owners.user,
            channel=owners.channel,
            team=owners.team,
            section="Retain",
            importance=self.settings.importance_auto,
            entities=extract_entities(clean),
            kind=retain,
            confidence=confidence,
            tags=tuple(checks.texts(tags, what="tags")),
        )
        with self._lock:
            return self._writer.memory_write(name, "Retain", AppendNote(item), source_agent)

    def save_turn(
        self,
        session_id: str,
        speaker: str,
        content: str,
        *,
        agent: str | None = None,
        at: datetime | None = None,
        turn_id: str | None = None,
        source_agent: str = USER,
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> SavedTurn:
        """Append one turn to ``sessions/<session_id>.md`` (auto-save, SPEC L4); returns its
        id, a :class:`~kronika.engine.write.SavedTurn` (a ``str``) that also says what
        happened: ``outcome`` ``applied``, ``proposed`` (an agent at autonomy 1 saving
        to its own memory: the turn waits as proposal ``proposal``) or ``refused`` by a
        storage policy (``policy``).

        The turn that starts a session records who it is for (as :meth:`remember`) in
        the file's header, and every turn of the session is for them; a later turn
        naming another audience is refused. The session is live (``source: api``,
        ``status: open``): listed with the others, and ended and consolidated once no
        turn came for ``idle_minutes``.
        """
        session_id = checks.text(session_id, what="the session id")
        text = _clean(content, what="the turn", limit=MAX_VALUE_CHARS * 5)
        who = _clean(speaker, what="the speaker", limit=100)
        at = checks.moment(at, what="at")
        name = self._agent(agent)
        owners = self._audience(name, scope, user, channel, team, reader)
        now = at or self.clock.now()
        # the turn and its audit line are synced after the lock is released, together
        # with those of other threads saving turns meanwhile (group commit)
        with self._commits.deferring(), self._lock:
            try:
                return self._append_turn(
                    name, session_id, who, text, now, turn_id, owners, source_agent,
                    self._reader(reader),
                )  # fmt: skip
            finally:
                self._indexer.forget_tail(name, session_filename(session_id))

    def _append_turn(
        self,
        name: str,
        session_id: str,
        who: str,
        text: str,
        now: datetime,
        turn_id: str | None,
        owners: Audience,
        source_agent: str,
        reader: Reader | None = None,
    ) -> SavedTurn:
        """:meth:`save_turn` under the lock; the index's tail of the session, read here,
        is kept for the sync of the turn (read once). A session's audience is named to a
        writer who may read its turns only."""
        count, last = self._turns_in(name, session_id)
        if count and last is not None and Audience.of(last) != owners:
            seen = reader is None or visible(last, reader)
            theirs = Audience.of(last).describe() if seen else "another audience"
            raise Conflict(
                f"session {session_id!r} holds turns of {theirs}; a turn for"
                f" {owners.describe()} belongs in a session of its own"
            )
        if turn_id is None:
            turn_id = f"{session_id}_{count + 1}"
        turn = TurnRecord(turn_id=turn_id, speaker=who, content=text, at=now)
        change = AppendTurn(
            session_id=session_id,
            turn=turn,
            started_at=now,
            # a session this turn starts is live: listed, ended once idle, consolidated
            header=(("source", SAVED_SOURCE), ("status", SessionStatus.OPEN.value))
            + audience_fields(owners),
        )
        done = self._writer.memory_write(name, "sessions", change, source_agent)
        return SavedTurn(turn_id, done.outcome, done.proposal, done.policy)

    def _turns_in(self, agent: str, session_id: str) -> tuple[int, MemoryItem | None]:
        """How many turns the session's file holds — the index's count while it matches
        the file's size and modification time (no parse), else the file's own — and the
        last turn the index holds of it."""
        path = session_filename(session_id)
        try:
            stat = (self.workspace.agent_dir(agent) / path).stat()
        except FileNotFoundError:
            return 0, None
        tail = self._indexer.session_tail(agent, path)
        last = tail.items[-1] if tail is not None and tail.items else None
        if tail is not None and (tail.state.mtime_ns, tail.state.size) == (
            stat.st_mtime_ns,
            stat.st_size,
        ):
            return tail.count, last
        return len(self.workspace.parse_source(agent, path).items), last

    def import_sessions(
        self,
        agent: str,
        sessions: Iterable[SessionRecord],
        *,
        progress: Progress | None = None,
        source_agent: str = USER,
    ) -> ImportReport:
        """Store whole sessions (imports); indexing is batched at the end."""
        self.create_agent(agent)
        count = turns = 0
        # each file is whole on disk before it is renamed into place; the folders and
        # the audit lines are synced once, when the import ends (group commit)
        with self._commits.deferring(), self._lock, self._deferring(agent) as paths:
            for session in sessions:
                self._writer.memory_write(agent, "sessions", WriteSession(session), source_agent)
                count += 1
                turns += len(session.turns)
            report = self._indexer.sync_agent(agent, paths=list(paths), progress=progress)
        return ImportReport(agent=agent, sessions=count, turns=turns, sync=report)
