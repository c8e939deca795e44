"""A recall's question read for its searches (:mod:`kronika.engine.recall`, step 1):
the words the keyword search looks for and the text the vector search embeds.

A question naming the user ("Where does David live now?") is read as the user's own
(:mod:`kronika.core.owner`); a date it names is read as its period, not looked for as
words ("birthday: 12 March" does not answer "Which gym did I go to in March?"), and so
is "before I moved" once the reader's keys hold a move (:mod:`kronika.engine.moves`);
a key it names in another form ("w jakiej firmie") is looked for as the key too
(``firma``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from kronika.core.key_forms import KeyWords
from kronika.core.keywords import keyword_phrase, without_words
from kronika.core.model import RecallFilter
from kronika.core.owner import Asked, as_the_user, may_name_someone
from kronika.core.query import Mode
from kronika.core.tense import tense_of
from kronika.core.text import folded_words, without_folded
from kronika.core.timeexpr import named_period
from kronika.core.user_subject import names_another
from kronika.engine.held import RecallMark
from kronika.engine.keys import UserKeys
from kronika.engine.moves import moment_words
from kronika.engine.owner import UserNames
from kronika.ports import Embedder, ItemIndex, Vector

log = logging.getLogger("kronika.recall")

_NO_KEYS = KeyWords(())
"""The keys an empty query can name."""


@dataclass(frozen=True, slots=True)
class Question:
    """What recall searches for: the question as the user would ask it (``asked``) and
    the words the user is named by (``names``); the keyword search's words (``None``:
    no keyword search) and whether they are one phrase (``whole_phrase``); the vector
    search's vector (``None``: none); the period the question names; and whether the
    reader has keyed facts (``keyed``: their history may answer it)."""

    asked: Asked
    names: tuple[str, ...]
    words: str | None
    whole_phrase: bool
    vector: Vector | None
    period: tuple[datetime, datetime] | None
    keyed: bool


class QuestionReader:
    """Reads a recall's question (see the module docstring) against ``index``: the
    user's names and keys as of the index's ``mark``, the query embedded by
    ``embedder``. ``time_focus`` and ``skip_function_words``: the recall settings."""

    def __init__(
        self,
        index: ItemIndex,
        embedder: Embedder,
        mark: RecallMark,
        *,
        time_focus: float,
        skip_function_words: bool,
    ) -> None:
        self._index = index
        self._embedder = embedder
        self._names = UserNames(index, mark)
        self._keys = UserKeys(index, mark)
        self._time_focus = time_focus
        self._skip_function_words = skip_function_words

    def read(
        self,
        query: str,
        flt: RecallFilter,
        mode: Mode,
        moment: datetime,
        query_vector: Vector | None = None,
    ) -> Question:
        """``query`` read for a recall in ``mode`` at ``moment`` (``query_vector``: its
        vector, made already)."""
        words: str | None = None
        side_by_side = True
        vector: Vector | None = None
        # "Where does David live?": "… do I live?"
        asked, names = self._as_the_user(query, flt)
        if mode in ("hybrid", "lexical") and query.strip():
            words, side_by_side = (
                keyword_phrase(asked.keywords)
                if self._skip_function_words
                else (asked.keywords, True)
            )
        # a date the question names is read as its period (below), not looked for as
        # words: "birthday: 12 March" does not answer "Which gym did I go to in March?"
        timed = named_period(query, moment) if self._time_focus > 0 and query.strip() else None
        keys = self._keys.of(flt) if query.strip() else _NO_KEYS
        # "Where does Margaret live?" is not asking for the user's city (names are read
        # only when the user has keys a topic could name)
        topics = bool(keys) and words is not None and not names_another(query, names)
        # a question of what happened then asks what was said then, and one that names a
        # key of the user's facts asks for its value then ("Which gym do I go to in
        # March?"); another ("Where am I going in September?") may be answered by what
        # names the month
        if words is not None and timed is not None and _period_chooses(query, words, keys, topics):
            rest = without_words(words, timed.words)
            if rest is not None:
                words, side_by_side = rest[0], side_by_side and rest[1]
        # "before I moved" names a moment once the reader's keys hold a move (engine/moves.py)
        moved = (
            moment_words(self._index, flt, query)
            if query.strip() and self._time_focus > 0 and keys
            else None
        )
        if words is not None and moved:
            rest = without_words(words, moved)
            if rest is not None:
                words, side_by_side = rest[0], side_by_side and rest[1]
        if words is not None:  # "w jakiej firmie": look for the key ``firma`` too
            named = keys.forms(list(folded_words(words)), topics=topics)
            if named:
                log.debug("query names keys in another form: also searching %s", named)
                words, side_by_side = f"{words} {' '.join(named)}", False
        if mode in ("hybrid", "vector") and (query.strip() or query_vector is not None):
            vector = (
                query_vector
                if query_vector is not None
                else self._embedder.embed_query(
                    without_folded(asked.text, moved) if moved else asked.text
                )
            )
        period = None if timed is None else timed.period
        return Question(asked, names, words, side_by_side, vector, period, bool(keys))

    def _as_the_user(self, query: str, flt: RecallFilter) -> tuple[Asked, tuple[str, ...]]:
        """``query`` as the user would ask it (:mod:`kronika.core.owner`): their name, read
        from their profile facts, and "the user" in the first person; and the words the
        user is named by (none read when the query has no word that could be a name)."""
        if not query.strip():
            return Asked(query, query), ()
        names = self._names.of(flt) if may_name_someone(query) else ()
        asked = as_the_user(query, names)
        if asked.text != query:
            log.debug(
                "query names the user: embedded as %r, searched as %r", asked.text, asked.keywords
            )
        return asked, names


def _period_chooses(query: str, words: str, keys: KeyWords, topics: bool) -> bool:
    """Whether the period a question names chooses among what it finds rather than being
    words to find: the question is said of the past (what was said then), or its
    ``words`` name one of the reader's ``keys``, as written, in another form or (with
    ``topics``) by a topic (its value then: "Where do I work in March?")."""
    if tense_of(query) == "past":
        return True
    return bool(keys.named(list(folded_words(words)), topics=topics))
