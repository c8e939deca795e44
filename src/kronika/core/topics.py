"""What a question asks about by its verb: "Where do I live?" asks for the user's city,
"Де працює Юрій?" for his employer, "Як мене звати?" for the user's name. A memory
keeps ``місто: Львів`` or ``компанія: Ajax``, and the question names neither key: it
names the topic by the verb (live, work) in any of the four languages
(:mod:`kronika.core.key_forms`).

:data:`THINGS` does the same for the things a profile fact is often keyed by
("favourite", "colour", "dish"…): "Який мій улюблений колір?" names
``favourite_colour``.

:data:`GROUPS` lists, for each topic, the ordinary words for it in English, Polish,
Spanish and Ukrainian: the verb in its common forms (short verbs are listed form by
form, since :func:`kronika.core.subjects.word_matches` finds endings of stems of four
letters or more) and the nouns a memory's key is written with. A short noun or verb
(four letters or fewer: ``kot``, ``кава``, ``пес``, ``жив``) has too short a stem for
its other forms to be found from it, so its common cases and tenses are listed too
(``kota``, ``каву``, ``пса``; ``жив`` beside ``жила``). They are drawn from
each language, not from a memory or a benchmark, and stay few: a topic's words name
keys only when the reader's memory holds such a key, and keyword search then looks for
the key beside the question's own words (a key word counts a quarter of a content word).
"""

from __future__ import annotations

from collections.abc import Iterable

from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.word_groups import WordGroups

GROUPS: tuple[str, ...] = (
    # where one lives
    "live lives living lived based city town location residence"
    " mieszkać mieszkam mieszkasz mieszka mieszkamy mieszkają mieszkał mieszkała miasto"
    " miejscowość vivir vivo vives vive vivimos viven vivía ciudad residencia"
    " жити живу живеш живе живемо живуть жив жила жили мешкати мешкаю мешкає мешкав"
    " мешкала мешкали місто",
    # where one works
    "work works working worked job employer company workplace"
    " pracować pracuję pracujesz pracuje pracujemy pracują pracował pracowała praca firma"
    " pracodawca trabajar trabajo trabajas trabaja trabajamos trabajan trabajaba empresa"
    " empleo працювати працюю працюєш працює працюємо працюють працював працювала робота"
    " компанія роботодавець",
)
"""Each topic's words, space-separated: English, Polish, Spanish, Ukrainian."""

THINGS: tuple[str, ...] = (
    "colour color kolor color колір кольору кольором",
    "favourite favorite ulubiony ulubiona ulubione favorito favorita улюблений улюблена улюблене",
    "cat kot kota kotem kotu koty kotka gato gata кіт кота коту котом коти кішка",
    "dog pies psa psem psu psy suka perro perra собака пес пса псом псу",
    "food dish meal jedzenie danie potrawa comida plato страва їжа їжу їжі",
    "drink drinks napój piję pije bebida beber bebo напій напою пити",
    "coffee kawa kawę kawy kawą café кава каву кави кавою",
    "book książka libro книга книжка",
    "music muzyka música музика",
    "hobby hobby pasatiempo afición хобі",
    "car samochód auto auta autem coche carro машина автомобіль",
    "birthday urodziny cumpleaños народження",
    "language język idioma lengua мова мову мови мовою",
    "instrument instrument instrumento інструмент",
    "allergy alergia uczulenie alergia алергія",
)
"""Things a profile fact is often keyed by, each one's nouns in English, Polish, Spanish
and Ukrainian (a question in one language names a key written in another: "Який мій
улюблений колір?" names ``favourite_colour``). Words with more than one common sense
("name", "team") are left out."""

NAMING = (
    "name called imię nazywam nazywasz nazywa nazywają nombre llamo llamas llama llaman звати звуть"
)
"""Being called and the word for a name: "Як мене звати?", "¿Cómo me llamo?", "What am
I called?" ask for the key ``name``, but only when every content word of the question
is one of these ("Як звати мого лікаря?" asks for the doctor's name, "Як звати мого
кота?" for the cat's). The Ukrainian noun ім'я, which word splitting cuts at its
apostrophe, is read by :mod:`kronika.core.owner`."""

_TOPICS = WordGroups((*GROUPS, *THINGS))
_NAMING = WordGroups((NAMING,))


def topic_words(words: Iterable[str]) -> set[str]:
    """The words (folded) of the topics that ``words`` (folded words of a question) name
    by a verb or noun of theirs, in every language, less ``words`` themselves: "live"
    gives ``city``, ``miasto``, ``місто``…; "працює" gives ``job``, ``firma``…; and
    when every content word is one of being called, "звати" gives ``name``, ``imię``…
    (:data:`NAMING`)."""
    asked = tuple(words)
    found = _TOPICS.words_of(asked)
    content = [w for w in asked if w not in FUNCTION_WORDS]
    if not found and content and all(_NAMING.words_of((w,)) for w in content):
        return _NAMING.words_of(content)
    return found


__all__ = ["GROUPS", "NAMING", "THINGS", "topic_words"]
