"""Sleep: turning ended sessions into durable memory (SPEC L6-L8).

When a session ends its file's header says ``status: ended``: the session is queued.
:meth:`Consolidator.run` takes every queued session, oldest first, and with a model
at hand makes ONE extraction call (``prompts/extraction``): the facts it returns are
written through the single write path (UPDATE supersedes and keeps history, DELETE
forgets), the Active Context is overwritten with the session summary, and the header
becomes ``status: consolidated``. Then the volume triggers run: every ``l1_every``
consolidated sessions not yet covered make an L1 summary, every ``l2_every`` L1
summaries an L2 summary.

Without a model (none configured, or unreachable) nothing is lost: the rule-based
extractor captures explicit statements at once, the Active Context gets an honest
extractive note, and the session stays queued for the next run (the next session
end, the next wake, or ``kronika jobs consolidate``). A model that keeps answering with
output that cannot be used counts attempts; after ``consolidation_attempts`` the
session is marked ``failed`` and retried only on request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from kronika.core.context import fit_lines, fit_tokens, lead_sentence
from kronika.core.dedup import key_in_use
from kronika.core.model import MemoryItem, Reader, SessionStatus, Source
from kronika.core.prompt import fact_line
from kronika.core.rules import EXTRACTOR_VERSION, extract_statements
from kronika.core.visibility import OWNER, Audience
from kronika.engine.changes import SetActiveContext, UpdateSession, WriteSummary
from kronika.engine.write import WriteReceipt, describe_change
from kronika.errors import (
    InvalidInput,
    LLMError,
    LLMUnavailable,
    NotFound,
    PermissionDenied,
)
from kronika.memory import Memory
from kronika.ports import LLM
from kronika.prompts import extraction, summaries
from kronika.prompts.base import Prompt
from kronika.providers.jsonout import ask
from kronika.stores.markdown.frontmatter import list_field
from kronika.stores.markdown.meta import format_time, parse_time
from kronika.stores.markdown.sessions import (
    SUMMARY_SPEAKER,
    SessionHeader,
    audience_fields,
    header_audience,
)

T = TypeVar("T")

NO_MODEL = "no language model is configured"


@dataclass(frozen=True, slots=True)
class SessionOutcome:
    """What consolidation did with one session."""

    session_id: str
    status: str  # consolidated | queued | failed
    written: tuple[str, ...] = ()
    summary: str | None = None
    error: str | None = None
    extractor: str | None = None


@dataclass(slots=True)
class ConsolidationReport:
    sessions: list[SessionOutcome] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    """What still waits for a model: queued sessions and due L1/L2 summaries."""


class Consolidator:
    """Consolidates one workspace's ended sessions; ``llm`` is the minion model (or None)."""

    def __init__(self, memory: Memory, llm: LLM | None) -> None:
        self.memory = memory
        self.llm = llm
        self.settings = memory.settings

    # ------------------------------------------------------------------ public
    def end(self, agent: str, session_id: str, reason: str) -> ConsolidationReport:
        """Mark ``session_id`` ended (``reason``: new, idle, shutdown, interrupted) and
        consolidate everything queued."""
        header = self._header(agent, session_id)
        # a session saved turn by turn (``save_turn``: the API, the server) has no status
        if header is not None and header.status in (SessionStatus.OPEN, ""):
            self._set(
                agent,
                session_id,
                status=SessionStatus.ENDED.value,
                ended=format_time(self.memory.clock.now()),
                end_reason=reason,
            )
        return self.run(agent)

    def run(self, agent: str, *, retry_failed: bool = False) -> ConsolidationReport:
        """Consolidate every queued session of ``agent`` (and failed ones when asked),
        then write the L1/L2 summaries that are due."""
        report = ConsolidationReport()
        wanted = {SessionStatus.ENDED.value} | (
            {SessionStatus.FAILED.value} if retry_failed else set()
        )
        headers = self.memory.workspace.session_headers(agent)
        for header in headers:
            if header.status in wanted:
                outcome = self._consolidate(agent, header, headers)
                report.sessions.append(outcome)
                if outcome.status != "consolidated":
                    report.waiting.append(f"session {header.session_id}")
        report.summaries += self._summaries(agent, report)
        return report

    def end_quiet(self, agent: str, since: datetime) -> list[str]:
        """Mark ended (reason ``distill``) the sessions not yet ended whose last turn lies
        between ``since`` and ``idle_minutes`` ago — those kronika recorded and those
        ``save_turn`` started alike; a session still being written is left open.
        Returns their ids; :meth:`run` then consolidates them."""
        ws = self.memory.workspace
        now = self.memory.clock.now()
        idle = now - timedelta(minutes=self.settings.idle_minutes)
        ended = []
        for header in ws.session_headers(agent):
            if header.status not in (SessionStatus.OPEN, ""):
                continue
            turns = ws.parse_source(agent, header.path).items
            if turns and since <= turns[-1].created_at <= idle:
                self._set(
                    agent,
                    header.session_id,
                    status=SessionStatus.ENDED.value,
                    ended=format_time(now),
                    end_reason="distill",
                )
                ended.append(header.session_id)
        return ended

    # ------------------------------------------------------------- one session
    def _consolidate(
        self, agent: str, header: SessionHeader, headers: Sequence[SessionHeader]
    ) -> SessionOutcome:
        """``headers``: every session as the run began (to tell whether this one is the
        newest that ended)."""
        sid = header.session_id
        owners = header_audience(header.fields, header.path, [])
        stored = self.memory.load_session(sid, agent=agent)
        turns = [t for t in stored if t.speaker != SUMMARY_SPEAKER]
        rolled = [t.content for t in stored if t.speaker == SUMMARY_SPEAKER]
        if not any(t.speaker == "user" for t in turns):
            self._set(agent, sid, status=SessionStatus.CONSOLIDATED.value, facts="0", error=None)
            return SessionOutcome(sid, "consolidated", summary=None)
        written: list[str] = []
        if self.llm is None:
            return self._degrade(
                agent, header, headers, turns, NO_MODEL, count_attempt=False, owners=owners
            )
        try:
            result = ask(
                self.llm,
                extraction.EXTRACTION,
                self._transcript(turns, rolled),
                task="extraction",
                agent=agent,
                brain=self._brain_lines(agent, owners),
                max_facts=self.settings.max_facts,
            )
        except LLMUnavailable as exc:
            return self._degrade(
                agent, header, headers, turns, str(exc), count_attempt=False, owners=owners
            )
        except LLMError as exc:
            return self._degrade(
                agent, header, headers, turns, str(exc), count_attempt=True, owners=owners
            )
        tags = (f"session:{sid}", extraction.EXTRACTION.id)
        kept = [f for f in result["facts"] if f["tag"] != "SKIP"][: self.settings.max_facts]
        for fact in kept:
            line = self._apply_fact(agent, fact, tags, owners)
            if line:
                written.append(line)
        summary = " ".join(str(result["summary"]).split())
        if _is_latest(header, headers):
            self._write_active_context(agent, summary, owners)
        self._set(
            agent,
            sid,
            status=SessionStatus.CONSOLIDATED.value,
            consolidated=format_time(self.memory.clock.now()),
            extractor=extraction.EXTRACTION.id,
            model=self.llm.model,
            facts=str(len(written)),
            summary=summary,
            error=None,
        )
        return SessionOutcome(
            sid, "consolidated", tuple(written), summary, None, extraction.EXTRACTION.id
        )

    def _apply_fact(
        self, agent: str, fact: dict[str, str], tags: tuple[str, ...], owners: Audience
    ) -> str | None:
        """Facts learned in a session are for the session's audience; what it may
        update or delete is what that audience's reader may see."""
        tag, key, value = fact["tag"], fact["key"], fact["value"].strip()
        replaces = (fact.get("replaces") or "").strip() or None
        reader = self._reader_of(agent, owners)
        try:
            if tag == "DELETE":
                target = self._key_in_use(agent, replaces or key, reader)
                return f"- {target}" if self._forget(agent, target, value, reader) else None
            if not value:
                return None
            if tag == "WORLD":
                return _describe(
                    self.memory.note(
                        value,
                        agent=agent,
                        source_agent=agent,
                        kind="W",
                        tags=tags,
                        **owners.fields(),
                    )
                )
            section = extraction.SECTION_OF_TAG.get(tag)
            receipt = self.memory.remember(
                key=(replaces or key) if tag == "UPDATE" else key,
                value=value,
                agent=agent,
                section=section,
                source=Source.AUTO,
                source_agent=agent,
                tags=tags,
                **owners.fields(),
            )
            return _describe(receipt)
        except (PermissionDenied, InvalidInput) as exc:
            return f"! {key}: {exc}"

    def _reader_of(self, agent: str, owners: Audience) -> Reader | None:
        """The reader a session's audience stands for (``None``, unrestricted, for the
        owner's own sessions, as before readers existed)."""
        if owners == OWNER:
            return None
        teams = (*self.settings.teams_of(owners.user), *([owners.team] if owners.team else []))
        tenant = self.memory.workspace.tenant_of(agent)
        return Reader(tenant, owners.user, owners.channel, tuple(dict.fromkeys(teams)))

    def _forget(self, agent: str, key: str, value: str, reader: Reader | None = None) -> bool:
        """DELETE: with a value, that value only (the key's other values stay) — of the
        key, or of any key — and the whole key only when it holds one value; without a
        value, the whole key. False when nothing matched."""
        named: list[dict[str, str]] = [{"key": key}]
        if value:
            facts = self.memory.facts(agent=agent, reader=reader)
            multi = any(f.multi for f in facts if f.key == key)
            named = [{"key": key, "value": value}, {"value": value}] + ([] if multi else named)
        for target in named:
            try:
                self.memory.forget(
                    key=target.get("key"),
                    value=target.get("value"),
                    agent=agent,
                    source_agent=agent,
                    reader=reader,
                )
            except NotFound:
                continue
            return True
        return False

    def _key_in_use(self, agent: str, key: str, reader: Reader | None = None) -> str:
        """``key``, or the single-valued key the agent's facts use for its concept ("city"
        → "location"); a multi-valued key is never all forgotten for a key it lacks."""
        fact = key_in_use(key, self.memory.facts(agent=agent, reader=reader))
        return fact.key if fact is not None and fact.key and not fact.multi else key

    def _degrade(
        self,
        agent: str,
        header: SessionHeader,
        headers: Sequence[SessionHeader],
        turns: Sequence[MemoryItem],
        error: str,
        *,
        count_attempt: bool,
        owners: Audience = OWNER,
    ) -> SessionOutcome:
        """No usable model: rule-based facts once, an extractive Active Context, and the
        session stays queued (or is marked failed after too many bad replies)."""
        sid = header.session_id
        written: list[str] = []
        if header.fields.get("rules") != EXTRACTOR_VERSION:
            tags = (f"session:{sid}", EXTRACTOR_VERSION)
            for turn in turns:
                if turn.speaker != "user":
                    continue
                for found in extract_statements(turn.content):
                    try:
                        receipt = self.memory.remember(
                            key=found.key,
                            value=found.value,
                            agent=agent,
                            section=found.section,
                            multi=found.multi,
                            source=Source.AUTO,
                            source_agent=agent,
                            tags=tags,
                            **owners.fields(),
                        )
                    except (PermissionDenied, InvalidInput) as exc:
                        written.append(f"! {found.key}: {exc}")
                        continue
                    written.append(_describe(receipt))
            if _is_latest(header, headers):
                self._write_active_context(agent, extractive_summary(sid, turns), owners)
        attempts = header.number("attempts") + (1 if count_attempt else 0)
        failed = count_attempt and attempts >= self.settings.consolidation_attempts
        status = SessionStatus.FAILED if failed else SessionStatus.ENDED
        fields = {
            "status": status.value,
            "rules": EXTRACTOR_VERSION,
            "attempts": str(attempts) if attempts else None,
            "error": " ".join(error.split()),
        }
        if any(header.fields.get(k) != v for k, v in fields.items()):
            self._set(agent, sid, **fields)  # a retry that changes nothing writes nothing
        return SessionOutcome(
            sid, "failed" if failed else "queued", tuple(written), None, error, EXTRACTOR_VERSION
        )

    # --------------------------------------------------------------- summaries
    def _summaries(self, agent: str, report: ConsolidationReport) -> list[str]:
        written: list[str] = []
        ws = self.memory.workspace
        while True:
            covered = {
                s for _, f in ws.summary_headers(agent, "L1") for s in list_field(f, "sessions")
            }
            todo = [
                h
                for h in ws.session_headers(agent)
                if h.status == SessionStatus.CONSOLIDATED and h.session_id not in covered
            ]
            batch = _one_audience(todo, lambda h: h.fields, self.settings.l1_every)
            if batch is None:
                break
            text = "\n\n".join(
                f"[{h.session_id}] {h.fields.get('started', '')}\n"
                + (h.fields.get("summary") or "(no summary)")
                for h in batch
            )
            path = self._write_level(
                agent,
                "L1",
                summaries.L1,
                text,
                len(batch),
                {
                    "sessions": ", ".join(h.session_id for h in batch),
                    **dict(audience_fields(header_audience(batch[0].fields, "", []))),
                },
                report,
            )
            if path is None:
                break
            written.append(path)
        while True:
            l1 = ws.summary_headers(agent, "L1")
            covered = {
                s for _, f in ws.summary_headers(agent, "L2") for s in list_field(f, "summaries")
            }
            todo_l1 = [(p, f) for p, f in l1 if _stem(p) not in covered]
            found = _one_audience(todo_l1, lambda pair: pair[1], self.settings.l2_every)
            if found is None:
                break
            batch_l1 = found
            parts = []
            for path, _ in batch_l1:
                body = ws.parse_source(agent, path).items
                parts.append(f"[{_stem(path)}]\n{body[0].content if body else ''}")
            sessions = [s for _, f in batch_l1 for s in list_field(f, "sessions")]
            path = self._write_level(
                agent,
                "L2",
                summaries.L2,
                "\n\n".join(parts),
                len(batch_l1),
                {
                    "summaries": ", ".join(_stem(p) for p, _ in batch_l1),
                    "sessions": ", ".join(sessions),
                    **dict(audience_fields(header_audience(batch_l1[0][1], "", []))),
                },
                report,
            )
            if path is None:
                break
            written.append(path)
        return written

    def _write_level(
        self,
        agent: str,
        level: str,
        prompt: Prompt,
        text: str,
        count: int,
        fields: dict[str, str],
        report: ConsolidationReport,
    ) -> str | None:
        if self.llm is None:
            report.waiting.append(f"{level} summary ({NO_MODEL})")
            return None
        try:
            result = ask(self.llm, prompt, text, task=f"{level} summary", agent=agent, count=count)
        except LLMError as exc:
            report.waiting.append(f"{level} summary ({exc})")
            return None
        number = len(self.memory.workspace.summary_headers(agent, level)) + 1
        name = f"{level}_{number:03d}"
        path = f"summaries/{level}/{name}.md"
        sessions = list_field(fields, "sessions")
        sources = ", ".join(f"[{s}](../../sessions/{s}.md)" for s in sessions)
        body = f"{result['summary'].strip()}\n\nSources: {sources}\n"
        header = {
            "id": f"{level.lower()}-{agent}-{number:03d}",
            "created": format_time(self.memory.clock.now()),
            **fields,
            "prompt": prompt.id,
            "model": self.llm.model,
            "token_count": str(self.memory.tokens.count(result["summary"])),
        }
        self.memory.memory_write(
            agent, "summaries", WriteSummary(path, body, tuple(header.items())), agent
        )
        return path

    # ---------------------------------------------------------------- helpers
    def _transcript(self, turns: Sequence[MemoryItem], rolled: Sequence[str]) -> str:
        """The conversation as ``speaker: text`` lines; a long one keeps its latest part
        within ``extraction_budget`` tokens (at least the last line), after the session's
        rolling summary (``rolled``, oldest first)."""
        lines = [f"{t.speaker}: {t.content}" for t in turns]
        count = self.memory.tokens.count
        kept = fit_lines(lines[::-1], self.settings.extraction_budget, count)[::-1] or lines[-1:]
        if len(kept) < len(lines):
            earlier = rolled[-1] if rolled else f"({len(lines) - len(kept)} earlier messages)"
            kept.insert(0, f"[summary of the earlier part] {earlier}")
        return "\n".join(kept)

    def _brain_lines(self, agent: str, owners: Audience = OWNER) -> str:
        """The Brain the session's audience may see (the model reads it, and its
        summary must not repeat what they may not see)."""
        reader = self._reader_of(agent, owners)
        facts = self.memory.facts(agent=agent, include_archived=False, reader=reader)
        if not facts:
            return "(empty)"
        return "\n".join(fact_line(f) for f in facts)

    def _write_active_context(self, agent: str, text: str, owners: Audience = OWNER) -> None:
        """The session summary is bookkeeping, not a claim about the user: it is written
        as the system at autonomy 1-3 (no proposal to approve every session); a read-only
        agent (0) keeps it only in the session header."""
        if self.settings.policy(agent).autonomy == 0:
            return
        trimmed = fit_tokens(text, self.settings.active_context_budget, self.memory.tokens.count)
        change = SetActiveContext(trimmed, owners)
        self.memory.memory_write(agent, "active_context", change, "system")

    def _header(self, agent: str, session_id: str) -> SessionHeader | None:
        for header in self.memory.workspace.session_headers(agent):
            if header.session_id == session_id:
                return header
        return None

    def _set(self, agent: str, session_id: str, **fields: str | None) -> None:
        change = UpdateSession(session_id, tuple(fields.items()))
        self.memory.memory_write(agent, "sessions", change, "system")


def _one_audience(
    todo: Sequence[T], fields_of: Callable[[T], Mapping[str, str]], size: int
) -> list[T] | None:
    """The first ``size`` of ``todo`` made for one audience, taking the audience whose
    ``size``-th is earliest (``None`` when no audience has that many yet). Summaries are
    made per audience, so none mixes memories some of its readers may not see."""
    groups: dict[Audience, list[T]] = {}
    for entry in todo:
        group = groups.setdefault(header_audience(fields_of(entry), "", []), [])
        group.append(entry)
        if len(group) == size:
            return group
    return None


def extractive_summary(session_id: str, turns: Sequence[MemoryItem]) -> str:
    """An honest stand-in for a session summary when no model is available."""
    users = [t for t in turns if t.speaker == "user"]
    when = turns[0].created_at.date().isoformat() if turns else ""
    first = lead_sentence(users[0].content) if users else ""
    last = lead_sentence(users[-1].content) if len(users) > 1 else ""
    parts = [
        f"Last conversation: {when}, {len(turns)} messages (session {session_id}); "
        "it has not been summarised yet because no language model was available.",
        f"It began with: “{first}”." if first else "",
        f"The last thing the user said: “{last}”." if last else "",
    ]
    return " ".join(p for p in parts if p)


def _is_latest(header: SessionHeader, headers: Sequence[SessionHeader]) -> bool:
    """True when no later session has ended (so this summary is the newest one).

    Later by start time, then by id: a session id the caller chose (``save_turn``)
    says nothing of when it began."""
    ended = (SessionStatus.CONSOLIDATED, SessionStatus.ENDED)
    return not any(_order(o) > _order(header) and o.status in ended for o in headers)


def _order(header: SessionHeader) -> tuple[datetime, str]:
    try:
        started = parse_time(header.fields.get("started", ""))
    except ValueError:
        started = datetime.min.replace(tzinfo=UTC)
    return started, header.session_id


def _describe(receipt: WriteReceipt) -> str:
    """``+``/``~``/``=`` and the fact for a report line; ``?`` for a proposal."""
    item = receipt.item
    text = item.content if item is not None else describe_change(receipt.change)[2]
    if receipt.outcome == "proposed":
        return f"? {text} (proposal {receipt.proposal}, waiting for `kronika proposals approve`)"
    kind = type(receipt.change).__name__
    mark = {"AddFact": "+", "SupersedeFact": "~", "TouchFact": "="}.get(kind, "+")
    return f"{mark} {text}"


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


__all__ = [
    "ConsolidationReport",
    "Consolidator",
    "SessionOutcome",
    "extractive_summary",
]
