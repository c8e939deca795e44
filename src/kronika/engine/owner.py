"""The user of a memory, read from it for recall: their name in a question is "me"
(:mod:`kronika.core.owner`), a key of their own facts matched by a word that is
someone else's is no match (:mod:`kronika.core.possession`), and a question about them
alone is not answered by someone else's page (:mod:`kronika.core.user_subject`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kronika.core.addressed import greeted_names
from kronika.core.keywords import keyword_query
from kronika.core.model import ASSISTANT_SPEAKER, ItemType, MemoryItem, RecallFilter
from kronika.core.owner import (
    NAME_KEYS,
    TOKEN,
    asks_a_name,
    is_the_users_name,
    owner_names,
)
from kronika.core.possession import borrowed_words
from kronika.core.subjects import forms_among, word_matches
from kronika.core.text import folded_words, key_words, searchable_content
from kronika.core.user_subject import about_the_user_alone
from kronika.engine.held import HeldPerReader, RecallMark, own_facts, own_items, reader_scope
from kronika.engine.relations import page_entity
from kronika.ports import IndexReads

NAME_READ = 1000
"""Facts keyed as a name read, at most, newest first, among those the reader may see."""
GREETINGS_READ = 200
"""The assistant's turns read, at most, newest first, for the name it greets the user by
when no fact holds it."""
_NAME_KEYS = tuple(sorted(NAME_KEYS))
BORROWED_READ = 20
"""The best keyword matches read for a key matched by a word that is someone else's."""


def names_of_the_user(index: IndexReads, flt: RecallFilter) -> tuple[str, ...]:
    """The words the user of the memories ``flt`` reads is named by: the values of their
    current profile facts keyed as a name (:data:`~kronika.core.owner.NAME_KEYS`), among
    those the reader may see (the recall's agents, tenant, channel and reader; not its
    types, keys or times).

    The index is asked for those facts only: by key, agents, tenant, channel and the
    reader's visibility, as any read of the recall is, so a name the reader may not see
    is never read (and another agent's or tenant's names never crowd out the reader's
    own). What comes back is checked against the same filter here once more.

    When no such fact is visible, the names the assistant greets the user by in its
    newest turns ("Привіт, Юрію!", :func:`greetings_of`,
    :func:`~kronika.core.addressed.greeted_names`). A fact keyed as a name is the
    user's word on it, and the greetings are not read beside it."""
    keyed = index.list_items(reader_scope(flt, keys=_NAME_KEYS), limit=NAME_READ)
    named = owner_names(own_facts(keyed, flt))
    return named or greeted_names(greetings_of(index, flt))


def greetings_of(index: IndexReads, flt: RecallFilter) -> list[str]:
    """The texts of the newest :data:`GREETINGS_READ` turns of the assistant among those
    the reader of ``flt`` may see (its agents, tenant, channel and reader), checked once
    more here (fail closed): where the assistant may greet the user by name
    (:mod:`kronika.core.addressed`)."""
    scope = replace(reader_scope(flt, types=(ItemType.MESSAGE,)), speakers=(ASSISTANT_SPEAKER,))
    turns = index.list_items(scope, limit=GREETINGS_READ)
    mine = own_items(turns, flt, ItemType.MESSAGE)
    return [turn.content for turn in mine if turn.speaker == ASSISTANT_SPEAKER]


class UserNames(HeldPerReader[tuple[str, ...]]):
    """The user's names (:func:`names_of_the_user`) kept between recalls, per reader, and
    read again only when the index's items may have changed (:class:`HeldPerReader`)."""

    def __init__(self, index: IndexReads, mark: RecallMark | None = None) -> None:
        super().__init__(index, names_of_the_user, mark)


def not_asked(
    index: IndexReads,
    found: Sequence[Sequence[tuple[str, float]] | None],
    question: str,
    asked: str,
    names: Sequence[str],
) -> set[str]:
    """The candidates among the best :data:`BORROWED_READ` of each list of ``found``
    that do not answer ``question``: the profile facts whose key it asks about as
    someone else's (:func:`lent_facts`, read in ``asked``: the question as the user's
    own, :func:`~kronika.core.owner.as_the_user`); when it is about the user alone
    (:func:`~kronika.core.user_subject.about_the_user_alone`), the entity pages of
    someone else (:func:`others_pages`); and when it named the user by a name and asks
    for no name, the facts holding that name (:func:`own_names`). ``asked``: the
    question as searched by keyword (its words naming the user left out); ``names``:
    the words the user is named by. Those best candidates are read once for all three,
    and only when any may be found."""
    borrowed = borrowed_words(asked)
    alone = about_the_user_alone(question, names)
    named = asked != question and not asks_a_name(question)  # a name left out of it
    if not borrowed and not alone and not named:
        return set()
    wanted = list(dict.fromkeys(i for hits in found for i, _ in (hits or [])[:BORROWED_READ]))
    if not wanted:
        return set()
    items = index.get_items(wanted)
    unasked = lent_facts(items, asked, borrowed) if borrowed else set()
    if alone:
        unasked |= others_pages(items, question, names)
    if named:
        unasked |= own_names(items, question)
    return unasked


def own_names(items: Sequence[MemoryItem], question: str) -> set[str]:
    """The profile facts among ``items`` holding a name of the user
    (:func:`~kronika.core.owner.is_name_key`) that ``question`` calls them by. Asked of a
    question that named the user and asks no name: "Where does Taras live now?" knows
    that the user is Taras, and ``ім'я: Тарас`` answers nothing of it, however close
    "my ім'я is Тарас" comes to "Where do I live now?" in meaning. A name the question
    does not use (a nickname) is left: "How do they call Valeria?" may ask for it."""
    words = [m.group(1) for m in TOKEN.finditer(question)]
    return {
        item.id
        for item in items
        if (name := owner_names((item,))) and any(is_the_users_name(w, name) for w in words)
    }


def lent_facts(items: Sequence[MemoryItem], question: str, borrowed: frozenset[str]) -> set[str]:
    """The profile facts among ``items`` whose key ``question`` asks about as someone
    else's: every word of the question that matches the key (function words left out)
    is one of the ``borrowed`` words, those the question gives another owner
    (:func:`~kronika.core.possession.borrowed_words`), and none matches the value. "What
    is my dog's name?" is not answered by ``name: Lucas``, whatever its words or its
    meaning ("my name is Lucas") share with it."""
    asked = set(folded_words(keyword_query(question)))
    return {item.id for item in items if _only_borrowed(item, asked, borrowed)}


def others_pages(items: Sequence[MemoryItem], question: str, names: Sequence[str]) -> set[str]:
    """The items of entity pages among ``items`` whose entity ``question`` does not name
    (in any inflected form), and who is not the user (``names``). Asked of a question
    about the user alone (:func:`~kronika.core.user_subject.about_the_user_alone`):
    "Where do I live now?" is not answered by "Margaret lives in York", whatever word
    they share."""
    asked = list(folded_words(question))
    mine = {w for name in names for w in folded_words(name)}
    return {
        item.id
        for item in items
        if (entity := page_entity(item.provenance.path)) is not None
        and not _named(entity, asked, mine)
    }


def _named(entity: str, asked: Sequence[str], mine: set[str]) -> bool:
    """Whether a word of ``entity`` is one of the ``asked`` words (in any form) or of the
    user's names (``mine``: their words, folded)."""
    parts = list(folded_words(entity))
    return any(p in mine or any(word_matches(w, p) for w in asked) for p in parts)


def _only_borrowed(item: MemoryItem, asked: set[str], borrowed: frozenset[str]) -> bool:
    """Whether ``asked`` matches the profile fact ``item`` by its key alone, and only by
    ``borrowed`` words there."""
    if item.type is not ItemType.PROFILE or not item.key:
        return False
    key = set(folded_words(key_words(item.key)))
    value = set(folded_words(searchable_content(item)))
    by_key = set(forms_among(asked, key))
    by_value = any(word_matches(w, v) for w in asked for v in value)
    return bool(by_key) and by_key <= borrowed and not by_value
