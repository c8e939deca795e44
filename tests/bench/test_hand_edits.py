"""``kronika bench hand-edits``: a short real run, and the command's answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika.bench.hand_edits import CALLS, run_hand_edits
from kronika.bench.team_writes import own_src
from kronika.cli import main


def test_a_short_run_times_each_call_and_finds_every_hand_edit_with_both_trees() -> None:
    results = run_hand_edits((1, 30), calls=3, budget_s=30, before=own_src())
    rows = {(r["chats"], r["tree"]): r for r in results["rows"]}
    assert set(rows) == {(1, "this"), (1, "before"), (30, "this"), (30, "before")}
    for row in rows.values():
        assert row["rounds"] == 3
        # each line appended by hand was the first answer of the recall just after it
        assert row["found"] == 3
        assert all(row[f"{name}_ms"] > 0 for name in CALLS)
    assert rows[(30, "this")]["turns"] == 120
    (only,) = results["tables"]
    assert only["columns"][-1] == "hand edits found first"
    assert [r[:2] for r in only["rows"]] == [
        ["1", "before"],
        ["1", "this"],
        ["30", "before"],
        ["30", "this"],
    ]
    assert results["headline"]["recall_after_edit_ms@30_this"] > 0


def test_the_command_writes_its_report_and_refuses_a_before_without_kronika(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))

    def run(*argv: str, code: int = 0) -> str:
        got = main(list(argv))
        captured = capsys.readouterr()
        assert got == code, captured.err
        return captured.out if code == 0 else captured.err

    out = tmp_path / "out"
    answer = json.loads(
        run("bench", "hand-edits", "--sizes", "5", "--calls", "2", "--out", str(out), "--json")
    )
    assert answer["suite"] == "hand-edits"
    assert answer["results"]["rows"][0]["found"] == 2
    assert "recall after a hand edit" in (out / "hand-edits.md").read_text(encoding="utf-8")
    err = run("bench", "hand-edits", "--before", str(tmp_path), "--out", str(out), code=2)
    assert "--before needs a src folder holding kronika" in err
