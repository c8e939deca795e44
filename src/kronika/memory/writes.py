"""The write side of :class:`kronika.memory.Memory`: every change goes through the
single write path (SPEC C5).

:class:`MemoryWrites` is composed of one mixin per kind of write: facts
(:mod:`.facts`), notes, turns and imported sessions (:mod:`.appends`), forgetting
(:mod:`.forgetting`) and proposals (:mod:`.proposals`)."""

from __future__ import annotations

from kronika.engine.changes import Change
from kronika.engine.write import USER, WriteReceipt
from kronika.memory.appends import ImportReport, MemoryAppends
from kronika.memory.facts import MemoryFacts
from kronika.memory.forgetting import MemoryForgetting
from kronika.memory.proposals import MemoryProposals

__all__ = ["ImportReport", "MemoryWrites"]


class MemoryWrites(MemoryProposals, MemoryFacts, MemoryAppends, MemoryForgetting):
    """Remember, note, forget, save turns, import sessions, approve or reject proposals."""

    def memory_write(
        self, target_agent: str, section: str, change: Change, source_agent: str = USER
    ) -> WriteReceipt:
        """The single write path (SPEC C5): permissions, autonomy, audit, then re-index."""
        with self._lock:
            return self._writer.memory_write(target_agent, section, change, source_agent)
