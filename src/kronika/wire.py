"""The JSON of kronika's public results, one function per result object, so each
object is put into JSON in one place: the REST API and MCP answer with these
(:mod:`kronika.server.responses` describes each shape as a model, what
``/openapi.json`` shows), :class:`kronika.client.Client` reads them back, and the
command line's ``--json`` prints the same for an item (``kronika list``, ``get``,
``history``, ``show archive`` and the ``item`` of a write) and a forget receipt
(``kronika forget --json``).

Where the command line printed a shape of its own before the server had one, it keeps
it: scripts read these, and docs/cli.md documents them.

- a recall (``kronika recall --json``, ``kronika.cli.render.recall_json``): each hit
  flat, the item's fields beside the score's parts, with its ``links``; here a hit
  is ``{"item", "score", "citation", "tokens"}`` (and ``explain``).
- a proposal (``kronika proposals list|reject --json``,
  ``kronika.cli.proposals.proposal_json``): ``when`` and ``change`` for
  ``created_at`` and ``summary``, without the change's ``detail``.
- a write receipt (``kronika remember``, ``note`` and ``proposals approve`` with
  ``--json``): what each command reports of it, without ``detail``.
- an audit entry (``kronika logs audit --json``): ``agent``, ``by`` and ``item`` for
  ``target_agent``, ``source_agent`` and ``item_id``, without the section, key and
  user.
- an API key (``kronika keys … --json``): for the workspace's owner also its label and
  dates, which the server does not show a key's holder (``kronika.server.views``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from kronika.core.model import MemoryItem, RecallHit, RecallResult
from kronika.core.serialize import item_to_dict
from kronika.engine.changes import Change, ForgetItems
from kronika.engine.proposals import Proposal, change_to_dict
from kronika.engine.write import WriteReceipt
from kronika.ports import AuditEntry

if TYPE_CHECKING:
    from kronika.engine.forgetting import ForgetReceipt
    from kronika.engine.write import SavedTurn
    from kronika.stores.markdown.sessions import SessionHeader


def item(found: MemoryItem) -> dict[str, Any]:
    """Every field of the item, and its citation."""
    return item_to_dict(found)


def items(found: Sequence[MemoryItem]) -> list[dict[str, Any]]:
    return [item_to_dict(one) for one in found]


def change(found: Change) -> dict[str, Any]:
    """The change whole (``kronika.client`` rebuilds it), except the text a forget
    looked for: that is held in memory only, never written or sent."""
    if isinstance(found, ForgetItems):
        found = ForgetItems(found.items, ())
    return change_to_dict(found)


def write_receipt(receipt: WriteReceipt) -> dict[str, Any]:
    return {
        "outcome": receipt.outcome,
        "change": type(receipt.change).__name__,
        "item": item_to_dict(receipt.item) if receipt.item is not None else None,
        "proposal": receipt.proposal,
        "notes": list(receipt.notes),
        "policy": receipt.policy,
        "detail": change(receipt.change),
    }


def forget_receipt(receipt: ForgetReceipt) -> dict[str, Any]:
    """The forgotten items, then every place touched (as ``kronika forget --json``)."""
    return {
        "outcome": receipt.outcome,
        "agent": receipt.agent,
        "proposal": receipt.proposal,
        "forgotten": items(receipt.items),
        "places": [
            {"path": p.path, "action": p.action, "count": p.count, "lines": p.lines}
            for p in receipt.places
        ],
        "index": {"removed": receipt.index_removed, "rewritten": receipt.index_rewritten},
        "audit_redacted": receipt.audit_redacted,
    }


def hit(found: RecallHit, *, explain: bool = False) -> dict[str, Any]:
    """A recalled item with its score (``explain``: and the parts of the score)."""
    entry: dict[str, Any] = {
        "item": item_to_dict(found.item),
        "score": found.score.total,
        "citation": found.citation,
        "tokens": found.tokens,
    }
    if explain:
        entry["explain"] = asdict(found.score)
    return entry


def recall(result: RecallResult, *, explain: bool = False) -> dict[str, Any]:
    return {
        "query": result.query,
        "hits": [hit(found, explain=explain) for found in result.hits],
        "total_tokens": result.total_tokens,
        "budget_tokens": result.budget_tokens,
        "candidates": result.candidates,
        "dropped_for_budget": result.dropped_for_budget,
        "notes": list(result.notes),
    }


def proposal(found: Proposal) -> dict[str, Any]:
    return {
        "id": found.id,
        "agent": found.agent,
        "from": found.source_agent,
        "created_at": found.created_at.isoformat(),
        "section": found.section,
        "summary": found.summary,
        "type": type(found.change).__name__,
        "status": found.status,
        "detail": change(found.change),
    }


def audit(entries: Sequence[AuditEntry]) -> list[dict[str, Any]]:
    return [{**asdict(entry), "at": entry.at.isoformat()} for entry in entries]


def turn_receipt(session_id: str, made: SavedTurn) -> dict[str, Any]:
    return {"session_id": session_id, "turn_id": str(made), "outcome": made.outcome,
            "proposal": made.proposal, "policy": made.policy}  # fmt: skip


def session(header: SessionHeader, turns: Sequence[MemoryItem]) -> dict[str, Any]:
    """A session as a list shows it: its header and how many turns, from when to when."""
    return {
        "session_id": header.session_id,
        "status": header.status,
        "turns": len(turns),
        "first_at": turns[0].created_at.isoformat(),
        "last_at": turns[-1].created_at.isoformat(),
        "fields": dict(header.fields),
    }
