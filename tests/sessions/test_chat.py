"""``ChatAgent`` and ``kronika chat`` against a local OpenAI-protocol server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kronika import Memory
from kronika.app import build_llm
from kronika.settings import Settings
from kronika.testing import ScriptedChatServer, ScriptedFailure
from kronika.workflows.chat import ChatAgent
from kronika.workflows.session import Session

KRONIKA = Path(sys.executable).with_name("kronika")


def test_the_model_uses_the_remember_tool_and_answers(memory: Memory, settings: Settings) -> None:
    script = [
        {
            "content": None,
            "tool_calls": [{"name": "remember", "arguments": {"key": "diet", "value": "vegan"}}],
        },
        "Noted — I'll suggest vegan recipes from now on.",
    ]
    with ScriptedChatServer(script) as server:
        llm = build_llm(settings.with_overrides(llm_base_url=server.base_url, llm_model="m"))
        agent = ChatAgent(Session(memory, llm=llm), llm)
        answer = agent.send("I went vegan this year, keep that in mind")
        assert answer.text.startswith("Noted")
        assert [u.name for u in answer.tools] == ["remember"]
        assert answer.tools[0].result["ok"]
        assert [f"{f.key}: {f.value}" for f in memory.facts()] == ["diet: vegan"]
        first, second = (r.body for r in server.requests)
        assert [t["function"]["name"] for t in first["tools"]] == [
            "remember",
            "forget",
            "recall",
            "memory_update",
            "retain",
        ]
        assert second["messages"][-1]["role"] == "tool"
        assert json.loads(second["messages"][-1]["content"])["ok"] is True


def test_a_server_without_tools_is_used_without_them(memory: Memory, settings: Settings) -> None:
    script = [ScriptedFailure(400, body='{"error": {"message": "tools not supported"}}'), "Hello!"]
    with ScriptedChatServer(script) as server:
        llm = build_llm(settings.with_overrides(llm_base_url=server.base_url, llm_model="m"))
        agent = ChatAgent(Session(memory, llm=llm), llm)
        assert agent.send("hi").text == "Hello!"
        assert "tools" not in server.requests[-1].body
        assert agent.tools is False


def test_an_unreachable_model_keeps_the_message(memory: Memory, settings: Settings) -> None:
    dead = settings.with_overrides(
        llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_retries=0
    )
    llm = build_llm(dead)
    session = Session(memory, llm=llm)
    answer = ChatAgent(session, llm).send("Are you there?")
    assert answer.error is not None and "saved" in answer.text
    assert [t.content for t in memory.load_session(session.session_id or "")] == ["Are you there?"]


def _run_chat(home: Path, stdin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["KRONIKA_EMBEDDER"] = "hashing"
    if not home.exists():  # only `kronika init` makes a workspace
        subprocess.run([str(KRONIKA), "--home", str(home), "init"], env=env, check=True)
    return subprocess.run(
        [str(KRONIKA), "--home", str(home), "chat", *extra],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_cli_chat_without_a_model_obeys_memory_commands(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    done = _run_chat(
        home,
        "remember that I prefer short answers\nwhat's the weather?\nwhat do you know about me?\n",
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Remembered: preference: short answers" or lines[0].startswith("Remembered:")
    assert "No language model is configured" in done.stdout
    assert "short answers" in lines[-1]
    brain = (home / "agents" / "default" / "brain.md").read_text()
    assert "short answers" in brain
    sessions = list((home / "agents" / "default" / "sessions").glob("*.md"))
    assert len(sessions) == 1 and "status: ended" in sessions[0].read_text()


def test_cli_chat_json_against_a_scripted_model(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    extraction = {"facts": [{"tag": "CORE", "key": "name", "value": "Ana"}], "summary": "Hi."}

    def respond(body: dict[str, object]) -> object:
        system = str(body["messages"][0]["content"])  # type: ignore[index]
        if "maintain the long-term memory" in system:
            return json.dumps(extraction)
        return "Nice to meet you, Ana."

    with ScriptedChatServer(responder=respond) as server:
        done = _run_chat(
            home, "I'm Ana.\n", "--json", "--base-url", server.base_url, "--model", "m"
        )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["reply"] == "Nice to meet you, Ana." and reply["error"] is None
    assert "**name**: Ana" in (home / "agents" / "default" / "brain.md").read_text()
    status = subprocess.run(
        [str(KRONIKA), "--home", str(home), "jobs", "consolidate", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "KRONIKA_EMBEDDER": "hashing"},
        check=False,
    )
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout) == {
        "default": {"sessions": [], "summaries": [], "waiting": []}
    }


def test_cli_consolidate_drains_the_queue_once_a_model_answers(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    offline = _run_chat(home, "My name is Ana.\nI like jazz.\n")
    assert offline.returncode == 0, offline.stderr
    assert "waiting: session" in offline.stderr  # what memory did is shown on stderr
    extraction = {
        "facts": [{"tag": "PREFERENCE", "key": "music", "value": "jazz"}],
        "summary": "Ana said she likes jazz.",
    }
    with ScriptedChatServer([json.dumps(extraction)]) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
        done = subprocess.run(
            [
                str(KRONIKA),
                "--home",
                str(home),
                "jobs",
                "consolidate",
                "--json",
                "--base-url",
                server.base_url,
                "--model",
                "m",
            ],
            capture_output=True,
            text=True,
            env={**env, "KRONIKA_EMBEDDER": "hashing"},
            check=False,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["default"]
    assert [s["status"] for s in report["sessions"]] == ["consolidated"]
    assert "+ music: jazz" in report["sessions"][0]["written"]
    agent = home / "agents" / "default"
    assert "Ana said she likes jazz." in (agent / "active_context.md").read_text()
    brain = (agent / "brain.md").read_text()
    assert "**name**: Ana" in brain and "**music**: jazz" in brain  # rules first, model later
