"""What a new user meets first on the command line: the shipped sample conversation,
forgetting with a look first (--dry-run), help that names every command."""

from __future__ import annotations

import json
from pathlib import Path

from kronika.cli.main import build_parser


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
    assert not any(a["action"] == "forget" for a in json.loads(run("logs", "audit", "--json")))
    run("forget", "--topic", "Pixel")
    assert "Pixel" not in run("show", "brain")
    assert "nothing would be forgotten" in run("forget", "--topic", "Pixel", "--dry-run", code=5)


def test_every_command_keeps_its_name() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    names = set(sub.choices)  # type: ignore[arg-type]
    assert {"init", "agents", "remember", "recall", "forget", "import", "bench", "serve"} <= names


def test_the_parser_s_written_out_values_match_the_model() -> None:
    from kronika.cli.context import SCOPES
    from kronika.cli.links import LINK_KINDS
    from kronika.core.model import LinkKind, Scope

    assert tuple(s.value for s in Scope) == SCOPES
    assert tuple(k.value for k in LinkKind) == LINK_KINDS


def test_chat_with_no_model_server_running_says_so_at_once(tmp_path: Path) -> None:
    """A model server named on this machine that is not running: one plain line, no
    retries, and the message is kept."""
    import os
    import socket
    import subprocess
    import sys

    home = tmp_path / "ws"
    env = {**os.environ, "KRONIKA_HOME": str(home), "KRONIKA_EMBEDDER": "hashing"}
    subprocess.run([sys.executable, "-m", "kronika", "init"], env=env, check=True, timeout=60)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    done = subprocess.run(
        [sys.executable, "-m", "kronika", "chat", "--quiet", "--base-url", url, "--model", "m"],
        input="what should I cook tonight?\n",
        env={**env, "KRONIKA_LLM_RETRIES": "8"},
        capture_output=True,
        text=True,
        timeout=30,  # eight retries would wait 39.5 s between them
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"(No answer: nothing is listening at {url}/chat/completions")
    assert "start the LLM server" in done.stdout and "Your message is saved" in done.stdout
    sessions = list((home / "agents" / "default" / "sessions").glob("*.md"))
    assert any("what should I cook tonight?" in s.read_text() for s in sessions)
