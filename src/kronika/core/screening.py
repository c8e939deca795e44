"""Screening what is about to be written for secrets (the ``secrets`` setting).

``redact`` (the default) replaces every secret :func:`~kronika.core.secrets.find_secrets`
sees with its marker, ``[secret: openai-key]``; ``refuse`` raises :class:`InvalidInput`
naming the kinds found (never the value); ``allow`` keeps the text as it is. The write
path screens every change with these functions before anything reaches a file, so the
Markdown, the audit trail, proposals and the index derived from them hold the same
screened text, and so does whatever a command shows back.

Every stored text field is screened, not only the content: a fact's key, value and
Brain section, an item's tags and entity names, who said a turn, a session's title
and source. A field that *names* something — a session id (it becomes a file name), a
turn id, the user, channel or team an item belongs to — is never redacted, since a
marker would no longer name the same thing: holding a secret, it is refused
(:func:`screen_name`) unless ``secrets = "allow"``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from kronika.core.model import MemoryItem, SessionRecord, TurnRecord
from kronika.core.secrets import SecretSpan, find_secrets, redact_secrets
from kronika.errors import InvalidInput

MODES = ("redact", "refuse", "allow")
_NAMES = frozenset({"user", "channel", "team"})


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


def screen_name(name: str | None, mode: str, what: str) -> str | None:
    """``name`` unchanged, or :class:`InvalidInput` when it holds a secret (in ``redact``
    and ``refuse`` alike: a name is never redacted, see the module docstring)."""
    if mode == "allow" or not name:
        return name
    spans = _secrets_in(name)
    if spans:
        kinds = ", ".join(dict.fromkeys(span.kind for span in spans))
        raise InvalidInput(f"{what} holds a secret ({kinds}); name it without one")
    return name


def screen_words(words: tuple[str, ...], mode: str) -> tuple[str, ...]:
    """Tags or entity names: ``refuse`` raises for one holding a secret; ``redact``
    leaves it out (a marker is no use as a tag)."""
    if mode == "refuse":
        for word in words:
            screen_text(word, mode)
    return tuple(word for word in words if not _secrets_in(word))


def screen_item(item: MemoryItem, mode: str) -> MemoryItem:
    """``item`` with every text field screened: content, key, value, section, speaker,
    entities and tags; its user, channel, team, session id and turn ids are names
    (:func:`screen_name`).

    A keyed fact is screened as the line ``key: value`` it is written as, so a value
    such as ``hunter2`` is caught by its ``password`` key.
    """
    if mode == "allow":
        return item
    for name, what in (
        (item.user, "the user name"),
        (item.channel, "the channel name"),
        (item.team, "the team name"),
        (item.provenance.session_id, "the session id"),
        *((turn, "a turn id") for turn in item.provenance.turn_ids),
    ):
        screen_name(name, mode, what)
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
    section = screen_optional(item.section, mode)
    speaker = screen_optional(item.speaker, mode)
    entities = _kept_words(screen_words(item.entities, mode), item.content, content)
    tags = _kept_words(screen_words(item.tags, mode), item.content, content)
    screened = (content, key, value, section, speaker, entities, tags)
    if screened == (
        item.content,
        item.key,
        item.value,
        item.section,
        item.speaker,
        item.entities,
        item.tags,
    ):
        return item
    return replace(
        item,
        content=content,
        key=key,
        value=value,
        section=section,
        speaker=speaker,
        entities=entities,
        tags=tags,
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
    """The turn's words and who said them screened; its id is a name."""
    if mode == "allow":
        return turn
    screen_name(turn.turn_id, mode, "a turn id")
    content, speaker = screen_text(turn.content, mode), screen_text(turn.speaker, mode)
    if (content, speaker) == (turn.content, turn.speaker):
        return turn
    return replace(turn, content=content, speaker=speaker)


def screen_session(session: SessionRecord, mode: str) -> SessionRecord:
    if mode == "allow":
        return session
    screen_name(session.session_id, mode, "the session id")
    return replace(
        session,
        turns=tuple(screen_turn(turn, mode) for turn in session.turns),
        title=screen_optional(session.title, mode),
        source=screen_optional(session.source, mode),
    )


def screen_fields(
    fields: tuple[tuple[str, str | None], ...], mode: str
) -> tuple[tuple[str, str | None], ...]:
    """Header fields (a session's ``summary``…) with their values screened; the
    ``user``, ``channel`` and ``team`` a session is for are names (:func:`screen_name`)."""
    return tuple(
        (name, screen_name(value, mode, f"the {name} name"))
        if name in _NAMES
        else (name, screen_optional(value, mode))
        for name, value in fields
    )


__all__ = [
    "MODES",
    "screen_fields",
    "screen_item",
    "screen_name",
    "screen_optional",
    "screen_session",
    "screen_text",
    "screen_turn",
    "screen_words",
]
