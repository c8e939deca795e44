"""What every part of :class:`~kronika.stores.markdown.workspace.MarkdownWorkspace`
shares: one :class:`WorkspaceState` holding the options, what reading met (damage
notes, damaged and removed files), the folders of known agents, the kept parses of
the fact files and the Brains a batch holds. The parts are built over it; none
inherits from another."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kronika.stores.markdown.facts.cache import FactCache


class WorkspaceState:
    """The options of a workspace and the state its parts share (see the module docstring)."""

    def __init__(
        self,
        home: Path,
        *,
        tenant: str = "default",
        message_importance: float = 0.3,
        tenants: Mapping[str, str] | None = None,
    ) -> None:
        self.home = Path(home)
        self.root = self.home / "agents"
        self.tenant = tenant
        self.tenants = dict(tenants or {})
        self.message_importance = message_importance
        self.notes: list[str] = []  # damage met while reading
        # files found to have lost items at once (kronika.engine.lost): a working copy
        # does not push them to its store of record (kronika.stores.working_copy)
        self.damaged: set[tuple[str, str]] = set()
        # files a forget removed or rewrote (read by a working copy, as ``damaged``)
        self.removed: set[tuple[str, str]] = set()
        self.dirs: dict[str, tuple[Path, str]] = {}  # agent -> its folder, as path and str
        self.facts = FactCache()  # fact files' parses (stores/markdown/facts/cache.py)
        # agent folder -> fact files appended to but not yet synced, while a batch
        # holds the Brain (stores/markdown/facts/write.py)
        self.holding: dict[str, set[str]] = {}

    def tenant_of(self, agent: str) -> str:
        """The tenant ``agent`` (and so every item of it) belongs to."""
        return self.tenants.get(agent, self.tenant)
