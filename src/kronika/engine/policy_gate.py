"""The storage policies at the write path's door (SPEC C4).

:meth:`~kronika.engine.write.MemoryWriter.memory_write` hands every change to
:func:`gate_change` before anything else happens to it. What the policies
(:mod:`kronika.core.policies`) say of the change's item decides:

* **keep** — the change goes on unchanged;
* **shorten** — a fact that may not stay in long-term memory is kept as a mid-term note
  in the daily log instead (same text, time, scope, channel and user); anything that
  would have to go below that tier is refused, as nothing shorter holds it;
* **refuse** — nothing is written: the receipt and the audit trail carry the reason,
  never the refused text.

A single item that is already past its retention when written (a fact, note or turn
dated long ago) is refused too. A whole imported session is checked as short-term memory
of its agent and tenant; its turns' ages, like everything the policies stop allowing
later, are left to the purge job (:mod:`kronika.engine.purge`). Forgetting, archiving,
session bookkeeping and restoring files are never held back.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Scope, Tier
from kronika.core.policies import Keep, Refuse, Shorten, StoragePolicies, Subject, decide
from kronika.engine.changes import (
    AddFact,
    AppendNote,
    AppendTurn,
    Change,
    SupersedeFact,
    TouchFact,
    WriteSession,
    WriteSummary,
)


@dataclass(frozen=True, slots=True)
class Refused:
    """The policies do not let the change be stored; ``reason`` says which and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Gated:
    """The change to make (perhaps in a shorter tier than asked, then ``reason`` says so)."""

    change: Change
    reason: str | None = None


def gate_change(
    change: Change, agent: str, tenant: str, policies: StoragePolicies, now: datetime
) -> Gated | Refused:
    """What the storage ``policies`` let become of ``change`` at ``now`` (module docstring)."""
    if policies.empty:
        return Gated(change)
    match change:
        case AddFact(item) | TouchFact(item) | SupersedeFact(_, item):
            return _fact(change, item, policies, now)
        case AppendNote(item):
            return _single(change, Subject.of(item), policies, now)
        case AppendTurn(_, turn, started_at, header):
            fields = dict(header)
            subject = Subject(
                tenant=tenant,
                agent=agent,
                tier=Tier.SHORT,
                created_at=turn.at or started_at,
                scope=_scope(fields.get("scope")),
                channel=fields.get("channel"),
                user=fields.get("user"),
            )
            return _single(change, subject, policies, now)
        case WriteSession(session):
            subject = Subject(tenant, agent, Tier.SHORT, session.started_at)
            return _whole(change, subject, policies)
        case WriteSummary():
            return _whole(change, Subject(tenant, agent, Tier.MID, now), policies)
        case _:
            return Gated(change)


def _fact(
    change: Change, item: MemoryItem, policies: StoragePolicies, now: datetime
) -> Gated | Refused:
    decision = decide(policies, Subject.of(item))
    match decision:
        case Shorten(Tier.MID, expires_at, reason):
            if _expired(expires_at, now):
                return Refused(f"{reason}, and there it is past its retention already")
            return Gated(AppendNote(as_note(item)), f"{reason}: kept as a note")
        case Shorten(_, _, reason):
            return Refused(f"{reason}; a fact cannot be kept as a conversation turn")
    return _settle(change, decision, now)


def _single(
    change: Change, subject: Subject, policies: StoragePolicies, now: datetime
) -> Gated | Refused:
    decision = decide(policies, subject)
    if isinstance(decision, Shorten):
        return Refused(f"{decision.reason}; nothing shorter holds it")
    return _settle(change, decision, now)


def _whole(change: Change, subject: Subject, policies: StoragePolicies) -> Gated | Refused:
    decision = decide(policies, subject)
    if isinstance(decision, Refuse | Shorten):
        return Refused(decision.reason)
    return Gated(change)


def _settle(change: Change, decision: Keep | Refuse, now: datetime) -> Gated | Refused:
    match decision:
        case Refuse(reason):
            return Refused(reason)
        case Keep(expires_at, because) if _expired(expires_at, now):
            assert expires_at is not None
            return Refused(
                f"it would expire {expires_at.date().isoformat()}, before it is written "
                f"({'; '.join(because)})"
            )
    return Gated(change)


def _expired(expires_at: datetime | None, now: datetime) -> bool:
    return expires_at is not None and expires_at <= now


def _scope(value: str | None) -> Scope:
    try:
        return Scope(value) if value else Scope.PERSONAL
    except ValueError:
        return Scope.PERSONAL


def as_note(fact: MemoryItem) -> MemoryItem:
    """``fact`` as a mid-term note in the daily log of the day it was said."""
    # a fresh id: a refreshed fact (said again) keeps its own, and may be said many times
    return replace(
        fact,
        id=f"n-{secrets.token_hex(6)}",
        type=ItemType.NOTE,
        layer=Layer.LONG_TERM,
        tier=Tier.MID,
        provenance=Provenance(path=f"memory/{fact.created_at.date().isoformat()}.md"),
        section="Retain",
        key=None,
        value=None,
        multi=False,
        valid_from=None,
        valid_to=None,
        superseded_by=None,
    )
