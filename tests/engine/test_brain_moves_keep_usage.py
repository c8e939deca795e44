"""A fact the Brain lets go to the archive keeps what the index counts of it: its access
statistics and its place in the recall log, on every backend. A write that moves facts
indexes ``brain.md`` and then the archive; what the first deleted is no longer used
only if the second did not write it again."""

from __future__ import annotations

from backends import Backend
from brain_facts import FACTS
from kronika import Memory
from kronika.workflows import charts as figures


def test_facts_moved_to_the_archive_keep_their_counts_and_log(backend: Backend) -> None:
    memory: Memory = backend.open(brain_budget=60, brain_max=100)
    used: dict[str, int] = {}
    for n, (key, value) in enumerate(FACTS):
        memory.remember(key=key, value=value)
        # each fact so far recalled once more: the first the most
        for asked, said in FACTS[: n + 1]:
            hit = memory.recall(said, k=1).hits[0]
            assert hit.item.key == asked
            used[asked] = used.get(asked, 0) + 1
    memory.recalls.flush()
    items = {it.key: it for it in memory.items(limit=100)}
    archived = [key for key, it in items.items() if it.provenance.path == "brain_archive.md"]
    assert archived  # the case this test is about happened
    assert {key: items[key].access_count for key in items} == used
    # every recall's hit is still in the log, archived ones included
    logged = [i for e in figures.recall_entries(memory, "default") for i in e.item_ids]
    assert {items[key].id for key in archived} <= set(logged)
    assert len(logged) == sum(used.values())
