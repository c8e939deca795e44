"""The JSON shapes the server answers with (REST and MCP alike)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from kronika.core.model import MemoryItem, RecallResult
from kronika.core.serialize import item_to_dict
from kronika.engine.changes import Change, ForgetItems
from kronika.engine.proposals import Proposal, change_to_dict
from kronika.engine.write import WriteReceipt
from kronika.ports import AuditEntry

if TYPE_CHECKING:
    from kronika.engine.forgetting import ForgetReceipt


def items(found: Sequence[MemoryItem]) -> list[dict[str, Any]]:
    return [item_to_dict(item) for item in found]


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


def recall(result: RecallResult, *, explain: bool = False) -> dict[str, Any]:
    hits = []
    for hit in result.hits:
        entry: dict[str, Any] = {
            "item": item_to_dict(hit.item),
            "score": hit.score.total,
            "citation": hit.citation,
            "tokens": hit.tokens,
        }
        if explain:
            entry["explain"] = asdict(hit.score)
        hits.append(entry)
    return {
        "query": result.query,
        "hits": hits,
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
