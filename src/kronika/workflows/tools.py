"""Memory as agent tools (SPEC C2): ``remember``, ``forget``, ``recall``, ``memory_update``
and ``retain`` (a typed note in today's log, SPEC M6).

:data:`TOOLS` holds their JSON schemas in the OpenAI function-calling format (also
what an MCP server lists); :func:`call_tool` runs one call and never raises for a bad
call — the model gets ``{"ok": false, "error": …}`` back and can try again. Calls are
made *as the agent* (``source_agent`` = the agent), so its autonomy level applies:
at level 1 a change comes back ``"outcome": "proposed"``, at level 0 it is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kronika.core.model import Source
from kronika.core.prompt import fact_line
from kronika.core.query import RecallQuery
from kronika.engine.proposals import fact_of
from kronika.errors import KronikaError
from kronika.memory import Memory
from kronika.providers.jsonout import validate

_SECTIONS = ["User", "Preferences", "Decisions", "Current"]

PARAMETERS: dict[str, dict[str, Any]] = {
    "remember": {
        "type": "object",
        "properties": {
            "value": {
                "type": "string",
                "description": "The fact, one short self-contained statement about the user.",
                "minLength": 1,
            },
            "key": {
                "type": "string",
                "description": "A short label such as 'name' or 'favourite_language'; a new "
                "value for an existing key replaces the old one (kept as history).",
            },
            "section": {"type": "string", "enum": _SECTIONS},
        },
        "required": ["value"],
        "additionalProperties": False,
    },
    "forget": {
        "type": "object",
        "properties": {
            "key": {
                "type": "string",
                "description": "Forget every value of this fact key (with 'value': only that one).",
            },
            "value": {
                "type": "string",
                "description": "Forget only the facts holding this value; the key's other "
                "values stay.",
            },
            "topic": {
                "type": "string",
                "description": "Forget the facts about this topic (words of the key or value, "
                "or a section name).",
            },
            "id": {"type": "string", "description": "Forget the memory item with this id."},
        },
        "additionalProperties": False,
    },
    "recall": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "k": {"type": "integer", "minimum": 1, "maximum": 50},
            "since": {"type": "string", "description": "e.g. '30d', '2025-11-01'"},
            "until": {"type": "string"},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "memory_update": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "update", "delete"]},
            "key": {"type": "string", "minLength": 1},
            "value": {
                "type": "string",
                "description": "For delete: only this value of the key is forgotten.",
            },
            "section": {"type": "string", "enum": _SECTIONS},
        },
        "required": ["action", "key"],
        "additionalProperties": False,
    },
    "retain": {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": "One self-contained sentence; mention people and things as @Name.",
                "minLength": 1,
            },
            "kind": {
                "type": "string",
                "enum": ["W", "B", "O", "S"],
                "description": "W a fact about the world, B what you did (first person), "
                "O an opinion (give its confidence), S an observation or summary.",
            },
            "confidence": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "How sure the opinion is (kind O only).",
            },
        },
        "required": ["text", "kind"],
        "additionalProperties": False,
    },
}

DESCRIPTIONS = {
    "remember": "Store a lasting fact about the user in long-term memory, at once.",
    "forget": "Delete facts from long-term memory (by key, value, topic or id) and redact "
    "them from past conversations and summaries. An agent at autonomy 1 only proposes it.",
    "recall": "Search long-term memory (facts, notes, old conversations, summaries).",
    "memory_update": "Add, update (replace the value of) or delete a keyed fact.",
    "retain": "Note what you learned or did in today's log, typed: world fact, your own "
    "experience, opinion with confidence, or observation.",
}

TOOLS: tuple[dict[str, Any], ...] = tuple(
    {
        "type": "function",
        "function": {"name": name, "description": DESCRIPTIONS[name], "parameters": params},
    }
    for name, params in PARAMETERS.items()
)


def call_tool(
    memory: Memory, agent: str, name: str, arguments: str | Mapping[str, Any]
) -> dict[str, Any]:
    """Run tool ``name`` for ``agent`` with ``arguments`` (JSON text or a mapping)."""
    if name not in PARAMETERS:
        return {"ok": False, "error": f"unknown tool {name!r}; tools: {', '.join(PARAMETERS)}"}
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
    except json.JSONDecodeError as exc:
        return {"ok": False, "error": f"arguments are not valid JSON: {exc}"}
    errors = validate(args, PARAMETERS[name])
    if errors:
        return {"ok": False, "error": "; ".join(errors)}
    try:
        return _run(memory, agent, name, args)
    except KronikaError as exc:
        return {"ok": False, "error": str(exc)}


def _run(memory: Memory, agent: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name == "recall":
        asked = RecallQuery(
            args["query"],
            agent=agent,
            k=args.get("k", 5),
            since=args.get("since"),
            until=args.get("until"),
        )
        result = memory.recall(asked)
        return {
            "ok": True,
            "results": [
                {
                    "id": hit.item.id,
                    "kind": hit.item.type.value,
                    "when": hit.item.created_at.isoformat(),
                    "content": hit.item.content,
                    "citation": hit.citation,
                    "score": round(hit.score.total, 4),
                }
                for hit in result.hits
            ],
        }
    if name == "forget" or (name == "memory_update" and args["action"] == "delete"):
        return _forget(memory, agent, args)
    if name == "retain":
        noted = memory.note(
            args["text"],
            agent=agent,
            kind=args["kind"],
            confidence=args.get("confidence"),
            source_agent=agent,
        )
        return {
            "ok": True,
            "outcome": noted.outcome,
            "id": noted.item.id if noted.item is not None else None,
            "proposal": noted.proposal,
        }
    value = args.get("value", "")
    if not value.strip():
        return {"ok": False, "error": "value is empty"}
    receipt = memory.remember(
        key=args.get("key"),
        value=value,
        agent=agent,
        section=args.get("section"),
        multi=name == "memory_update" and args["action"] == "add",
        source=Source.EXPLICIT if name == "remember" else Source.AUTO,
        source_agent=agent,
        tags=("tool",),
    )
    stored = receipt.item or fact_of(receipt.change)  # screened for secrets, as written
    return {
        "ok": True,
        "outcome": receipt.outcome,
        "id": receipt.item.id if receipt.item is not None else None,
        "proposal": receipt.proposal,
        "stored": fact_line(stored)[2:] if stored is not None else None,
    }


def _forget(memory: Memory, agent: str, args: dict[str, Any]) -> dict[str, Any]:
    named = [k for k in ("key", "value", "topic", "id") if args.get(k)]
    if named not in (["key"], ["value"], ["topic"], ["id"], ["key", "value"]):
        return {
            "ok": False,
            "error": "give exactly one of key, value, topic or id (or a key and its value)",
        }
    receipt = memory.forget(
        args.get("id"),
        key=args.get("key"),
        value=args.get("value"),
        topic=args.get("topic"),
        agent=agent,
        source_agent=agent,
    )
    lines = [fact_line(f)[2:] for f in receipt.items]
    if not receipt.applied:
        return {
            "ok": True,
            "outcome": receipt.outcome,
            "proposal": receipt.proposal,
            "forgotten": [],
            "would_forget": lines,
            "message": "nothing is forgotten yet: this waits for the person's approval",
        }
    return {
        "ok": True,
        "outcome": receipt.outcome,
        "forgotten": lines,
        "places": [p.path for p in receipt.places],
        "redacted": list(receipt.phrases),
    }


__all__ = ["DESCRIPTIONS", "PARAMETERS", "TOOLS", "call_tool"]
