"""``kronika bench folds`` end to end on small made-up LoCoMo and LongMemEval files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOPICS = [
    ("cat", "I adopted a grey cat named Mruczek last week.", "What is the name of {a}'s cat?"),
    ("cello", "I started learning the cello with a teacher.", "Which instrument did {a} start?"),
    ("hike", "We will hike in the Tatra mountains in July.", "Where will {a} hike?"),
    ("bread", "I bake sourdough bread every Sunday morning.", "What does {a} bake on Sundays?"),
]


def _locomo(path: Path) -> Path:
    conversations = []
    for n, (a, b) in enumerate([("Ana", "Ben"), ("Ola", "Jan"), ("Eva", "Tom")]):
        turns, qa = [], []
        for t, (_, said, asked) in enumerate(TOPICS, 1):
            turns.append({"speaker": a, "dia_id": f"D1:{2 * t - 1}", "text": said})
            turns.append({"speaker": b, "dia_id": f"D1:{2 * t}", "text": "Nice, tell me more."})
            qa.append(
                {
                    "question": asked.format(a=a),
                    "answer": "x",
                    "evidence": [f"D1:{2 * t - 1}"],
                    "category": 1 + (t % 4),
                }
            )
        conversations.append(
            {
                "sample_id": f"conv-{n}",
                "conversation": {
                    "speaker_a": a,
                    "speaker_b": b,
                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": turns,
                },
                "qa": qa,
            }
        )
    path.write_text(json.dumps(conversations), encoding="utf-8")
    return path


def _longmemeval(path: Path) -> Path:
    def question(n: int, topic: int) -> dict[str, Any]:
        sessions = [
            [{"role": "user", "content": said, "has_answer": i == topic}]
            for i, (_, said, _) in enumerate(TOPICS)
        ]
        return {
            "question_id": f"q{n}",
            "question_type": "single-session-user",
            "question": TOPICS[topic][2].format(a="I").replace("I's", "my"),
            "answer": "x",
            "question_date": "2023/06/01 (Thu) 12:00",
            "haystack_session_ids": [
                f"{'answer' if i == topic else 'noise'}_{n}_{i}" for i in range(len(TOPICS))
            ],
            "haystack_dates": [f"2023/05/0{i + 1} (Mon) 10:00" for i in range(len(TOPICS))],
            "haystack_sessions": sessions,
            "answer_session_ids": [f"answer_{n}_{topic}"],
        }

    path.write_text(json.dumps([question(n, n % len(TOPICS)) for n in range(5)]), "utf-8")
    return path


def test_bench_folds_cross_validates_every_benchmark(
    run: Callable[..., str], tmp_path: Path
) -> None:
    locomo, lme = _locomo(tmp_path / "locomo.json"), _longmemeval(tmp_path / "lme.json")
    work, out = tmp_path / "work", tmp_path / "r"
    argv = ["bench", "folds", "--locomo", str(locomo), "--longmemeval", str(lme)]
    argv += ["--person", "en-alice", "--folds", "3", "--workdir", str(work)]
    first = json.loads(run(*argv, "--out", str(out), "--json"))
    results = first["results"]
    cv = results["cv"]
    assert results["benchmark"] == "folds" and results["k"] == 3
    assert cv["settings"][0] == "default" and "adaptive shift=0.2" in cv["settings"]
    assert (
        "hub_neighbours=10, scope others" in cv["settings"]
        and "weights=0.6/0.2/0.2" in cv["settings"]
    )
    # each setting cross-validated alone beside the default, with each fold's choice
    hubs = results["per_setting"]["hub_neighbours"]
    assert hubs["values"] == [n for n in cv["settings"] if n.startswith("hub_neighbours")]
    assert len(hubs["choices"]) == 3
    assert {"neighbour_weight", "weights", "session_weight"} <= set(results["per_setting"])
    assert len(cv["folds"]) == 3
    for bench, units in (("locomo", 3), ("longmemeval", 5), ("memory", 1)):
        held = [u for fold in cv["folds"] for u in fold["units"][bench]]
        assert len(held) == len(set(held)) == units  # each unit held out exactly once
        assert all(fold["per_benchmark"][bench] in cv["settings"] for fold in cv["folds"])
    assert cv["questions"]["locomo"]["recall@5"] == 12
    assert cv["questions"]["longmemeval"]["session recall_all@5"] == 5
    assert 0.0 <= first["locomo.recall@5.fold_out"] <= 1.0
    assert "memory.hit@1.default" in first
    # the default's dev figure is the one `bench locomo` gives for the same file
    plain = json.loads(
        run("bench", "locomo", str(locomo), "--mode", "hybrid", "--out", str(out), "--json")
    )
    assert first["locomo.recall@5.default"] == plain["recall@5"]
    assert first["locomo.recall@10.default"] == plain["recall@10"]
    report = (out / "folds.md").read_text(encoding="utf-8")
    assert "Fold-out against dev" in report and "machine" in report
    assert f"dataset: `{locomo}, {lme}, kronika.bench.memdata`" in report
    assert "The setting each fold chose" in report
    assert "Each setting cross-validated alone" in report and "answer_focus" in report
    # a second run finds the ingested workspaces and gives the same figures
    marks = {b: (work / b / "ingested.json").stat().st_mtime_ns for b in cv["questions"]}
    again = json.loads(run(*argv, "--out", str(out), "--json"))
    assert again["results"]["cv"] == cv
    assert {b: (work / b / "ingested.json").stat().st_mtime_ns for b in marks} == marks


def test_bench_folds_needs_something_to_run(run: Callable[..., str], tmp_path: Path) -> None:
    err = run("bench", "folds", "--no-memory", "--out", str(tmp_path / "r"), code=2)
    assert "needs --locomo, --longmemeval" in err
    err = run("bench", "folds", "--locomo", str(tmp_path / "nothing.json"), code=9)
    assert "needs a data file" in err


def test_bench_folds_tells_its_progress(tmp_path: Path) -> None:
    from kronika.bench.folds_run import run_folds
    from kronika.settings import load_settings

    seen: list[tuple[str, int, int]] = []
    grid = {"default": {}, "lexical_weight=0.3": {"lexical_weight": 0.3}}
    results = run_folds(
        locomo=_locomo(tmp_path / "locomo.json"),
        memory=False,
        k=3,
        grid=grid,
        settings=load_settings(tmp_path / "ws", environ={}, embedder="hashing"),
        progress=lambda label, done, total: seen.append((label, done, total)),
    )
    assert [label for label, _, _ in seen[:3]] == [
        "locomo: ingest conv-0",
        "locomo: ingest conv-1",
        "locomo: ingest conv-2",
    ]
    asked = [(label, done, total) for label, done, total in seen if total == 24]
    assert [done for _, done, _ in asked] == list(range(24))  # 12 questions x 2 settings
    assert asked[0][0] == "locomo: default" and asked[-1][0] == "locomo: lexical_weight=0.3"
    assert seen[-1] == ("done", 1, 1)
    assert list(results["cv"]["dev"]) == ["default", "lexical_weight=0.3"]


def test_bench_folds_names_an_unknown_person(run: Callable[..., str], tmp_path: Path) -> None:
    err = run("bench", "folds", "--person", "xx-nobody", "--out", str(tmp_path / "r"), code=2)
    assert "no such person in bench memory: xx-nobody" in err
