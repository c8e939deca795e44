"""Several processes write one PostgreSQL index at once and nothing is lost.

Real processes (``python -c``), a real server: each appends turns to the same session
file, counts accesses to the same item, and replaces a file of its own that also
claims one id every worker writes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.ports import SourceState

WORKERS = 4
ROUNDS = 50
T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)

_WORKER = textwrap.dedent(
    """
    import sys, time
    from datetime import UTC, datetime, timedelta
    from pathlib import Path
    from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
    from kronika.ports import SourceState
    from kronika.stores.postgres.index import PostgresIndex

    url, me, rounds, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)

    def turn(id_, text):
        return MemoryItem(
            id=id_, agent="jaskier", content=text, type=ItemType.MESSAGE,
            layer=Layer.WORKING, tier=Tier.SHORT, created_at=T0, updated_at=T0,
            provenance=Provenance("s.md", 1, "s1"), speaker=f"w{me}",
        )

    with PostgresIndex(url, embedding_model="m1", dim=4) as ix:
        while not go.exists():
            time.sleep(0.01)
        for n in range(rounds):
            while True:  # append after whatever the others appended: retry on a stale tail
                tail = ix.source_tail("jaskier", "s.md", 1)
                state = tail.state
                after = SourceState("jaskier", "s.md", f"{state.content_hash}+w{me}-{n}",
                                    state.mtime_ns + 1, state.size + 1)
                if ix.append_to_source(state, after, [turn(f"w{me}-{n}", f"turn {n} of w{me}")],
                                       [f"h-w{me}-{n}"]):
                    break
            ix.record_access(["shared", f"w{me}-{n}"], T0 + timedelta(seconds=me))
            own = SourceState("jaskier", f"w{me}.md", f"d{n}", n, n)
            items = [turn(f"w{me}-own-{k}", f"own {k}") for k in range(3)] + [turn("moving", "m")]
            ix.replace_source(own, items, [f"o{k}" for k in range(4)])
    """
)


def _item(id_: str) -> MemoryItem:
    return MemoryItem(
        id=id_,
        agent="jaskier",
        content="first",
        type=ItemType.MESSAGE,
        layer=Layer.WORKING,
        tier=Tier.SHORT,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance("s.md", 1, "s1"),
    )


def test_processes_writing_at_once_lose_no_append_access_or_replace(
    postgres_url: str, tmp_path: Path
) -> None:
    from kronika.stores.postgres.index import PostgresIndex

    with PostgresIndex(postgres_url, embedding_model="m1", dim=4) as ix:
        ix.replace_source(SourceState("jaskier", "s.md", "h0", 0, 0), [_item("first")])
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, postgres_url, str(me), str(ROUNDS), str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for me in range(WORKERS)
    ]
    go.touch()
    errors = [worker.communicate(timeout=540)[1] for worker in workers]  # all, then check
    for worker, err in zip(workers, errors, strict=True):
        assert worker.returncode == 0, err[-3000:]
    with PostgresIndex(postgres_url, embedding_model="m1", dim=4) as ix:
        turns = ix.source_items("jaskier", "s.md")
        expected = {f"w{me}-{n}" for me in range(WORKERS) for n in range(ROUNDS)}
        assert len(turns) == 1 + WORKERS * ROUNDS
        assert {t.id for t in turns} == expected | {"first"}
        # each worker's turns stay in the order it appended them
        for me in range(WORKERS):
            mine = [t.id for t in turns if t.id.startswith(f"w{me}-")]
            assert mine == [f"w{me}-{n}" for n in range(ROUNDS)]
        tail = ix.source_tail("jaskier", "s.md", 0)
        assert tail is not None and tail.count == len(turns)
        # every append saw the state the one before it wrote: the chain is whole
        assert tail.state.content_hash.count("+") == WORKERS * ROUNDS
        assert tail.state.size == WORKERS * ROUNDS
        shared = ix.score_features(["shared"])
        assert shared.ids == ()  # counted though no item has that id (yet)
        ix.replace_source(SourceState("jaskier", "x.md", "x", 0, 0), [_item("shared")])
        (shared_item,) = ix.get_items(["shared"])
        assert shared_item.access_count == WORKERS * ROUNDS
        appended = ix.get_items(sorted(expected))
        assert all(i.access_count == 1 for i in appended)
        moving = ix.list_items(RecallFilter())
        assert [i.id for i in moving].count("moving") == 1
        for me in range(WORKERS):
            own = {i.id for i in ix.source_items("jaskier", f"w{me}.md")}
            assert {f"w{me}-own-{k}" for k in range(3)} <= own
        assert ix.integrity_problems(full=True) == []
