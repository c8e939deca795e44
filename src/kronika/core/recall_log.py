"""The recall log: which recalls were made, when, for whom, and which items they used.

One :class:`RecallEntry` per recall that counts (``record_access``): its moment, the
tenant and agent recalled from (``*`` for a recall across every agent), the reader it
was made for (user and channel), how many hits it returned and the ids of those items,
best first. The query is kept only when the ``recall_log_queries`` setting says so,
and then screened (:func:`kept_query`).

What a *viewer* (a reading context) is shown of the log (the stores count it in SQL,
``tests/engine/test_recall_log.py`` checks them against this rule):

* a recall counts for the viewer when it was made in the viewer's own context (same
  tenant, user and channel: :func:`is_own`) or used at least one item the viewer may
  see; another reader's recall that used nothing the viewer sees is not counted;
* of the items a recall used, only those the viewer may see are counted or named.

So what a viewer is shown never names or counts an item it could not list, nor another
reader's user, channel or query.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kronika.core.model import Reader
from kronika.core.screening import screen_text

ALL_AGENTS = "*"
"""The agent of a recall made across every agent (``all_agents``)."""


@dataclass(frozen=True, slots=True)
class RecallEntry:
    """One recall as the log keeps it."""

    at: datetime
    tenant: str
    agent: str
    user: str | None
    channel: str | None
    hits: int
    item_ids: tuple[str, ...]
    query: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "at": self.at.isoformat(),
            "tenant": self.tenant,
            "agent": self.agent,
            "user": self.user,
            "channel": self.channel,
            "hits": self.hits,
            "item_ids": list(self.item_ids),
            "query": self.query,
        }


@dataclass(frozen=True, slots=True)
class RecallDay:
    """What one UTC day of the log holds for a viewer: ``recalls`` made, ``uses`` of
    items the viewer may see (one per item per recall) and distinct ``items`` used."""

    day: str
    recalls: int
    uses: int
    items: int


def kept_query(query: str, *, keep: bool, secrets: str) -> str | None:
    """What the log keeps of ``query``: nothing unless ``keep``; else the query with its
    secrets redacted — also when the ``secrets`` setting is ``refuse`` (a recall is
    not refused for its query) — or as asked when it is ``allow``."""
    if not keep or not query.strip():
        return None
    return screen_text(query, "allow" if secrets == "allow" else "redact")


def is_own(entry: RecallEntry, viewer: Reader | None) -> bool:
    """Whether ``entry`` was made in ``viewer``'s context (``None``: the workspace's
    owner reading unrestricted, whose is every recall)."""
    if viewer is None:
        return True
    return (entry.tenant, entry.user, entry.channel) == (
        viewer.tenant,
        viewer.user,
        viewer.channel,
    )


def entry_for(
    *,
    at: datetime,
    reader: Reader | None,
    tenant: str,
    agents: tuple[str, ...],
    item_ids: tuple[str, ...],
    query: str | None,
) -> RecallEntry:
    """The entry of one recall from ``agents`` (one agent, or every agent: ``()``)."""
    return RecallEntry(
        at=at,
        tenant=reader.tenant if reader is not None else tenant,
        agent=agents[0] if len(agents) == 1 else ALL_AGENTS,
        user=None if reader is None else reader.user,
        channel=None if reader is None else reader.channel,
        hits=len(item_ids),
        item_ids=item_ids,
        query=query,
    )
