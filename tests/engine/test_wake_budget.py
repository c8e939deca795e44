"""The wake context carries a Brain that is within its budget whole: ``brain_max``
bounds the facts as the Brain counts them, and each fact's provenance comes on top."""

from __future__ import annotations

from pathlib import Path

from kronika import build_memory, load_settings
from kronika.workflows.session import wake_context


def test_a_brain_within_its_budget_wakes_whole_with_its_provenance(tmp_path: Path) -> None:
    with build_memory(
        load_settings(tmp_path / "ws", environ={}, embedder="hashing"), create=True
    ) as memory:
        for n in range(30):
            memory.remember(f"colour {n}", key=f"favourite_thing_{n}")
        facts = memory.facts(include_archived=False)
        assert len(facts) == 30  # the Brain kept them all: they fit brain_max
        _, block, _ = wake_context(memory, "default")
        assert memory.tokens.count(block) > memory.settings.brain_max  # provenance on top
        for n in range(30):
            assert f"favourite_thing_{n}: colour {n}" in block
        assert block.count("[profile ") == 30
