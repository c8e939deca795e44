"""Screening what is about to be written for secrets (the ``secrets`` setting).

``redact`` (the default) replaces every secret :func:`~kronika.core.secrets.find_secrets`
sees with its marker, ``[secret: openai-key]``; ``refuse`` raises :class:`InvalidInput`
naming the kinds found (never the value); ``allow`` keeps the text as it is. The write
path screens every change with these functions before anything reaches a file, so the
Markdown, the audit trail, proposals and the index derived from them hold the same
screened text, and so does whatever a command shows back.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from kronika.core.model import MemoryItem, SessionRecord, TurnRecord
from kronika.core.secrets import SecretSpan, find_secrets, redact_secrets
from kronika.errors import InvalidInput

MODES = ("redact", "refuse", "allow")


@lru_cache(maxsize=2048)
def _secrets_in(text: str) -> tuple[SecretSpan, ...]:
    """:func:`find_secrets`, kept for the texts seen last: a write screens the same
    text more than once (a fact's content is its ``key: value`` line; the write path
    screens again what the caller screened before its duplicate check)."""
    return find_secrets(text)


def screen_text(text: str, mode: str) -> str:
    """``text`` as ``mode`` wants it stored (see the module docstring)."""
    if mode == "allow" or not text:
        return text
    spans = _secrets_in(text)
    if not spans:
        return text
    if mode == "refuse":
        kinds = ", ".join(dict.fromkeys(span.kind for span in spans))
        raise InvalidInput(
            f"refusing to store a secret ({kinds}); take it out, or set secrets = "
            '"redact" (store a marker instead) or "allow" in kronika.toml'
        )
    return redact_secrets(text, spans)


def screen_optional(text: str | None, mode: str) -> str | None:
    return None if text is None else screen_text(text, mode)


def screen_item(item: MemoryItem, mode: str) -> MemoryItem:
    """``item`` with its content, key, value, entities and tags screened.

    A keyed fact is screened as the line ``key: value`` it is written as, so a value
    such as ``hunter2`` is caught by its ``password`` key.
    """
    if mode == "allow":
        return item
    content = screen_text(item.content, mode)
    key, value = item.key, item.value
    if key is not None and value is not None:
        line = screen_text(f"{key}: {value}", mode)
        if line.startswith(f"{key}: "):
            value = line[len(key) + 2 :]
        else:  # the key itself held a secret
            key, value = screen_text(key, mode), screen_text(value, mode)
    else:
        key, value = screen_optional(key, mode), screen_optional(value, mode)
    if (content, key, value) == (item.content, item.key, item.value):
        return item
    return replace(
        item,
        content=content,
        key=key,
        value=value,
        entities=_kept_words(item.entities, item.content, content),
        tags=_kept_words(item.tags, item.content, content),
    )


def _kept_words(words: tuple[str, ...], before: str, after: str) -> tuple[str, ...]:
    """The entity names or tags that were not taken out with a secret: a word of the
    original text missing from the screened one went with it."""
    kept = []
    for word in words:
        folded = word.casefold()
        if folded in before.casefold() and folded not in after.casefold():
            continue
        if find_secrets(word):
            continue
        kept.append(word)
    return tuple(kept)


def screen_turn(turn: TurnRecord, mode: str) -> TurnRecord:
    screened = screen_text(turn.content, mode)
    return turn if screened == turn.content else replace(turn, content=screened)


def screen_session(session: SessionRecord, mode: str) -> SessionRecord:
    if mode == "allow":
        return session
    return replace(
        session,
        turns=tuple(screen_turn(turn, mode) for turn in session.turns),
        title=screen_optional(session.title, mode),
    )


def screen_fields(
    fields: tuple[tuple[str, str | None], ...], mode: str
) -> tuple[tuple[str, str | None], ...]:
    """Header fields (a session's ``summary``…) with their values screened."""
    return tuple((name, screen_optional(value, mode)) for name, value in fields)


__all__ = [
    "MODES",
    "screen_fields",
    "screen_item",
    "screen_optional",
    "screen_session",
    "screen_text",
    "screen_turn",
]
