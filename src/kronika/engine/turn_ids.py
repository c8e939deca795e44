"""A turn named by its turn id: what ``save_turn`` returns (``<session>_<n>``, or the
``turn_id`` given), which is not the turn's item id (``t-…``, made of the agent, the
session and the turn id). :meth:`kronika.Memory.get` and :meth:`kronika.Memory.forget`
take either."""

from __future__ import annotations

from collections.abc import Callable

from kronika.core.model import MemoryItem
from kronika.errors import InvalidInput
from kronika.ports import IndexReads
from kronika.stores.markdown.workspace import MarkdownWorkspace


def turn_named(
    workspace: MarkdownWorkspace,
    index: IndexReads,
    agent: str,
    turn_id: str,
    may_see: Callable[[MemoryItem], bool],
) -> list[MemoryItem]:
    """The turn whose turn id is ``turn_id``, in whichever of the agent's sessions
    ``may_see`` lets the caller see (none when no such session holds it): its item id
    is computed for each session file, and the index asked for them at once, so no
    file is read. :class:`InvalidInput` when several such sessions hold a turn of that
    id (its item id tells them apart)."""
    sessions = workspace.turn_item_ids(agent, turn_id)
    found = [it for it in index.get_items(list(sessions)) if it.agent == agent and may_see(it)]
    if len(found) > 1:
        named = ", ".join(repr(sessions[it.id]) for it in found)
        raise InvalidInput(
            f"turn {turn_id!r} is in more than one session ({named}): name it by its"
            f" item id ({', '.join(it.id for it in found)})"
        )
    return found
