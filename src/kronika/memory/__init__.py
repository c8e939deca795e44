"""The facade every interface calls: :class:`Memory`.

The CLI, the servers and user code all go through it. Reads bring the index up to date
with the Markdown first (hand edits are picked up); writes go through the single write
path. :class:`Memory` (:mod:`kronika.memory.facade`) holds named parts —
``memory.proposals``, ``memory.sessions``, ``memory.links``, ``memory.lessons``,
``memory.prompt``, ``memory.admin`` — each a small class over one
:class:`~kronika.memory.base.MemoryContext`.
"""

from __future__ import annotations

from kronika.memory.facade import Memory
from kronika.memory.sessions import ImportReport

__all__ = ["ImportReport", "Memory"]
