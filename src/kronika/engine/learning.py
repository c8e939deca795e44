"""Actor → Evaluator → Reflector (SPEC F2, F3): an outcome becomes a lesson, lessons are
scored by later outcomes and retire when they stop holding.

:func:`record_outcome` takes what an agent did for a task and how it went (an
:class:`~kronika.core.lessons.Evaluation`, from a deterministic evaluator or
:func:`evaluate_with_model`) and, through the one write path:

1. keeps the outcome as an experience note (``B``) in the daily log: the event;
2. credits the lessons that were served for this task (``helped`` when it went well,
   ``hurt`` when it still failed), retiring those the evidence turned against;
3. on a failure, or a success after failures of the same task, reflects: the model
   writes a reflection and maybe a strategy (:data:`kronika.prompts.reflection.REFLECTOR`),
   or, without a model (or when it fails), kronika writes a plain one from the
   evaluator's reasons. A failure whose cause already has an active lesson reinforces
   it instead of adding a second;
4. links the event to its reflection and the reflection to its strategy.

Every lesson is for the audience of its outcome (:class:`~kronika.core.visibility.Audience`:
what the outcome names, else its reader's user and channel, as for any note): user U's
private outcome teaches U alone, a team's outcome the team. An outcome credits only
the lessons its reader may see, and reinforces or follows up only lessons of its own
audience, so nobody's outcome reaches into a lesson they cannot read.

:func:`lessons_for` finds the 3-5 active lessons that best match a task (what the
payload's ``lessons`` slot holds, under ``lessons_budget``).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from kronika.core import checks
from kronika.core.lessons import (
    Evaluation,
    Lesson,
    cause_of,
    credited,
    template_reflection,
    worth_reflecting,
)
from kronika.core.model import ItemType, LinkKind, Reader, RecallHit, Scope
from kronika.core.visibility import only_visible
from kronika.engine.changes import WriteLessons
from kronika.engine.write import USER
from kronika.errors import InvalidInput, LLMError
from kronika.prompts.reflection import EVALUATOR, REFLECTOR
from kronika.stores.markdown.lessons import LESSONS_FILE

if TYPE_CHECKING:
    from collections.abc import Callable

    from kronika.ports import LLM, Clock
    from kronika.settings import Settings
    from kronika.stores.markdown.workspace import MarkdownWorkspace

log = logging.getLogger("kronika.lessons")
MAX_TEXT = 2000


class Memory(Protocol):
    """What learning needs of a memory (:class:`kronika.Memory` is one): its reads and
    writes, and how it names an agent, a reader and an audience."""

    @property
    def workspace(self) -> MarkdownWorkspace: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def recall(self) -> Callable[..., Any]: ...
    @property
    def note(self) -> Callable[..., Any]: ...
    @property
    def link(self) -> Callable[..., Any]: ...
    @property
    def memory_write(self) -> Callable[..., Any]: ...
    @property
    def agents(self) -> Callable[[], list[str]]: ...
    @property
    def resolve_agent(self) -> Callable[..., str]: ...
    @property
    def resolve_reader(self) -> Callable[..., Any]: ...
    @property
    def write_audience(self) -> Callable[..., Any]: ...


def _new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


@dataclass(frozen=True, slots=True)
class OutcomeReport:
    """What one outcome did: its event note, the evaluation, lessons learned,
    reinforced, credited and retired, and how the reflection was written."""

    event_id: str | None
    evaluation: Evaluation
    learned: tuple[Lesson, ...] = ()
    reinforced: tuple[Lesson, ...] = ()
    credited: tuple[Lesson, ...] = ()
    retired: tuple[Lesson, ...] = ()
    reflected_by: str | None = None  # reflector@1 (a model), template, or None
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The report as ``kronika lessons record --json`` and the server show it
        (:meth:`from_dict` reads it back)."""
        return {
            "event": self.event_id,
            "is_ok": self.evaluation.is_ok,
            "reasons": list(self.evaluation.reasons),
            "evaluation": self.evaluation.as_dict(),
            "learned": [x.as_dict() for x in self.learned],
            "reinforced": [x.as_dict() for x in self.reinforced],
            "credited": [x.as_dict() for x in self.credited],
            "retired": [x.as_dict() for x in self.retired],
            "reflected_by": self.reflected_by,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutcomeReport:
        def lessons(name: str) -> tuple[Lesson, ...]:
            return tuple(Lesson.from_dict(x) for x in data.get(name, ()))

        return cls(
            event_id=data.get("event"),
            evaluation=Evaluation.from_dict(data["evaluation"]),
            learned=lessons("learned"),
            reinforced=lessons("reinforced"),
            credited=lessons("credited"),
            retired=lessons("retired"),
            reflected_by=data.get("reflected_by"),
            notes=tuple(str(n) for n in data.get("notes", ())),
        )


def task_tag(task: str) -> str:
    """The tag that ties lessons to their task: a hash, so no task text is kept in tags."""
    return "task:" + hashlib.sha256(" ".join(task.casefold().split()).encode()).hexdigest()[:12]


def lessons_for(
    memory: Memory,
    task: str,
    *,
    agent: str | None = None,
    k: int = 5,
    reader: Reader | None = None,
) -> list[RecallHit]:
    """The active lessons ``reader`` may see that best match ``task``, best first (at
    most ``k``); :class:`InvalidInput` when ``task`` is not text."""
    if not checks.text(task, what="the task").strip():
        return []
    result = memory.recall(
        task,
        agent=agent,
        k=k,
        types=[ItemType.REFLECTION, ItemType.STRATEGY],
        record_access=False,
        reader=reader,
    )
    return list(result.hits)


def evaluate_with_model(llm: LLM, task: str, action: str, result: str, *, agent: str) -> Evaluation:
    """The LLM evaluator: ``{is_ok, reasons, score}`` for what came of an action.
    Raises :class:`~kronika.errors.LLMError` when the model cannot answer."""
    from kronika.providers.jsonout import ask  # the model's client: only here

    material = f"Task: {task}\nAction: {action}\nResult:\n{result[: MAX_TEXT * 2]}"
    reply = ask(llm, EVALUATOR, material, task="evaluation", agent=agent)
    return Evaluation(
        bool(reply["is_ok"]),
        float(reply["score"]),
        tuple(str(r) for r in reply["reasons"]),
        EVALUATOR.id,
    )


def record_outcome(
    memory: Memory,
    task: str,
    action: str,
    evaluation: Evaluation,
    *,
    agent: str | None = None,
    served: Sequence[str] | None = None,
    llm: LLM | None = None,
    source_agent: str = USER,
    at: datetime | None = None,
    scope: Scope | str | None = None,
    user: str | None = None,
    channel: str | None = None,
    team: str | None = None,
    reader: Reader | None = None,
) -> OutcomeReport:
    """Keep an outcome and learn from it (see the module docstring).

    ``served``: ids of the lessons the agent was given for this task (default: the
    active lessons that match it now that the reader may see, or without a reader
    those of the outcome's audience). ``scope``, ``user``, ``channel``, ``team`` and
    ``reader`` say who the outcome, and so its lessons, are for, as for
    :meth:`~kronika.Memory.note`.
    """
    task, action = _text(task, "the task"), _text(action, "the action")
    name = memory.resolve_agent(agent)
    who = memory.resolve_reader(reader)
    owners = memory.write_audience(name, scope, user=user, channel=channel, team=team, reader=who)
    now = at or memory.clock.now()
    verdict = "went well" if evaluation.is_ok else "failed"
    why = "; ".join(evaluation.reasons)
    event = memory.note(
        f"For the task {task!r} I did {action!r}; it {verdict}" + (f": {why}" if why else "."),
        agent=name,
        at=at,
        source_agent=source_agent,
        kind="B",
        **owners.fields(),
        reader=who,
    )
    event_id = event.item.id if event.item is not None else None
    book = {lesson.id: lesson for lesson in memory.workspace.read_lessons(name)}
    readable = set(book)
    if who is not None and book:
        items = memory.workspace.parse_source(name, LESSONS_FILE).items
        readable = {item.id for item in only_visible(items, who)}
    tag = task_tag(task)
    if served is None:
        found = lessons_for(memory, task, agent=name, reader=who)
        # without a reader (the owner, unrestricted) the outcome's own audience's lessons
        served = [
            h.item.id
            for h in found
            if h.item.id in book and (who is not None or book[h.item.id].owners == owners)
        ]
    credited_now: list[Lesson] = []
    retired: list[Lesson] = []
    for lesson_id in dict.fromkeys(served):
        lesson = book.get(lesson_id)
        if lesson is None or not lesson.active or lesson_id not in readable:
            continue
        after = replace(credited(lesson, evaluation.is_ok, event_id, now), uses=lesson.uses + 1)
        book[lesson.id] = after
        credited_now.append(after)
        if not after.active:
            retired.append(after)
    ours = [x for x in book.values() if x.owners == owners and x.active]
    failed_before = evaluation.is_ok and any(
        tag in x.tags and x.kind == "reflection" and not x.cause.endswith("ok") for x in ours
    )
    learned: list[Lesson] = []
    reinforced: list[Lesson] = []
    reflected_by: str | None = None
    notes: list[str] = []
    if worth_reflecting(evaluation, failed_before):
        cause = cause_of(task, evaluation.reasons) + ("ok" if evaluation.is_ok else "")
        same = next((x for x in ours if x.cause == cause), None)
        if same is not None:
            evidence = tuple(dict.fromkeys(same.evidence + ((event_id,) if event_id else ())))
            book[same.id] = replace(same, evidence=evidence[-20:], updated_at=now)
            reinforced.append(book[same.id])
        else:
            texts, reflected_by, note = _reflect(llm, task, action, evaluation, name)
            notes.extend(note)
            reflection_text, strategy_text, importance, tags = texts
            reflection = Lesson(
                id=_new_id("l"),
                agent=name,
                kind="reflection",
                text=reflection_text,
                cause=cause,
                created_at=now,
                updated_at=now,
                importance=importance,
                evidence=(event_id,) if event_id else (),
                tags=(tag, *tags),
                owners=owners,
            )
            learned.append(reflection)
            if strategy_text:
                learned.append(
                    replace(
                        reflection,
                        id=_new_id("s"),
                        kind="strategy",
                        text=strategy_text,
                        cause=cause + "+strategy",
                    )
                )
            book.update((x.id, x) for x in learned)
    changed = list({x.id: book[x.id] for x in (*credited_now, *reinforced, *learned)}.values())
    if changed:
        what = "learned" if learned else ("reinforced" if reinforced else "credited")
        receipt = memory.memory_write(
            name, "Lessons", WriteLessons(tuple(changed), what), source_agent
        )
        notes.extend(receipt.notes)
        if receipt.outcome == "applied":
            _link(memory, name, event_id, learned, source_agent)
            for lesson in learned:
                log.info(
                    "lesson made: %s %s for agent %s from event %s by %s",
                    lesson.kind,
                    lesson.id,
                    name,
                    event_id,
                    reflected_by,
                )
            for lesson in retired:
                log.info(
                    "lesson retired: %s for agent %s (score %.2f)", lesson.id, name, lesson.score
                )
    return OutcomeReport(
        event_id,
        evaluation,
        tuple(learned),
        tuple(reinforced),
        tuple(credited_now),
        tuple(retired),
        reflected_by,
        tuple(notes),
    )


def _reflect(
    llm: LLM | None, task: str, action: str, evaluation: Evaluation, agent: str
) -> tuple[tuple[str, str | None, float, tuple[str, ...]], str, list[str]]:
    """The reflection, its strategy, importance and tags; who wrote them; notes."""
    importance = 0.7 if not evaluation.is_ok else 0.6
    if llm is not None:
        from kronika.providers.jsonout import ask  # the model's client: only here

        material = (
            f"Task: {task}\nAction: {action}\n"
            f"Outcome: {'success' if evaluation.is_ok else 'failure'} "
            f"(score {evaluation.score:.2f})\nReasons:\n"
            + "\n".join(f"- {r}" for r in evaluation.reasons)
        )
        try:
            reply: dict[str, Any] = ask(
                llm, REFLECTOR, material[: MAX_TEXT * 2], task="reflection", agent=agent
            )
        except LLMError as exc:
            note = f"the model could not reflect ({exc}); kronika wrote the lesson from the reasons"
            log.warning("%s", note)
            reflection, strategy = template_reflection(task, action, evaluation)
            return (reflection, strategy, importance, ()), "template", [note]
        tags = tuple(str(t) for t in reply.get("tags") or ())[:5]
        strategy = reply.get("strategy_text") or None
        return (
            (str(reply["reflection_text"]), strategy, float(reply["importance"]), tags),
            REFLECTOR.id,
            [],
        )
    reflection, strategy = template_reflection(task, action, evaluation)
    return (reflection, strategy, importance, ()), "template", []


def _link(
    memory: Memory, agent: str, event_id: str | None, learned: Sequence[Lesson], source: str
) -> None:
    reflections = [x for x in learned if x.kind == "reflection"]
    strategies = [x for x in learned if x.kind == "strategy"]
    for reflection in reflections:
        if event_id:
            memory.link(
                event_id, reflection.id, LinkKind.REFLECTION, agent=agent, source_agent=source
            )
        for strategy in strategies:
            memory.link(
                reflection.id, strategy.id, LinkKind.STRATEGY, agent=agent, source_agent=source
            )


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be non-empty text")
    return " ".join(value.split())[:MAX_TEXT]


def lesson_stats(memory: Memory, *, days: int = 7) -> dict[str, Any]:
    """SPEC O1: lessons learned per day (the last ``days``), active and retired counts,
    and the share of conversation payloads that carried a lesson."""
    from kronika.stores.usage import LESSON_USES_FILE, JsonlLessonUses

    today = memory.clock.now().date()
    learned: dict[str, int] = {}
    active = retired = 0
    for agent in memory.agents():
        for lesson in memory.workspace.read_lessons(agent):
            active += lesson.active
            retired += not lesson.active
            age = (today - lesson.created_at.date()).days
            if 0 <= age < days:
                day = lesson.created_at.date().isoformat()
                learned[day] = learned.get(day, 0) + 1
    uses = JsonlLessonUses(memory.settings.home / LESSON_USES_FILE).read()
    with_lesson = sum(1 for row in uses if row.get("lessons"))
    return {
        "lessons_active": active,
        "lessons_retired": retired,
        "lessons_learned_per_day": dict(sorted(learned.items())),
        "payloads": len(uses),
        "payloads_with_a_lesson": with_lesson,
        "share_of_payloads_with_a_lesson": round(with_lesson / len(uses), 4) if uses else None,
    }
