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
