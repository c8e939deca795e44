"""Opening the workspace for a command: the one place the CLI builds a :class:`Memory`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kronika.cli import notes, render

if TYPE_CHECKING:
    from kronika.memory import Memory
    from kronika.settings import Settings


def open_memory(settings: Settings) -> Memory:
    """The workspace's memory, its damage notes watched; an index built by an older
    kronika is rebuilt as it opens, with a bar for the wait."""
    from kronika.app import build_memory

    with render.progress_bar_once_needed("rebuilding the index") as update:
        memory = build_memory(settings, progress=update)
    return notes.watch(memory)
