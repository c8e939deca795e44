"""Memory commands spoken in a conversation, detected without a model (SPEC C1).

:func:`detect_command` recognises a message that *is* a memory command, in English,
Polish, Spanish (tú, vos and usted forms) and Ukrainian:

* remember — "remember (that) X", "remember: X", "don't forget that X", "keep in mind
  that X", "zapamiętaj, że X", "pamiętaj, że X", "nie zapomnij, że X", "recordá que X",
  "recuerda que X", "no te olvides de que X", "запам'ятай, що X", "не забудь, що X";
* forget — "forget (about) X", "zapomnij o X", "olvidá X", "olvidate de X", "забудь про X";
  "forget it/that", "zapomnij o tym", "olvídalo", "olvida eso", "забудь це" have no
  argument (they mean what was just said);
* don't remember — "don't remember this(: X)", "nie zapamiętuj (tego)", "no recuerdes
  esto", "no te acuerdes de esto", "не запам'ятовуй це", "не треба це запам'ятовувати";
* what do you know — "what do you know/remember about me", "co o mnie wiesz/pamiętasz",
  "¿qué sabés de mí?", "¿qué sabes sobre mí?", "що ти (про мене) знаєш (про мене)";
* show memory — "show (me) your memory", "show me what you remember", "pokaż swoją
  pamięć", "mostrame/muéstrame tu memoria", "покажи свою пам'ять";
* clear topic — "clear your memory about X", "forget/delete everything about X",
  "wyczyść pamięć o X", "borrá tu memoria sobre X", "olvidá todo sobre X",
  "очисти пам'ять про X";
* new conversation — the whole message "new conversation", "let's start a new
  conversation", "nowa rozmowa", "nueva conversación", "нова розмова".

Matching is case-insensitive and tolerates dropped accents ("zapamietaj", "conversacion")
and any Ukrainian apostrophe (' ’ ʼ). Greetings and politeness ("please", "proszę",
"por favor", "будь ласка"), an address ("Jaskier, …") and an aside such as "this is not
important, …" may come first; closing punctuation and "please" are ignored. The command
must open the message: "I forgot my keys", "do you remember when we met?" and "don't
forget to buy milk" are not commands. A message ending in "?" is a remember, forget or
clear command only when asked as a request ("can you forget my address?"). "Remember
this" and "forget everything" alone are not detected: there is nothing to keep, and no
topic to forget.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from kronika.core.command_phrases import BOOKS, LEAD_INS, REQUESTS, TRAILERS, Phrasebook


class CommandKind(StrEnum):
    """What a memory command asks for."""

    REMEMBER = "remember"
    FORGET = "forget"
    DONT_REMEMBER = "dont_remember"
    WHAT_DO_YOU_KNOW = "what_do_you_know"
    SHOW_MEMORY = "show_memory"
    CLEAR_TOPIC = "clear_topic"
    NEW_CONVERSATION = "new_conversation"


@dataclass(frozen=True, slots=True)
class MemoryCommand:
    """A detected command: its kind, its cleaned argument, the language and the message."""

    kind: CommandKind
    argument: str | None
    language: str
    text: str


_ACCENTS = str.maketrans(
    {
        **dict.fromkeys("ąáàâäãå", "a"),
        **dict.fromkeys("ćç", "c"),
        **dict.fromkeys("ęéèêë", "e"),
        **dict.fromkeys("íìîï", "i"),
        "ł": "l",
        **dict.fromkeys("ńñ", "n"),
        **dict.fromkeys("óòôöõ", "o"),
        "ś": "s",
        **dict.fromkeys("úùûü", "u"),
        **dict.fromkeys("źż", "z"),
        **dict.fromkeys("’ʼ‘`´", "'"),
    }
)


def match_form(text: str) -> str:
    """``text`` lower-cased, with Latin accents dropped and apostrophes unified.

    The result has exactly the length of ``text`` (a character whose lower case is
    longer is kept as it is), so a span found in it is the same span of the original.
    Cyrillic letters are only lower-cased (``й`` and ``ї`` stay themselves).
    """
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text).translate(_ACCENTS)


def compile_phrase(source: str, flags: int = 0) -> re.Pattern[str]:
    """Compile a pattern written with accents and apostrophes to match :func:`match_form` text."""
    return re.compile(source.translate(_ACCENTS).replace("'", "'?"), flags)


def _lead(alternatives: str) -> re.Pattern[str]:
    """Words at the start of a text, followed by a separator or the end."""
    return compile_phrase(rf"(?:{alternatives})(?:\s*[,:]\s*|\s+|$)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class _Book:
    source: Phrasebook
    commands: tuple[tuple[CommandKind, re.Pattern[str]], ...]
    connector: re.Pattern[str]
    topic_lead: re.Pattern[str]
    back_references: frozenset[str]
    everything: frozenset[str]
    interrogative: re.Pattern[str]
    reminder: re.Pattern[str]
    new_clause: re.Pattern[str]


def _book(p: Phrasebook) -> _Book:
    return _Book(
        source=p,
        commands=tuple((CommandKind(k), compile_phrase(s, re.DOTALL)) for k, s in p.commands),
        connector=_lead(p.connector),
        topic_lead=_lead(p.topic_lead),
        back_references=frozenset(match_form(w) for w in p.back_references),
        everything=frozenset(match_form(w) for w in p.everything),
        interrogative=compile_phrase(rf"(?:{p.interrogative})\b"),
        reminder=compile_phrase(rf"(?:{p.reminder})\b"),
        new_clause=compile_phrase(rf"[,;]\s*(?:{p.new_clause})\b"),
    )


_BOOKS = tuple(_book(p) for p in BOOKS)
_SEPARATOR = r"[\s,!.:;\-–—¿¡]+"
_LEAD_IN = compile_phrase(rf"(?:{'|'.join(LEAD_INS)}){_SEPARATOR}")
_REQUEST = compile_phrase(rf"(?:{'|'.join(REQUESTS)})(?:\s+please)?{_SEPARATOR}")
_TRAILER = compile_phrase(rf"[\s,]+(?:{TRAILERS})$")
# An address: one or two capitalised words (or an @mention) followed by a comma or colon.
_ADDRESS = re.compile(r"@?[^\W\d_][\w'’ʼ-]*(?:\s+[^\W\d_][\w'’ʼ-]*)?\s*[,:]\s*|@\w+\s+")
_OPEN_QUOTES = "\"'“„«"
_CLOSE_QUOTES = "\"'”“»"
_EDGE = " \t\r\n,;:-–—"
_END = _EDGE + ".!?…"
_ACTIONS = frozenset(
    {
        CommandKind.REMEMBER,
        CommandKind.FORGET,
        CommandKind.DONT_REMEMBER,
        CommandKind.CLEAR_TOPIC,
    }
)
_REJECTED_CONTENT = frozenset({"me", "mnie", "мене"})
_MAX_LEAD_INS = 4


def detect_command(text: str) -> MemoryCommand | None:
    """The memory command ``text`` is, or ``None`` for an ordinary message."""
    folded = match_form(text)
    start, end, asked = _trim(folded)
    request = False
    for _ in range(_MAX_LEAD_INS + 1):
        if start >= end:
            return None
        found = _match(text, folded[start:end], text[start:end], asked and not request)
        if found is not None:
            return found
        step = _skip_lead_in(text, folded, start, end)
        if step is None:
            return None
        start, was_request = step
        request = request or was_request
    return None


def _trim(folded: str) -> tuple[int, int, bool]:
    """The span left after outer spaces, closing punctuation and politeness; and whether
    the message ended with a question mark."""
    start, end = 0, len(folded)
    while start < end and (folded[start].isspace() or folded[start] in "¿¡"):
        start += 1
    asked = False
    while True:
        before = end
        while start < end and (folded[end - 1] in _END or _is_symbol(folded[end - 1])):
            asked = asked or folded[end - 1] == "?"
            end -= 1
        if m := _TRAILER.search(folded, start, end):
            end = m.start()
        if end == before:
            return start, end, asked


def _is_symbol(ch: str) -> bool:
    return unicodedata.category(ch) == "So"


def _skip_lead_in(text: str, folded: str, start: int, end: int) -> tuple[int, bool] | None:
    """Where the message continues after one lead-in, and whether that was a request."""
    if m := _REQUEST.match(folded, start, end):
        return m.end(), True
    if m := _LEAD_IN.match(folded, start, end):
        return m.end(), False
    if (m := _ADDRESS.match(text, start, end)) and all(
        word[0] == "@" or word[0].isupper() for word in text[start : m.end()].split()
    ):
        return m.end(), False
    return None


def _match(text: str, folded: str, original: str, asked: bool) -> MemoryCommand | None:
    for book in _BOOKS:
        for kind, pattern in book.commands:
            if (m := pattern.fullmatch(folded)) is None or (asked and kind in _ACTIONS):
                continue
            name = next((g for g in ("arg", "arg2") if g in m.re.groupindex and m[g]), None)
            if name is None:
                if kind in (CommandKind.REMEMBER, CommandKind.CLEAR_TOPIC):
                    continue
                return MemoryCommand(kind, None, book.source.language, text)
            s, e = m.span(name)
            direct = not re.search(r"[:,\-–—]\s*$", folded[m.start() : s])
            ok, argument = _argument(kind, book, folded, original, s, e, direct)
            if ok:
                return MemoryCommand(kind, argument, book.source.language, text)
    return None


def _argument(
    kind: CommandKind, book: _Book, folded: str, original: str, s: int, e: int, direct: bool
) -> tuple[bool, str | None]:
    """Clean the argument at ``[s, e)``: ``(False, None)`` when it shows this is no command."""
    s, e = _strip(folded, s, e)
    head = folded[s:e]
    if kind is CommandKind.REMEMBER and (
        book.interrogative.match(head)
        or (direct and book.reminder.match(head))
        or head in _REJECTED_CONTENT
    ):
        return False, None
    if kind in (CommandKind.FORGET, CommandKind.CLEAR_TOPIC) and book.new_clause.search(head):
        return False, None
    if kind in (CommandKind.REMEMBER, CommandKind.DONT_REMEMBER):
        if m := book.connector.match(folded, s, e):
            s, e = _strip(folded, m.end(), e)
    else:
        while m := book.topic_lead.match(folded, s, e):
            s, e = _strip(folded, m.end(), e)
        if folded[s:e] in book.everything:
            return False, None
    argument = folded[s:e]
    if not argument or argument in book.back_references:
        # "forget that" / "don't remember this" mean what was just said; "remember this"
        # and "clear your memory about it" name nothing to keep or clear.
        return kind in (CommandKind.FORGET, CommandKind.DONT_REMEMBER), None
    return True, original[s:e]


def _strip(folded: str, s: int, e: int) -> tuple[int, int]:
    """Narrow ``[s, e)`` past separators, closing punctuation and a pair of quotes."""
    while True:
        before = (s, e)
        while s < e and folded[s] in _EDGE:
            s += 1
        while s < e and (folded[e - 1] in _END or _is_symbol(folded[e - 1])):
            e -= 1
        if e - s >= 2 and folded[s] in _OPEN_QUOTES and folded[e - 1] in _CLOSE_QUOTES:
            s, e = s + 1, e - 1
        if (s, e) == before:
            return s, e
