"""Evaluating an action and reflecting on it (SPEC F2): the LLM evaluator and reflector."""

from __future__ import annotations

from typing import Any

from kronika.prompts.base import Prompt

EVALUATOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["is_ok", "reasons", "score"],
    "properties": {
        "is_ok": {"type": "boolean"},
        "reasons": {"type": "array", "items": {"type": "string", "maxLength": 500}},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    },
}

REFLECTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["reflection_text", "importance", "confidence"],
    "properties": {
        "reflection_text": {"type": "string", "minLength": 1, "maxLength": 1000},
        "strategy_text": {"type": ["string", "null"], "maxLength": 1000},
        "importance": {"type": "number", "minimum": 0, "maximum": 1},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 60}},
    },
}


def _coerce_evaluation(value: Any) -> Any:
    """``reasons`` as one string becomes a list; a score given in percent is scaled."""
    if isinstance(value, dict):
        value = dict(value)
        if isinstance(value.get("reasons"), str):
            value["reasons"] = [value["reasons"]]
        score = value.get("score")
        if isinstance(score, int | float) and not isinstance(score, bool) and 1 < score <= 100:
            value["score"] = score / 100
    return value


def _coerce_reflection(value: Any) -> Any:
    """An empty strategy is no strategy; tags given as one string are split."""
    if isinstance(value, dict):
        value = dict(value)
        if value.get("strategy_text") == "":
            value["strategy_text"] = None
        if isinstance(value.get("tags"), str):
            value["tags"] = [t.strip() for t in value["tags"].split(",") if t.strip()]
    return value


EVALUATOR_SYSTEM = """\
You judge how an action of the assistant "{agent}" went. You get the task, what was \
done and what came of it. Decide whether it succeeded, give a score from 0 (failed \
completely) to 1 (fully done), and list the concrete reasons (error messages, \
missing parts), most important first.

Reply with JSON only: {{"is_ok": true|false, "reasons": ["..."], "score": 0.0}}"""

REFLECTOR_SYSTEM = """\
You help the assistant "{agent}" learn from what it did. You get a task, the action \
taken, how it went and why. Write one reflection: what went wrong (or, after earlier \
failures, what finally worked) and the likely cause, in one or two plain sentences \
that make sense without this conversation. If a different way of acting would \
avoid the problem next time, write it as a strategy: one imperative sentence. Do not \
invent facts that are not in the material. Rate how important the lesson is and how \
sure you are, from 0 to 1.

Reply with JSON only: {{"reflection_text": "...", "strategy_text": "..." or null, \
"importance": 0.0, "confidence": 0.0, "tags": ["..."]}}"""

EVALUATOR = Prompt(
    name="evaluator",
    version=1,
    system=EVALUATOR_SYSTEM,
    schema=EVALUATOR_SCHEMA,
    coerce=_coerce_evaluation,
)
REFLECTOR = Prompt(
    name="reflector",
    version=1,
    system=REFLECTOR_SYSTEM,
    schema=REFLECTOR_SCHEMA,
    coerce=_coerce_reflection,
)
