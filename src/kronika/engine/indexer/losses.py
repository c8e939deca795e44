"""Files that lost their items all at once (``indexer.losses``): what the index held of
a file that was truncated, emptied, deleted or torn is kept aside and reported, so a
file must not lose its memories silently (:mod:`kronika.engine.lost`)."""

from __future__ import annotations

from collections.abc import Sequence

from kronika.core.model import MemoryItem
from kronika.engine import forget_journal
from kronika.engine.indexer.report import SyncReport
from kronika.engine.indexer.state import IndexerState
from kronika.engine.lost import cut_inside_a_line, garbled, keep_lost, lost_at_once, torn_items
from kronika.stores.markdown.facts.brain import ARCHIVE, BRAIN, HISTORY
from kronika.stores.markdown.layout import SourceKind, classify


class Losses:
    """Keeps and reports what a file lost all at once (see the module docstring)."""

    def __init__(self, state: IndexerState) -> None:
        self.state = state

    def watch(self, agent: str, path: str, now: Sequence[MemoryItem], report: SyncReport) -> None:
        """Keep and report the items a file lost all at once (:func:`lost_at_once`): a
        truncated, emptied or deleted file must not lose its memories silently."""
        kind = classify(path)
        if kind is None:
            return
        before = self.state.before.pop((agent, path), None)
        if before is None:
            before = self.state.index.source_items(agent, path)
        kept = {item.id for item in now}
        lost = [item for item in before if item.id not in kept]
        cut = cut_inside_a_line(self.state.workspace.agent_dir(agent) / path)
        torn = torn_items(before, now, cut=cut)
        texts = [i.content for i in now]
        damaged = cut or bool(torn) or garbled((i.content for i in before), texts)
        if not torn and not lost_at_once(kind, len(before), len(lost), len(now), damaged=damaged):
            return
        forgetting = forget_journal.pending_ids(self.state.workspace.agent_dir(agent))
        lost = [item for item in lost if item.id not in forgetting]  # a forget cut short
        if kind is SourceKind.FACTS:
            # facts moved to another fact file (archived, superseded by another
            # process) are not lost
            # (the other files only: this one's facts are ``now``, and a write may hold
            # the Brain as it was before the file was damaged)
            ws = self.state.workspace
            others = {
                BRAIN.path: ws.brain_facts,
                ARCHIVE.path: ws.archived_facts,
                HISTORY.path: ws.fact_history,
            }
            moved = {
                item.id for other, facts in others.items() if other != path for item in facts(agent)
            }
            lost = [item for item in lost if item.id not in moved]
        if not torn and not lost_at_once(kind, len(before), len(lost), len(now), damaged=damaged):
            return
        lost += torn
        copy = keep_lost(self.state.workspace, agent, path, lost)
        self.state.workspace.damaged.add((agent, path))
        what = "facts" if kind is SourceKind.FACTS else "items"
        note = (
            f"{agent}/{path} lost {len(lost)} of its {len(before)} {what} at once (was it "
            "truncated or emptied?); `kronika doctor --fix` puts back what it can; the "
            f"index's copy of them was kept at {copy}"
        )
        report.warnings.append(note)
        self.state.workspace.notes.append(note)
