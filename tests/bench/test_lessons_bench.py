"""`kronika bench lessons`: the scripted agent over a real workspace, side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika.bench import run_lessons
from kronika.cli import main
from kronika.settings import Settings


def test_lessons_cut_repeated_failures_and_retire_when_the_world_changes(
    settings: Settings,
) -> None:
    results = run_lessons(tasks=40, seed=3, settings=settings)
    runs = results["runs"]
    without, with_ = runs["no lessons"]["phases"], runs["lessons"]["phases"]
    assert without[0]["tasks"] == with_[0]["tasks"] == 20
    assert with_[0]["repeated"] < without[0]["repeated"]
    assert with_[1]["repeated"] < without[1]["repeated"]
    assert runs["lessons"]["retired"] > 0  # strategies of the changed families retired
    assert runs["lessons"]["lessons"] > 0


def test_the_command_writes_its_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))
    out = tmp_path / "out"
    args = ["bench", "lessons", "--tasks", "8", "--embedder", "hashing", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["suite"] == "lessons"
    assert (out / "lessons.md").read_text(encoding="utf-8").count("lessons") > 2
    assert main(["bench", "lessons", "--tasks", "1"]) == 2


def test_the_model_judge_is_measured_beside_the_exit_code(settings: Settings) -> None:
    results = run_lessons(tasks=24, seed=3, settings=settings, evaluator="scripted")
    judged = results["runs"]["lessons, model judge"]["judge"]
    attempts = sum(p["attempts"] for p in results["runs"]["lessons, model judge"]["phases"])
    assert judged["judgements"] == attempts
    # of every ten asked: eight valid at once, one valid after the repair, one refused
    assert judged["valid"] > judged["repaired"] >= 1 and judged["unusable"] >= 1
    assert judged["valid"] + judged["repaired"] + judged["unusable"] == attempts
    assert judged["calls"] == attempts + judged["repaired"] + judged["unusable"]
    assert judged["tokens_in"] > 0 and judged["tokens_out"] > 0
    assert results["headline"]["judge_agreement_with_exit_code"] == 1.0
    with_, judged_phases = (
        results["runs"]["lessons"]["phases"],
        results["runs"]["lessons, model judge"]["phases"],
    )
    without = results["runs"]["no lessons"]["phases"]
    assert sum(p["repeated"] for p in judged_phases) < sum(p["repeated"] for p in without)
    assert with_[0]["tasks"] == judged_phases[0]["tasks"]
    assert [row[0] for row in results["tables"][1]["rows"]] == ["exit code", "model (scripted)"]


def test_the_model_judge_needs_a_model(settings: Settings) -> None:
    from kronika.errors import InvalidInput

    with pytest.raises(InvalidInput, match="needs a model"):
        run_lessons(tasks=4, settings=settings, evaluator="model")
    with pytest.raises(InvalidInput, match="unknown evaluator"):
        run_lessons(tasks=4, settings=settings, evaluator="vibes")
