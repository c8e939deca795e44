"""The benchmark protocols, driven by a stand-in retriever whose answers are known."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kronika.bench import headline, run_locomo, run_longmemeval, write_report
from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RecallHit,
    RecallResult,
    ScoreParts,
    SessionRecord,
    Tier,
)
from kronika.settings import Settings
from kronika.testing import ScriptedRerankServer

T0 = datetime(2023, 1, 1, tzinfo=UTC)


def _hit(turn_ids: tuple[str, ...], session: str | None) -> RecallHit:
    item = MemoryItem(
        id="-".join(turn_ids),
        agent="a",
        content=" ".join(turn_ids),
        type=ItemType.MESSAGE,
        layer=Layer.WORKING,
        tier=Tier.SHORT,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path="sessions/x.md", session_id=session, turn_ids=turn_ids),
    )
    return RecallHit(item=item, score=ScoreParts(1.0, 0.5, 0.5, 1.0), tokens=100)


class ScriptedMemory:
    """Answers each question with a fixed list of cited turns; remembers what it was given."""

    def __init__(self, answers: dict[str, list[tuple[str, ...]]]) -> None:
        self.answers = answers
        self.imported: dict[str, list[SessionRecord]] = {}
        self.calls: list[dict[str, Any]] = []

    def import_sessions(
        self, agent: str, sessions: Iterable[SessionRecord], *, progress: Any = None
    ) -> None:
        self.imported[agent] = list(sessions)

    def recall(self, query: str, **kwargs: Any) -> RecallResult:
        self.calls.append({"query": query, **kwargs})
        session_of = {
            t.turn_id: s.session_id for ss in self.imported.values() for s in ss for t in s.turns
        }
        hits = tuple(_hit(ids, session_of.get(ids[0])) for ids in self.answers.get(query, []))
        return RecallResult(query, hits, 100 * len(hits), None, len(hits))

    def close(self) -> None:
        pass


def _locomo_file(tmp_path: Path) -> Path:
    turns = [{"speaker": "A", "dia_id": f"D1:{i}", "text": f"turn {i}"} for i in range(1, 7)]
    conv = {
        "sample_id": "conv-9",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1_date_time": "1:00 pm on 3 March, 2023",
            "session_1": turns,
        },
        "qa": [
            {"question": "q-multi", "answer": "x", "evidence": ["D1:1", "D1:2"], "category": 1},
            {"question": "q-single", "answer": "y", "evidence": ["D1:3"], "category": 4},
            {"question": "q-adv", "adversarial_answer": "z", "evidence": ["D1:4"], "category": 5},
            {"question": "q-none", "answer": "w", "evidence": ["D7:7"], "category": 4},
        ],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([conv]), encoding="utf-8")
    return path


def test_locomo_protocol_figures(tmp_path: Path) -> None:
    fake = ScriptedMemory(
        {
            # Evidence D1:1 at rank 1, D1:2 only at rank 6 (inside a fact citing two turns).
            "q-multi": [("D1:1",), ("D1:5",), ("D1:6",), ("D1:4",), ("D1:3",), ("D1:6", "D1:2")],
            "q-single": [("D1:3",)],
            "q-adv": [("D1:1",)],
        }
    )
    results = run_locomo(_locomo_file(tmp_path), modes=("hybrid",), ks=(5, 10), memory=fake)
    overall = results["scores"]["hybrid"]["overall"]
    assert overall["questions"] == 2  # category 5 and the evidence-less question are left out
    assert overall["recall@5"] == (0.5 + 1.0) / 2
    assert overall["recall@10"] == 1.0
    assert results["scores"]["hybrid"]["by_category"]["5"]["recall@10"] == 0.0
    assert results["questions_skipped_no_evidence"] == 1
    assert headline(results)["recall@5"] == 0.75
    # 100 tokens a hit: a 1000-token budget holds 10 hits, so it sees D1:2 too.
    assert overall["recall@1000tok"] == 1.0
    call = fake.calls[0]
    assert call["record_access"] is False and call["agent"] == "conv-9"
    assert call["now"] == datetime(2023, 3, 4, 13, 0, tzinfo=UTC)


def _lme_file(tmp_path: Path) -> Path:
    def question(qid: str, has_answer: bool) -> dict[str, Any]:
        return {
            "question_id": qid,
            "question_type": "multi-session",
            "question": qid,
            "answer": "a",
            "question_date": "2023/06/01 (Thu) 12:00",
            "haystack_session_ids": ["answer_1", "answer_2", "noise_3"],
            "haystack_dates": ["2023/05/01 (Mon) 10:00"] * 3,
            "haystack_sessions": [
                [
                    {"role": "user", "content": "u", "has_answer": has_answer},
                    {"role": "assistant", "content": "a"},
                ],
                [
                    {"role": "user", "content": "u"},
                    {"role": "user", "content": "v", "has_answer": True},
                ],
                [{"role": "user", "content": "n"}],
            ],
            "answer_session_ids": ["answer_1", "answer_2"],
        }

    data = [question("q1", True), question("q2_abs", True), question("q3", False)]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_longmemeval_protocol_figures(tmp_path: Path) -> None:
    # Ranked turns: noise, answer_1's evidence, answer_1 again, answer_2's evidence.
    fake = ScriptedMemory(
        {
            "q1": [("noise_3_1",), ("answer_1_1",), ("answer_2_1",), ("answer_2_2",)],
            "q3": [("answer_2_2",)],
        }
    )
    results = run_longmemeval(_lme_file(tmp_path), ks=(1, 3, 5), memory=fake)
    assert results["questions_skipped"] == {"abstention": 1, "no_user_evidence": 0}
    assert results["questions_scored"] == 2
    session = results["scores"]["hybrid"]["session"]["overall"]
    # q1: sessions ranked noise_3, answer_1, answer_2 → gold both at ranks 2-3.
    # q3: gold is answer_2 only (answer_1 has no user-side evidence) → rank 1.
    assert session["recall_all@1"] == 0.5
    assert session["recall_all@3"] == 1.0
    q1_ndcg = (1 + 1 / math.log2(3)) / 2
    assert math.isclose(session["ndcg_any@3"], (q1_ndcg + 1.0) / 2)
    turn = results["scores"]["hybrid"]["turn"]["overall"]
    # q1 gold turns answer_1_1 (rank 2) and answer_2_2 (rank 4); q3 gold answer_2_2 at rank 1.
    assert turn["recall_all@3"] == 0.5
    assert turn["recall_any@1"] == 0.5
    assert headline(results)["recall_all@3"] == 1.0
    # Only user turns were indexed, numbered over all turns.
    imported = fake.imported["q1"][0]
    assert [t.turn_id for t in imported.turns] == ["answer_1_1"]


def test_limit_stops_after_scored_questions(tmp_path: Path) -> None:
    fake = ScriptedMemory({})
    results = run_longmemeval(_lme_file(tmp_path), limit=1, memory=fake)
    assert results["questions_scored"] == 1
    assert list(fake.imported) == ["q1"]


def test_real_memory_on_a_tiny_locomo(tmp_path: Path) -> None:
    facts = [
        "I adopted a tabby cat called Miso",
        "We hiked up Mount Rainier in the fog",
        "My sister plays the cello in an orchestra",
        "The bakery on Pine street sells sourdough",
        "I am learning Portuguese with an app",
        "Our team won the regional chess tournament",
    ]
    turns = [{"speaker": "A", "dia_id": f"D1:{i}", "text": text} for i, text in enumerate(facts, 1)]
    conv = {
        "sample_id": "conv-1",
        "conversation": {"session_1_date_time": "9:15 am on 2 May, 2023", "session_1": turns},
        "qa": [
            {
                "question": "What is the cat called?",
                "answer": "Miso",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Which instrument does the sister play?",
                "answer": "cello",
                "evidence": ["D1:3; D1:5"],
                "category": 1,
            },
        ],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([conv]), encoding="utf-8")
    results = run_locomo(
        path,
        modes=("lexical", "hybrid"),
        ks=(1, 5),
        settings=Settings().with_overrides(embedder="hashing"),
        workdir=tmp_path / "bench-home",
    )
    lexical = results["scores"]["lexical"]["by_category"]
    assert lexical["4"]["recall@1"] == 1.0
    assert lexical["1"]["recall@1"] == 0.5  # only one of its two evidence turns fits in one hit
    assert results["timings"]["turns"] == 6
    assert results["embedder"]
    assert (tmp_path / "bench-home" / "kronika.toml").is_file()


def test_a_configured_reranker_is_used_and_its_key_never_reported(tmp_path: Path) -> None:
    turns = [
        {"speaker": "A", "dia_id": "D1:1", "text": "Do you read books at all?"},
        {"speaker": "B", "dia_id": "D1:2", "text": "I just finished Dune by Frank Herbert"},
        {"speaker": "A", "dia_id": "D1:3", "text": "I read books about books on the train"},
    ]
    conv = {
        "sample_id": "conv-1",
        "conversation": {"session_1_date_time": "9:15 am on 2 May, 2023", "session_1": turns},
        "qa": [{"question": "Which books?", "answer": "Dune", "evidence": ["D1:2"], "category": 4}],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([conv]), encoding="utf-8")
    scorer = lambda query, doc: 5.0 if "Dune" in doc else 0.0  # noqa: E731
    with ScriptedRerankServer(scorer, require_key="rk-bench-secret") as server:
        settings = Settings().with_overrides(
            embedder="hashing",
            neighbour_weight=0.0,
            reranker_base_url=server.base_url,
            reranker_api_key="rk-bench-secret",
            reranker_weight=1.0,
        )
        reranked = run_locomo(
            path, modes=("hybrid",), ks=(1,), settings=settings, workdir=tmp_path / "a"
        )
    plain = run_locomo(
        path,
        modes=("hybrid",),
        ks=(1,),
        settings=Settings().with_overrides(embedder="hashing", neighbour_weight=0.0),
        workdir=tmp_path / "b",
    )
    assert plain["scores"]["hybrid"]["overall"]["recall@1"] == 0.0
    assert reranked["scores"]["hybrid"]["overall"]["recall@1"] == 1.0
    assert len(server.requests) == 1
    assert reranked["settings"]["reranker_api_key"] == "***"
    assert plain["settings"]["reranker_api_key"] == ""
    json_path, md_path = write_report("locomo", reranked, tmp_path / "out")
    assert "rk-bench-secret" not in json_path.read_text(encoding="utf-8")
    assert "rk-bench-secret" not in md_path.read_text(encoding="utf-8")


def test_write_report(tmp_path: Path) -> None:
    fake = ScriptedMemory({"q-single": [("D1:3",)]})
    results = run_locomo(_locomo_file(tmp_path), modes=("lexical",), ks=(5,), memory=fake)
    json_path, md_path = write_report("locomo", results, tmp_path / "out")
    saved = json.loads(json_path.read_text(encoding="utf-8"))
    assert saved["environment"]["cores"] and saved["environment"]["sqlite"]
    assert saved["headline"]["recall@5"] == 0.5
    text = md_path.read_text(encoding="utf-8")
    assert "| lexical | 4 single-hop | 1 | 1.000 |" in text
    assert "SQLite" in text and "kronika" in text
