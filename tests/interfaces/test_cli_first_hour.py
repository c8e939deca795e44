"""What a new user meets first on the command line: the shipped sample conversation,
forgetting with a look first (--dry-run), help that names every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika.cli import main
from kronika.cli.main import build_parser


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")

    def _run(*argv: str, code: int = 0) -> str:
        got = main(list(argv))
        captured = capsys.readouterr()
        assert got == code, captured.err
        return captured.out if code == 0 else captured.err

    return _run


def test_import_sample_brings_a_conversation_to_try(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    summary = json.loads(run("import", "sample", "--json"))
    assert summary == {"format": "sample", "agents": 1, "sessions": 3, "turns": 20}
    hits = json.loads(run("recall", "dog name", "--json", "--mode", "lexical"))["hits"]
    assert any("Pixel" in h["content"] for h in hits)
    assert hits[0]["citation"].startswith("sessions/tour-2025-")
    assert "takes no file" in run("import", "sample", "x.jsonl", code=2)
    assert "say which file" in run("import", "jsonl", code=2)


def test_forget_dry_run_says_what_would_go_and_keeps_it(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    run("remember", "--key", "dog", "Pixel, a terrier")
    preview = json.loads(run("forget", "--topic", "Pixel", "--dry-run", "--json"))
    assert preview["outcome"] == "preview"
    assert [i["content"] for i in preview["forgotten"]] == ["dog: Pixel, a terrier"]
    assert {p["path"] for p in preview["places"]} >= {"brain.md"}
    assert "Pixel" in run("show", "brain")  # nothing was forgotten
    assert "nothing was forgotten" in run("forget", "--topic", "Pixel", "--dry-run")
    assert not any(a["action"] == "forget" for a in json.loads(run("audit", "--json")))
    run("forget", "--topic", "Pixel")
    assert "Pixel" not in run("show", "brain")
    assert "nothing would be forgotten" in run("forget", "--topic", "Pixel", "--dry-run", code=5)


def test_every_command_keeps_its_name() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    names = set(sub.choices)  # type: ignore[arg-type]
    assert {"init", "agents", "remember", "recall", "forget", "import", "bench", "serve"} <= names
