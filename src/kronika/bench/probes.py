"""The questions of LoCoMo, LongMemEval and ``bench memory`` as probes that can be
asked again under other settings, over one ingested workspace.

Recall's query-time settings (fusion, weights, depth, the relevance floor, recency)
change nothing that is stored, and a benchmark recalls with ``record_access=False``,
so each benchmark is ingested once and every candidate setting asks its questions
over the same index: :class:`Replay` runs recall's own engine over the memory's index
with the recall settings of another :class:`~kronika.Settings`, each query embedded
once (:class:`kronika.testing.RecallReplay`).

Each probe scores its result as its benchmark does (:mod:`kronika.bench.locomo`,
:mod:`kronika.bench.longmemeval`, :mod:`kronika.bench.memory_suite`) and names its
*unit*, what folds split by: the conversation, the question, the person.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kronika import Memory, RecallResult, Settings, Vector
from kronika.bench.longmemeval import ranked, session_map
from kronika.bench.memdata import people
from kronika.bench.memdata.model import when
from kronika.bench.memory_suite import build_person, score_question
from kronika.bench.metrics import evidence_recall, recall_all, recall_any
from kronika.testing import RecallReplay, iter_longmemeval, read_locomo

Score = Callable[[RecallResult], dict[str, float]]


@dataclass(frozen=True, slots=True)
class Probe:
    """One question: whose memory it asks, when, how many hits, and how it is scored."""

    unit: str
    agent: str
    text: str
    now: datetime
    k: int
    score: Score


class Replay:
    """Recall over ``memory``'s index under the recall settings of ``settings``."""

    def __init__(self, memory: Memory, settings: Settings) -> None:
        self._replay = RecallReplay(memory, settings)

    def recall(self, probe: Probe, vector: Vector | None = None) -> RecallResult:
        return self._replay.recall(
            probe.text, agent=probe.agent, k=probe.k, now=probe.now, query_vector=vector
        )


def _nothing(unit: str) -> None:
    return None


def locomo_probes(
    memory: Memory,
    path: Path,
    *,
    limit: int | None,
    ingest: bool,
    seen: Callable[[str], None] = _nothing,
) -> list[Probe]:
    """Every LoCoMo question of categories 1-4 with evidence (``depth`` 200 hits, as
    ``bench locomo``): recall@5, recall@10, and multi-hop recall@10 for category 1."""
    probes: list[Probe] = []
    for conv in read_locomo(path)[:limit]:
        seen(conv.sample_id)
        if ingest:
            memory.import_sessions(conv.agent, conv.sessions)
        now = max(s.started_at for s in conv.sessions) + timedelta(days=1)
        for qa in conv.qa:
            if qa.evidence and qa.category in (1, 2, 3, 4):
                probes.append(Probe(conv.sample_id, conv.agent, qa.question, now, 200, _locomo(qa)))
    return probes


def _locomo(qa: Any) -> Score:
    def score(result: RecallResult) -> dict[str, float]:
        cited = [hit.item.provenance.turn_ids for hit in result.hits]
        out = {f"recall@{k}": evidence_recall(qa.evidence, cited, k) for k in (5, 10)}
        if qa.category == 1:
            out["multi-hop recall@10"] = out["recall@10"]
        return out

    return score


def longmemeval_probes(
    memory: Memory,
    path: Path,
    *,
    limit: int | None,
    ingest: bool,
    seen: Callable[[str], None] = _nothing,
) -> list[Probe]:
    """Every scored LongMemEval question (``depth`` 300, as ``bench longmemeval``):
    session recall_all@5, recall_any@5, recall_all@10 and turn recall_all@10."""
    probes: list[Probe] = []
    for question in iter_longmemeval(path, roles=("user",)):
        if limit is not None and len(probes) >= limit:
            break
        if question.is_abstention or not question.gold_sessions:
            continue
        seen(question.question_id)
        if ingest:
            memory.import_sessions(question.agent, question.sessions)
        probes.append(
            Probe(
                question.question_id,
                question.agent,
                question.question,
                question.question_date,
                300,
                _longmemeval(question),
            )
        )
    return probes


def _longmemeval(question: Any) -> Score:
    gold_sessions, gold_turns = question.gold_sessions, question.gold_turns
    session_of = session_map(question)  # only what ranking needs, not the haystack's text

    def score(result: RecallResult) -> dict[str, float]:
        sessions, turns = ranked(result, session_of)
        return {
            "session recall_all@5": recall_all(gold_sessions, sessions, 5),
            "session recall_any@5": recall_any(gold_sessions, sessions, 5),
            "session recall_all@10": recall_all(gold_sessions, sessions, 10),
            "turn recall_all@10": recall_all(gold_turns, turns, 10),
        }

    return score


def memory_probes(
    memory: Memory,
    ids: dict[str, dict[str, str]],
    *,
    only: Sequence[str],
    ingest: bool,
    seen: Callable[[str], None] = _nothing,
) -> list[Probe]:
    """Every question of ``bench memory``'s people (or of ``only``), ``k`` 10: hit@1,
    hit@3, MRR for answerable questions, no_answer for ``none`` ones. ``ids`` (person →
    handle → item id) is filled when ``ingest``, else read."""
    probes: list[Probe] = []
    for person in people("all"):
        if only and person.pid not in only:
            continue
        seen(person.pid)
        if ingest:
            ids[person.pid] = build_person(memory, person)
        for question in person.questions:
            probes.append(
                Probe(
                    person.pid,
                    person.pid,
                    question.text,
                    when(question.now or person.today),
                    10,
                    _memory(person, question, ids[person.pid]),
                )
            )
    return probes


def _memory(person: Any, question: Any, ids: dict[str, str]) -> Score:
    def score(result: RecallResult) -> dict[str, float]:
        row = score_question(person, question, ids, result)
        return {m: float(row[m]) for m in ("hit@1", "hit@3", "mrr", "no_answer") if m in row}

    return score


MARK = "ingested.json"


@contextmanager
def cached_home(
    root: Path, name: str, stamp: dict[str, Any]
) -> Iterator[tuple[Path, dict[str, Any] | None]]:
    """``root/name/home`` and what was saved beside it when that workspace was ingested
    with the same ``stamp`` (None: ingest it now; an older workspace is removed).
    :func:`mark_ingested` records it once done."""
    place = root / name
    mark = place / MARK
    saved: dict[str, Any] | None = None
    if mark.is_file():
        try:
            found = json.loads(mark.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found = None
        if isinstance(found, dict) and found.get("stamp") == stamp:
            saved = found
    if saved is None and place.exists():
        shutil.rmtree(place)
    place.mkdir(parents=True, exist_ok=True)
    yield place / "home", saved


def mark_ingested(root: Path, name: str, stamp: dict[str, Any], extra: dict[str, Any]) -> None:
    (root / name / MARK).write_text(
        json.dumps({"stamp": stamp, **extra}, sort_keys=True), encoding="utf-8"
    )


def file_stamp(path: Path, limit: int | None) -> dict[str, Any]:
    """What identifies an ingest of ``path``: its name, size, time and the limit."""
    info = path.stat()
    return {
        "path": str(path.resolve()),
        "size": info.st_size,
        "mtime": info.st_mtime,
        "limit": limit,
    }


__all__ = [
    "Probe",
    "Replay",
    "cached_home",
    "file_stamp",
    "locomo_probes",
    "longmemeval_probes",
    "mark_ingested",
    "memory_probes",
]
