"""``Memory.save_turns``: many turns of one conversation saved in one call, as that many
calls of :meth:`~kronika.memory.sessions.Sessions.save_turn` would save them, with one
hold of the write lock, one write of the session file, one round of ``fsync`` and one
index update (the engine's part: :mod:`kronika.engine.turn_batch`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kronika.core import checks
from kronika.core.model import Reader, Scope, TurnRecord
from kronika.engine.changes import AppendTurn
from kronika.engine.turn_batch import TurnBatchWriter
from kronika.engine.write import USER, Checked, SavedTurn
from kronika.errors import InvalidInput
from kronika.memory.base import MAX_VALUE_CHARS, MemoryContext, _clean
from kronika.memory.sessions import Sessions, saved_header
from kronika.stores.markdown.sessions import session_filename

TURN_FIELDS = frozenset({"speaker", "content", "at", "turn_id"})
"""The fields a turn given to :meth:`TurnBatch.save_turns` may have."""

_Turn = tuple[str, str, datetime, str | None]  # speaker, content, time, id given


class TurnBatch:
    """Save many turns of one session in one go."""

    def __init__(self, ctx: MemoryContext, sessions: Sessions) -> None:
        self._ctx = ctx
        self._sessions = sessions
        self._writer = TurnBatchWriter(
            workspace=ctx.workspace,
            audit=ctx.audit_log,
            proposals=ctx.proposal_book,
            on_written=ctx.after_write,
            denial_reason=ctx.writer.denial_reason,
        )

    def save_turns(
        self,
        session_id: str,
        turns: Iterable[Mapping[str, Any] | Sequence[str]],
        *,
        agent: str | None = None,
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
        source_agent: str = USER,
    ) -> list[SavedTurn]:
        """Append ``turns`` to ``sessions/<session_id>.md`` in one go: a
        :class:`~kronika.engine.write.SavedTurn` per turn, in order.

        Each turn is a mapping of ``speaker`` and ``content``, optionally ``at`` (a
        ``datetime``; now when left out) and ``turn_id`` (else the session's next one),
        or a pair ``(speaker, content)``. Who the turns are for (``scope``, ``user``,
        ``channel``, ``team``, ``reader``) is the whole batch's, as for :meth:`save_turn`.

        Every turn is checked before any is written (:class:`InvalidInput` names the
        first bad one: ``turn 3: the turn is empty``). The turns then get what as many
        calls of :meth:`save_turn` would give them, in order: the same ids, the same
        session header, the same outcomes (``applied``, ``proposed`` at autonomy 1,
        ``refused`` by a storage policy: a refused turn takes no id from the next) and
        the same audit entries, under one hold of the write lock.

        What is guaranteed: the stored turns are written in one write of the session
        file (or, proposed, of ``proposals.md``), then audited, then indexed once. Any
        error before that write — a bad turn, a secret ``secrets = "refuse"`` keeps
        out (``turn 3: refusing to store a secret``), a session of another audience
        (:class:`~kronika.errors.Conflict`), an agent that may not write
        (:class:`~kronika.errors.PermissionDenied`, audited as the calls would have
        been), a failed write — leaves nothing of the batch stored. Once the file is
        written every turn of it is stored; an audit or index step that fails after
        is said in the turns' receipts, not raised. An empty list saves nothing. A
        process killed inside the batch leaves none of it: the batch's journal puts
        the session file (and ``proposals.md``) back as they were when the workspace
        is next opened (:mod:`kronika.stores.batch`).
        """
        ctx = self._ctx
        session_id = checks.text(session_id, what="the session id")
        prepared = self._prepared(turns)
        name = ctx.agent_to_write(agent)  # checked again under the lock
        owners = ctx.audience(name, scope, user, channel, team, reader)
        if not prepared:
            return []
        header = saved_header(owners)
        with ctx.commits.deferring(), ctx.lock.for_agent(name):
            ctx.workspace.require_agent(name)  # removed by another worker meanwhile?
            try:
                count, last = self._sessions.turns_in(name, session_id)
                self._sessions.check_audience(session_id, count, last, owners, ctx.reading(reader))
                numbers = self._sessions.numbering(name, session_id, count, last)
                checked: list[Checked] = []
                for n, (who, text, at, given) in enumerate(prepared, 1):
                    turn_id = given if given is not None else numbers.next_id()
                    change = AppendTurn(session_id, TurnRecord(turn_id, who, text, at), at, header)
                    try:
                        made = ctx.writer.check(name, "sessions", change, source_agent)
                    except InvalidInput as exc:
                        raise InvalidInput(f"turn {n}: {exc}") from exc
                    checked.append(made)
                    if made.outcome == "denied":
                        break  # as the calls would: the first denied one raises
                    if made.outcome != "refused":
                        numbers.took(turn_id, made.outcome)
                with ctx.lock.batch():  # whole or not at all, a kill included
                    receipts = self._writer.write(name, checked)
            finally:
                ctx.indexer.forget_tail(name, session_filename(session_id))
        return [
            SavedTurn(c.change.turn.turn_id, r.outcome, r.proposal, r.policy)
            for c, r in zip(checked, receipts, strict=True)
            if isinstance(c.change, AppendTurn)
        ]

    def _prepared(self, turns: Iterable[Mapping[str, Any] | Sequence[str]]) -> list[_Turn]:
        """Every turn checked as :meth:`save_turn` checks its arguments, each timed now
        unless its time is given."""
        if isinstance(turns, str | bytes | Mapping) or not isinstance(turns, Iterable):
            raise InvalidInput(
                "save_turns takes a list of turns (mappings of speaker and content, or"
                f" (speaker, content) pairs), not one {type(turns).__name__}:"
                " save_turn() saves a single turn"
            )
        prepared: list[_Turn] = []
        for n, turn in enumerate(turns, 1):
            try:
                prepared.append(self._turn(turn))
            except InvalidInput as exc:
                raise InvalidInput(f"turn {n}: {exc}") from exc
        return prepared

    def _turn(self, turn: object) -> _Turn:
        if isinstance(turn, Mapping):
            fields = dict(turn)
            unknown = sorted(str(k) for k in set(fields) - TURN_FIELDS)
            if unknown:
                raise InvalidInput(f"unknown field(s) {', '.join(unknown)}")
            for needed in ("speaker", "content"):
                if needed not in fields:
                    raise InvalidInput(f"the {needed} is missing")
        elif isinstance(turn, list | tuple) and len(turn) == 2:
            fields = {"speaker": turn[0], "content": turn[1]}
        else:
            raise InvalidInput(
                "a turn is a mapping of speaker and content (and optionally at, turn_id)"
                f" or a (speaker, content) pair, not {type(turn).__name__}"
            )
        text = _clean(fields["content"], what="the turn", limit=MAX_VALUE_CHARS * 5)
        who = _clean(fields["speaker"], what="the speaker", limit=100)
        at = checks.moment(fields.get("at"), what="at")
        turn_id = checks.optional_text(fields.get("turn_id"), what="the turn id")
        return who, text, at or self._ctx.clock.now(), turn_id
