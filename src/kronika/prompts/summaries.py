"""Summaries: the older part of a long conversation (L3), and L1/L2 archives (L7)."""

from __future__ import annotations

from typing import Any

from kronika.prompts.base import Prompt

_SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["summary"],
    "properties": {"summary": {"type": "string", "minLength": 1, "maxLength": 8000}},
}


def _coerce(value: Any) -> Any:
    """A bare string is taken as the summary; a list of sentences is joined."""
    if isinstance(value, str):
        return {"summary": value}
    if isinstance(value, dict) and isinstance(value.get("summary"), list):
        return {**value, "summary": " ".join(str(s) for s in value["summary"])}
    return value


ROLLING_SYSTEM = """\
You compress the older part of a conversation between the user and the assistant \
"{agent}" so the conversation can go on without losing the thread. Keep every \
fact, name, number, decision, open question and promise; drop greetings and \
repetition. Write at most {max_tokens} tokens, in the language of the conversation. \
A summary of an even earlier part may come first: fold it in.

Reply with JSON only: {{"summary": "..."}}"""

L1_SYSTEM = """\
You write an archive summary of {count} conversations between the user and the \
assistant "{agent}". Each conversation comes with its id, date and summary. Write \
3-5 short paragraphs on the main topics, decisions and progress, naming the \
conversation ids in brackets where each point comes from, e.g. [2026-02-15_001]. \
Use the language of the conversations.

Reply with JSON only: {{"summary": "..."}}"""

L2_SYSTEM = """\
You write a high-level summary of {count} archive summaries of conversations \
between the user and the assistant "{agent}". Write 2-3 paragraphs at a high level \
of abstraction: lasting themes, long-running projects, how things changed. Name \
the summaries in brackets where each point comes from, e.g. [L1_003]. Use the \
language of the summaries.

Reply with JSON only: {{"summary": "..."}}"""

ROLLING = Prompt(
    name="rolling-summary", version=1, system=ROLLING_SYSTEM, schema=_SUMMARY_SCHEMA, coerce=_coerce
)
L1 = Prompt(name="summary-l1", version=1, system=L1_SYSTEM, schema=_SUMMARY_SCHEMA, coerce=_coerce)
L2 = Prompt(name="summary-l2", version=1, system=L2_SYSTEM, schema=_SUMMARY_SCHEMA, coerce=_coerce)
