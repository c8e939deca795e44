"""The damage a command met, shown with its output (SPEC S4: never silent).

Every memory a command opens is watched here; whatever it noted (a damaged file read
around, a copy kept, the index rebuilt, a torn audit line) goes into the ``notes`` of
the command's JSON object, or to stderr when the output is not an object or not JSON.
"""

from __future__ import annotations

from typing import Protocol, TypeVar


class _Noting(Protocol):
    @property
    def notes(self) -> list[str]: ...


M = TypeVar("M", bound=_Noting)
_watched: list[_Noting] = []
_told: set[str] = set()


def watch(memory: M) -> M:
    """Show ``memory``'s notes with this command's output; returns it."""
    _watched.append(memory)
    return memory


def take() -> list[str]:
    """The notes not yet shown, oldest first; they count as shown from now on."""
    fresh = [n for m in _watched for n in m.notes if n not in _told]
    fresh = list(dict.fromkeys(fresh))
    _told.update(fresh)
    return fresh


def shown(texts: list[str]) -> None:
    """Count ``texts`` as shown already (printed as a command's own warnings)."""
    _told.update(texts)


def keep(found: list[str]) -> None:
    """Give back notes that could not be shown where they were taken."""
    _told.difference_update(found)


def reset() -> None:
    """Forget every memory watched (a new command starts)."""
    _watched.clear()
    _told.clear()
