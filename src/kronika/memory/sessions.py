"""``memory.sessions``: conversations kept turn by turn — a turn appended to its
session file (auto-save, SPEC L4), a session read back whole or its last turns, whole
sessions imported. A session is for the audience its first turn names
(:meth:`~kronika.memory.base.MemoryContext.audience`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from kronika.core import checks
from kronika.core.model import (
    ItemType,
    MemoryItem,
    Reader,
    Scope,
    SessionRecord,
    SessionStatus,
    TurnRecord,
)
from kronika.core.visibility import Audience, only_visible, visible
from kronika.engine.changes import AppendTurn, WriteSession
from kronika.engine.indexer import Progress, SyncReport
from kronika.engine.write import USER, SavedTurn
from kronika.errors import Conflict, InvalidInput
from kronika.memory.base import MAX_VALUE_CHARS, MemoryContext, _clean
from kronika.memory.reads import Reads
from kronika.stores.markdown.sessions import SAVED_SOURCE, audience_fields, session_filename


@dataclass(frozen=True, slots=True)
class ImportReport:
    agent: str
    sessions: int
    turns: int
    sync: SyncReport


class Sessions:
    """Save turns, read sessions back, import whole sessions."""

    def __init__(self, ctx: MemoryContext, reads: Reads) -> None:
        self._ctx = ctx
        self._reads = reads

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

        The turn that starts a session records who it is for (as :meth:`Memory.remember`) in
        the file's header, and every turn of the session is for them; a later turn
        naming another audience is refused. The session is live (``source: api``,
        ``status: open``): listed with the others, and ended and consolidated once no
        turn came for ``idle_minutes``.
        """
        ctx = self._ctx
        session_id = checks.text(session_id, what="the session id")
        text = _clean(content, what="the turn", limit=MAX_VALUE_CHARS * 5)
        who = _clean(speaker, what="the speaker", limit=100)
        at = checks.moment(at, what="at")
        turn_id = checks.optional_text(turn_id, what="the turn id")  # no NUL in the file
        name = ctx.agent_to_write(agent)  # checked again under the lock
        owners = ctx.audience(name, scope, user, channel, team, reader)
        now = at or ctx.clock.now()
        # the turn and its audit line are synced after the lock is released, together
        # with those of other threads saving turns meanwhile (group commit)
        with ctx.commits.deferring(), ctx.lock.for_agent(name):
            ctx.workspace.require_agent(name)  # removed by another worker meanwhile?
            try:
                return self._append_turn(
                    name, session_id, who, text, now, turn_id, owners, source_agent,
                    ctx.reading(reader),
                )  # fmt: skip
            finally:
                ctx.indexer.forget_tail(name, session_filename(session_id))

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
        count, last = self.turns_in(name, session_id)
        self.check_audience(session_id, count, last, owners, reader)
        if turn_id is None:
            turn_id = self._next_turn_id(name, session_id, count, last)
        turn = TurnRecord(turn_id=turn_id, speaker=who, content=text, at=now)
        change = AppendTurn(session_id, turn, now, saved_header(owners))
        done = self._ctx.writer.memory_write(name, "sessions", change, source_agent)
        return SavedTurn(turn_id, done.outcome, done.proposal, done.policy)

    @staticmethod
    def check_audience(
        session_id: str,
        count: int,
        last: MemoryItem | None,
        owners: Audience,
        reader: Reader | None,
    ) -> None:
        """:class:`Conflict` when the session's turns are for another audience than
        ``owners``; it is named to a writer who may read its turns only."""
        if count and last is not None and Audience.of(last) != owners:
            seen = reader is None or visible(last, reader)
            theirs = Audience.of(last).describe() if seen else "another audience"
            raise Conflict(
                f"session {session_id!r} holds turns of {theirs}; a turn for"
                f" {owners.describe()} belongs in a session of its own"
            )

    def _next_turn_id(
        self, agent: str, session_id: str, count: int, last: MemoryItem | None
    ) -> str:
        return self.numbering(agent, session_id, count, last).next_id()

    def numbering(
        self, agent: str, session_id: str, count: int, last: MemoryItem | None
    ) -> TurnNumbers:
        """How the session's next turns are numbered, ``<session>_<n>``: one past the
        highest number the session's file or its turns waiting for approval hold (each
        names the turn it would append; two must never name one). Ids grow along the
        file (an approved turn is renumbered past the file's last, :meth:`approved_turn`),
        so the file's last turn and its count bound every number in it."""
        waiting = (
            p.change.turn.turn_id
            for p in self._ctx.proposal_book.pending(agent)
            if isinstance(p.change, AppendTurn) and p.change.session_id == session_id
        )
        top = max((turn_number(t, session_id) for t in waiting), default=0)
        return TurnNumbers(session_id, count, _last_number(last, session_id), top)

    def approved_turn(self, agent: str, change: AppendTurn) -> AppendTurn:
        """``change``, a turn proposed at autonomy 1, as it is appended once approved:
        with its own id while that is past the file's last turn, else renumbered after
        it (turns written or approved meanwhile took the numbers), so no two turns of
        a session share an id and ids keep growing along the file. Called under the
        lock; the tail read here serves the turn's sync (:meth:`forget_tail` after)."""
        session_id = change.session_id
        count, last = self.turns_in(agent, session_id)
        floor = max(count, _last_number(last, session_id))
        if turn_number(change.turn.turn_id, session_id) > floor:
            return change
        turn_id = self._next_turn_id(agent, session_id, count, last)
        return replace(change, turn=replace(change.turn, turn_id=turn_id))

    def turns_in(self, agent: str, session_id: str) -> tuple[int, MemoryItem | None]:
        """How many turns the session's file holds — the index's count while it matches
        the file's size and modification time (no parse), else the file's own — and the
        last turn the index holds of it."""
        ctx = self._ctx
        path = session_filename(session_id)
        try:
            stat = (ctx.workspace.agent_dir(agent) / path).stat()
        except FileNotFoundError:
            return 0, None
        tail = ctx.indexer.session_tail(agent, path)
        last = tail.items[-1] if tail is not None and tail.items else None
        if tail is not None and (tail.state.mtime_ns, tail.state.size) == (
            stat.st_mtime_ns,
            stat.st_size,
        ):
            return tail.count, last
        return len(ctx.workspace.parse_source(agent, path).items), last

    def load(
        self, session_id: str, *, agent: str | None = None, reader: Reader | None = None
    ) -> list[MemoryItem]:
        """Every turn of one stored session the reader may see, in order
        (``memory.load_session``)."""
        ctx = self._ctx
        name = ctx.agent(agent)
        path = session_filename(checks.text(session_id, what="the session id"))
        if path not in {f.path for f in ctx.workspace.list_sources(name)}:
            return []
        return only_visible(ctx.workspace.parse_source(name, path).items, ctx.reading(reader))

    def last_turns(
        self,
        *,
        agent: str | None = None,
        session_id: str | None = None,
        limit: int = 20,
        reader: Reader | None = None,
    ) -> list[MemoryItem]:
        """The last ``limit`` turns of a session (the newest session ``reader`` may see
        when none is named; ``memory.load_short_term``); ``limit`` 1..1 000 000."""
        limit = checks.count(limit, what="the limit", low=1, high=checks.MAX_LIMIT)
        session_id = checks.optional_text(session_id, what="the session id")
        name = self._ctx.agent(agent)
        if session_id is None:
            latest = self._reads.items(agent=name, types=[ItemType.MESSAGE], limit=1, reader=reader)
            if not latest or latest[0].provenance.session_id is None:
                return []
            session_id = latest[0].provenance.session_id
        return self.load(session_id, agent=name, reader=reader)[-limit:]

    def import_records(
        self,
        agent: str,
        sessions: Iterable[SessionRecord],
        *,
        progress: Progress | None = None,
        source_agent: str = USER,
    ) -> ImportReport:
        """Store whole sessions (imports); indexing is batched at the end
        (``memory.import_sessions``). All or nothing: a kill or an error part way
        leaves none of the sessions (:meth:`~kronika.ports.WriteLock.batch`)."""
        ctx = self._ctx
        if isinstance(sessions, str | bytes | Mapping | SessionRecord) or not isinstance(
            sessions, Iterable
        ):
            raise InvalidInput(
                f"import_sessions takes a list of SessionRecord, not {type(sessions).__name__}"
            )
        ctx.create_agent(agent)
        count = turns = 0
        # each file is whole on disk before it is renamed into place; the folders and
        # the audit lines are synced once, when the import ends (group commit)
        with ctx.commits.deferring(), ctx.lock.for_agent(agent), ctx.deferring(agent) as paths:
            with ctx.lock.batch():
                for session in sessions:
                    if not isinstance(session, SessionRecord):
                        raise InvalidInput(
                            f"session {count + 1}: a SessionRecord, not a {type(session).__name__}"
                        )
                    change = WriteSession(session)
                    ctx.writer.memory_write(agent, "sessions", change, source_agent)
                    count += 1
                    turns += len(session.turns)
            report = ctx.indexer.sync_agent(agent, paths=list(paths), progress=progress)
        return ImportReport(agent=agent, sessions=count, turns=turns, sync=report)


def saved_header(owners: Audience) -> tuple[tuple[str, str], ...]:
    """The header fields of a session a saved turn starts: live (listed, ended once
    idle, consolidated) and for ``owners``."""
    return (("source", SAVED_SOURCE), ("status", SessionStatus.OPEN.value)) + audience_fields(
        owners
    )


@dataclass(slots=True)
class TurnNumbers:
    """The numbers a session's turns take (:meth:`Sessions.numbering`), followed along
    the turns of a batch: a stored turn raises the count and is the file's last, a
    proposed one raises the highest number waiting, a refused one takes none."""

    session_id: str
    count: int
    last: int
    waiting: int

    def next_id(self) -> str:
        return f"{self.session_id}_{max(self.count, self.last, self.waiting) + 1}"

    def took(self, turn_id: str, outcome: str) -> None:
        number = turn_number(turn_id, self.session_id)
        if outcome == "applied":
            self.count, self.last = self.count + 1, number
        elif outcome == "proposed":
            self.waiting = max(self.waiting, number)


def turn_number(turn_id: str, session_id: str) -> int:
    """``n`` of a turn id ``<session_id>_<n>``; 0 for an id given by hand."""
    number = turn_id.removeprefix(f"{session_id}_")
    return int(number) if number != turn_id and number.isdigit() else 0


def _last_number(last: MemoryItem | None, session_id: str) -> int:
    if last is None or not last.provenance.turn_ids:
        return 0
    return turn_number(last.provenance.turn_ids[0], session_id)
