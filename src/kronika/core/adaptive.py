"""Query-adaptive fusion: how much keyword search counts, read from the query itself.

Keyword search (BM25) is precise on what a query names exactly: a person or place
("What did Caroline research?"), a number or date ("my 5K run", "in 2022"), a code or
identifier ("config.yaml", "ERR_42"), a quoted phrase. An embedding is fuzzy on these
(every name is near every other name) and good on the rest: a paraphrase ("how did I
feel about the move?") shares few words with what answers it. So with ``fusion =
"adaptive"`` hybrid recall fuses like ``zscore`` (:func:`kronika.core.fusion.fuse`)
at a lexical weight of its own per query::

    w = lexical_weight + shift    when the query holds a specific word
    w = lexical_weight − shift    otherwise (paraphrase-like)

clipped to [0, 1]. A *specific word* is one with a digit, an identifier (a word with
``_ . / @ # :`` inside, or camelCase), a word inside double quotes, or a name: a capitalised
word of two letters or more that does not open a sentence (an all-capitals acronym
counts too). Nothing is learned: the rule reads the text alone, in any language that
capitalises names (Latin, Cyrillic, Greek scripts). One exception: the name of a
speaker of the conversation searched ("What did Caroline research?" asked of
Caroline's talks) is no specific word. It is said in none of her turns and her turns
are half the conversation: keyword search can do nothing with it (speaker focus reads
it instead, :func:`kronika.core.fusion.with_speaker_focus`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kronika.core.fusion import FUSIONS
from kronika.core.text import folded_words

ADAPTIVE = "adaptive"
FUSION_METHODS = (*FUSIONS, ADAPTIVE)
"""Every value of the ``fusion`` setting: :data:`kronika.core.fusion.FUSIONS` and
``adaptive`` (this module)."""

_QUOTED = re.compile(r"[\"“„«]([^\"”“«»]{2,})[\"”“»]")  # not ': it is an apostrophe too
_WORD = re.compile(r"[^\s,;!?()\[\]{}<>\"“”„«»]+")
_IDENTIFIER = re.compile(r"\w[_./@#:]\w|[a-z][A-Z]")
_SENTENCE_END = re.compile(r"[.!?]$")


def specific_words(query: str, speakers: Iterable[str | None] = ()) -> list[str]:
    """The words of ``query`` that keyword search matches better than an embedding:
    numbers, identifiers, quoted words and names other than a word of one of
    ``speakers``' names (see the module docstring)."""
    said_by = {w for name in speakers if name for w in folded_words(name)}
    found: list[str] = [w for quoted in _QUOTED.findall(query) for w in quoted.split()]
    opens = True  # the next word opens a sentence
    for raw in _WORD.findall(query):
        word = raw.strip(".:'’-")
        if word and word not in found:
            coded = any(c.isdigit() for c in word) or _IDENTIFIER.search(word) is not None
            named = len(word) >= 2 and word[0].isupper() and (not opens or word.isupper())
            if named and said_by and next(folded_words(word), "") in said_by:
                named = False  # "Caroline's" asked of Caroline's conversation
            if coded or named:
                found.append(word)
        opens = bool(_SENTENCE_END.search(raw))
    return found


def adaptive_lexical_weight(
    query: str, base: float, shift: float, speakers: Iterable[str | None] = ()
) -> float:
    """The lexical weight for ``query``: ``base + shift`` when it holds a specific word
    (a speaker's name is none), ``base − shift`` otherwise, within [0, 1]."""
    lean = shift if specific_words(query, speakers) else -shift
    return min(1.0, max(0.0, base + lean))
