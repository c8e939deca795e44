"""The shape of the agent-memory benchmark's data: people, what they told their agent
over months, and the questions asked of it.

Every stored thing that a question may point at carries a *handle*: a short name,
unique within its person, that the runner turns into the id of the item it wrote
(:mod:`kronika.bench.memory_suite`). Times are written as ``"2026-03-14"`` or
``"2026-03-14 19:30"`` (UTC).

A session's turns are written as ``"u: text"`` (the user) or ``"a: text"`` (the
assistant); ``"u#handle: text"`` gives the turn a handle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

Language = Literal["en", "pl", "es", "uk"]
Kind = Literal["now", "then", "keyword", "paraphrase", "crosslingual", "none"]

LANGUAGES: tuple[Language, ...] = ("en", "pl", "es", "uk")
KINDS: tuple[Kind, ...] = ("now", "then", "keyword", "paraphrase", "crosslingual", "none")
SPEAKERS = {"u": "user", "a": "assistant"}


def when(text: str) -> datetime:
    """``"2026-03-14"`` (09:00) or ``"2026-03-14 19:30"`` as a UTC moment."""
    day, _, clock = text.partition(" ")
    hour, _, minute = (clock or "09:00").partition(":")
    base = datetime.fromisoformat(day)
    return base.replace(hour=int(hour), minute=int(minute or 0), tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Fact:
    """``remember(key=…, value=…, at=…)``; a later Fact with the same key supersedes it."""

    handle: str
    at: str
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class Note:
    """``note(text, kind=…, at=…)``: a dated note in the daily log."""

    handle: str
    at: str
    text: str
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """``save_turn`` for each turn, a minute apart from ``at``."""

    sid: str
    at: str
    turns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Summary:
    """An L1 summary of earlier conversations (``summaries/L1/<handle>.md``)."""

    handle: str
    at: str
    text: str


@dataclass(frozen=True, slots=True)
class EntityPage:
    """``bank/entities/<name>.md``: one paragraph about one person, place or thing."""

    handle: str
    at: str
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """``record_outcome(task, action, ok=…, reasons=…)``: an outcome note and its lesson
    (no question points at these: they are what an agent keeps beside a person's facts)."""

    at: str
    task: str
    action: str
    ok: bool
    reasons: tuple[str, ...] = ()


Item = Fact | Note | Session | Summary | EntityPage | Outcome


@dataclass(frozen=True, slots=True)
class Question:
    """One question with its one gold handle (``None`` for ``none``: nothing answers it).

    ``lang`` is the question's own language (another than the person's for
    ``crosslingual``); ``now`` is when it is asked (default: the person's ``today``).
    """

    qid: str
    kind: Kind
    text: str
    gold: str | None
    lang: Language
    now: str | None = None


@dataclass(frozen=True, slots=True)
class Person:
    pid: str
    lang: Language
    today: str
    items: tuple[Item, ...]
    questions: tuple[Question, ...] = field(default=())


def parse_turn(text: str) -> tuple[str, str | None, str]:
    """``"u#home: I live in Leeds"`` → ``("user", "home", "I live in Leeds")``."""
    head, sep, body = text.partition(": ")
    who, _, handle = head.partition("#")
    if not sep or who not in SPEAKERS:
        raise ValueError(f"a turn is written 'u: …' or 'a: …' (got {text!r})")
    return SPEAKERS[who], handle or None, body


def person(
    pid: str,
    lang: Language,
    today: str,
    items: tuple[Item, ...],
    questions: tuple[tuple[str, ...], ...],
) -> Person:
    """A person from terse question rows: ``(kind, text, gold)`` with ``gold`` ``""`` for
    ``none``, and optionally the question's language and its ``now`` after them; the
    question ids are ``<pid>/<number>``."""
    asked = []
    for number, row in enumerate(questions, 1):
        kind, text, gold, *rest = row
        if kind not in KINDS:
            raise ValueError(f"{pid} question {number}: unknown kind {kind!r}")
        lang_of = rest[0] if rest and rest[0] else lang
        if lang_of not in LANGUAGES:
            raise ValueError(f"{pid} question {number}: unknown language {lang_of!r}")
        asked.append(
            Question(
                qid=f"{pid}/{number}",
                kind=kind,
                text=text,
                gold=gold or None,
                lang=lang_of,
                now=rest[1] if len(rest) > 1 else None,
            )
        )
    return Person(pid=pid, lang=lang, today=today, items=items, questions=tuple(asked))


def every(first: str, last: str, days: int) -> tuple[str, ...]:
    """Evenings from ``first`` up to the day before ``last``, ``days`` apart
    (``"2026-01-03 21:30"``…)."""
    start, end = when(first).date(), when(last).date()
    count = max(0, ((end - start).days - 1) // days + 1)
    return tuple(f"{start + timedelta(days=n * days)} 21:30" for n in range(count))


def small_talk(
    prefix: str, dates: tuple[str, ...], pool: tuple[tuple[str, ...], ...]
) -> tuple[Session, ...]:
    """Sessions ``<prefix>-1``… on ``dates``, their turns taken from ``pool`` in turn:
    the greetings, thanks and errands that fill a real agent's history and answer none
    of the questions."""
    return tuple(
        Session(f"{prefix}-{n}", at, pool[(n - 1) % len(pool)]) for n, at in enumerate(dates, 1)
    )
