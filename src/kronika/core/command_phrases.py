"""The phrasings :mod:`kronika.core.commands` recognises, as one table per language.

Patterns are written in lower case, with accents and apostrophes as people write
them. Before compiling, accents are folded away and every apostrophe becomes
optional; messages are folded the same way, so ``zapamietaj``, ``olvidate``, ``dont``
and ``запамʼятай`` match too. A command pattern must match the whole message once
lead-ins ("please", "Jaskier,") and trailing punctuation are removed; ``(?P<arg>…)``
(or ``arg2``) captures the argument, which is then cleaned with the book's word lists.
"""

from __future__ import annotations

from dataclasses import dataclass

ARG = r"(?P<arg>.+)"
THEN = r"(?:\s*[:,\-–—]\s*|\s+)"  # between a verb and what it takes
COLON = r"\s*[:\-–—]\s*"


@dataclass(frozen=True, slots=True)
class Phrasebook:
    """One language: command patterns (tried in order) and the words that clean arguments.

    ``connector`` opens a clause ("that"); ``topic_lead`` are prepositions, determiners and
    "what I said about" before a topic; ``back_references`` are whole arguments meaning
    "what was just said"; ``everything`` are arguments meaning all memory (not a topic);
    ``interrogative`` and ``reminder`` open arguments that make "remember …" a question
    or a to-do; ``new_clause`` after a comma shows "forget X, let's …" is a figure of speech.
    """

    language: str
    commands: tuple[tuple[str, str], ...]
    connector: str
    topic_lead: str
    back_references: tuple[str, ...]
    everything: tuple[str, ...]
    interrogative: str
    reminder: str
    new_clause: str


# ------------------------------------------------------------------------- English
_EN_KNOW = r"(?:know|remember|recall|have\s+(?:stored|saved|learned|learnt|remembered))"
_EN_MEMORY = r"(?:your\s+|the\s+|my\s+)?(?:whole\s+|entire\s+|full\s+)?memor(?:y|ies)"
_EN_NOT = r"(?:please\s+)?(?:don't|do\s+not|never)"
_EN_TAIL = rf"(?:{COLON}(?P<arg>.+)|\s*,.*)?"

ENGLISH = Phrasebook(
    language="en",
    commands=(
        (
            "new_conversation",
            r"(?:(?:let's|let\s+us|i\s+want\s+to|i'd\s+like\s+to)\s+)?(?:start|begin|open)\s+"
            r"(?:a\s+)?(?:new|fresh)\s+(?:conversation|chat)|(?:a\s+)?new\s+(?:conversation|chat)",
        ),
        (
            "what_do_you_know",
            rf"(?:tell\s+me\s+)?what\s+(?:do\s+|did\s+)?you\s+{_EN_KNOW}\s+(?:about|of)\s+me",
        ),
        ("what_do_you_know", r"what(?:'s|\s+is)\s+in\s+your\s+memory\s+about\s+me"),
        ("show_memory", rf"(?:show|display|list|print|open)\s+(?:me\s+)?{_EN_MEMORY}"),
        ("show_memory", rf"show\s+me\s+(?:what|everything)\s+you\s+{_EN_KNOW}"),
        ("show_memory", r"what(?:'s|\s+is)\s+in\s+your\s+memory|what\s+do\s+you\s+remember"),
        (
            "clear_topic",
            rf"(?:forget|delete|erase|remove|wipe|clear)\s+(?:all|everything)\s+(?:(?:you\s+)?"
            rf"{_EN_KNOW}\s+)?(?:about|on|regarding)\s+{ARG}",
        ),
        (
            "clear_topic",
            rf"(?:clear|wipe|erase|delete|reset)\s+{_EN_MEMORY}\s+(?:about|of|on|regarding)\s+{ARG}",
        ),
        ("clear_topic", rf"(?:delete|erase|remove|wipe)\s+{ARG}\s+from\s+(?:your\s+)?memory"),
        (
            "dont_remember",
            rf"{_EN_NOT}\s+(?:remember|memori[sz]e)\s+(?:this|that|it)(?:\s+one)?{_EN_TAIL}",
        ),
        ("dont_remember", rf"{_EN_NOT}\s+(?:remember|memori[sz]e)\s+that\s+(?P<arg2>.+)"),
        (
            "dont_remember",
            rf"{_EN_NOT}\s+(?:save|store|keep|record|put|write)\s+(?:this|that|it)\s+"
            rf"(?:in|to|into)\s+(?:your\s+)?memory{_EN_TAIL}",
        ),
        (
            "dont_remember",
            rf"(?:you\s+)?(?:don't|do\s+not|no)\s+need\s+to\s+remember\s+(?:this|that|it){_EN_TAIL}",
        ),
        ("dont_remember", rf"(?:this\s+is\s+)?off\s+the\s+record{_EN_TAIL}"),
        ("remember", rf"(?:don't|do\s+not)\s+forget(?:{COLON}|,?\s+that\s+|\s*,\s*){ARG}"),
        (
            "remember",
            rf"(?:remember|memori[sz]e|keep\s+in\s+mind|note\s+down|make\s+a\s+note(?:\s+of)?)"
            rf"{THEN}{ARG}",
        ),
        (
            "remember",
            rf"(?:save|store|add|write|put)\s+(?:to|in|into)\s+(?:your\s+)?memory{THEN}{ARG}",
        ),
        ("forget", rf"forget{THEN}{ARG}"),
    ),
    connector=r"that",
    topic_lead=(
        r"what\s+i\s+(?:just\s+)?(?:said|told\s+you|wrote|mentioned)(?:\s+about)?|"
        r"everything\s+i\s+(?:just\s+)?(?:said|told\s+you)(?:\s+about)?|"
        r"about|regarding|that|the|an|a|my"
    ),
    back_references=("it", "this", "that", "this one", "that one", "all that", "all this"),
    everything=("everything", "all", "all of it", "all of that", "everything you know"),
    interrogative=r"when|what|where|who|whom|why|how|if|whether|which",
    reminder=r"to",
    new_clause=r"let's|let\s+us|i|i'm|i'll|we|we'll|we're|just|use|take|go|instead|rather|better",
)

# -------------------------------------------------------------------------- Polish
_PL_MEMORY = r"(?:swoją\s+|twoją\s+|całą\s+)?pamięć"
_PL_KNOW = r"(?:wiesz|pamiętasz|zapamiętałeś|zapamiętałaś|masz\s+zapisane)"
_PL_TAIL = rf"(?:{COLON}(?P<arg>.+)|,?\s+że\s+(?P<arg2>.+)|\s*,.*)?"
_PL_ONE = r"(?:ja\s+)?"

POLISH = Phrasebook(
    language="pl",
    commands=(
        (
            "new_conversation",
            r"(?:(?:zacznijmy|rozpocznijmy|zacznij|rozpocznij|otwórz)\s+)?(?:nową\s+"
            r"(?:rozmowę|konwersację)|nowy\s+czat)|nowa\s+(?:rozmowa|konwersacja)",
        ),
        (
            "what_do_you_know",
            rf"(?:powiedz(?:\s+mi)?,?\s+)?co\s+(?:ty\s+)?(?:o\s+mnie\s+{_PL_KNOW}|{_PL_KNOW}\s+"
            rf"(?:o\s+mnie|na\s+mój\s+temat))",
        ),
        ("show_memory", rf"(?:pokaż|pokazać)(?:\s+mi)?\s+{_PL_MEMORY}"),
        (
            "show_memory",
            rf"(?:pokaż|pokazać)(?:\s+mi)?,?\s+(?:co|wszystko,?\s+co)\s+{_PL_KNOW}",
        ),
        ("show_memory", r"co\s+(?:masz\s+w\s+pamięci|pamiętasz)"),
        (
            "clear_topic",
            rf"(?:wyczyść|wyczyścić|usuń|usunąć|wymaż|wymazać|skasuj|skasować)\s+{_PL_MEMORY}\s+"
            rf"(?:o|na\s+temat)\s+{ARG}",
        ),
        (
            "clear_topic",
            rf"(?:usuń|usunąć|wymaż|wymazać|skasuj|skasować|zapomnij|zapomnieć)\s+"
            rf"(?:z\s+pamięci\s+)?wszystko(?:,?\s+co\s+wiesz)?\s+(?:o|na\s+temat)\s+{ARG}",
        ),
        ("clear_topic", rf"zapomnij\s+o\s+wszystkim(?:,?\s+co\s+wiesz)?\s+o\s+{ARG}"),
        (
            "dont_remember",
            rf"nie\s+(?:zapamiętuj|zapamiętujcie|zapamiętywać|zapisuj|zapisywać)(?:\s+sobie)?"
            rf"(?:\s+(?:tego|to))?(?:\s+w\s+pamięci)?{_PL_TAIL}",
        ),
        ("dont_remember", rf"(?:tego|to)\s+nie\s+(?:zapamiętuj|zapisuj){_PL_TAIL}"),
        (
            "dont_remember",
            rf"nie\s+(?:musisz|trzeba)\s+(?:tego\s+)?(?:zapamiętywać|pamiętać|zapamiętać)"
            rf"(?:\s+tego)?{_PL_TAIL}",
        ),
        ("remember", rf"nie\s+(?:zapomnij|zapominaj)(?:{COLON}|,?\s+że\s+){ARG}"),
        ("remember", rf"(?:zapamiętaj|zapamiętać)(?:\s+sobie)?(?:\s+to)?{THEN}{ARG}"),
        (
            "remember",
            rf"(?:zapisz|zapisać|zanotuj|zanotować)(?:\s+sobie)?(?:\s+w\s+pamięci)?"
            rf"(?:{COLON}|,?\s+że\s+){ARG}",
        ),
        ("remember", rf"(?:pamiętaj|miej\s+na\s+uwadze)(?:{COLON}|,?\s+że\s+){ARG}"),
        ("forget", r"(?:zapomnij|zapomnijcie)"),
        ("forget", rf"(?:zapomnij|zapomnieć){THEN}{ARG}"),
    ),
    connector=r"że",
    topic_lead=(
        r"to,?\s+co\s+(?:ci\s+)?(?:powiedział|mówił|napisał)(?:em|am)(?:\s+o)?|"
        r"co\s+(?:ci\s+)?(?:powiedział|mówił|napisał)(?:em|am)(?:\s+o)?|"
        r"na\s+temat|o|że|mojego|mojej|moich|moimi|moim|moją|moja|moje|mój|moi"
    ),
    back_references=("to", "tego", "tym", "tamto", "to ostatnie", "ostatnie"),
    everything=("wszystko", "wszystkim", "całą pamięć"),
    interrogative=r"jak|kiedy|gdzie|co|kto|czy|ile|dlaczego",
    reminder=r"żeby|aby|by",
    new_clause=r"chodźmy|zróbmy|weźmy|lepiej|wolę|zamiast|ja|my|to\s+nie",
)

# ------------------------------------------------------------------------- Spanish
_ES_ABOUT = r"(?:sobre|de|acerca\s+de)"
_ES_KNOW = (
    r"(?:sabés|sabes|sabe|recordás|recuerdas|recuerda|conocés|conoces|tenés\s+guardado|"
    r"tienes\s+guardado)"
)
_ES_SHOW = r"(?:muéstrame|mostrame|mostrá|muestra|muéstreme|enséñame|mostrar)"
_ES_TAIL = rf"(?:{COLON}(?P<arg>.+)|,?\s+que\s+(?P<arg2>.+)|\s*,.*)?"
_ES_REMEMBER = r"(?:recuerda|recordá|recuerde|recordar|memoriza|memorizá|memorice|memorizar)"
_ES_FORGET = r"(?:olvida|olvidá|olvidar|olvídate|olvidate|olvídese|olvidarte)"

SPANISH = Phrasebook(
    language="es",
    commands=(
        (
            "new_conversation",
            r"(?:(?:empecemos|comencemos|iniciemos|arranquemos|empezá|empieza|empezar|comenzar|"
            r"iniciar|abrí|abre)\s+)?(?:una\s+|un\s+)?(?:nueva\s+(?:conversación|charla)|"
            r"conversación\s+nueva|nuevo\s+chat)",
        ),
        (
            "what_do_you_know",
            rf"(?:(?:dime|decime|contame|cuéntame|dígame)\s+)?qué\s+(?:es\s+lo\s+que\s+)?"
            rf"{_ES_KNOW}(?:\s+(?:vos|tú|usted))?\s+{_ES_ABOUT}\s+mí",
        ),
        ("show_memory", rf"{_ES_SHOW}\s+(?:toda\s+)?(?:tu|la|su)\s+memoria"),
        (
            "show_memory",
            rf"{_ES_SHOW}\s+(?:todo\s+)?lo\s+que\s+(?:recuerdas|recordás|sabes|sabés|"
            r"tenés\s+guardado|tienes\s+guardado)",
        ),
        ("show_memory", r"qué\s+(?:hay\s+en\s+tu\s+memoria|recuerdas|recordás)"),
        (
            "clear_topic",
            rf"{_ES_FORGET}(?:\s+de)?\s+todo(?:\s+lo\s+que\s+sabés|\s+lo\s+que\s+sabes)?\s+"
            rf"{_ES_ABOUT}\s+{ARG}",
        ),
        (
            "clear_topic",
            rf"(?:borrá|borra|borre|borrar|eliminá|elimina|elimine|eliminar|limpiá|limpia|"
            rf"limpie|limpiar)\s+(?:tu\s+memoria|la\s+memoria|todo(?:\s+lo\s+que\s+sab[eé]s)?)"
            rf"\s+{_ES_ABOUT}\s+{ARG}",
        ),
        (
            "dont_remember",
            rf"no\s+(?:recuerdes|recuerde|memorices|memorice)(?:\s+(?:esto|eso))?{_ES_TAIL}",
        ),
        ("dont_remember", rf"no\s+(?:lo|la)\s+(?:recuerdes|recuerde|memorices){_ES_TAIL}"),
        ("dont_remember", rf"no\s+te\s+acuerdes(?:\s+de\s+(?:esto|eso))?{_ES_TAIL}"),
        (
            "dont_remember",
            rf"no\s+(?:guardes|guarde|anotes|registres)\s+(?:esto\s+|eso\s+)?en\s+"
            rf"(?:tu\s+|la\s+)?memoria{_ES_TAIL}",
        ),
        (
            "dont_remember",
            rf"no\s+(?:hace\s+falta|es\s+necesario|tenés\s+que|tienes\s+que|necesitás|necesitas)"
            rf"\s+(?:recordar|memorizar)(?:lo)?(?:\s+(?:esto|eso))?{_ES_TAIL}",
        ),
        ("dont_remember", rf"(?:esto|eso)\s+no\s+(?:lo\s+)?(?:recuerdes|memorices){_ES_TAIL}"),
        (
            "remember",
            rf"no\s+(?:te\s+olvides|se\s+olvide|olvides)(?:\s+de)?(?:{COLON}|,?\s+que\s+){ARG}",
        ),
        ("remember", rf"{_ES_REMEMBER}(?:lo)?(?:\s+(?:esto|eso))?{THEN}{ARG}"),
        (
            "remember",
            rf"(?:acuérdate|acordate|acuérdese|acordarte)(?:\s+de)?(?:{COLON}|,?\s+que\s+){ARG}",
        ),
        ("remember", rf"(?:tené|ten|tenga)\s+en\s+cuenta(?:{COLON}|,?\s+que\s+){ARG}"),
        (
            "remember",
            rf"(?:guarda|guardá|guarde|guardar|anota|anotá|anote|anotar)\s+en\s+(?:tu\s+)?"
            rf"memoria{THEN}{ARG}",
        ),
        ("forget", r"(?:olvídalo|olvidalo|olvídate|olvidate|olvidarlo)"),
        ("forget", rf"{_ES_FORGET}{THEN}{ARG}"),
    ),
    connector=r"que",
    topic_lead=(
        r"lo\s+que\s+te\s+(?:dije|conté|escribí)(?:\s+(?:de|sobre|acerca\s+de))?|"
        r"eso\s+de|lo\s+de|acerca\s+de|sobre|del|de|que|los|las|el|la|unos|unas|un|una|mis|mi"
    ),
    back_references=("eso", "esto", "lo", "ello", "aquello", "lo último"),
    everything=("todo", "todo lo que sabes", "todo lo que sabés"),
    interrogative=r"cuando|como|donde|quien|quienes|por\s+que|cual|cuales|si",
    reminder=r"(?:de\s+)?\w+(?:ar|er|ir)(?:lo|la|los|las|le|les|me|te|se|nos)?",
    new_clause=r"vamos|mejor|hagamos|yo|prefiero|usemos|tomemos|en\s+vez",
)

# ----------------------------------------------------------------------- Ukrainian
_UK_MEMORY = r"(?:свою\s+|твою\s+|всю\s+)?пам'ять"
_UK_KNOW = r"(?:знаєш|пам'ятаєш|запам'ятав|запам'ятала)"
_UK_TAIL = rf"(?:{COLON}(?P<arg>.+)|,?\s+що\s+(?P<arg2>.+)|\s*,.*)?"
_UK_FORGET = r"(?:забудь|забудьте|забути)"

UKRAINIAN = Phrasebook(
    language="uk",
    commands=(
        (
            "new_conversation",
            r"(?:(?:почнімо|почнемо|давай\s+почнемо|давай\s+почнімо|розпочнімо|розпочнемо|"
            r"почни|розпочни)\s+)?(?:нову\s+(?:розмову|бесіду)|новий\s+чат)|"
            r"нова\s+(?:розмова|бесіда)",
        ),
        (
            "what_do_you_know",
            rf"(?:(?:скажи|розкажи)(?:\s+мені)?,?\s+)?що\s+(?:ти\s+)?(?:про\s+мене\s+{_UK_KNOW}|"
            rf"{_UK_KNOW}\s+про\s+мене)",
        ),
        ("show_memory", rf"(?:покажи|покажіть|показати)(?:\s+мені)?\s+{_UK_MEMORY}"),
        (
            "show_memory",
            rf"(?:покажи|покажіть)(?:\s+мені)?,?\s+(?:що|все,?\s+що)\s+(?:ти\s+)?{_UK_KNOW}",
        ),
        ("show_memory", r"що\s+ти\s+пам'ятаєш"),
        (
            "clear_topic",
            rf"(?:очисти|очистіть|очистити|видали|видаліть|видалити|зітри|зітріть|стерти)\s+"
            rf"{_UK_MEMORY}\s+(?:про|щодо)\s+{ARG}",
        ),
        (
            "clear_topic",
            rf"(?:видали|видаліть|видалити|зітри|зітріть|забудь|забудьте|забути)\s+"
            rf"(?:з\s+пам'яті\s+)?(?:геть\s+)?(?:все|усе)(?:,?\s+що\s+знаєш)?\s+(?:про|щодо)\s+{ARG}",
        ),
        (
            "dont_remember",
            rf"не\s+(?:запам'ятовуй|запам'ятовуйте|записуй|записуйте)(?:\s+(?:це|цього))?{_UK_TAIL}",
        ),
        ("dont_remember", rf"(?:це|цього)\s+не\s+(?:запам'ятовуй|записуй)(?:те)?{_UK_TAIL}"),
        (
            "dont_remember",
            rf"не\s+(?:треба|потрібно|варто|слід)\s+(?:це\s+|цього\s+)?(?:запам'ятовувати|"
            rf"запам'ятати|записувати|пам'ятати)(?:\s+(?:це|цього))?{_UK_TAIL}",
        ),
        (
            "dont_remember",
            rf"не\s+зберігай(?:те)?\s+(?:це\s+|цього\s+)?(?:в|у)\s+пам'яті{_UK_TAIL}",
        ),
        (
            "remember",
            rf"не\s+(?:забудь|забувай|забудьте|забувайте)(?:{COLON}|,?\s+що\s+){ARG}",
        ),
        ("remember", rf"(?:запам'ятай|запам'ятайте|запам'ятати)(?:\s+собі)?(?:\s+це)?{THEN}{ARG}"),
        (
            "remember",
            rf"(?:пам'ятай|пам'ятайте|май\s+на\s+увазі|майте\s+на\s+увазі|врахуй|врахуйте)"
            rf"(?:{COLON}|,?\s+що\s+){ARG}",
        ),
        (
            "remember",
            rf"(?:запиши|запишіть)(?:\s+собі)?(?:\s+(?:в|у)\s+пам'ять)?(?:{COLON}|,?\s+що\s+){ARG}",
        ),
        ("forget", r"(?:забудь|забудьте)"),
        ("forget", rf"{_UK_FORGET}{THEN}{ARG}"),
    ),
    connector=r"що",
    topic_lead=(
        r"те,?\s+що\s+(?:я\s+)?(?:сказав|сказала|казав|казала|писав|писала)(?:\s+про)?|"
        r"що\s+я\s+(?:сказав|сказала|казав|казала)(?:\s+про)?|"
        r"про|щодо|що|мого|моєї|моїх|моїй|моєму|моїм|мою|мій|моя|моє|мої"
    ),
    back_references=("це", "цього", "то", "це все", "все це", "останнє", "того"),
    everything=("все", "усе", "геть усе", "геть все"),
    interrogative=r"коли|як|де|хто|чи|скільки|чому|навіщо",
    reminder=r"\w+(?:ти|тися|тись)",
    new_clause=r"давай|краще|я|ми|ходімо|зробімо",
)

BOOKS: tuple[Phrasebook, ...] = (ENGLISH, POLISH, SPANISH, UKRAINIAN)

# Greetings, politeness and asides that may open a command, in any language.
LEAD_INS: tuple[str, ...] = (
    r"please|pls|plz|hey|hi|hello|ok|okay|alright|so|also|and|oh|well|now|btw|by\s+the\s+way",
    r"never\s*mind|i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|i\s+need\s+you\s+to",
    r"(?:this|that|it)(?:'s|\s+is)\s+(?:not\s+important|unimportant|private|personal|irrelevant)",
    r"proszę|hej|cześć|dobra|dobrze|ok|okej|słuchaj|teraz|aha|no\s+to|a|nieważne",
    r"to\s+(?:nieważne|nie\s+jest\s+ważne|prywatne)",
    r"por\s+favor|porfa|porfi|oye|oí|che|hola|bueno|vale|dale|ey|mira|mirá|ahora|y",
    r"(?:esto|eso)\s+no\s+(?:es\s+importante|importa)|no\s+es\s+importante|no\s+importa",
    r"будь\s+ласка|прошу|гей|привіт|слухай|ок|окей|добре|гаразд|тепер|а|і|неважливо",
    r"(?:це|то)\s+(?:неважливо|не\s+важливо|неважливе|не\s+важливе|приватне)",
)
# Lead-ins that turn a command into a polite question ("can you forget my address?").
REQUESTS: tuple[str, ...] = (
    r"can\s+you|could\s+you|would\s+you|will\s+you",
    r"czy\s+możesz|możesz|czy\s+mógłbyś|czy\s+mogłabyś|mógłbyś|mogłabyś",
    r"puedes|podés|podrías|puede|podría",
    r"чи\s+можеш|можеш|чи\s+можете|можете|чи\s+не\s+міг\s+би\s+ти|чи\s+не\s+могла\s+б\s+ти",
)
# Politeness that may close a command.
TRAILERS = (
    r"please|pls|plz|thanks|thank\s+you|thx|proszę|dzięki|dziękuję|por\s+favor|porfa|gracias|"
    r"будь\s+ласка|дякую"
)
