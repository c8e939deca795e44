"""Whether a question is said of the past or of the future, in English, Polish, Spanish
and Ukrainian: "What sport did I do in spring?" asks about a spring gone by, "Whose
wedding will we go to in spring?" about the coming one, and "Whose wedding do we go to
in spring?" may mean either. Read for a season named without "last" or "this"
(:mod:`kronika.core.seasons`).

The marks are a language's own grammar, not drawn from any memory or benchmark: the past
of the verb (English ``did``, ``was`` and ``-ed``; Polish ``-łem``, ``-ła``, ``-liśmy``;
Ukrainian ``-в``, ``-ла``, ``-вся``; Spanish ``-aba``, ``-ía``, ``-ó``, ``-aron``, and
``iba``, ``era``, ``dije``, ``pude``) and its future (``will``, ``going to``; ``będę``,
``będzie``; ``буду``, ``-тиму``; ``voy a``, ``-ará``). A word-ending mark needs a word
of four or five letters or more, and a few nouns spelt like a verb's past are named
("hundred", "café"), so that short nouns and adjectives ("mała", "Київ") are not read as
verbs. A question with marks of both, or of neither (the present, which may speak of
either), is said of no time in particular. A perfective verb used for the future
("pojedziemy") is no mark: such a question stays open to both.
"""

from __future__ import annotations

import re
from typing import Literal

Tense = Literal["past", "future"]

_PAST = re.compile(
    "|".join(
        (
            # English
            r"\b(?:did|was|were|had|used to)\b",
            r"\b(?!(?:hundred|kindred|sacred|naked|wicked)\b)\w{2,}[^\We]ed\b",
            # Polish: być, and the past's personal endings
            r"\b(?:był|była|było|byli|były|byłem|byłam|byliśmy|byłyśmy)\b",
            r"\b\w{2,}(?:łem|łam|łeś|łaś|liśmy|łyśmy|liście|łyście)\b",
            r"\b(?=\w{5,}\b)\w+[aeiyę](?:ł|ła|ło|li|ły)\b",
            # Ukrainian: бути, and the past's endings (reflexive too)
            r"\b(?:був|була|було|були)\b",
            r"\b(?=\w{5,}\b)\w+[аиія](?:в|ла|ло|ли)(?:ся|сь)?\b",
            # Spanish: the imperfect and the preterite, and the commonest irregular ones
            r"\b\w{2,}(?:aba|abas|ábamos|aban|abais|íamos)\b",
            r"\b(?=\w{5,}\b)\w+(?:ía|ían|ías)\b",
            r"\b\w{2,}(?:aron|ieron|aste|iste|ió)\b",
            # a consonant and an accented ending ("pasó", "compré"), not the future's
            # "-aré" and not the nouns so spelt
            r"\b(?!(?:café|bebé|puré|comité|josé|chalé)\b)(?=\w{4,}\b)\w+[^\Waeiou]"
            r"(?<![aei]r)(?:é|ó)\b",
            r"\b(?:fui|fue|fuimos|fueron|fuiste|estuve|estuvo|tuve|tuvo|hice|hizo|hubo|había)\b",
            # the imperfect of ir and ser, the two that keep no -aba or -ía, of ver (too
            # short for -ía), and the commonest preterites of a stem of their own
            r"\b(?:iba|ibas|íbamos|ibais|iban|era|eras|éramos|erais|eran)\b",
            r"\b(?:veía|veías|veíamos|veían|dije|dijo|dijiste|dijimos|dijeron|pude|pudo"
            r"|pudiste|pudimos|quise|quiso|supe|supo|puse|puso)\b",
        )
    )
)
_FUTURE = re.compile(
    "|".join(
        (
            # English
            r"\b(?:will|shall|won't|gonna)\b|\bgoing to\b|\w'll\b",
            # Polish
            r"\b(?:będę|będziesz|będzie|będziemy|będziecie|będą)\b",
            # Ukrainian
            r"\b(?:буду|будеш|буде|будемо|будете|будуть)\b",
            r"\b\w{2,}(?:тиму|тимеш|тиме|тимемо|тимете|тимуть)\b",
            # Spanish: ir a, and the future's endings
            r"\b(?:voy|vas|va|vamos|vais|van) a\b",
            r"\b\w{2,}(?:aré|arás|ará|aremos|aréis|arán|eré|erás|erá|eremos|erán"
            r"|iré|irás|irá|iremos|irán)\b",
        )
    )
)


def tense_of(text: str) -> Tense | None:
    """``past`` or ``future`` when ``text`` (as written, not folded: ``ł`` and accents
    carry the marks) bears marks of that time alone, else None."""
    lower = text.casefold()
    past, future = bool(_PAST.search(lower)), bool(_FUTURE.search(lower))
    if past == future:
        return None
    return "past" if past else "future"


__all__ = ["Tense", "tense_of"]
