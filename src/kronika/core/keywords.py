"""The words of a query that say what it is about, for keyword search (SPEC R1).

"How many fitness classes do I attend in a typical week?" is about fitness classes
and a week; "how", "many", "do", "I", "in" and "a" say how it is asked. BM25 gives
every word a weight from how rare it is among the asked agent's memories, and in a
few hundred turns of chat "many" or "do" can be rare enough to pull in turns that
share only them. So keyword search leaves out the closed-class words of English,
Polish, Spanish and Ukrainian — pronouns, articles, auxiliary verbs, common
prepositions and conjunctions, question words — and keeps everything else,
including words of quantity, order and time ("most", "first", "before", "last").

Words that are function words in one language and content in another ("ten",
"son", "hay", "pod", "ale", "us" for the US) are not on the lists, nor are words
that are also names or months ("May", "Will", "Don", "Al", "Maja", "Les", "Han").
The vector side always embeds the whole query.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Set as AbstractSet

from kronika.core.text import folded_words

_ENGLISH = """
    i me my mine myself we our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs
    themselves
    a an the this that these those some any all both each every either neither such
    am is are was were be been being have has had having do does did doing done
    can could would shall should might must
    s t d ll m re ve didn doesn isn wasn aren weren haven hasn hadn wouldn couldn
    shouldn
    of in on at to for with from by about as into onto than
    and or but if so because nor whether
    what which who whom whose when where why how many much
    there here also just very too
"""
_POLISH = """
    ja mnie mi mna moj moja moje moi mojego mojej moim moich
    nasz nasza nasze nasi naszego naszej naszym naszych wasz wasza wasze wasi
    swoj swoja swoje swoi swojego swojej swoim swoich
    ciebie cie tobie ci twoj twoja twoje twoi twojego twojej twoim twoich
    on ona ono oni jego jej go mu nim niej ich im nimi
    my wy was wam sie siebie sobie
    ta to te tego tej tym tych tamten tamta tamto
    ktory ktora ktore ktorzy ktorego ktorej ktorym ktorych
    jaki jaka jakie jakiego jakiej jakim jakich
    co czego czym kto kogo komu kiedy gdzie dlaczego czemu jak ile ilu czy
    jest sa byl byla bylo byli byly byc bedzie mam masz ma mamy macie mial miala mieli
    jestem jestes jestesmy jestescie bylem bylam byles bylas bylismy bylysmy
    bede bedziesz bedziemy bedziecie beda
    i a oraz lub albo ze zeby
    w we z ze na do od po o u za przy przez dla nad
"""
_SPANISH = """
    yo me mi mis tu tus te ti el ella ello ellos ellas le lo la los las
    nos nosotros nosotras vosotros vosotras su sus nuestro nuestra nuestros nuestras
    se si un una unos unas este esta esto estos estas ese esa eso esos esas
    aquel aquella aquello que cual cuales quien quienes cuando donde como
    cuanto cuanta cuantos cuantas porque
    y e o u pero ni de del a en con para por sobre entre hasta desde hacia
    es fue fueron ser estar esta estan estaba estaban he has ha hemos
    habia muy tambien ya tengo tienes tiene tenemos tienen
    estoy estamos estais eres somos sois eramos eran sido habian
"""
_UKRAINIAN = """
    я мене мені мною мій моя моє мої мою мого моєї моєму моїй моїм моїх моїми
    ти тебе тобі тобою твій твоя твоє твої твою твого твоєї твоєму твоїй твоїм твоїх
    наш наша наше наші нашу нашого нашої нашому нашій нашим наших ваш ваша ваше ваші
    свій своя своє свої свою свого своєї своєму своїй своїм своїх
    він вона воно вони його її їх йому їй ним нею ними них неї
    ми нас нам ви вас вам себе собі
    цей ця це ці цю цього цієї цим цих той та те ті ту того тієї тим тих
    який яка яке які яку якого якої яким яких
    що чого чим хто кого кому коли де чому як скільки чи
    є був була було були бути буде буду будеш будемо будете будуть маю маєш має маємо мають
    і й та а але або щоб бо
    в у з із зі на до від по про за при через для над о
"""

FUNCTION_WORDS: frozenset[str] = frozenset(
    word for block in (_ENGLISH, _POLISH, _SPANISH, _UKRAINIAN) for word in folded_words(block)
)
"""Folded, casefolded words that keyword search leaves out of a query."""


def keyword_query(query: str) -> str:
    """``query``'s words without the function words, or ``query`` itself when every
    word is one ("who am I?", "what was it?"): nothing is lost to the list."""
    return keyword_phrase(query)[0]


def keyword_phrase(query: str) -> tuple[str, bool]:
    """:func:`keyword_query`, and whether its words stood side by side in ``query``.

    Keyword search also scores the words as one phrase. That means what the question
    said only when nothing was left out between them ("Frank Herbert" from "who is
    Frank Herbert?"); "Omar red garden festival" from "what did Omar do with the red
    garden at the festival?" is a phrase no one wrote, and looking for it costs FTS5 a
    pass over every row holding those words.
    """
    words = list(folded_words(query))
    kept = _kept(words, FUNCTION_WORDS, _in_idioms(words))
    return (query, True) if kept is None else kept


_NOW_IDIOMS: tuple[tuple[str, ...], ...] = tuple(
    tuple(folded_words(idiom))
    for idiom in ("these days", "w dzisiejszych czasach", "hoy en día", "estos días", "в наші дні")
)
"""Phrases that say "now" with a noun of time: "Where is she based these days?" asks
where she is now, and the days of "these days" are no days to look for (a memory that
says "30 days ahead" does not answer it)."""


def _in_idioms(words: list[str]) -> set[int]:
    """The places of ``words`` that belong to a phrase of :data:`_NOW_IDIOMS`."""
    found: set[int] = set()
    for idiom in _NOW_IDIOMS:
        size = len(idiom)
        for start in range(len(words) - size + 1):
            if tuple(words[start : start + size]) == idiom:
                found.update(range(start, start + size))
    return found


def has_content_words(query: str) -> bool:
    """Whether ``query`` holds a word that says what it is about (not a function word)."""
    return any(word not in FUNCTION_WORDS for word in folded_words(query))


def without_words(phrase: str, dropped: AbstractSet[str]) -> tuple[str, bool] | None:
    """``phrase`` without the words in ``dropped`` (folded and casefolded, as
    :func:`~kronika.core.text.folded_words` gives them), and whether the words left
    stood side by side in it; ``None`` when it holds none of them or nothing else."""
    words = list(folded_words(phrase))
    return None if dropped.isdisjoint(words) else _kept(words, dropped)


def _kept(
    words: list[str], dropped: Collection[str], places: AbstractSet[int] = frozenset()
) -> tuple[str, bool] | None:
    """``words`` without those in ``dropped`` and those at ``places``, joined, and
    whether the words left stood side by side; ``None`` when none is left."""
    kept_at = [n for n, word in enumerate(words) if word not in dropped and n not in places]
    if not kept_at:
        return None
    side_by_side = kept_at[-1] - kept_at[0] + 1 == len(kept_at)
    return " ".join(words[n] for n in kept_at), side_by_side
