"""The purge job: remove what the storage policies no longer allow (SPEC C4).

Policies apply when something is written (:mod:`kronika.engine.policy_gate`), but time
passes and policies change: an item expires, a channel joins the never-store list, DMs
stop being kept in long-term memory. :func:`find_purgeable` reads every item of the
index (current, superseded and archived) and asks :func:`kronika.core.policies.purge_reason`
about each; :func:`purge` hands them, in batches per agent, to the one forget path
(``forget``: :meth:`kronika.Memory` passes its own), which removes each item from its
file, redacts its text wherever else it is written, updates the index and audits it.

Running it again finds nothing more to do; a dry run only reports. The job knows the
index and the forget path, not how the store of record keeps its files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from kronika.core.model import MemoryItem, RecallFilter
from kronika.core.policies import StoragePolicies, purge_reason
from kronika.engine.indexer import Progress
from kronika.ports import IndexReads

if TYPE_CHECKING:
    from kronika.engine.forgetting import ForgetReceipt

BATCH = 5_000
"""Items forgotten in one change. Each forget reads every file of the agent and looks
for all its items' text in what stays, so few large batches cost far less than many
small ones (5,000 expired turns of 50 sessions: 9 s in one batch, 94 s in batches of
200); batches take whole files, in file order."""

Forget = Callable[[str, Sequence[MemoryItem]], "ForgetReceipt"]
"""``forget(agent, items)``: the forget path, applied as the system."""


@dataclass(frozen=True, slots=True)
class Purgeable:
    """One item a policy no longer allows, and why."""

    item: MemoryItem
    reason: str


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What a purge found and (unless ``dry_run``) removed.

    ``checked`` items were read; ``found`` are the ones the policies no longer allow.
    ``forgotten`` counts the items removed, ``files`` the places touched (``path`` ->
    how many times), ``index_removed`` the index rows deleted; ``proposals`` the
    forgets that wait for approval instead (never, as the system purges).
    """

    dry_run: bool
    checked: int
    found: tuple[Purgeable, ...]
    forgotten: int = 0
    index_removed: int = 0
    files: dict[str, int] = field(default_factory=dict)
    proposals: tuple[str, ...] = ()

    def reasons(self) -> Counter[str]:
        """How many items each reason covers."""
        return Counter(p.reason for p in self.found)


def find_purgeable(
    index: IndexReads, agents: Sequence[str], policies: StoragePolicies, now: datetime
) -> tuple[int, list[Purgeable]]:
    """(items read, the items of ``agents`` the ``policies`` no longer allow at ``now``)."""
    checked = 0
    found: list[Purgeable] = []
    if policies.empty:
        return 0, found
    for agent in agents:
        flt = RecallFilter(agents=(agent,), include_superseded=True, include_archived=True)
        for item in index.list_items(flt):
            checked += 1
            reason = purge_reason(policies, item, now)
            if reason is not None:
                found.append(Purgeable(item, reason))
    return checked, found


def purge(
    checked: int,
    found: Sequence[Purgeable],
    forget: Forget,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    batch: int = BATCH,
) -> PurgeReport:
    """Forget every ``found`` item through ``forget`` (nothing when ``dry_run``)."""
    if dry_run or not found:
        return PurgeReport(dry_run, checked, tuple(found))
    by_agent: dict[str, list[MemoryItem]] = {}
    for candidate in sorted(found, key=_place):
        by_agent.setdefault(candidate.item.agent, []).append(candidate.item)
    done = removed = rows = 0
    files: Counter[str] = Counter()
    waiting: list[str] = []
    total = len(found)
    if progress is not None:
        progress(0, total)
    for agent, items in by_agent.items():
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            receipt = forget(agent, chunk)
            if receipt.applied:
                removed += len(chunk)
                rows += receipt.index_removed
                for place in receipt.places:
                    files[place.path] += 1
            elif receipt.proposal is not None:
                waiting.append(receipt.proposal)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return PurgeReport(
        dry_run,
        checked,
        tuple(found),
        forgotten=removed,
        index_removed=rows,
        files=dict(files),
        proposals=tuple(waiting),
    )


def _place(candidate: Purgeable) -> tuple[str, str, int]:
    item = candidate.item
    return item.agent, item.provenance.path, item.provenance.line or 0
