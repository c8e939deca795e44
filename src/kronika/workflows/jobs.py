"""The memory jobs (SPEC F1, F4-F6): `kronika jobs run decay|reflect|dream|summarize|distill`.

Every job is idempotent — running it again changes nothing that is already done — and
safe to stop at any point: each step is one change through the write path, and a job
remembers in ``jobs.json`` only when it last finished, so a crashed run is simply run
again. What needs a language model and finds none waits: the job reports it as
``waiting`` and the next run with a model does it.

* **decay**: Brain facts whose strength (:mod:`kronika.core.decay`: importance that
  halves every ``decay_half_life_days`` unused, reinforced by use) fell below
  ``decay_archive_below`` move to the archive (nothing is deleted); observations
  (:mod:`kronika.memory.sensory`) past their time to live are forgotten.
* **reflect**: an entity page ``bank/entities/<Name>.md`` for every entity that recent
  facts and notes mention: a section kronika keeps (between ``<!-- kronika:facts -->``
  markers) listing what is known of it with citations, beside anything written there
  by hand, which is never touched. The section is a view: it is not indexed again.
* **dream** (mode ``full`` only): from the recent high-importance episodes (outcomes,
  experiences, important facts) the model draws 1–3 general strategies, kept as lessons
  (:mod:`kronika.core.lessons`) that later outcomes score like any other. Episodes of
  each audience are dreamed on apart, and their strategies are for that audience.
* **summarize** and **distill**: the conversations that ended become a mid-term summary
  and long-term facts, and L1/L2 summaries are written when due (the consolidation of
  :mod:`kronika.workflows.consolidate`); ``distill`` is the MicroDAO name for the same
  pass over a period, which first ends the sessions of the period that went quiet (no
  turn for ``idle_minutes``: kronika's own and those ``save_turn`` started). With
  ``clear`` (``--clear``, the ``distill_clear`` setting) it then clears the short-term
  messages it distilled (:func:`_clear_distilled`).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kronika.core.decay import strength
from kronika.core.lessons import Lesson
from kronika.core.model import (
    FACT_TYPES,
    ItemType,
    LinkKind,
    MemoryItem,
    RecallFilter,
    SessionStatus,
)
from kronika.core.visibility import OWNER, Audience
from kronika.engine.changes import (
    ArchiveFacts,
    ForgetItems,
    UpdateNote,
    WriteEntityPage,
    WriteLessons,
)
from kronika.engine.write import SYSTEM
from kronika.errors import InvalidInput, LLMError
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.files import read_source
from kronika.stores.markdown.meta import parse_time
from kronika.stores.markdown.notes import VIEW_BEGIN, VIEW_END
from kronika.stores.markdown.sessions import SessionHeader

if TYPE_CHECKING:
    from kronika.memory import Memory
    from kronika.ports import LLM

JOBS = ("decay", "reflect", "dream", "summarize", "distill")
MODES = ("lite", "full")
STATE_FILE = "jobs.json"
BEGIN, END = VIEW_BEGIN, VIEW_END
Progress = Callable[[str, int, int], None]
_SAFE_NAME = re.compile(r"^[^/\\:*?\"<>|\x00-\x1f.][^/\\:*?\"<>|\x00-\x1f]{0,79}$")


@dataclass(slots=True)
class JobReport:
    job: str
    agent: str
    mode: str
    done: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    unchanged: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "agent": self.agent,
            "mode": self.mode,
            "done": self.done,
            "waiting": self.waiting,
            "unchanged": self.unchanged,
            "seconds": round(self.seconds, 3),
        }

    def as_counts(self) -> dict[str, Any]:
        """What a job record keeps (the server's, and ``jobs.json``): how many steps were
        done, wait and were unchanged, never their wording. A step names what it worked
        on (an entity page, a key, a strategy's text), and a record outlives a forget of
        it; the audit trail and the files say what was written, and forget redacts both."""
        return {
            "job": self.job,
            "agent": self.agent,
            "mode": self.mode,
            "done": len(self.done),
            "waiting": len(self.waiting),
            "unchanged": self.unchanged,
            "seconds": round(self.seconds, 3),
        }


def run_job(
    memory: Memory,
    job: str,
    *,
    agent: str | None = None,
    days: int = 7,
    mode: str = "full",
    llm: LLM | None = None,
    progress: Progress | None = None,
    clear: bool | None = None,
) -> JobReport:
    """Run one job for one agent; see the module docstring. ``clear`` (``distill``
    only; default: the ``distill_clear`` setting) clears the messages distilled."""
    if job not in JOBS:
        raise InvalidInput(f"unknown job {job!r}: one of {', '.join(JOBS)}")
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}: lite or full")
    if not 1 <= days <= 36_600:
        raise InvalidInput("--days must be from 1 to 36600")
    name = memory.resolve_agent(agent)
    report = JobReport(job, name, mode)
    started = time.perf_counter()
    since = memory.clock.now() - timedelta(days=days)
    if job == "decay":
        _decay(memory, name, report)
    elif job == "reflect":
        _reflect(memory, name, since, report, progress, llm)
    elif job == "dream":
        if mode == "lite":
            report.done.append("lite mode: no dreaming")
        else:
            _dream(memory, name, since, llm, report)
    else:
        if job == "distill":
            _end_quiet(memory, name, since, report)
        _consolidate(memory, name, llm, report)
        if job == "distill" and (memory.settings.distill_clear if clear is None else clear):
            _clear_distilled(memory, name, report)
    report.seconds = time.perf_counter() - started
    _remember_run(memory, report)
    return report


# -------------------------------------------------------------------------- decay
def _decay(memory: Memory, agent: str, report: JobReport) -> None:
    s = memory.settings
    now = memory.clock.now()
    sensory = memory.index.list_items(RecallFilter(agents=(agent,), types=(ItemType.SENSORY,)))
    expired = [it for it in sensory if it.valid_to is not None and it.valid_to <= now]
    if expired:
        memory.forget_items(agent, expired, section="sensory", source_agent=SYSTEM)
        report.done.append(f"forgot {len(expired)} expired observation(s)")
    facts = memory.workspace.brain_facts(agent)
    usage = {it.id: it for it in memory.index.get_items([f.id for f in facts])}
    weak = [
        f.id
        for f in facts
        if strength(usage.get(f.id, f), now, s.decay_half_life_days) < s.decay_archive_below
    ]
    report.unchanged = len(facts) - len(weak)
    if weak:
        memory.memory_write(agent, "Brain", ArchiveFacts(tuple(weak)), SYSTEM)
        report.done.append(f"archived {len(weak)} fact(s) no longer used: {', '.join(weak)}")


# ------------------------------------------------------------------------ reflect
def _reflect(
    memory: Memory,
    agent: str,
    since: datetime,
    report: JobReport,
    progress: Progress | None,
    llm: LLM | None = None,
) -> None:
    recent = memory.index.list_items(
        RecallFilter(agents=(agent,), types=(ItemType.FACT, ItemType.NOTE), since=since)
    )
    recent = [it for it in recent if not it.provenance.path.startswith("bank/entities/")]
    names = sorted({e for it in recent for e in it.entities if _SAFE_NAME.match(e)})
    for n, entity in enumerate(names):
        about = _about(memory, agent, entity)
        if not about:
            continue
        if _weigh_opinions(memory, agent, entity, about, since, llm, report):
            about = _about(memory, agent, entity)  # the page shows the moved confidence
        path = f"bank/entities/{entity}.md"
        folder = memory.workspace.agent_dir(agent)
        current = _page(folder, path)
        page = entity_page(entity, current, about)
        if page == current:
            report.unchanged += 1
        else:
            memory.memory_write(agent, "bank", WriteEntityPage(path, page), SYSTEM)
            report.done.append(f"{path}: {len(about)} item(s)")
        if progress is not None:
            progress(f"reflect {agent}", n + 1, len(names))
    _bank_views(memory, agent, report)  # last: opinions show their moved confidence


BANK_VIEWS = (
    ("W", "bank/world.md", "World", "What is true of the world"),
    ("B", "bank/experience.md", "Experience", "What I did and lived through"),
    ("O", "bank/opinions.md", "Opinions", "What I believe, and how sure I am"),
)


def _bank_views(memory: Memory, agent: str, report: JobReport) -> None:
    """``bank/world.md``, ``experience.md`` and ``opinions.md``: every typed note of that
    kind from the daily logs, as a view kept between the markers (the rest of each
    file is the person's, and lines written there are memory of their own)."""
    notes = memory.index.list_items(
        RecallFilter(agents=(agent,), types=(ItemType.NOTE,), include_archived=False)
    )
    folder = memory.workspace.agent_dir(agent)
    for letter, path, title, said in BANK_VIEWS:
        kept = [
            it
            for it in notes
            if it.kind is not None
            and it.kind.value == letter
            and it.provenance.path.startswith("memory/")
        ]
        current = _page(folder, path)
        if not kept and not current:
            continue
        page = view_page(title, said, current, kept)
        if page == current:
            report.unchanged += 1
        else:
            memory.memory_write(agent, "bank", WriteEntityPage(path, page), SYSTEM)
            report.done.append(f"{path}: {len(kept)} note(s)")


def _page(folder: Path, path: str) -> str:
    """A bank page's text as it stands (empty when there is none yet)."""
    read = read_source(folder, path)
    return read.text if read is not None else ""


def _about(memory: Memory, agent: str, entity: str) -> list[Any]:
    """The current facts and notes that mention ``entity`` (not its own page)."""
    found = memory.index.list_items(
        RecallFilter(
            agents=(agent,),
            types=(ItemType.FACT, ItemType.NOTE),
            entities=(entity,),
            include_archived=False,
        )
    )
    return [it for it in found if not it.provenance.path.startswith("bank/entities/")]


def entity_page(entity: str, current: str, items: list[Any]) -> str:
    """``current`` (a page, maybe written by hand) with kronika's section rewritten."""
    return view_page(entity, f"What kronika knows of {entity}", current, items)


def view_page(title: str, heading: str, current: str, items: list[Any]) -> str:
    """``current`` with kronika's section (``heading`` and a line per item) rewritten;
    a new page gets ``# title``."""
    lines = [BEGIN, f"## {heading}", ""]
    for it in sorted(items, key=lambda i: (i.created_at, i.id)):
        kind = f"{it.kind.value} " if getattr(it, "kind", None) else ""
        confidence = (
            f" (confidence {it.confidence:g})"
            if getattr(it, "confidence", None) is not None
            else ""
        )
        text = " ".join(it.content.split())
        cited = it.provenance.citation()
        lines.append(f"- {kind}{text}{confidence} — [{cited}](../../{it.provenance.path})")
    lines += ["", END]
    section = "\n".join(lines)
    if BEGIN in current and END in current:
        head, _, rest = current.partition(BEGIN)
        _, _, tail = rest.partition(END)
        return head + section + tail
    if not current.strip():
        return f"# {title}\n\n{section}\n"
    return current.rstrip("\n") + "\n\n" + section + "\n"


OPINIONS_SYSTEM = """\
You keep the opinions the assistant "{agent}" holds about {entity} honest. You get its \
opinions (with ids) and new evidence (with ids): things said, done or learned. For each \
pair where the evidence bears on the opinion, say whether it supports or contradicts \
it. Leave out pairs that are unrelated. Judge only from the text given.

Reply with JSON only: {{"judgements": [{{"opinion": "id", "evidence": "id", \
"verdict": "supports" or "contradicts"}}]}}"""

OPINIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["judgements"],
    "properties": {
        "judgements": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["opinion", "evidence", "verdict"],
                "properties": {
                    "opinion": {"type": "string"},
                    "evidence": {"type": "string"},
                    "verdict": {"enum": ["supports", "contradicts"]},
                },
            },
        }
    },
}


def _weigh_opinions(
    memory: Memory,
    agent: str,
    entity: str,
    about: list[Any],
    since: datetime,
    llm: LLM | None,
    report: JobReport,
) -> bool:
    """Move the confidence of the opinions about ``entity`` by the new evidence (F1):
    small steps (:mod:`kronika.core.opinions`), each piece judged once (it is linked to
    the opinion it bears on), evidence links kept. True when a confidence moved."""
    opinions = [it for it in about if it.kind is not None and it.kind.value == "O"]
    if not opinions:
        return False
    linked = {frozenset((x.from_id, x.to_id)) for x in memory.links(agent=agent)}
    evidence = [
        it
        for it in about
        if it not in opinions
        and it.created_at >= since
        and not any(frozenset((it.id, o.id)) in linked for o in opinions)
    ]
    if not evidence:
        return False
    if llm is None:
        report.waiting.append(f"opinions about {entity} (no language model)")
        return False
    from kronika.core.opinions import moved_confidence
    from kronika.prompts.base import Prompt, keep
    from kronika.providers.jsonout import ask

    prompt = Prompt("opinions", 1, OPINIONS_SYSTEM, OPINIONS_SCHEMA, keep)
    material = "Opinions:\n" + "\n".join(
        f"- [{o.id}] {' '.join(o.content.split())} (confidence {o.confidence})" for o in opinions
    )
    material += "\n\nNew evidence:\n" + "\n".join(
        f"- [{e.id}] {' '.join(e.content.split())}" for e in evidence[:40]
    )
    try:
        reply = ask(llm, prompt, material, task="opinions", agent=agent, entity=entity)
    except LLMError as exc:
        report.waiting.append(f"opinions about {entity} ({exc})")
        return False
    by_id = {o.id: o for o in opinions}
    shown = {e.id for e in evidence[:40]}
    tally: dict[str, list[int]] = {}
    pairs: list[tuple[str, str]] = []
    for j in reply["judgements"]:
        opinion, piece = str(j["opinion"]), str(j["evidence"])
        if opinion not in by_id or piece not in shown or (piece, opinion) in pairs:
            continue  # an id the model made up, or a pair judged twice
        pairs.append((piece, opinion))
        counts = tally.setdefault(opinion, [0, 0])
        counts[0 if j["verdict"] == "supports" else 1] += 1
    moved_any = False
    for opinion_id, (supports, contradicts) in tally.items():
        old = by_id[opinion_id]
        new = moved_confidence(old.confidence, supports, contradicts)
        if new != old.confidence:
            moved = replace(old, confidence=new, updated_at=memory.clock.now())
            memory.memory_write(agent, old.section or "Retain", UpdateNote(moved), SYSTEM)
            moved_any = True
            report.done.append(
                f"opinion {opinion_id}: confidence {old.confidence} -> {new}"
                f" (+{supports} / -{contradicts})"
            )
    for piece, opinion in pairs:
        memory.link(piece, opinion, LinkKind.RELATED, agent=agent, source_agent=SYSTEM)
    return moved_any


# -------------------------------------------------------------------------- dream
DREAM_SYSTEM = """\
You help the assistant "{agent}" learn general ways of working from its recent, \
important experiences. From the episodes given, write one to three general \
strategies: each one imperative sentence that would help in situations like these \
in the future, grounded in the episodes (no invented facts). Rate each one's \
importance from 0 to 1.

Reply with JSON only: {{"strategies": [{{"text": "...", "importance": 0.0}}]}}"""

DREAM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["strategies"],
    "properties": {
        "strategies": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "required": ["text", "importance"],
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": 500},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        }
    },
}


def _dream(memory: Memory, agent: str, since: datetime, llm: LLM | None, report: JobReport) -> None:
    recent = memory.index.list_items(RecallFilter(agents=(agent,), since=since), limit=2000)
    episodes = [
        it
        for it in recent
        if (it.kind is not None and it.kind.value == "B")
        or (it.type in FACT_TYPES and it.importance >= 0.7)
    ][:40]
    if not episodes:
        report.done.append("no recent important episodes to dream on")
        return
    if llm is None:
        report.waiting.append(f"dreaming on {len(episodes)} episode(s) (no language model)")
        return
    groups: dict[Audience, list[MemoryItem]] = {}
    for it in episodes:  # each audience dreams apart: a strategy never mixes readers
        groups.setdefault(Audience.of(it), []).append(it)
    for owners, group in groups.items():
        if not _dream_for(memory, agent, owners, group, llm, report):
            return


def _dream_for(
    memory: Memory,
    agent: str,
    owners: Audience,
    episodes: list[MemoryItem],
    llm: LLM,
    report: JobReport,
) -> bool:
    """Dream on the episodes of one audience; the strategies are for that audience.
    ``False`` when the model could not answer (the rest waits for the next run)."""
    from kronika.prompts.base import Prompt, keep
    from kronika.providers.jsonout import ask

    prompt = Prompt("dream", 1, DREAM_SYSTEM, DREAM_SCHEMA, keep)
    material = "\n".join(f"- {' '.join(it.content.split())}" for it in episodes)
    try:
        reply = ask(llm, prompt, material, task="dream", agent=agent)
    except LLMError as exc:
        report.waiting.append(f"dreaming ({exc})")
        return False
    now = memory.clock.now()
    known = {x.cause for x in memory.workspace.read_lessons(agent)}
    # the owner's causes stay as they were before lessons had audiences
    whose = (
        "" if owners == OWNER else f"{owners.scope}|{owners.user}|{owners.channel}|{owners.team}|"
    )
    fresh: list[Lesson] = []
    for entry in reply["strategies"][:3]:
        text = " ".join(str(entry["text"]).split())
        cause = "dream:" + hashlib.sha256((whose + text.casefold()).encode()).hexdigest()[:12]
        if cause in known:
            report.unchanged += 1
            continue
        fresh.append(
            Lesson(
                id="s-" + hashlib.sha256(f"{agent}|{cause}".encode()).hexdigest()[:12],
                agent=agent,
                kind="strategy",
                text=text,
                cause=cause,
                created_at=now,
                updated_at=now,
                importance=float(entry["importance"]),
                evidence=tuple(it.id for it in episodes[:20]),
                tags=("dream",),
                owners=owners,
            )
        )
    if fresh:
        memory.memory_write(agent, "Lessons", WriteLessons(tuple(fresh), "dreamed"), SYSTEM)
        report.done.extend(f"strategy {x.id}: {x.text}" for x in fresh)
    return True


# ------------------------------------------------------------ summarize / distill
def _end_quiet(memory: Memory, agent: str, since: datetime, report: JobReport) -> None:
    """End the sessions of the period that went quiet (no turn for ``idle_minutes``),
    so that the consolidation after takes them (:meth:`Consolidator.end_quiet`)."""
    from kronika.workflows.consolidate import Consolidator

    for session_id in Consolidator(memory, None).end_quiet(agent, since):
        report.done.append(f"session {session_id}: ended (no turn for idle_minutes)")


def _consolidate(memory: Memory, agent: str, llm: LLM | None, report: JobReport) -> None:
    from kronika.workflows.consolidate import Consolidator

    result = Consolidator(memory, llm).run(agent)
    for outcome in result.sessions:
        if outcome.status == "consolidated":
            report.done.append(f"session {outcome.session_id}: {len(outcome.written)} fact(s)")
    report.done.extend(f"summary {path}" for path in result.summaries)
    report.waiting.extend(result.waiting)


def _clear_distilled(memory: Memory, agent: str, report: JobReport) -> None:
    """Clear the short-term messages that are distilled (SPEC F5): the turns of every
    session whose header says ``consolidated`` — its summary (in that header) and its
    facts (in the Brain) were written before the header changed, so they are durable —
    and only the turns the consolidation saw (none written after it). Each session's
    turns go in one ``ForgetItems`` change through the write path: removed from the
    session file, the index and the vectors, with an audit entry that names ids and
    counts, never the text. The session file stays, its header keeping the summary.
    Nothing is redacted elsewhere: the summary and the facts are what the messages
    became. While proposals wait for approval (facts an agent at autonomy 1 proposed)
    nothing is cleared; a cleared session has no turns left, so a second run, or a run
    after a crash, clears nothing twice."""
    pending = memory.proposals(agent)
    if pending:
        report.waiting.append(f"clearing distilled messages ({len(pending)} proposal(s) pending)")
        return
    with memory.forgets_together():  # the files that held them rewritten once, at the end
        for header in memory.workspace.session_headers(agent):
            _clear_session(memory, agent, header, report)


def _clear_session(memory: Memory, agent: str, header: SessionHeader, report: JobReport) -> None:
    """Clear the distilled turns of the session of ``header`` (see :func:`_clear_distilled`):
    a forget through the write path, which also removes their links."""
    if header.status != SessionStatus.CONSOLIDATED.value:
        return
    seen = header.fields.get("consolidated") or header.fields.get("ended")
    if not seen:
        return
    try:
        cutoff = parse_time(seen)
    except ValueError:
        return
    turns: list[MemoryItem] = [
        t
        for t in memory.workspace.parse_source(agent, header.path).items
        if t.type is ItemType.MESSAGE and t.created_at <= cutoff
    ]
    if not turns:
        report.unchanged += 1
        return
    receipt = memory.memory_write(agent, "sessions", ForgetItems(tuple(turns), ()), SYSTEM)
    if receipt.outcome == "applied":
        report.done.append(f"session {header.session_id}: cleared {len(turns)} message(s)")


# -------------------------------------------------------------------------- state
def _remember_run(memory: Memory, report: JobReport) -> None:
    """``jobs.json``: when each job last finished for each agent, and what it did."""
    path = Path(memory.settings.home) / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        state = {}  # a damaged state file only loses the history of runs
    if not isinstance(state, dict):
        state = {}
    runs = state.setdefault(report.job, {})
    runs[report.agent] = {
        "finished_at": memory.clock.now().isoformat(),
        "done": len(report.done),
        "waiting": len(report.waiting),
        "unchanged": report.unchanged,
    }
    atomic_write_text(path, json.dumps(state, indent=2, sort_keys=True) + "\n")


def last_runs(home: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """What ``jobs.json`` says of each job's last run per agent."""
    try:
        state = json.loads((Path(home) / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}
