"""A key named in a question in another form: "W jakiej firmie pracuje?" names ``firma``.

Keyword search reads a fact's key as a field, so "what is my favourite colour?" finds
``favourite_colour: lilac`` by its key. Polish and Ukrainian decline nouns, and a
question names a key in the case its sentence wants: "w jakiej **firmie**" (``firma``),
"на якому **інструменті**", "як звати **чоловіка** користувача" (``чоловік``). Keyword
search matches whole words, so such a key is not found. :func:`key_forms` gives the
words of the keys a question names in another form (every word of the key is a form of
a word of the question, :func:`kronika.core.subjects.names_every`, and not every one
is written as the key writes it), for keyword search to look for beside the question's
own words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kronika.core.subjects import names_every
from kronika.core.text import folded_words, key_words


def key_forms(question: Sequence[str], keys: Iterable[str]) -> list[str]:
    """The words of ``keys`` that ``question`` (its folded words, without function words)
    names in another form, in the order of ``keys``, each once."""
    asked = set(question)
    found: list[str] = []
    for key in keys:
        wanted = list(folded_words(key_words(key)))
        if not wanted or all(k in asked for k in wanted):
            continue
        if names_every(question, wanted):
            found.extend(k for k in wanted if k not in asked and k not in found)
    return found


__all__ = ["key_forms"]
