"""The JSON of kronika's public results, and back: one function per result object
puts it into JSON (``wire.recall(result)``) and one reads it back
(``wire.recall_from_json(data)``), so each object has one shape everywhere.

The REST API and MCP answer with these (:mod:`kronika.server.responses` describes each
shape as a model, what ``/openapi.json`` shows), :class:`kronika.client.Client` reads
them back with the ``*_from_json`` functions, the browser UI reads them from REST, and
the command line's ``--json`` prints them: an item (``kronika list``, ``get``,
``history``, ``show archive``), a write receipt (``remember``, ``note``, ``proposals
approve``), a forget receipt (``forget``), a recall (``recall``, with each hit's
``explain``), a proposal (``proposals list|reject``) and an audit entry (``logs
audit``).

Reading back gives the object that was sent, except what stays with the server: a
write receipt's ``paths`` (files of the server's store) come back empty, and so do a
forget receipt's ``phrases`` and a forget change's ``phrases`` and ``keep`` (the text
looked for is never written or sent). A hit is read back only with its ``explain``
(the score's parts): without it there is only the total.

Where the command line printed a shape of its own before, it prints this one with the
keys it printed then beside it, same names and same values, kept for scripts for one
more release (docs/cli.md lists them):

- a recall hit: ``id``, ``kind``, ``timestamp``, ``entities``, ``speaker``, ``key``,
  ``content``, ``retain``, ``confidence``, ``turn_ids``, ``relevance``,
  ``importance``, ``recency``, ``rerank_score``, ``status``, ``valid_from``,
  ``valid_to`` and ``history`` (the hit's item and score parts, flat); besides, each
  hit carries its ``links``, which only the command line looks up;
- a proposal: ``when`` (``created_at``) and ``change`` (``summary``);
- ``kronika proposals approve``: ``approved``, the proposal's id (REST answers
  ``{"approved": <receipt>}``);
- a refused write: ``policy`` says "a storage policy refused it" where the receipt
  names no policy;
- an audit entry: ``agent``, ``by`` and ``item`` (``target_agent``, ``source_agent``,
  ``item_id``).

An API key (``kronika keys … --json``) keeps its own shape: the workspace's owner also
sees its label and dates, which the server does not show a key's holder
(``kronika.server.views``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kronika.core.model import MemoryItem, RecallHit, RecallResult, ScoreParts
from kronika.core.serialize import item_from_dict, item_to_dict
from kronika.engine.changes import Change, ForgetItems
from kronika.engine.proposals import Proposal, change_from_dict, change_to_dict
from kronika.engine.write import SavedTurn, WriteReceipt
from kronika.ports import AuditEntry

if TYPE_CHECKING:
    from kronika.engine.forgetting import ForgetReceipt
    from kronika.stores.markdown.sessions import SessionHeader

JSON = Mapping[str, Any]
"""A JSON object as :func:`json.loads` gives it."""


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


def audit_entry(entry: AuditEntry) -> dict[str, Any]:
    return {**asdict(entry), "at": entry.at.isoformat()}


def audit(entries: Sequence[AuditEntry]) -> list[dict[str, Any]]:
    return [audit_entry(entry) for entry in entries]


def turn_receipt(session_id: str, made: SavedTurn) -> dict[str, Any]:
    return {"session_id": session_id, "turn_id": str(made), "outcome": made.outcome,
            "proposal": made.proposal, "policy": made.policy}  # fmt: skip


def turn_receipts(session_id: str, made: Sequence[SavedTurn]) -> dict[str, Any]:
    return {"session_id": session_id, "turns": [turn_receipt(session_id, t) for t in made]}


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


# ------------------------------------------------------------------------- and back
# Each reads what the function of the same name made; a missing field is a KeyError, a
# field of the wrong kind a ValueError or TypeError (kronika.client turns each into a
# ServerError naming the answer it could not read).


def item_from_json(data: JSON) -> MemoryItem:
    return item_from_dict(dict(data))


def items_from_json(data: Sequence[JSON]) -> list[MemoryItem]:
    return [item_from_dict(dict(one)) for one in data]


def change_from_json(data: JSON) -> Change:
    return change_from_dict(data)


def write_receipt_from_json(data: JSON) -> WriteReceipt:
    """The receipt; its ``paths`` (files of the server's store) are not sent: empty."""
    found = data.get("item")
    return WriteReceipt(
        outcome=str(data["outcome"]),
        change=change_from_dict(data["detail"]),
        item=item_from_json(found) if found is not None else None,
        paths=(),
        proposal=_text_or_none(data.get("proposal")),
        notes=tuple(str(n) for n in data.get("notes", ())),
        policy=_text_or_none(data.get("policy")),
    )


def forget_receipt_from_json(data: JSON) -> ForgetReceipt:
    """The receipt; its ``phrases`` (the text looked for) are never sent: empty."""
    from kronika.engine.forgetting import ForgetReceipt
    from kronika.engine.redacting import ForgetPlace

    index = data.get("index", {})
    return ForgetReceipt(
        outcome=str(data["outcome"]),
        agent=str(data["agent"]),
        items=tuple(items_from_json(data["forgotten"])),
        places=tuple(
            ForgetPlace(str(p["path"]), str(p["action"]), int(p["count"]), int(p["lines"]))
            for p in data["places"]
        ),
        index_removed=int(index.get("removed", 0)),
        index_rewritten=int(index.get("rewritten", 0)),
        audit_redacted=int(data.get("audit_redacted", 0)),
        proposal=_text_or_none(data.get("proposal")),
    )


def hit_from_json(data: JSON) -> RecallHit:
    """A hit sent with its ``explain`` (the score's parts; ValueError without them)."""
    parts = data.get("explain")
    if not isinstance(parts, Mapping):
        raise ValueError("a recall hit without `explain` holds only its total score")
    return RecallHit(item_from_json(data["item"]), ScoreParts(**parts), int(data["tokens"]))


def recall_from_json(data: JSON) -> RecallResult:
    """A recall sent with each hit's ``explain`` (see :func:`hit_from_json`)."""
    budget = data.get("budget_tokens")
    return RecallResult(
        query=str(data["query"]),
        hits=tuple(hit_from_json(one) for one in data["hits"]),
        total_tokens=int(data["total_tokens"]),
        budget_tokens=int(budget) if budget is not None else None,
        candidates=int(data["candidates"]),
        dropped_for_budget=int(data.get("dropped_for_budget", 0)),
        notes=tuple(str(n) for n in data.get("notes", ())),
    )


def proposal_from_json(data: JSON) -> Proposal:
    return Proposal(
        id=str(data["id"]),
        agent=str(data["agent"]),
        source_agent=str(data["from"]),
        created_at=datetime.fromisoformat(data["created_at"]),
        section=str(data["section"]),
        summary=str(data["summary"]),
        change=change_from_dict(data["detail"]),
        status=str(data["status"]),
    )


def audit_entry_from_json(data: JSON) -> AuditEntry:
    return AuditEntry(
        at=datetime.fromisoformat(data["at"]),
        action=str(data["action"]),
        target_agent=str(data["target_agent"]),
        source_agent=str(data["source_agent"]),
        section=str(data["section"]),
        item_id=_text_or_none(data.get("item_id")),
        summary=str(data["summary"]),
        outcome=str(data["outcome"]),
        api_key=_text_or_none(data.get("api_key")),
        user=_text_or_none(data.get("user")),
    )


def audit_from_json(data: Sequence[JSON]) -> list[AuditEntry]:
    return [audit_entry_from_json(one) for one in data]


def turn_receipt_from_json(data: JSON) -> SavedTurn:
    return SavedTurn(
        str(data["turn_id"]),
        str(data["outcome"]),
        _text_or_none(data.get("proposal")),
        _text_or_none(data.get("policy")),
    )


def turn_receipts_from_json(data: JSON) -> list[SavedTurn]:
    return [turn_receipt_from_json(turn) for turn in data["turns"]]


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)
