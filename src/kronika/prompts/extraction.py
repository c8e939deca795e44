"""Session-end extraction (SPEC L6): the facts worth keeping and a session summary.

Version 2 adds the ``WORLD`` tag: general knowledge the conversation taught, kept as
a world note (``W``, semantic memory, SPEC M4/M6) instead of a Brain fact."""

from __future__ import annotations

import re
from typing import Any

from kronika.prompts.base import Prompt

TAGS = ("CORE", "PREFERENCE", "DECISION", "PROJECT", "WORLD", "UPDATE", "DELETE", "SKIP")
SECTION_OF_TAG = {
    "CORE": "User",
    "PREFERENCE": "Preferences",
    "DECISION": "Decisions",
    "PROJECT": "Current",
}

SYSTEM = """\
You maintain the long-term memory of the assistant "{agent}". Read the conversation \
the user sends and pick ONLY the facts worth remembering for future conversations.

The assistant's current Brain (what it already knows; each line is "key: value"):
{brain}

Tag every fact:
- CORE: who the user is (name, work, family, where they live, life situation)
- PREFERENCE: how the user likes things (style, language, habits, tastes)
- DECISION: agreements and rules ("always do X", "never Y")
- PROJECT: current projects, goals, progress
- WORLD: something true of the world beyond the user that will matter again (how a \
system they use behaves, a place, a rule of their team); its value is one \
self-contained sentence
- UPDATE: the user corrected or changed a fact already in the Brain; give that fact's \
key in "replaces" and the new value
- DELETE: the user asked to forget something; give the key of the Brain fact in \
"replaces" (value may be empty)
- SKIP: not worth remembering (one-off moods, technical details, temporary context)

How important something is:
- the user corrects themselves or the assistant, or says "remember": highest
- personal information, or something repeated from earlier sessions: high
- a decision or agreement: medium
- one-off context or technical detail: SKIP

Rules:
- At most {max_facts} facts, fewer is better. Never invent anything that was not said.
- If a new fact contradicts a fact in the Brain, tag it UPDATE, never add it beside \
the old one.
- Parts the user asked not to remember must not appear in facts or in the summary.
- Each value is one short, self-contained statement about the user, in the language \
the user spoke. Each key is a short lower-case label such as "name", "city", \
"favourite_language".
- Also write a summary of the session in 3-5 sentences for the next conversation \
(what was discussed, decided and left open), in the language the user spoke.

Reply with JSON only, in this shape:
{{"facts": [{{"tag": "CORE", "key": "name", "value": "The user's name is Ana.", \
"replaces": null}}], "summary": "..."}}"""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["facts", "summary"],
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "required": ["tag", "key", "value"],
                "properties": {
                    "tag": {"type": "string", "enum": list(TAGS)},
                    "key": {"type": "string", "minLength": 1, "maxLength": 200},
                    "value": {"type": "string", "maxLength": 2000},
                    "replaces": {"type": ["string", "null"], "maxLength": 200},
                },
            },
        },
        "summary": {"type": "string", "minLength": 1, "maxLength": 4000},
    },
}

_KEY_JUNK = re.compile(r"[^\w-]+")


def coerce(value: Any) -> Any:
    """Normalise near-misses: ``"[core]"`` → ``CORE``, ``"Favourite Food"`` →
    ``favourite_food``, a missing ``facts`` list → ``[]``, ``null`` values → ``""``."""
    if not isinstance(value, dict):
        return value
    facts = value.get("facts")
    if facts is None:
        value = {**value, "facts": []}
        facts = []
    if isinstance(facts, list):
        fixed = []
        for fact in facts:
            if isinstance(fact, dict):
                fact = dict(fact)
                if isinstance(fact.get("tag"), str):
                    fact["tag"] = fact["tag"].strip().strip("[]").strip().upper()
                if isinstance(fact.get("key"), str):
                    key = _KEY_JUNK.sub("_", fact["key"].strip().casefold()).strip("_")
                    fact["key"] = key or fact["key"].strip()
                if fact.get("value") is None:
                    fact["value"] = ""
            fixed.append(fact)
        value = {**value, "facts": fixed}
    if isinstance(value.get("summary"), list):
        value = {**value, "summary": " ".join(str(s) for s in value["summary"])}
    return value


EXTRACTION = Prompt(name="extraction", version=2, system=SYSTEM, schema=SCHEMA, coerce=coerce)
