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
"""

from __future__ import annotations

from kronika.core.model import MemoryItem, Reader, Scope


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
