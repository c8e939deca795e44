"""The figures of the memory browser's charts, counted by the index for one reader.

Each reads ``memory`` as given: a view (:meth:`~kronika.memory.Memory.as_reader`) counts
only what its reader may see, the memory itself everything (the workspace's owner).

* :func:`growth` — items created per UTC day, per tier and per type
  (:meth:`~kronika.ports.ItemIndex.created_per_day`), and how many are kept in all;
* :func:`recall_use` — recalls per day and the items they used, from the recall log
  (:mod:`kronika.core.recall_log` says what counts for whom);
* :func:`recall_entries` — the log itself, as the reader may have it (an export).

Each answer is the one that reading the reader's items whole would give, without
reading them: the counts are made in the index, under the same filter as its lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from kronika.core.model import MemoryItem, RecallFilter
from kronika.core.recall_log import RecallEntry
from kronika.memory import Memory


@dataclass(frozen=True, slots=True)
class Growth:
    """``by_tier[tier][n]``, ``by_type[type][n]``: items created on ``days[n]``;
    ``total``: items kept; ``before``: those created before ``days[0]``."""

    total: int
    before: int
    by_tier: dict[str, list[int]]
    by_type: dict[str, list[int]]


@dataclass(frozen=True, slots=True)
class TopItem:
    item: MemoryItem
    uses: int
    last_used_at: datetime


@dataclass(frozen=True, slots=True)
class RecallUse:
    """Per day of the window: ``recalls`` that count for the reader, ``uses`` of items
    it may see, distinct ``items`` used; ``top``: the items used most."""

    recalls: list[int]
    uses: list[int]
    items: list[int]
    top: list[TopItem]


def _start(days: list[date]) -> datetime:
    return datetime.combine(days[0], datetime.min.time(), tzinfo=UTC)


def _filter(memory: Memory, agent: str) -> RecallFilter:
    """What :meth:`Memory.items` lists of ``agent`` for the memory's reader."""
    return RecallFilter(agents=(agent,), reader=memory.default_reader)


def growth(memory: Memory, agent: str, days: list[date]) -> Growth:
    """``days``: consecutive UTC dates, oldest first (``kronika.core.charts.axis``)."""
    total = memory.count(agent=agent)  # brings the index up to date first
    found = memory.index.created_per_day(_filter(memory, agent), _start(days))
    by_tier: dict[str, list[int]] = {}
    by_type: dict[str, list[int]] = {}
    recent = 0
    for row in found:
        recent += row.count
        n = (date.fromisoformat(row.day) - days[0]).days
        if not 0 <= n < len(days):
            continue  # created after today (a clock set back): on no day of the window
        by_tier.setdefault(row.tier, [0] * len(days))[n] += row.count
        by_type.setdefault(row.type, [0] * len(days))[n] += row.count
    return Growth(
        total, total - recent, dict(sorted(by_tier.items())), dict(sorted(by_type.items()))
    )


def recall_use(memory: Memory, agent: str, days: list[date], *, top: int = 5) -> RecallUse:
    memory.count(agent=agent)  # brings the index up to date: a forgotten item is gone
    memory.recalls.flush()
    flt = _filter(memory, agent)
    log = memory.index.recall_log()
    recalls, uses, items = ([0] * len(days) for _ in range(3))
    for row in log.per_day(flt, _start(days)):
        n = (date.fromisoformat(row.day) - days[0]).days
        if 0 <= n < len(days):
            recalls[n], uses[n], items[n] = row.recalls, row.uses, row.items
    best = log.top(flt, _start(days), top)
    found = {i.id: i for i in memory.index.get_items([item_id for item_id, _, _ in best])}
    return RecallUse(
        recalls,
        uses,
        items,
        [TopItem(found[i], n, at) for i, n, at in best if i in found],
    )


def recall_entries(memory: Memory, agent: str, since: datetime | None = None) -> list[RecallEntry]:
    """The recall log of ``agent`` as the memory's reader may have it, oldest first: its
    own recalls whole, another reader's only by the items it may see."""
    memory.count(agent=agent)
    memory.recalls.flush()
    return memory.index.recall_log().entries(_filter(memory, agent), since)
