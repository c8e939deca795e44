"""A conversation with memory: wake, turns, rolling summaries, session end (SPEC L1-L5).

::

    session = Session(memory, agent="jaskier", llm=model)   # llm may be None
    session.wake()                     # identity + brain + active context (L1)
    turn = session.user("Hi! Remember that I'm vegan.")
    if turn.command:                   # a memory command was obeyed at once (C1)
        answer = turn.command.reply
    else:                              # send turn.messages to the model (L2)
        answer = model.chat(turn.messages).content
    session.assistant(answer)
    session.close()                    # shutdown ends and consolidates the session (L5, L6)

Every message is appended to ``sessions/<YYYY-MM-DD_NNN>.md`` as it arrives (L4), so a
killed process loses nothing: the next :meth:`Session.wake` resumes a session that
was active less than ``idle_minutes`` ago and ends (and queues) older ones. A message
that arrives ``idle_minutes`` or more after the previous one ends the old session
first (checked on arrival, no timers). Above ``summarize_at`` of ``context_budget``
the older part of the window is summarised — by the minion model, or without one by
an extractive digest — the summary is saved into the session file, and the last
``keep_verbatim`` messages stay word for word (L3).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

from kronika.core.commands import CommandKind, detect_command
from kronika.core.context import (
    MESSAGE_OVERHEAD,
    Count,
    WindowMessage,
    extractive_digest,
    fit_lines,
    fit_tokens,
    recalled_line,
    system_prompt,
)
from kronika.core.model import (
    ASSISTANT_SPEAKER,
    ItemType,
    MemoryItem,
    Reader,
    RecallHit,
    SessionRecord,
    SessionStatus,
    TurnRecord,
)
from kronika.core.prompt import fact_line, memory_line, quote, render_memory_block
from kronika.core.redaction import Phrases, phrase_pattern, redact
from kronika.core.visibility import reader_audience
from kronika.engine.changes import AppendTurn, ForgetItems, UpdateSession, WriteSession
from kronika.engine.write import SYSTEM, USER
from kronika.errors import InvalidInput, LLMError
from kronika.memory import Memory
from kronika.ports import LLM, ChatMessage
from kronika.prompts import summaries
from kronika.providers.jsonout import ask
from kronika.stores.markdown.sessions import (
    LIVE_ID_RE,
    SUMMARY_ID_RE,
    SUMMARY_SPEAKER,
    audience_fields,
    header_audience,
)
from kronika.stores.usage import LESSON_USES_FILE, JsonlLessonUses
from kronika.workflows.commands import CommandResult, CommandRunner
from kronika.workflows.consolidate import ConsolidationReport, Consolidator

log = logging.getLogger("kronika.lessons")
_INDEX_RE = re.compile(r"_(\d+)$")
ROLES = ("user", ASSISTANT_SPEAKER)


@dataclass(frozen=True, slots=True)
class Wake:
    """What the agent knows at the start of a session (L1), already within budgets."""

    identity: str
    memory_block: str
    active_context: str
    tokens: int
    resumed: str | None = None
    """The session id picked up again after an interruption, if any."""
    recovered: ConsolidationReport | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """The result of one user message.

    ``messages`` is the payload to send to the model. ``command`` is set when the
    message was a memory command that has already been carried out (its ``reply`` is
    the answer to show). ``ended`` reports the previous session when this message
    ended it (idle gap or "new conversation").
    """

    session_id: str | None
    messages: tuple[ChatMessage, ...]
    tokens: int
    command: CommandResult | None = None
    recalled: tuple[RecallHit, ...] = ()
    lessons: tuple[RecallHit, ...] = ()
    ended: ConsolidationReport | None = None
    summarized: bool = False


@dataclass(slots=True)
class _State:
    session_id: str | None = None
    window: list[WindowMessage] = field(default_factory=list)
    summary: str | None = None
    summary_first: int | None = None
    count: int = 0
    last_at: datetime | None = None
    last_stored: str | None = None
    keep_out: Phrases | None = None
    """Forgotten text the next saved answer must not hold (it confirms the forget)."""


class Session:
    """One agent's conversation with its user; see the module docstring."""

    def __init__(
        self,
        memory: Memory,
        *,
        agent: str | None = None,
        llm: LLM | None = None,
        minion: LLM | None = None,
        reader: Reader | None = None,
    ) -> None:
        """``reader`` (default: the memory's :attr:`~kronika.Memory.default_reader`) is
        who talks, and where: the wake context and recall hold only what they may see,
        and the session's turns are theirs (in their channel)."""
        self.reader = reader if reader is not None else memory.default_reader
        if self.reader is not None and memory.default_reader != self.reader:
            memory = memory.as_reader(self.reader)  # spoken commands read and write as them
        self.memory = memory
        self.owners = reader_audience(self.reader)
        self.agent = agent or memory.settings.default_agent
        memory.create_agent(self.agent)
        self.llm = llm
        self.minion = minion or llm
        self.settings = memory.settings
        self.consolidator = Consolidator(memory, self.minion)
        self.commands = CommandRunner(memory, self.agent)
        self._state = _State()

    @property
    def session_id(self) -> str | None:
        """The current session's id (``None`` until the first message)."""
        return self._state.session_id

    @property
    def window(self) -> tuple[WindowMessage, ...]:
        return tuple(self._state.window)

    @property
    def summary(self) -> str | None:
        """The summary of the older part of the conversation, once there is one."""
        return self._state.summary

    # ------------------------------------------------------------------ lifecycle
    def wake(self, at: datetime | None = None) -> Wake:
        """Load identity, Brain and Active Context (L1); pick up or end sessions a killed
        process left open; retry queued consolidation when a model is at hand."""
        now = at or self.memory.clock.now()
        resumed = None
        report = ConsolidationReport()
        idle = timedelta(minutes=self.settings.idle_minutes)
        for header in self.memory.workspace.session_headers(self.agent):
            if header.status != SessionStatus.OPEN or header.session_id == self.session_id:
                continue
            if header.saved:
                continue  # its caller writes it turn by turn: consolidation ends it when idle
            if header_audience(header.fields, header.path, []) != self.owners:
                continue  # another reader's conversation: never resumed (nor ended) here
            turns = self.memory.load_session(header.session_id, agent=self.agent)
            last = turns[-1].created_at if turns else None
            if self.session_id is None and last is not None and now - last < idle:
                if resumed is not None:  # two recent open sessions: keep only the newest
                    self._merge(report, self.consolidator.end(self.agent, resumed, "interrupted"))
                self._resume(header.session_id, turns)
                resumed = header.session_id
            else:
                self._merge(
                    report, self.consolidator.end(self.agent, header.session_id, "interrupted")
                )
        if self.minion is not None and not report.sessions:
            self._merge(report, self.consolidator.run(self.agent))
        identity, block, active = self._core()
        count = self.memory.tokens.count
        tokens = count(identity) + count(block) + count(active)
        recovered = report if report.sessions or report.summaries else None
        return Wake(identity, block, active, tokens, resumed, recovered)

    def new_conversation(self) -> ConsolidationReport | None:
        """End the current session explicitly (L5) and consolidate it (L6)."""
        return self._end("new")

    def close(self) -> ConsolidationReport | None:
        """Shutdown: end and consolidate the current session, if one is open."""
        return self._end("shutdown")

    def __enter__(self) -> Session:
        self.wake()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------------- turns
    def user(self, text: str, *, at: datetime | None = None) -> Turn:
        """Take one user message: end an idle session first, obey a memory command,
        save the message, recall from the archive, and build the payload (L2)."""
        now = at or self.memory.clock.now()
        state = self._state
        ended = None
        idle = timedelta(minutes=self.settings.idle_minutes)
        if (
            state.session_id is not None
            and state.last_at is not None
            and now - state.last_at >= idle
        ):
            ended = self._end("idle")
            state = self._state  # the next session's: this message starts it
        command = detect_command(text)
        if command is not None and command.kind is CommandKind.NEW_CONVERSATION:
            done = self.commands.run(command)
            report = self._end("new") or ended
            return Turn(None, (), 0, command=done, ended=report)
        if command is not None and command.kind is CommandKind.DONT_REMEMBER:
            done = self.commands.run(command)
            if done.drop_previous:
                self._drop_last_exchange()
            messages, tokens = self._payload((), ())
            return Turn(state.session_id, messages, tokens, command=done, ended=ended)
        self._save("user", text, now)
        result: CommandResult | None = None
        if command is not None:
            result = self.commands.run(command, last_stored=state.last_stored)
            if result.stored_id is not None:
                state.last_stored = result.stored_id
            if result.redact:
                self.forgotten(result.redact)
            if result.drop_previous:
                self._drop_last_exchange(keep_latest=True)
        recalled, lessons = ((), ()) if command is not None else self._recall(text)
        if command is None:
            self._note_lessons(lessons, now)
        messages, tokens = self._payload(recalled, lessons)
        summarized = self._maybe_summarize(recalled, lessons, tokens)
        if summarized:
            messages, tokens = self._payload(recalled, lessons)
        return Turn(
            state.session_id,
            messages,
            tokens,
            command=result,
            recalled=recalled,
            lessons=lessons,
            ended=ended,
            summarized=summarized,
        )

    def assistant(self, text: str, *, at: datetime | None = None) -> None:
        """Record the agent's answer (in the window and the transcript)."""
        if not text.strip():
            return
        if self._state.session_id is None:
            return  # nothing was said to answer (e.g. after "new conversation")
        if self._state.keep_out is not None:
            text = redact(text, self._state.keep_out)[0]
            self._state.keep_out = None
        self._save(ASSISTANT_SPEAKER, text, at or self.memory.clock.now())
        self._maybe_summarize((), ())

    def forgotten(self, phrases: Sequence[str]) -> None:
        """Text that was just forgotten: redacted in the window and the rolling summary
        (the transcript already is), and in the next answer saved — which confirms it."""
        pattern = phrase_pattern(phrases)
        if pattern is None:
            return
        state = self._state
        state.window = [replace(m, content=redact(m.content, pattern)[0]) for m in state.window]
        if state.summary is not None:
            state.summary = redact(state.summary, pattern)[0]
        state.keep_out = pattern

    # ------------------------------------------------------------------ internals
    def _core(self) -> tuple[str, str, str]:
        return wake_context(self.memory, self.agent, reader=self.reader)

    def _new_id(self, now: datetime) -> str:
        return new_session_id(self.memory, self.agent, now)

    def _save(self, role: str, text: str, at: datetime) -> None:
        state = self._state
        header: tuple[tuple[str, str], ...] = ()
        session_id = state.session_id
        if session_id is None:
            session_id = self._new_id(at)
            header = (("source", "chat"), ("agent", self.agent), ("status", SessionStatus.OPEN))
            header += audience_fields(self.owners)
        index = state.count + 1
        turn = TurnRecord(f"{session_id}_{index}", role, text, at)
        change = AppendTurn(session_id, turn, at, header)
        # a refused write (secrets = "refuse") leaves the session as it was
        stored = self.memory.memory_write(self.agent, "sessions", change, SYSTEM).change
        if isinstance(stored, AppendTurn):  # the window holds what the transcript holds:
            text = stored.turn.content  # a redacted secret is not sent to the model either
        state.session_id, state.count = session_id, index
        state.window.append(WindowMessage(role, text, index))
        state.last_at = at

    def _resume(self, session_id: str, turns: list[MemoryItem]) -> None:
        state = _State(session_id=session_id)
        last_summarized = 0
        for turn in turns:
            turn_id = _turn_id(turn)
            if turn.speaker == SUMMARY_SPEAKER and (m := SUMMARY_ID_RE.match(turn_id)):
                state.summary = turn.content
                state.summary_first = int(m.group("first"))
                last_summarized = int(m.group("last"))
                continue
            index = _turn_index(turn) or state.count + 1
            state.count = max(state.count, index)
            role = turn.speaker if turn.speaker in ROLES else "user"
            state.window.append(WindowMessage(role, turn.content, index))
            state.last_at = turn.created_at
        state.window = [m for m in state.window if m.index > last_summarized]
        self._state = state

    def _end(self, reason: str) -> ConsolidationReport | None:
        sid = self._state.session_id
        self._state = _State()
        if sid is None:
            return None
        return self.consolidator.end(self.agent, sid, reason)

    def _drop_last_exchange(self, *, keep_latest: bool = False) -> None:
        """Take the latest user message (and the answers after it) back out of the window
        and the transcript; with ``keep_latest`` the one before the current message."""
        state = self._state
        window = state.window[:-1] if keep_latest else state.window
        users = [i for i, m in enumerate(window) if m.role == "user"]
        if not users or state.session_id is None:
            return
        dropped = window[users[-1] :]
        indexes = {m.index for m in dropped}
        turns = self.memory.load_session(state.session_id, agent=self.agent)
        taken = tuple(
            t for t in turns if t.speaker != SUMMARY_SPEAKER and _turn_index(t) in indexes
        )
        if taken:  # a forget of those turns alone (no phrase redacted elsewhere): what
            # held them is rewritten, in the index's files and the record's too
            self.memory.memory_write(self.agent, "sessions", ForgetItems(taken, ()), USER)
        state.window = [m for m in state.window if m.index not in indexes]

    def _recall(self, text: str) -> tuple[tuple[RecallHit, ...], tuple[RecallHit, ...]]:
        """Archive recall and lessons for ``text``, only when the best match passes the
        similarity threshold (L2, F3)."""
        s = self.settings
        if s.recall_budget <= 0 and s.lessons_budget <= 0:
            return (), ()
        who = self.reader
        # automatic reads: they record no access, so what one turn brought up does not
        # come up again on its recency alone (docs/scoring.md)
        result = self.memory.recall(
            text, agent=self.agent, k=max(s.recall_k, 10), reader=who, record_access=False
        )
        brain = {
            f.id for f in self.memory.facts(agent=self.agent, include_archived=False, reader=who)
        }
        hits = [
            h
            for h in result.hits
            if h.item.id not in brain
            and h.item.section != "active_context"
            and h.item.type not in (ItemType.REFLECTION, ItemType.STRATEGY)
            and (
                h.item.provenance.session_id is None
                or h.item.provenance.session_id != self._state.session_id
            )
        ]
        recalled = _passing(hits, s.similarity_threshold)
        lessons: list[RecallHit] = []
        if s.lessons_budget > 0:
            # the lessons of lessons_for: the same relevance floor as `kronika lessons --task`
            found_lessons = self.memory.lessons_for(text, agent=self.agent, k=5, reader=who)
            lessons = _distinct(list(found_lessons))
        count = self.memory.tokens.count
        kept_recall = _within(recalled, s.recall_budget, count)
        kept_lessons = _within(lessons, s.lessons_budget, count)
        return tuple(kept_recall), tuple(kept_lessons)

    def _note_lessons(self, lessons: tuple[RecallHit, ...], now: datetime) -> None:
        """Every payload is counted, with the lessons it carried (SPEC O1)."""
        ids = [h.item.id for h in lessons]
        for hit in lessons:
            log.info(
                "lesson used: %s (score %.2f) for agent %s in session %s",
                hit.item.id,
                hit.item.confidence or 0.0,
                self.agent,
                self._state.session_id,
            )
        JsonlLessonUses(Path(self.settings.home) / LESSON_USES_FILE).append(
            now, self.agent, self._state.session_id or "", ids
        )

    def _payload(
        self, recalled: tuple[RecallHit, ...], lessons: tuple[RecallHit, ...]
    ) -> tuple[tuple[ChatMessage, ...], int]:
        identity, block, active = self._core()
        system = system_prompt(
            identity=identity,
            memory_block=block,
            active_context=active,
            recalled=[recalled_line(h.item) for h in recalled],
            lessons=[lesson_line(h.item) for h in lessons],
        )
        messages = [ChatMessage(role="system", content=system)]
        if self._state.summary:
            messages.append(
                ChatMessage(
                    role="system",
                    content="Summary of the earlier part of this conversation:\n"
                    + self._state.summary,
                )
            )
        messages += [ChatMessage(role=m.role, content=m.content) for m in self._state.window]
        count = self.memory.tokens.count
        return tuple(messages), sum(count(m.content) + MESSAGE_OVERHEAD for m in messages)

    def _maybe_summarize(
        self,
        recalled: tuple[RecallHit, ...],
        lessons: tuple[RecallHit, ...],
        tokens: int | None = None,
    ) -> bool:
        """Summarise the older part of the window when the payload (``tokens``, computed
        when not given) passes ``summarize_at`` of ``context_budget`` (L3); the summary
        is saved."""
        s = self.settings
        state = self._state
        if len(state.window) <= s.keep_verbatim or state.session_id is None:
            return False
        if tokens is None:
            tokens = self._payload(recalled, lessons)[1]
        if tokens <= s.summarize_at * s.context_budget:
            return False
        older = state.window[: len(state.window) - s.keep_verbatim]
        budget = max(200, s.context_budget // 10)
        text = self._summarize(older, budget)
        first = state.summary_first or older[0].index
        last = older[-1].index
        turn = TurnRecord(f"summary {first}-{last}", SUMMARY_SPEAKER, text, self.memory.clock.now())
        change = AppendTurn(state.session_id, turn, turn.at or self.memory.clock.now())
        self.memory.memory_write(self.agent, "sessions", change, SYSTEM)
        state.summary = text
        state.summary_first = first
        state.window = state.window[len(older) :]
        return True

    def _summarize(self, older: list[WindowMessage], budget: int) -> str:
        count = self.memory.tokens.count
        if self.minion is not None:
            lines = [f"{m.role}: {m.content}" for m in older]
            text = "\n".join(lines)
            if self._state.summary:
                text = f"[summary of the part before]\n{self._state.summary}\n\n{text}"
            prompt = summaries.ROLLING
            try:
                result = ask(
                    self.minion,
                    prompt,
                    text,
                    task="rolling summary",
                    agent=self.agent,
                    max_tokens=budget,
                )
                return fit_tokens(" ".join(str(result["summary"]).split()), budget, count)
            except LLMError:
                pass  # fall through to the digest: the conversation must go on
        return extractive_digest(older, self._state.summary, budget, count)

    @staticmethod
    def _merge(into: ConsolidationReport, other: ConsolidationReport | None) -> None:
        if other is None:
            return
        into.sessions += other.sessions
        into.summaries += other.summaries
        into.waiting = list(dict.fromkeys([*into.waiting, *other.waiting]))


def wake_context(
    memory: Memory, agent: str, *, reader: Reader | None = None
) -> tuple[str, str, str]:
    """What an agent wakes with (L1), each part within its budget: identity, the
    ``<memory>`` block of its Brain, its Active Context — only what ``reader`` may see.
    Reads only."""
    count = memory.tokens.count
    s = memory.settings
    identity = fit_tokens(memory.identity(agent=agent).strip(), s.identity_budget, count)
    facts = memory.facts(agent=agent, include_archived=False, reader=reader)
    block = render_memory_block(facts)
    if count(block) > s.brain_max:
        # brain_max bounds the facts as the Brain counts them; their provenance comes on
        # top, so a Brain within its budget is carried whole
        limit = s.brain_max + sum(count(memory_line(f)) - count(fact_line(f)) for f in facts)
        if count(block) > limit:
            lines = block.splitlines()
            kept = fit_lines(lines[1:-1], limit - count("<memory>\n</memory>"), count)
            block = "\n".join(["<memory>", *kept, "</memory>"]) if kept else ""
    active = fit_tokens(
        memory.active_context(agent=agent, reader=reader).strip(), s.active_context_budget, count
    )
    return identity, block, active


def new_session_id(memory: Memory, agent: str, now: datetime) -> str:
    """The next free ``YYYY-MM-DD_NNN`` id of ``agent`` for the day of ``now``."""
    day = now.date().isoformat()
    taken = [
        int(m.group("n"))
        for h in memory.workspace.session_headers(agent)
        if (m := LIVE_ID_RE.match(h.session_id)) and m.group("day") == day
    ]
    return f"{day}_{max(taken, default=0) + 1:03d}"


def extract_from_conversation(
    memory: Memory,
    messages: Sequence[tuple[str, str]],
    *,
    agent: str | None = None,
    llm: LLM | None = None,
    at: datetime | None = None,
) -> ConsolidationReport:
    """Keep a finished conversation (``(role, text)`` pairs) as an ended session and
    consolidate it at once (SPEC I1): facts, Active Context, L1/L2 when due. Memory
    commands inside it are not replayed; without ``llm`` it is queued (L8)."""
    name = agent or memory.settings.default_agent
    memory.create_agent(name)
    now = at or memory.clock.now()
    sid = new_session_id(memory, name, now)
    turns = tuple(
        TurnRecord(f"{sid}_{n}", role, text, now)
        for n, (role, text) in enumerate(messages, 1)
        if text.strip()
    )
    if not turns:
        raise InvalidInput("the conversation has no messages")
    memory.memory_write(name, "sessions", WriteSession(SessionRecord(sid, now, turns)), SYSTEM)
    fields = (("source", "chat"), ("agent", name), ("status", SessionStatus.OPEN.value))
    memory.memory_write(name, "sessions", UpdateSession(sid, fields), SYSTEM)
    return Consolidator(memory, llm).end(name, sid, "new")


def _turn_id(turn: MemoryItem) -> str:
    return turn.provenance.turn_ids[0] if turn.provenance.turn_ids else ""


def _turn_index(turn: MemoryItem) -> int | None:
    """The position ``n`` of a ``<session>_<n>`` turn id (None for other ids)."""
    match = _INDEX_RE.search(_turn_id(turn))
    return int(match.group(1)) if match else None


def lesson_line(item: MemoryItem) -> str:
    return memory_line(item)


def _passing(hits: list[RecallHit], threshold: float) -> list[RecallHit]:
    """Nothing unless the best vector similarity reaches ``threshold`` (L2); then the
    hits at least half as similar, so one strong match does not drag in noise."""
    best = max((h.score.vector_similarity or 0.0 for h in hits), default=0.0)
    if best < threshold:
        return []
    return [h for h in hits if (h.score.vector_similarity or 0.0) >= threshold / 2]


def _distinct(hits: list[RecallHit]) -> list[RecallHit]:
    """Each lesson text once (the best-ranked of its copies): two lessons learned alike,
    a reflection and a strategy of the same words, are one line in the prompt."""
    seen: set[str] = set()
    kept = []
    for hit in hits:
        text = quote(hit.item.content).casefold()
        if text not in seen:
            seen.add(text)
            kept.append(hit)
    return kept


def _within(hits: list[RecallHit], budget: int, count: Count) -> list[RecallHit]:
    """The leading hits whose recalled lines fit ``budget`` tokens."""
    return hits[: len(fit_lines([recalled_line(h.item) for h in hits], budget, count))]


__all__ = [
    "Session",
    "Turn",
    "Wake",
    "extract_from_conversation",
    "lesson_line",
    "new_session_id",
]
