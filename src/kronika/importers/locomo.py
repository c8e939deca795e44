"""Read LoCoMo (``locomo10.json`` and its splits) into sessions and QA items.

LoCoMo is for evaluation only (CC BY-NC 4.0): kronika reads it from where the user
keeps it and never ships or copies it.

Mapping:

* one conversation → one agent named after its ``sample_id``;
* ``session_N`` → ``SessionRecord(session_id=f"{sample_id}-s{N}")`` dated by
  ``session_N_date_time`` (date keys without a session are ignored);
* each turn keeps its ``dia_id`` (``D3:7``); an image caption is kept in the text as
  ``" [shared <blip_caption>]"`` so the turn stays searchable by what was shown;
* QA evidence is cleaned the way the benchmark requires: every entry is split on
  ``[;, ]`` and ids that are not turns of the conversation are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kronika.core.model import SessionRecord, TurnRecord
from kronika.errors import ImportFormatError
from kronika.importers._common import load_json, parse_timestamp

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_SPLIT = re.compile(r"[;, ]")


@dataclass(frozen=True, slots=True)
class LocomoQA:
    """One benchmark question. ``evidence`` holds cleaned ``dia_id``s (possibly none)."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True, slots=True)
class LocomoConversation:
    """One LoCoMo conversation: its sessions in order and its questions."""

    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[SessionRecord, ...]
    qa: tuple[LocomoQA, ...]

    @property
    def agent(self) -> str:
        return self.sample_id

    @property
    def turn_ids(self) -> frozenset[str]:
        return frozenset(t.turn_id for s in self.sessions for t in s.turns)


def clean_evidence(raw: object, known: frozenset[str]) -> tuple[str, ...]:
    """Split every entry on ``[;, ]``, keep known ids, drop duplicates (first order kept)."""
    entries = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for entry in entries:
        for piece in _EVIDENCE_SPLIT.split(str(entry)):
            if piece in known and piece not in out:
                out.append(piece)
    return tuple(out)


def _turn(raw: Any, where: str) -> TurnRecord:
    if not isinstance(raw, dict):
        raise ImportFormatError(f"{where}: a turn must be an object")
    try:
        turn_id, speaker, text = str(raw["dia_id"]), str(raw["speaker"]), str(raw["text"])
    except KeyError as exc:
        raise ImportFormatError(f"{where}: turn without {exc.args[0]!r}") from exc
    caption = raw.get("blip_caption")
    if caption:
        text = f"{text} [shared {caption}]"
    return TurnRecord(turn_id=turn_id, speaker=speaker, content=text, at=None)


def _sessions(sample_id: str, conv: dict[str, Any]) -> tuple[SessionRecord, ...]:
    numbered: list[tuple[int, list[Any]]] = []
    for key, value in conv.items():
        m = _SESSION_KEY.match(key)
        if m and isinstance(value, list):
            numbered.append((int(m.group(1)), value))
    sessions: list[SessionRecord] = []
    for n, turns in sorted(numbered):
        where = f"{sample_id} session_{n}"
        started_at: datetime = parse_timestamp(conv.get(f"session_{n}_date_time"), where)
        sessions.append(
            SessionRecord(
                session_id=f"{sample_id}-s{n}",
                started_at=started_at,
                turns=tuple(_turn(t, where) for t in turns),
                title=f"{sample_id} session {n}",
                source="locomo",
            )
        )
    return tuple(sessions)


def _conversation(raw: Any, index: int) -> LocomoConversation:
    if not isinstance(raw, dict) or "conversation" not in raw or "sample_id" not in raw:
        raise ImportFormatError(f"LoCoMo item {index}: needs 'sample_id' and 'conversation'")
    sample_id = str(raw["sample_id"])
    conv = raw["conversation"]
    if not isinstance(conv, dict):
        raise ImportFormatError(f"{sample_id}: 'conversation' must be an object")
    sessions = _sessions(sample_id, conv)
    known = frozenset(t.turn_id for s in sessions for t in s.turns)
    qa: list[LocomoQA] = []
    for q in raw.get("qa", []):
        answer = q.get("answer", q.get("adversarial_answer", ""))
        qa.append(
            LocomoQA(
                question=str(q["question"]),
                answer=str(answer),
                evidence=clean_evidence(q.get("evidence", []), known),
                category=int(q["category"]),
            )
        )
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    return LocomoConversation(sample_id, speakers, sessions, tuple(qa))


def read_locomo(path: str | Path) -> list[LocomoConversation]:
    """Every conversation of a LoCoMo JSON file, in file order."""
    data = load_json(path)
    if not isinstance(data, list):
        raise ImportFormatError(f"{path}: a LoCoMo file is a JSON list of conversations")
    try:
        return [_conversation(item, i) for i, item in enumerate(data)]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ImportFormatError(f"{path}: unexpected LoCoMo content ({exc!r})") from exc
