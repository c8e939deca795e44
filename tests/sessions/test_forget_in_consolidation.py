"""An extraction model's DELETE goes through the one forget path: one value, not its key."""

from __future__ import annotations

from typing import Any

from kronika import Memory
from kronika.ports import LLM
from kronika.workflows.session import Session

Brainy = Any  # the scripted model of conftest.py


def _delete(key: str, value: str) -> dict[str, object]:
    return {
        "facts": [{"tag": "DELETE", "key": key, "value": value, "replaces": key}],
        "summary": "The user asked to forget something.",
    }


def test_a_delete_with_a_value_forgets_that_value_only(
    memory: Memory, llm: LLM, brainy: Brainy
) -> None:
    for value in ("tea", "vinyl records"):
        memory.remember(key="preference", value=value, multi=True)
    memory.remember(key="city", value="Kraków")
    brainy.extractions = [_delete("preference", "tea"), _delete("city", "Krakow, Poland")]
    for said in ("I went off tea, drop it", "and my city, drop it too"):
        session = Session(memory, llm=llm)
        session.user(said)
        session.close()
    assert [f"{f.key}: {f.value}" for f in memory.facts()] == ["preference: vinyl records"]
