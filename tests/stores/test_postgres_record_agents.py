"""Writers of different agents of one tenant do not wait for each other; writers of one
agent, and a hold of the whole tenant, still take turns; and a worker that wrote while
another agent's writer committed pulls that write too, so no change is skipped."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.errors import StoreError, UnknownAgent
from kronika.memory import Memory
from kronika.settings import Settings
from threads import HELD_S, WAIT_S, in_thread

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _texts(memory: Memory, agent: str) -> str:
    """Every Markdown file of ``agent`` in ``memory``'s folder, joined."""
    folder = memory.workspace.agent_dir(agent)
    return "\n".join(f.read_text(encoding="utf-8") for f in sorted(folder.rglob("*.md")))


@contextmanager
def _two_workers(url: str, tmp_path: Path) -> Iterator[tuple[Memory, Memory]]:
    """Two workers of one tenant, each with a copy of its own, and agents north and
    south, which both copies hold."""
    with (
        build_memory(_settings(tmp_path / "a", url)) as first,
        build_memory(_settings(tmp_path / "b", url)) as second,
    ):
        for agent in ("north", "south"):
            first.create_agent(agent)
        second.sync("south")
        yield first, second


def test_a_write_to_another_agent_goes_on_while_one_agent_is_held(
    postgres_url: str, tmp_path: Path
) -> None:
    with _two_workers(postgres_url, tmp_path) as (first, second):
        with first._ctx.lock.for_agent("north"):
            other, errors = in_thread(
                lambda: second.remember("the ferry leaves at nine", key="ferry", agent="south")
            )
            other.join(WAIT_S)
            assert not other.is_alive() and not errors  # south did not wait for north
            same, same_errors = in_thread(
                lambda: second.remember("the lighthouse is white", key="light", agent="north")
            )
            same.join(HELD_S)
            assert same.is_alive()  # north's writer waits for north's hold
        same.join(WAIT_S)
        assert not same.is_alive() and not same_errors
        first.sync("north")
        assert "the lighthouse is white" in _texts(first, "north")
        found = first.recall("lighthouse", agent="north", k=1)
        assert [hit.item.content for hit in found.hits] == ["light: the lighthouse is white"]


def test_a_hold_of_the_whole_tenant_waits_for_no_one_and_is_waited_for(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        first.create_agent("south")
        second.sync("south")
        with first._ctx.lock:  # a forget, a sync, an edit: every agent at once
            waiting, errors = in_thread(
                lambda: second.remember("the tide is low", key="tide", agent="south")
            )
            waiting.join(HELD_S)
            assert waiting.is_alive()
        waiting.join(WAIT_S)
        assert not waiting.is_alive() and not errors


def test_a_worker_writing_while_another_agent_was_written_pulls_that_write(
    postgres_url: str, tmp_path: Path
) -> None:
    """The other agent's change was committed between this worker's pull and its own
    write, so it is numbered below this worker's: without pulling it then, the worker
    would move past it and never see it."""
    with _two_workers(postgres_url, tmp_path) as (first, second):
        with first._ctx.lock.for_agent("north"):  # pulled: south holds nothing yet
            other, errors = in_thread(
                lambda: second.remember("the ferry leaves at nine", key="ferry", agent="south")
            )
            other.join(WAIT_S)
            assert not other.is_alive() and not errors
            assert "the ferry leaves at nine" not in _texts(first, "south")
            first.remember("the lighthouse is white", key="light", agent="north")
        # pulled when the write found south's change before its own
        assert "the ferry leaves at nine" in _texts(first, "south")
        first.remember("the harbour is quiet", key="harbour", agent="north")  # pulls again
        assert "the ferry leaves at nine" in _texts(first, "south")
        second.remember("the ferry leaves at ten", key="ferry", agent="south")
        first.sync("south")
        assert "the ferry leaves at ten" in _texts(first, "south")
        assert (tmp_path / "a" / "agents" / "south").is_dir()
        # both copies hold the same documents, byte for byte
        second.sync("north")
        assert _texts(first, "north") == _texts(second, "north")
        assert _texts(first, "south") == _texts(second, "south")


def test_a_write_to_another_agent_inside_an_agents_hold_is_refused(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        for agent in ("north", "south"):
            memory.create_agent(agent)
        with memory._ctx.lock.for_agent("north"):
            with pytest.raises(StoreError, match="'south' inside the hold of north"):
                memory.remember("the ferry leaves at nine", key="ferry", agent="south")
            memory.remember("the lighthouse is white", key="light", agent="north")
        assert "the lighthouse is white" in _texts(memory, "north")


def test_a_worker_writes_at_once_to_an_agent_another_worker_just_created(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        first.create_agent("east")
        second.remember("the bridge is closed", key="bridge", agent="east")
        with pytest.raises(UnknownAgent):
            second.remember("the road is open", key="road", agent="west")
        first.sync("east")
        assert "the bridge is closed" in _texts(first, "east")
        assert not (tmp_path / "b" / "agents" / "west").exists()
