"""Every route that remembers a fact ends in the write path's one fact use case
(``MemoryWriter.remember_fact``), which screens the fact for secrets before it is
placed and stored: an API key remembered through the API, a batch, the agent tool, an
approved proposal, a memory command, consolidation of a conversation by a model, or
REST is never in the workspace's files, and the fact that is stored names its kind."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from tests.sessions.test_secret_screening import assert_nowhere

from kronika import Memory, build_memory
from kronika.ports import LLM
from kronika.settings import AgentPolicy, Settings
from kronika.testing import FrozenClock
from kronika.workflows.session import Session
from kronika.workflows.tools import call_tool

KEY = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"
SHOWN = "[secret: openai-key]"


def markdown_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*.md")) if p.is_file())


def assert_screened(memory: Memory, agent: str = "default") -> None:
    """The fact is kept, with the key's kind in its place, and the key is in no file."""
    memory.sync()
    home = memory.settings.home
    assert SHOWN in memory.brain(agent=agent)
    assert SHOWN.encode() in markdown_bytes(home)
    assert KEY.encode() not in markdown_bytes(home)
    assert_nowhere(home, KEY)  # nor the index, the audit trail or a proposal


def test_memory_remember(memory: Memory) -> None:
    memory.remember(f"my OpenAI key is {KEY}")
    memory.remember(key="openai key", value=KEY)
    memory.append_fact("deploy key", KEY)
    assert len(memory.facts()) == 3
    assert_screened(memory)


def test_memory_remember_many(memory: Memory) -> None:
    receipts = memory.remember_many([f"my OpenAI key is {KEY}", {"key": "openai", "value": KEY}])
    assert [r.outcome for r in receipts] == ["applied", "applied"]
    assert_screened(memory)


def test_the_agent_tool(memory: Memory) -> None:
    stored = call_tool(memory, "default", "remember", {"key": "openai key", "value": KEY})
    assert stored["ok"], stored
    assert_screened(memory)


def test_an_approved_proposal(settings: Settings, clock: FrozenClock) -> None:
    policies = {"default": AgentPolicy(autonomy=1)}
    with build_memory(settings.with_overrides(agents=policies), create=True, clock=clock) as memory:
        proposed = call_tool(memory, "default", "remember", {"value": f"the key is {KEY}"})
        assert proposed["outcome"] == "proposed"
        memory.approve(proposed["proposal"])
        assert_screened(memory)


def test_a_memory_command(memory: Memory) -> None:
    session = Session(memory)
    turn = session.user(f"remember that my API key is {KEY}")
    assert turn.command is not None
    session.close()
    assert_screened(memory)


def test_consolidation_of_a_model_answer(memory: Memory, llm: LLM, brainy: Any) -> None:
    """The key is only in the model's answer (the transcript holds none): the fact the
    answer names is screened all the same."""
    brainy.extractions = [
        {
            "facts": [{"tag": "CORE", "key": "openai key", "value": f"the user's key is {KEY}"}],
            "summary": "The user keeps an OpenAI key for the test server.",
        }
    ]
    session = Session(memory, llm=llm)
    session.user("I put my OpenAI key in the vault for the test server")
    session.assistant("Noted.")
    session.close()
    assert "extraction" in brainy.calls
    assert [f.key for f in memory.facts()] == ["openai_key"]
    assert_screened(memory)


def test_rest(tmp_path: Path) -> None:
    from tests.server.conftest import serve_tenants  # skips without the [server] extra

    from kronika.server.app import ServerConfig

    with contextlib.contextmanager(serve_tenants)(
        tmp_path, ServerConfig(rate_per_second=0)
    ) as served:
        said = served.call(
            "POST", "/v1/agents/alice/memories", {"content": f"my OpenAI key is {KEY}"}
        )
        assert said.status in (200, 201), said.body
        assert KEY not in str(said.body)
        assert_screened(served.memories["acme"], "alice")
