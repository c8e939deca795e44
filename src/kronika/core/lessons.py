"""Lessons an agent learns from how its actions went (SPEC F2, F3): pure parts.

An **outcome** is what an agent did and how it went. An **evaluator** turns raw
results into an :class:`Evaluation` ``{is_ok, score, reasons}``: the deterministic
ones here (an exit code, a test report, a JSON value against a schema, a tool's
status), or the language model (:mod:`kronika.prompts.reflection`).

A failure, or a success that follows failures of the same task (it found the fix),
yields a **lesson**: a reflection (what went wrong and why) and optionally a strategy
(what to do instead). Each lesson keeps a score that follows later outcomes of the
tasks it was served for:

    score = (1 + helped) / (2 + helped + hurt)

the mean of a Beta(1 + helped, 1 + hurt) belief that following the lesson makes the
task go well, starting at 0.5 with no evidence. A lesson served for a task that then
went well *helped*; served for a task that still failed, it *hurt*. It **retires**
once ``hurt >= RETIRE_HURT`` and ``score < RETIRE_SCORE``, or after
``RETIRE_STREAK`` contradictions in a row however well it did before: the evidence
says it no longer holds (the environment changed). The thresholds are principled, not
tuned: two contradictions are the least that is not chance; below 0.4 the lesson is
more often wrong than right with its prior counted; three failures in a row of a
lesson that still held would happen at most one time in eight even if it failed half
the time.

A lesson is for the **audience** of the outcome it was drawn from (its tenant, and
the scope, user, channel and team of that outcome): a reader sees it exactly when
they may see that outcome (:func:`kronika.core.visibility.visible`). A lesson from
user U's private outcome is U's alone; one from a team outcome is the team's. A
lesson that names no audience (written before lessons had one, or by hand) is the
workspace owner's, like any item that names no user.

A lesson is recognised again by its **cause**: the task's name and the first
reason of the failure, normalised and hashed (:func:`cause_of`); the same cause
reinforces the lesson already learned instead of writing a second one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from kronika.core.model import Scope
from kronika.core.text import folded_words
from kronika.core.visibility import OWNER, Audience

RETIRE_HURT = 2
RETIRE_SCORE = 0.4
RETIRE_STREAK = 3
ACTIVE = "active"
RETIRED = "retired"


@dataclass(frozen=True, slots=True)
class Evaluation:
    """How an action went: ``is_ok``, a ``score`` from 0 to 1 and the ``reasons``."""

    is_ok: bool
    score: float
    reasons: tuple[str, ...] = ()
    evaluator: str = "given"

    def as_dict(self) -> dict[str, Any]:
        return {
            "is_ok": self.is_ok,
            "score": self.score,
            "reasons": list(self.reasons),
            "evaluator": self.evaluator,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evaluation:
        return cls(
            bool(data["is_ok"]),
            float(data["score"]),
            tuple(str(r) for r in data.get("reasons", ())),
            str(data.get("evaluator", "given")),
        )


@dataclass(frozen=True, slots=True)
class Lesson:
    """One learned lesson: a reflection, or a strategy answering one."""

    id: str
    agent: str
    kind: str  # reflection | strategy
    text: str
    cause: str
    created_at: datetime
    updated_at: datetime
    helped: int = 0
    hurt: int = 0
    uses: int = 0
    streak: int = 0
    """Contradictions in a row (reset by a help)."""
    status: str = ACTIVE
    importance: float = 0.7
    evidence: tuple[str, ...] = ()
    """Ids of the outcome events this lesson was drawn from or tested by."""
    tags: tuple[str, ...] = field(default=())
    owners: Audience = OWNER
    """Who the lesson is for: the audience of the outcome it was drawn from."""

    @property
    def score(self) -> float:
        return score(self.helped, self.hurt)

    @property
    def active(self) -> bool:
        return self.status == ACTIVE

    def as_dict(self) -> dict[str, Any]:
        """The lesson as the CLI's ``--json`` and the server show it (:meth:`from_dict`
        reads it back)."""
        return {
            "id": self.id,
            "agent": self.agent,
            "kind": self.kind,
            "text": self.text,
            "cause": self.cause,
            "score": round(self.score, 4),
            "helped": self.helped,
            "hurt": self.hurt,
            "uses": self.uses,
            "streak": self.streak,
            "status": self.status,
            "importance": self.importance,
            "evidence": list(self.evidence),
            "tags": list(self.tags),
            "scope": self.owners.scope.value,
            "user": self.owners.user,
            "channel": self.owners.channel,
            "team": self.owners.team,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Lesson:
        """The lesson :meth:`as_dict` wrote (``score`` is derived, so it is not read)."""
        return cls(
            id=str(data["id"]),
            agent=str(data["agent"]),
            kind=str(data["kind"]),
            text=str(data["text"]),
            cause=str(data["cause"]),
            created_at=datetime.fromisoformat(str(data["created_at"])),
            updated_at=datetime.fromisoformat(str(data["updated_at"])),
            helped=int(data["helped"]),
            hurt=int(data["hurt"]),
            uses=int(data["uses"]),
            streak=int(data["streak"]),
            status=str(data["status"]),
            importance=float(data["importance"]),
            evidence=tuple(str(e) for e in data["evidence"]),
            tags=tuple(str(t) for t in data["tags"]),
            owners=Audience(Scope(str(data["scope"])), data["user"], data["channel"], data["team"]),
        )


def score(helped: int, hurt: int) -> float:
    """The lesson's score (see the module docstring)."""
    return (1 + helped) / (2 + helped + hurt)


def credited(lesson: Lesson, ok: bool, event_id: str | None, at: datetime) -> Lesson:
    """``lesson`` after an outcome of a task it was served for: helped or hurt, its
    evidence extended, and retired when the evidence turned against it."""
    helped = lesson.helped + (1 if ok else 0)
    hurt = lesson.hurt + (0 if ok else 1)
    streak = 0 if ok else lesson.streak + 1
    evidence = tuple(dict.fromkeys(lesson.evidence + ((event_id,) if event_id else ())))
    status = lesson.status
    if status == ACTIVE and (
        (hurt >= RETIRE_HURT and score(helped, hurt) < RETIRE_SCORE) or streak >= RETIRE_STREAK
    ):
        status = RETIRED
    return replace(
        lesson,
        helped=helped,
        hurt=hurt,
        streak=streak,
        evidence=evidence[-20:],
        status=status,
        updated_at=at,
    )


def cause_of(task: str, reasons: Sequence[str]) -> str:
    """What identifies the cause of a failure: a hash of the task and its first reason
    as lower-case accent-folded words (the index's own fold, :func:`folded_words`),
    numbers kept (``exit code 2`` and ``exit code 3`` differ). A hash, not the words:
    forgetting a word never has to look inside it."""
    first = reasons[0] if reasons else ""
    digest = hashlib.sha256(f"{_words(task)} | {_words(first)}".encode()).hexdigest()
    return digest[:16]


def _words(text: str) -> str:
    return " ".join(folded_words(text))[:200]


def worth_reflecting(evaluation: Evaluation, failed_before: bool) -> bool:
    """A failure, or a success right after failures of the same task (the fix)."""
    return (not evaluation.is_ok) or failed_before


def template_reflection(task: str, action: str, evaluation: Evaluation) -> tuple[str, str | None]:
    """The reflection (and strategy) kronika writes itself when no model reflects:
    plain sentences from the evaluator's reasons, never invented advice."""
    reasons = "; ".join(evaluation.reasons)
    if evaluation.is_ok:
        return (
            f"Task {task!r}: {action!r} worked where earlier attempts had failed"
            + (f" ({reasons})." if reasons else "."),
            f"For {task!r}, do what worked: {action}.",
        )
    return (f"Task {task!r}: {action!r} failed: {reasons or 'no reason was given'}.", None)


# ----------------------------------------------------------------- evaluators
def exit_code(code: int, stderr: str = "") -> Evaluation:
    """A process's exit code: 0 is a success."""
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    reasons = () if code == 0 else (f"exit code {code}" + (f": {last[:300]}" if last else ""),)
    return Evaluation(code == 0, 1.0 if code == 0 else 0.0, reasons, "exit_code")


def suite_result(
    passed: int, failed: int, errors: int = 0, names: Sequence[str] = ()
) -> Evaluation:
    """A test run: the share of tests that passed; any failure or error fails it."""
    total = passed + failed + errors
    if total <= 0:
        return Evaluation(False, 0.0, ("no tests ran",), "test_report")
    bad = failed + errors
    reasons: tuple[str, ...] = ()
    if bad:
        shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
        reasons = (f"{bad} of {total} tests failed" + (f": {shown}" if shown else ""),)
    return Evaluation(bad == 0, passed / total, reasons, "test_report")


def tool_status(status: str, error: str | None = None) -> Evaluation:
    """A tool call's status: ``ok``/``success``/``200``… pass, anything else fails."""
    ok = status.strip().casefold() in {"ok", "success", "succeeded", "done", "200", "201", "204"}
    reasons = () if ok else (f"tool status {status}" + (f": {error[:300]}" if error else ""),)
    return Evaluation(ok, 1.0 if ok else 0.0, reasons, "tool_status")


def json_schema(value: Any, schema: Mapping[str, Any]) -> Evaluation:
    """A JSON value against a schema (the common subset: ``type``, ``required``,
    ``properties``, ``items``, ``enum``, ``minimum``, ``maximum``, ``minLength``,
    ``maxLength``, ``additionalProperties: false``)."""
    problems = list(_schema_problems(value, schema, "$"))
    reasons = tuple(problems[:5])
    return Evaluation(not problems, 1.0 if not problems else 0.0, reasons, "json_schema")


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _schema_problems(value: Any, schema: Mapping[str, Any], at: str) -> list[str]:
    wanted = schema.get("type")
    if wanted is not None:
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        fits = any(
            isinstance(value, _TYPES.get(n, ()))
            and not (n in ("integer", "number") and isinstance(value, bool))
            for n in names
        )
        if not fits:
            return [f"{at} should be {' or '.join(names)}, not {type(value).__name__}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{at} should be one of {schema['enum']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{at} should be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{at} should be at most {schema['maximum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{at} should have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{at} should have at most {schema['maxLength']} characters")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                problems.append(f"{at}.{name} is missing")
        for name, sub in properties.items():
            if name in value:
                problems.extend(_schema_problems(value[name], sub, f"{at}.{name}"))
        if schema.get("additionalProperties") is False:
            problems.extend(
                f"{at}.{name} is not allowed" for name in value if name not in properties
            )
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for n, element in enumerate(value):
            problems.extend(_schema_problems(element, schema["items"], f"{at}[{n}]"))
    return problems
