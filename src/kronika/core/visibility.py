"""Who may see a memory item: the one rule every read path enforces (SPEC M5).

An item is visible to ``Reader(tenant T, user U, channel C, teams Ts)`` when it
belongs to tenant ``T`` and

* its scope is ``global``; or
* its scope is ``team`` and its ``team`` is one of ``Ts``; or
* its scope is ``channel`` and its ``channel`` is ``C`` (a reader outside any
  channel sees no channel items); or
* its scope is ``personal`` and its ``user`` is ``U``. An item without a user
  belongs to the workspace's own, unnamed user: a reader without a user sees it,
  a named user does not.

Every adapter that filters in its own query language (SQL, a vector payload
filter) implements exactly this; the leak tests compare them with
:func:`visible`.

Who an item is *for* is its :class:`Audience` (scope, user, channel, team): what a
write is given, what a session file's header says for all its turns, and what a
summary inherits from what it was made from (a summary is made per audience, so it
never holds what its readers may not see).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypedDict, TypeVar

from kronika.core.model import MemoryItem, Reader, Scope

Item = TypeVar("Item", bound=MemoryItem)


class AudienceFields(TypedDict):
    """An audience as keywords: of a memory item, and of ``remember`` and ``note``."""

    scope: Scope
    user: str | None
    channel: str | None
    team: str | None


@dataclass(frozen=True, slots=True)
class Audience:
    """Who an item is for: its scope and the user, channel and team it names.

    ``Audience()`` is the workspace owner's personal memory (no user), the only
    audience kronika had before readers existed.
    """

    scope: Scope = Scope.PERSONAL
    user: str | None = None
    channel: str | None = None
    team: str | None = None

    @classmethod
    def of(cls, item: MemoryItem) -> Audience:
        return cls(item.scope, item.user, item.channel, item.team)

    def fields(self) -> AudienceFields:
        """The audience as the keywords of an item (``MemoryItem(..., **owners.fields())``)."""
        return {"scope": self.scope, "user": self.user, "channel": self.channel, "team": self.team}

    def describe(self) -> str:
        """The audience in words (``channel memory of #ops``)."""
        parts = [f"{self.scope.value} memory"]
        if self.user is not None:
            parts.append(f"of user {self.user}")
        if self.team is not None:
            parts.append(f"of team {self.team}")
        if self.channel is not None:
            parts.append(f"in #{self.channel.lstrip('#')}")
        return " ".join(parts)

    def readers(self) -> Audience:
        """This audience as far as who may read it goes: where something was said (its
        channel) decides who reads a ``channel`` item only; a personal, team or global
        one said in two channels is read by the same people (storage policies still
        see the channel it was said in)."""
        if self.scope is Scope.CHANNEL or self.channel is None:
            return self
        return replace(self, channel=None)

    def apply(self, item: Item) -> Item:
        """``item`` for this audience."""
        return replace(item, scope=self.scope, user=self.user, channel=self.channel, team=self.team)


OWNER = Audience()
"""The workspace owner's personal memory: items that name no user, channel or team."""


def audience(
    scope: Scope | str | None = None,
    *,
    user: str | None = None,
    channel: str | None = None,
    team: str | None = None,
) -> Audience:
    """The audience of a write from what it names.

    Without a ``scope``: ``team`` when a team is named, else ``channel`` when a channel
    is, else ``personal``. ``ValueError`` for an unknown scope, a team scope without a
    team or a channel scope without a channel (nobody could ever read them).
    """
    if scope is None:
        chosen = Scope.TEAM if team else Scope.CHANNEL if channel else Scope.PERSONAL
    else:
        chosen = Scope(scope)
    if chosen is Scope.TEAM and not team:
        raise ValueError("a team-scoped memory needs a team")
    if chosen is Scope.CHANNEL and not channel:
        raise ValueError("a channel-scoped memory needs a channel")
    return Audience(chosen, user, channel, team)


def reader_audience(reader: Reader | None) -> Audience:
    """Who what ``reader`` says is for: their channel when they are in one, else
    themselves (the owner's personal memory without a reader). Always visible to them."""
    if reader is None:
        return OWNER
    return audience(user=reader.user, channel=reader.channel)


def only_visible(items: Iterable[Item], reader: Reader | None) -> list[Item]:
    """The items ``reader`` may see, in order; all of them when there is no reader
    (maintenance, the workspace owner reading unrestricted)."""
    if reader is None:
        return list(items)
    return [item for item in items if visible(item, reader)]


def visible(item: MemoryItem, reader: Reader) -> bool:
    """Whether ``reader`` may see ``item`` (see the module docstring)."""
    if item.tenant != reader.tenant:
        return False
    if item.scope is Scope.GLOBAL:
        return True
    if item.scope is Scope.TEAM:
        return item.team is not None and item.team in reader.teams
    if item.scope is Scope.CHANNEL:
        return item.channel is not None and item.channel == reader.channel
    return item.user == reader.user
