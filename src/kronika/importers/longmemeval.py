"""Read LongMemEval (``longmemeval_s`` / ``_m`` / ``_oracle``, plain or gzipped JSON).

Each question carries its own haystack of sessions, so each question becomes its own
agent (a safe form of ``question_id``). Sessions are sorted by ``haystack_dates``.

Turn ids follow the official retrieval code: ``f"{session_id}_{i + 1}"`` where ``i``
counts *every* turn of the session, user and assistant alike, so ids stay the same
whichever roles are kept. With ``roles=("user",)`` (the official protocol indexes user
turns only) assistant turns are left out but the numbering does not change.

Gold for scoring (BENCHMARKS.md): gold turns are kept turns flagged ``has_answer``;
gold sessions are sessions whose id contains ``"answer"`` and that have a gold turn.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kronika.core.model import SessionRecord, TurnRecord
from kronika.errors import ImportFormatError
from kronika.importers._common import iter_json_list, parse_timestamp, safe_name


@dataclass(frozen=True, slots=True)
class LongMemEvalQuestion:
    """One question with its haystack; ``evidence_turns`` are the kept ``has_answer`` turns."""

    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: datetime
    sessions: tuple[SessionRecord, ...]
    answer_session_ids: tuple[str, ...]
    evidence_turns: frozenset[str]

    @property
    def agent(self) -> str:
        return safe_name(self.question_id)

    @property
    def is_abstention(self) -> bool:
        return "_abs" in self.question_id

    @property
    def gold_turns(self) -> frozenset[str]:
        return self.evidence_turns

    @property
    def gold_sessions(self) -> frozenset[str]:
        """Sessions with ``answer`` in their id holding at least one kept evidence turn."""
        return frozenset(
            s.session_id
            for s in self.sessions
            if "answer" in s.session_id and any(t.turn_id in self.evidence_turns for t in s.turns)
        )


def _session(
    session_id: str, date: str, turns: Any, roles: Sequence[str] | None, where: str
) -> tuple[SessionRecord, set[str]]:
    if not isinstance(turns, list):
        raise ImportFormatError(f"{where}: session {session_id} is not a list of turns")
    started_at = parse_timestamp(date, f"{where} session {session_id}")
    kept: list[TurnRecord] = []
    evidence: set[str] = set()
    for i, turn in enumerate(turns):
        role = str(turn["role"])
        if roles is not None and role not in roles:
            continue
        turn_id = f"{session_id}_{i + 1}"
        kept.append(TurnRecord(turn_id=turn_id, speaker=role, content=str(turn["content"])))
        if turn.get("has_answer") is True:
            evidence.add(turn_id)
    record = SessionRecord(
        session_id=session_id,
        started_at=started_at,
        turns=tuple(kept),
        source="longmemeval",
    )
    return record, evidence


def _question(raw: Any, roles: Sequence[str] | None) -> LongMemEvalQuestion:
    qid = str(raw["question_id"])
    ids, dates, haystack = (
        raw["haystack_session_ids"],
        raw["haystack_dates"],
        raw["haystack_sessions"],
    )
    if not len(ids) == len(dates) == len(haystack):
        raise ImportFormatError(f"question {qid}: haystack lists differ in length")
    sessions: list[SessionRecord] = []
    evidence: set[str] = set()
    for sid, date, turns in zip(ids, dates, haystack, strict=True):
        record, found = _session(str(sid), date, turns, roles, f"question {qid}")
        sessions.append(record)
        evidence |= found
    # A stable sort keeps the file order of sessions that share a timestamp.
    sessions.sort(key=lambda s: s.started_at)
    return LongMemEvalQuestion(
        question_id=qid,
        question_type=str(raw["question_type"]),
        question=str(raw["question"]),
        answer=str(raw["answer"]),
        question_date=parse_timestamp(raw["question_date"], f"question {qid}"),
        sessions=tuple(sessions),
        answer_session_ids=tuple(str(s) for s in raw.get("answer_session_ids", [])),
        evidence_turns=frozenset(evidence),
    )


def iter_longmemeval(
    path: str | Path, *, roles: Sequence[str] | None = None
) -> Iterator[LongMemEvalQuestion]:
    """The questions of a LongMemEval file one at a time, in file order.

    ``roles`` keeps only turns of those roles (``("user",)`` for the official
    retrieval protocol); ``None`` keeps every turn.
    """
    for index, item in enumerate(iter_json_list(path)):
        try:
            yield _question(item, roles)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ImportFormatError(
                f"{path}: question {index} is not in the LongMemEval format ({exc!r})"
            ) from exc


def read_longmemeval(
    path: str | Path, *, roles: Sequence[str] | None = None
) -> list[LongMemEvalQuestion]:
    """Every question of a LongMemEval file, in file order (see :func:`iter_longmemeval`)."""
    return list(iter_longmemeval(path, roles=roles))
