"""Only a recall a caller makes counts as an access, on every backend.

Automatic reads — the prompt's long-term block, load_all, lessons served for a task, a
chat turn's own recall — leave last_accessed_at and access_count as they were, so what
one of them brought up does not come up again on its recency alone (docs/scoring.md).
"""

from __future__ import annotations

from backends import Backend
from kronika import Memory
from kronika.core.lessons import exit_code
from kronika.core.model import RecallFilter
from kronika.testing import FrozenClock
from kronika.workflows.session import Session


def _usage(memory: Memory) -> dict[str, tuple[object, int]]:
    return {
        item.id: (item.last_accessed_at, item.access_count)
        for item in memory.items(limit=1000)
        if item.last_accessed_at is not None or item.access_count
    }


def test_automatic_reads_record_no_access_and_an_explicit_recall_does(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock, relevance_floor=0.3)
    memory.remember("green tea with honey in the morning", key="drink")
    memory.note("The kettle in the office is blue and hums at night")
    memory.record_outcome("brew the green tea", "kettle on", exit_code(1, "kettle tripped"))
    clock.advance(hours=2)

    assert "green tea" in memory.format_for_prompt(query="what tea does the user drink?")
    assert memory.load_long_term(query="blue kettle in the office")
    assert memory.load_all(query="green tea")
    assert memory.lessons_for("brew the green tea again")
    chat = Session(memory)
    chat.user("is the blue kettle still humming at night?")
    assert _usage(memory) == {}
    memory.recalls.flush()
    assert memory.index.recall_log().entries(RecallFilter(agents=("default",))) == []

    clock.advance(minutes=5)
    hits = memory.recall("blue kettle", k=1).hits
    assert len(hits) == 1
    used = _usage(backend.open("b", clock=clock))
    assert used == {hits[0].item.id: (clock.now(), 1)}
