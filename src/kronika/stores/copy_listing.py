"""Which files of a working copy may differ from the record (a part of
:class:`~kronika.stores.working_copy.WorkingCopy`): those the folder watch says changed
since its last look (:mod:`~kronika.stores.folder_watch`), or, where it cannot vouch
for an agent, every Markdown file of the agent's folder; and which documents the copy
knows are gone from it."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from stat import S_ISREG

from kronika.stores.copy_state import CopyState
from kronika.stores.folder_watch import FolderWatch
from kronika.stores.markdown.workspace import MarkdownWorkspace

Key = tuple[str, str]
Found = dict[Key, tuple[str, tuple[int, int]]]
"""A file that may differ: its path as a string, its modification time and size."""


class Listing:
    """The files a push looks at, told by a folder watch where the system has one."""

    def __init__(self, agents_dir: Path, workspace: MarkdownWorkspace, state: CopyState) -> None:
        self.workspace = workspace
        self.state = state
        self._watch = FolderWatch(agents_dir)

    def forget(self) -> None:
        """What the watch told may not have been sent: every agent is listed whole next."""
        self._watch.forget()

    def close(self) -> None:
        self._watch.close()

    def changed(
        self, agents: set[str], holds: Callable[[str], bool]
    ) -> tuple[Found, set[str], set[Key]]:
        """The files of the held agents (``holds``) that may differ from the record,
        their paths, modification times and sizes; the agents listed whole; the files
        looked at one by one (a file among them and not found is gone). An agent the
        folder watch vouches for is looked at in the files changed since its last look,
        and those the workspace removed or found damaged; any other, listed whole
        (:meth:`agent_files`)."""
        found: Found = {}
        whole: set[str] = set()
        looked: set[Key] = set()
        marked = self.workspace.removed | self.workspace.damaged
        for agent in sorted(filter(holds, agents)):
            changed = self._watch.look(agent)
            if changed is None:
                linked = False
                for key, where, state, link in self.agent_files(agent):
                    found[key] = (where, state)
                    linked = linked or link
                self._watch.listed(agent, linked=linked)
                whole.add(agent)
                continue
            folder = self.workspace.agent_dir(agent)
            changed |= {path for owner, path in marked if owner == agent}
            for path in sorted(changed):
                looked.add((agent, path))
                where = os.path.join(folder, path)
                try:
                    stat = os.stat(where)
                except OSError:
                    continue
                if S_ISREG(stat.st_mode):
                    found[(agent, path)] = (where, (stat.st_mtime_ns, stat.st_size))
                    if stat.st_nlink > 1:  # written through another name: no event here
                        self._watch.linked(agent)
        return found, whole, looked

    def gone(
        self,
        found: Found,
        agents: set[str],
        listed: tuple[set[str], set[Key]],
        skipped: Collection[Key],
        holds: Callable[[str], bool],
        scope: frozenset[str] | None,
    ) -> list[Key]:
        """The held agents' documents this copy knows and their folders no longer hold,
        in order, from what :meth:`changed` found (``listed``: the agents it listed
        whole, the files it looked at one by one): among the files looked at, and every
        one of an agent listed whole or whose folder is gone (only then, or in a hold of
        every agent, ``scope`` ``None``, are all the documents this copy knows gone
        through). ``skipped``: files left as they are (found damaged)."""
        whole, looked = listed
        copies = self.state.copies
        if whole or scope is None or not scope <= agents:
            keys = [
                key
                for key in copies
                if holds(key[0]) and (key in looked or key[0] in whole or key[0] not in agents)
            ]
        else:
            keys = [key for key in looked if key in copies]
        return sorted(key for key in keys if key not in found and key not in skipped)

    def files(self, holds: Callable[[str], bool]) -> Iterator[tuple[Key, str, tuple[int, int]]]:
        """Every Markdown file of every agent folder ``holds`` accepts (see
        :meth:`agent_files`)."""
        for agent in filter(holds, self.workspace.agents()):
            for key, where, state, _ in self.agent_files(agent):
                yield key, where, state

    def agent_files(self, agent: str) -> Iterator[tuple[Key, str, tuple[int, int], bool]]:
        """Every Markdown file of ``agent``'s folder (not in hidden folders), its path,
        with its modification time and size, and whether it is a link (symbolic, or
        one of several names of the file: it may change under another name)
        (``os.scandir``: one ``stat`` per file; the path a string, as a ``Path`` made
        for each file cost three times the ``stat``)."""
        folder: Path = self.workspace.agent_dir(agent)
        pending = [(os.fspath(folder), "")]
        while pending:
            where, prefix = pending.pop()
            try:
                entries = list(os.scandir(where))
            except FileNotFoundError:
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, f"{prefix}{entry.name}/"))
                elif entry.name.endswith(".md") and entry.is_file():
                    stat = entry.stat()
                    key = (agent, f"{prefix}{entry.name}")
                    state = (stat.st_mtime_ns, stat.st_size)
                    yield key, entry.path, state, stat.st_nlink > 1 or entry.is_symlink()
