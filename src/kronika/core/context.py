"""What one conversation turn sends the model (SPEC L2, L3, M1, I6), as pure functions.

The payload is one system message — identity, the ``<memory>`` block of Brain facts,
the last session's summary, what was recalled from the archive, lessons learned —
followed by the conversation window: a summary of its older part (when there is one)
and the latest messages word for word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kronika.core.model import MemoryItem
from kronika.core.prompt import MEMORY_NOTE, delimited, memory_line, quote

Count = Callable[[str], int]
MESSAGE_OVERHEAD = 4
"""Tokens a chat message costs beyond its text (role and separators)."""


@dataclass(frozen=True, slots=True)
class WindowMessage:
    """A message in the rolling window; ``index`` is its turn number in the session."""

    role: str  # user | assistant
    content: str
    index: int


def fit_tokens(text: str, budget: int, count: Count) -> str:
    """``text`` cut at a word boundary (marked with …) so it costs at most ``budget``."""
    if count(text) <= budget:
        return text
    words = text.split()
    while words and count(" ".join(words) + "…") > budget:
        words = words[: len(words) * 9 // 10]
    return " ".join(words) + "…" if words else ""


def fit_lines(lines: Sequence[str], budget: int, count: Count) -> list[str]:
    """The leading ``lines`` whose total (one newline each) fits ``budget`` tokens."""
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = count(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return kept


def recalled_line(item: MemoryItem) -> str:
    """``- [message 2025-11-27 by user sessions/…md#L12] text``: a
    :func:`~kronika.core.prompt.memory_line` with its citation."""
    return memory_line(item, cite=True)


def system_prompt(
    *,
    identity: str,
    memory_block: str,
    active_context: str,
    recalled: Sequence[str],
    lessons: Sequence[str],
) -> str:
    """The system message; empty parts leave no heading behind.

    Remembered text stands in delimited blocks (``<memory>``, ``<last_conversation>``,
    ``<recalled>``, ``<lessons>``) after :data:`~kronika.core.prompt.MEMORY_NOTE`,
    which tells the model it is data; ``recalled`` and ``lessons`` are
    :func:`~kronika.core.prompt.memory_line` lines."""
    last = quote(active_context)
    remembered = bool(memory_block or last or recalled or lessons)
    parts = [identity.strip(), MEMORY_NOTE if remembered else ""]
    if memory_block:
        parts.append(memory_block)
    if last:
        parts.append("## Last conversation\n" + delimited("last_conversation", [last]))
    if recalled:
        parts.append("## Recalled from earlier conversations\n" + delimited("recalled", recalled))
    if lessons:
        parts.append("## Lessons learned\n" + delimited("lessons", lessons))
    return "\n\n".join(p for p in parts if p)


def extractive_digest(
    messages: Sequence[WindowMessage], previous: str | None, budget: int, count: Count
) -> str:
    """A summary made without a model (L3 fallback): the earlier summary, then the lead
    sentence of every older message. When even that is over ``budget`` the oldest lines
    go first, and the digest says how many, so nothing is dropped silently."""
    lines = [f"{m.role}: {lead_sentence(m.content, 160)}" for m in messages]
    head = previous.strip() if previous and previous.strip() else ""
    dropped = 0

    def render() -> str:
        note = f"({dropped} earlier messages are in the saved transcript only.)" if dropped else ""
        return "\n".join(part for part in (head, note, *lines) if part)

    while lines and count(render()) > budget:
        lines.pop(0)  # the oldest go first: the latest lines matter most
        dropped += 1
    if count(render()) > budget and head:
        rest = count(render()) - count(head)
        head = fit_tokens(head, max(0, budget - rest), count)
    return render()


def lead_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of ``text`` (or its first ``limit`` characters, cut at a word)."""
    flat = " ".join(text.split())
    for mark in (". ", "? ", "! "):
        cut = flat.find(mark)
        if 0 < cut < limit:
            return flat[: cut + 1]
    return flat if len(flat) <= limit else flat[:limit].rsplit(" ", 1)[0] + "…"
