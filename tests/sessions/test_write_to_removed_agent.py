"""A write checks its agent again once it holds the agent's lock: an agent another
process removed while the write waited for that lock is refused, not brought back.
(Before the lock, only the folder is looked at: in team mode the record is not asked
whether the agent exists, a round trip a write no longer pays.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.errors import UnknownAgent
from threads import HELD_S, WAIT_S, in_thread

WRITES: dict[str, Callable[[Memory], object]] = {
    "save_turn": lambda m: m.save_turn("walk", "user", "the tide is high", agent="south"),
    "save_turns": lambda m: m.save_turns("walk", [("user", "and rising")], agent="south"),
    "note": lambda m: m.note("the tide turns at noon", kind="W", agent="south"),
    "remember": lambda m: m.remember("the tide is high", key="tide", agent="south"),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_write_waiting_while_its_agent_is_removed_is_refused(tmp_path: Path, write: str) -> None:
    settings = load_settings(tmp_path / "home", environ={}, embedder="hashing")
    with build_memory(settings, create=True) as remover, build_memory(settings) as writer:
        remover.create_agent("south")
        writer.save_turn("walk", "user", "the tide is low", agent="south")
        folder = tmp_path / "home" / "agents" / "south"
        with remover._ctx.lock:  # the writer finds the folder, then waits for the lock
            thread, errors = in_thread(lambda: WRITES[write](writer))
            thread.join(HELD_S)
            assert thread.is_alive()
            remover.remove_agent("south")
        thread.join(WAIT_S)
        assert not thread.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], UnknownAgent), errors
        assert not folder.exists()
        assert "south" not in writer.agents()
