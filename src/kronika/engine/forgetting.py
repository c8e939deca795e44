"""Forgetting: the one path every interface takes, and the receipt it gives back.

:meth:`kronika.Memory.forget` (used by the CLI, the agent tools, the memory commands
spoken in a conversation and consolidation) names what to forget in one of these ways:

* by **id** — that one item (a fact, a note, a turn, a summary); a turn also by the
  turn id ``save_turn`` returned (``<session>_<n>``);
* by **key** — every value the key ever had: Brain, archive and history;
* by **key and value**, or by **value** alone — only the facts holding that value (and the
  history entries that held it), so the key's other values stay;
* by **topic** — what a person says: "I prefer tea" names the fact the rule extractor
  would make of it; otherwise the topic's words are matched against keys and values
  (:func:`kronika.core.matching.topic_overlap`). Facts it matches *by value* are forgotten
  value by value; a topic that only names a key ("my job", "where I live") forgets
  the whole key; a section name ("preferences") forgets the section.
* by **subject** — any other topic, and the value of a statement ("I live in Valencia"
  → Valencia), also names a subject (:func:`topic_subject`): :func:`find_mentions`
  adds every fact (in any fact file, in any wording) and note that mentions it in any
  inflected form (:mod:`kronika.core.subjects`), an entity page named after it, and
  the sentences about it and the forms of its words as phrases to redact — of what the
  caller may see only; what they may not see is left as it is (``ForgetItems.keep``).

The items are then removed from their files, and their text — each fact's value and
the sentences it came from (:func:`forgotten_phrases`) — is redacted with
:data:`~kronika.core.redaction.MARKER` wherever else it is written: transcripts,
summaries, the Active Context, daily logs and entity pages, pending proposals and the
audit trail's summaries (see :mod:`kronika.engine.redacting`). All of this is one
``ForgetItems`` change through the single write path, so autonomy, grants and the
audit trail apply; the audit entry of a forget names ids, keys and counts, never the
forgotten text. The index syncs the touched files in the same call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from kronika.core.dedup import key_concept, same_text
from kronika.core.matching import topic_overlap, topic_section, words
from kronika.core.model import FACT_TYPES, MemoryItem
from kronika.core.redaction import MIN_PHRASE_CHARS, phrase_pattern
from kronika.core.subjects import Subject, forms, mentions, might_mention, sentences_about, subject
from kronika.core.text import normalize_key
from kronika.engine.lost import kept_copies
from kronika.engine.redacting import ForgetPlace
from kronika.engine.turn_ids import turn_named
from kronika.errors import InvalidInput, NotFound
from kronika.ports import IndexReads
from kronika.stores.markdown import sessions
from kronika.stores.markdown.files import read_source
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.workspace import MarkdownWorkspace

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
_SESSION_TAG = "session:"


# --------------------------------------------------------------------------- receipt
@dataclass(frozen=True, slots=True)
class ForgetReceipt:
    """What :meth:`kronika.Memory.forget` did.

    ``outcome`` is ``applied``, or ``proposed`` when an agent at autonomy 1 asked (then
    nothing was forgotten yet: ``proposal`` waits for the person's approval and
    ``places`` says what approving it would touch). ``items`` are the forgotten items.
    ``index_removed`` / ``index_rewritten`` count index rows deleted and rows indexed again
    with redacted text; ``audit_redacted`` counts audit entries whose summary was redacted.
    ``phrases`` is the text that was looked for (held in memory only, never written), so a
    caller can keep it out of what it writes next.
    """

    outcome: str
    agent: str
    items: tuple[MemoryItem, ...]
    places: tuple[ForgetPlace, ...]
    phrases: tuple[str, ...] = ()
    index_removed: int = 0
    index_rewritten: int = 0
    audit_redacted: int = 0
    proposal: str | None = None

    @property
    def applied(self) -> bool:
        return self.outcome == "applied"


# --------------------------------------------------------------------------- what to forget
def find_items(
    workspace: MarkdownWorkspace,
    index: IndexReads,
    agent: str,
    *,
    item_id: str | None = None,
    key: str | None = None,
    value: str | None = None,
    topic: str | None = None,
    may_see: Callable[[MemoryItem], bool] = lambda item: True,
) -> list[MemoryItem]:
    """The items a forget names (see the module docstring); :class:`NotFound` when none.
    A turn named by its turn id is looked for only among the items ``may_see``."""
    given = [n for n, v in (("id", item_id), ("key", key), ("topic", topic)) if v is not None]
    if (
        len(given) > 1
        or (given in (["id"], ["topic"]) and value is not None)
        or not (given or value is not None)
    ):
        raise InvalidInput(
            "forget needs one of: an item id, a key (optionally with a value), a value, or a topic"
        )
    for name, text in (("id", item_id), ("key", key), ("value", value), ("topic", topic)):
        if text is not None and not text.strip():
            raise InvalidInput(f"the {name} to forget is empty")
    current = workspace.brain_facts(agent) + workspace.archived_facts(agent)
    pool = current + workspace.fact_history(agent)
    if item_id is not None:
        found = [f for f in pool if f.id == item_id] or [
            it for it in index.get_items([item_id]) if it.agent == agent
        ]
        if not found:
            found = turn_named(workspace, index, agent, item_id, may_see)
        if not found:
            raise NotFound(f"no memory item {item_id!r} for agent {agent!r}")
        return found[:1]
    if topic is not None:
        found = facts_for_topic(topic, current, pool)
        if not found:
            raise NotFound(f"agent {agent!r} has nothing stored about {topic!r}")
        return found
    if key is not None:
        wanted = normalize_key(key)
        found = [f for f in pool if f.key and normalize_key(f.key) == wanted]
        if value is not None:
            found = [f for f in found if _same(f, value)]
        if not found:
            shown = f"key {key!r}" + (f" with value {value!r}" if value is not None else "")
            raise NotFound(f"agent {agent!r} has no fact with {shown}")
        return found
    found = [f for f in pool if _same(f, value or "")]
    if not found:
        raise NotFound(f"agent {agent!r} has no fact with the value {value!r}")
    return found


def facts_for_topic(
    topic: str, current: Sequence[MemoryItem], pool: Sequence[MemoryItem]
) -> list[MemoryItem]:
    """What a spoken topic names among ``pool`` (every fact file), with the history that
    goes with it; a section name takes the section's ``current`` facts (Brain and
    archive)."""
    from kronika.core.rules import fact_from_remember  # its phrase tables: when asked

    said = fact_from_remember(topic)
    if said.key != "note":
        exact = [f for f in pool if _holds(f, said.key, said.value)]
        if exact:
            return _with_history(exact, pool, whole_key=False)
    section = topic_section(topic)
    if section is not None:
        return _with_history([f for f in current if f.section == section.value], pool, True)
    scored = [(f, *topic_overlap(topic, f)) for f in pool]
    both = [f for f, on_key, on_value in scored if on_key and on_value]
    by_value = [f for f, _, on_value in scored if on_value]
    if both or by_value:
        return _with_history(both or by_value, pool, whole_key=False)
    by_key = [f for f, on_key, _ in scored if on_key]
    return _with_history(by_key, pool, whole_key=True)


def _with_history(
    facts: Sequence[MemoryItem], pool: Sequence[MemoryItem], whole_key: bool
) -> list[MemoryItem]:
    """``facts`` and every fact of ``pool`` with the same key (``whole_key``) or the same
    key and value, in ``pool`` order."""
    keep: set[str] = {f.id for f in facts}
    for fact in facts:
        if not fact.key:
            continue
        for other in pool:
            same_key = other.key and normalize_key(other.key) == normalize_key(fact.key)
            if same_key and (whole_key or _same(other, fact.value or "")):
                keep.add(other.id)
    return [f for f in pool if f.id in keep]


def _value(fact: MemoryItem) -> str:
    return (fact.value if fact.key else None) or fact.content


def _same(fact: MemoryItem, value: str) -> bool:
    """One value written two ways (case, spacing, punctuation: :func:`same_text`)."""
    return same_text(_value(fact), value)


def _holds(fact: MemoryItem, key: str, value: str) -> bool:
    """Whether ``fact`` is ``key: value``, its key written as is or naming the same
    concept (``nombre`` and ``name``: :func:`key_concept`)."""
    if not fact.key or not _same(fact, value):
        return False
    if normalize_key(fact.key) == normalize_key(key):
        return True
    concept = key_concept(fact.key)
    return concept is not None and concept == key_concept(key)


# --------------------------------------------------------------------------- a subject
_NOTE_KINDS = (SourceKind.DAILY_LOG, SourceKind.BANK, SourceKind.ENTITY, SourceKind.SENSORY)


@dataclass(frozen=True, slots=True)
class Mentions:
    """What is written about a subject: the ``items`` to forget (facts in any fact file,
    notes, an entity page named after it) and the ``phrases`` to redact elsewhere (the
    sentences about it in turns, summaries, the Active Context and lessons; every form
    of its name words), from what the caller may see only."""

    items: list[MemoryItem] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    asked: bool = False
    """Whether the only sentences about it ask to forget it (then nothing is stored)."""

    @property
    def found(self) -> bool:
        return bool(self.items) or (bool(self.phrases) and not self.asked)


def topic_subject(topic: str, pool: Sequence[MemoryItem]) -> Subject | None:
    """The subject a spoken topic names (:func:`kronika.core.subjects.subject`): the
    value of a statement ("I live in Valencia" → Valencia), else the topic's own words;
    ``None`` for a section name or a topic that only names a key ("my job")."""
    from kronika.core.rules import fact_from_remember

    said = fact_from_remember(topic)
    if said.key != "note":
        found = subject(said.value)
        return found or None
    if topic_section(topic) is not None:
        return None
    scored = [topic_overlap(topic, f) for f in pool]
    if any(k for k, _ in scored) and not any(v for _, v in scored):
        return None
    return subject(topic) or None


def find_mentions(
    workspace: MarkdownWorkspace,
    agent: str,
    about: Subject,
    may_see: Callable[[MemoryItem], bool],
) -> Mentions:
    """Every item and sentence about ``about`` that ``may_see`` lets the caller see."""
    found = Mentions()
    told: list[str] = []  # sentences about it that are not a request to forget it
    facts = workspace.brain_facts(agent) + workspace.archived_facts(agent)
    for fact in facts + workspace.fact_history(agent):
        said = f"{(fact.key or '').replace('_', ' ')} {_value(fact)} {fact.content}"
        if may_see(fact) and mentions(said, about):
            found.items.append(fact)
            found.phrases.extend(forms(said, about))
    folder = workspace.agent_dir(agent)
    for source in workspace.list_sources(agent):
        kind = classify(source.path)
        if kind is SourceKind.FACTS or kind is None:
            continue
        stem = PurePosixPath(source.path).stem
        named = forms(stem.replace("_", " "), about) if kind is SourceKind.ENTITY else []
        read = read_source(folder, source.path)
        if read is None or not (named or _might_name(read.text, about)):
            continue
        for item in workspace.parse_source(agent, source.path).items:
            if not may_see(item):
                continue
            if named or (kind in _NOTE_KINDS and mentions(item.content, about)):
                found.items.append(item)
            else:
                about_it = sentences_about(item.content, about)
                found.phrases.extend(about_it)
                told.extend(s for s in about_it if not _asks_to_forget(s))
            found.phrases.extend(forms(item.content, about))
        found.phrases.extend(named)
    for kept in kept_copies(workspace, agent):  # lost items kept under .corrupt/ for --fix
        for item in kept.items:
            if may_see(item) and mentions(item.content, about):
                about_it = sentences_about(item.content, about)
                found.phrases.extend(about_it + forms(item.content, about))
                told.extend(s for s in about_it if not _asks_to_forget(s))
    found.phrases[:] = list(dict.fromkeys(found.phrases))
    return replace(found, asked=not found.items and not told)


def _asks_to_forget(sentence: str) -> bool:
    from kronika.core.commands import CommandKind, detect_command

    command = detect_command(sentence)
    return command is not None and command.kind is CommandKind.FORGET


def _might_name(text: str, about: Subject) -> bool:
    """Whether ``text`` may hold a form of any of the subject's words (one folding)."""
    return might_mention(text, about, every=False)


# --------------------------------------------------------------------------- phrases
def forgotten_phrases(
    workspace: MarkdownWorkspace, agent: str, items: Sequence[MemoryItem]
) -> list[str]:
    """The text to redact elsewhere: each fact's value (a keyless fact's content) and the
    user sentences it came from.

    The rule extractor and the "remember" command keep a value as it was said, so the
    value itself finds their sentences; only a value too short to look for on its own
    (``42``) takes its whole sentence, when the rules read that sentence as the same
    fact. A model may paraphrase: in the session a fact was extracted from (its
    ``session:<id>`` tag), a sentence holding every word of a value of two words or more
    is redacted whole. A note, turn or summary forgotten by id contributes its text when
    it is one line.
    """
    phrases: list[str] = []
    facts = [it for it in items if it.type in FACT_TYPES]
    for item in items:
        text = _value(item) if item in facts else item.content
        if "\n" not in text.strip():
            phrases.append(text.strip())
    keyed = [f for f in facts if f.key]
    short = [f for f in keyed if len(" ".join(_value(f).split())) < MIN_PHRASE_CHARS]
    tagged = {t[len(_SESSION_TAG) :] for f in keyed for t in f.tags if t.startswith(_SESSION_TAG)}
    if not short and not tagged:
        return list(dict.fromkeys(phrases))
    values = phrase_pattern(_value(f) for f in keyed)
    for session_id, turns in _user_turns(workspace, agent, tagged, everywhere=bool(short)):
        for turn in turns:
            for sentence in _sentences(turn):
                if values is not None and values.search(sentence):
                    continue  # the value itself is redacted; the rest of it stays
                if _says_short(sentence, short) or (
                    session_id in tagged and _paraphrases(sentence, keyed, session_id)
                ):
                    phrases.append(sentence)
    return list(dict.fromkeys(phrases))


def _user_turns(
    workspace: MarkdownWorkspace, agent: str, tagged: set[str], *, everywhere: bool
) -> list[tuple[str, list[str]]]:
    """The user turns of the sessions facts were extracted from (and of every session
    kronika recorded itself, when ``everywhere``), by session id."""
    paths = {sessions.session_filename(s) for s in tagged}
    if everywhere:
        paths |= {h.path for h in workspace.session_headers(agent)}
    found = []
    for path in sorted(paths):
        read = read_source(workspace.agent_dir(agent), path)
        if read is None:
            continue
        parsed = sessions.parse_session(
            read.text,
            path=path,
            agent=agent,
            tenant=workspace.tenant_of(agent),
            fallback_id=PurePosixPath(path).stem,
            fallback_start=read.mtime,
        )
        turns = [t.content for t in parsed.items if t.speaker == "user"]
        found.append((parsed.session_id, turns))
    return found


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if len(s.strip()) > 2]


def _says_short(sentence: str, short: Sequence[MemoryItem]) -> bool:
    """Whether the rules read ``sentence`` as one of the ``short``-valued facts."""
    folded = sentence.casefold()
    mentioned = [f for f in short if _value(f).strip().casefold() in folded]
    return bool(mentioned) and _derives(sentence, mentioned)


def _derives(sentence: str, facts: Sequence[MemoryItem]) -> bool:
    # the rules and commands compile some 300 phrase patterns at import: a forget
    # imports them only when a sentence is to be read (a cold `forget --key` does not)
    from kronika.core.commands import CommandKind, detect_command
    from kronika.core.rules import RuleFact, extract_statements, fact_from_remember

    said: list[RuleFact] = list(extract_statements(sentence))
    command = detect_command(sentence)
    if (
        command is not None
        and command.argument
        and command.kind
        in (
            CommandKind.REMEMBER,
            CommandKind.FORGET,
        )
    ):
        said.append(fact_from_remember(command.argument))
    return any(_holds(f, r.key, r.value) for r in said for f in facts)


def _paraphrases(sentence: str, facts: Sequence[MemoryItem], session_id: str) -> bool:
    have = set(words(sentence))
    for fact in facts:
        if f"{_SESSION_TAG}{session_id}" not in fact.tags:
            continue
        wanted = words(_value(fact))
        if len(wanted) >= 2 and all(any(_near(w, h) for h in have) for w in wanted):
            return True
    return False


def _near(a: str, b: str) -> bool:
    n = min(len(a), len(b), 5)
    return a == b or (n >= 4 and a[:n] == b[:n])


__all__ = [
    "ForgetPlace",
    "ForgetReceipt",
    "Mentions",
    "facts_for_topic",
    "find_items",
    "find_mentions",
    "forgotten_phrases",
    "topic_subject",
]
