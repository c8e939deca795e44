"""The facade every interface calls: :class:`Memory`.

The CLI, the servers and user code all go through these methods. Reads bring the
index up to date with the Markdown first (hand edits are picked up); writes go
through the single write path. The class is split along that seam:
:mod:`kronika.memory.writes` and :mod:`kronika.memory.reads`, over the shared parts
in :mod:`kronika.memory.base`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kronika.memory.lessons import MemoryLessons
from kronika.memory.links import MemoryLinks
from kronika.memory.reads import MemoryReads
from kronika.memory.sensory import MemorySensory
from kronika.memory.writes import ImportReport, MemoryWrites

if TYPE_CHECKING:
    from kronika.core.model import MemoryItem, Reader, Scope
    from kronika.core.visibility import Audience
    from kronika.engine.forgetting import ForgetReceipt


class Memory(MemoryWrites, MemoryReads, MemoryLinks, MemoryLessons, MemorySensory):
    """Long-term memory of the agents in one workspace.

    Build one with :func:`kronika.app.build_memory` (or inject the parts yourself)::

        with build_memory(load_settings("./.kronika")) as memory:
            memory.remember("prefiere TypeScript", key="preferencia")
            memory.recall("what language does he like?", k=5)
    """

    # What the workflows (:mod:`kronika.workflows`) use besides the verbs above: how a
    # call's agent, reader and audience are settled, and forgetting items already found.
    def resolve_agent(self, agent: str | None = None) -> str:
        """The agent a call names, or the ``default_agent`` setting for ``None``, after
        seeing what other workers of a shared store wrote; :class:`~kronika.errors.UnknownAgent`
        when that agent has no memory (the check every verb taking ``agent=`` makes)."""
        return self._agent(agent)

    def resolve_reader(self, reader: Reader | None = None) -> Reader | None:
        """The reader a call acts for: ``reader``, else :attr:`default_reader` (``None``
        reads unrestricted); :class:`~kronika.errors.InvalidInput` for anything else than
        a :class:`~kronika.core.model.Reader`."""
        return self._reader(reader)

    def write_audience(
        self,
        agent: str,
        scope: Scope | str | None = None,
        *,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> Audience:
        """Who a write to ``agent`` is for, as every write settles it: what it names, the
        rest from its reader's user and channel (:func:`kronika.core.visibility.audience`).
        :class:`~kronika.errors.PermissionDenied` for a reader of another tenant,
        :class:`~kronika.errors.InvalidInput` for a scope that lacks its user, channel or
        team."""
        return self._audience(agent, scope, user, channel, team, reader)

    def forget_items(
        self, agent: str, items: Sequence[MemoryItem], *, section: str = "", source_agent: str
    ) -> ForgetReceipt:
        """Forget ``items`` of ``agent`` (found by the caller, e.g. in :attr:`index`) at
        once, through the one forget path of :meth:`forget`: their text is redacted
        everywhere it is written and the change is audited as ``source_agent``'s.
        ``section`` names where they live (``""`` for more than one place)."""
        self.workspace.require_agent(agent)
        return self._forget_items(agent, items, section, source_agent)


__all__ = ["ImportReport", "Memory"]
