"""The facade every interface calls: :class:`Memory`.

The CLI, the servers and user code all go through these methods. Reads bring the
index up to date with the Markdown first (hand edits are picked up); writes go
through the single write path. The class is split along that seam:
:mod:`kronika.memory.writes` and :mod:`kronika.memory.reads`, over the shared parts
in :mod:`kronika.memory.base`.
"""

from __future__ import annotations

from kronika.memory.lessons import MemoryLessons
from kronika.memory.links import MemoryLinks
from kronika.memory.reads import MemoryReads
from kronika.memory.sensory import MemorySensory
from kronika.memory.writes import ImportReport, MemoryWrites


class Memory(MemoryWrites, MemoryReads, MemoryLinks, MemoryLessons, MemorySensory):
    """Long-term memory of the agents in one workspace.

    Build one with :func:`kronika.app.build_memory` (or inject the parts yourself)::

        with build_memory(load_settings("./.kronika")) as memory:
            memory.remember("prefiere TypeScript", key="preferencia")
            memory.recall("what language does he like?", k=5)
    """


__all__ = ["ImportReport", "Memory"]
