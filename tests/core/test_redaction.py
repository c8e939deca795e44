"""Finding forgotten words in text: case and whitespace forgiven, whole words only,
Markdown structure kept."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.redaction import (
    _LATIN1_FOLDED,
    BLOCK_TEXTS,
    MARKER,
    WORDS_FIRST,
    _fold,
    _latin1,
    phrase_pattern,
    phrase_regex,
    redact,
    redact_document,
)


def test_a_phrase_matches_across_case_and_whitespace_but_never_inside_a_word() -> None:
    pattern = phrase_pattern(["green tea", "x"])
    assert pattern is not None
    text = "Green\n  TEA at 8, green teapot, evergreen tea, green tea."
    assert redact(text, pattern) == (
        f"{MARKER} at 8, green teapot, evergreen tea, {MARKER}.",
        2,
    )
    assert phrase_pattern(["ab", "  "]) is None  # too short to look for safely


def test_the_longest_phrase_wins() -> None:
    pattern = phrase_pattern(["tea", "I prefer tea with milk"])
    assert pattern is not None
    assert redact("I prefer tea with milk. Tea!", pattern) == (f"{MARKER}. {MARKER}!", 2)


def test_a_transcript_keeps_its_headers_and_metadata() -> None:
    pattern = phrase_pattern(["Ana"])
    assert pattern is not None
    text = (
        "---\nsession: s1\nsummary: Ana talked\n---\n\n"
        "### [s1_1] Ana · 2026-11-22T09:00:00Z\nI am Ana.\n"
        "- a note about Ana <!-- id=n-1 ent=Ana -->\n"
    )
    done = redact_document(text, pattern)
    assert done.text == (
        f"---\nsession: s1\nsummary: {MARKER} talked\n---\n\n"
        f"### [s1_1] Ana · 2026-11-22T09:00:00Z\nI am {MARKER}.\n"
        f"- a note about {MARKER} <!-- id=n-1 ent=Ana -->\n"
    )
    assert (done.matches, done.lines) == (3, 3)
    assert redact_document("nothing here\n", pattern).text == "nothing here\n"


def test_a_header_without_its_closing_line_is_read_as_text() -> None:
    pattern = phrase_pattern(["rooibos"])
    assert pattern is not None
    done = redact_document("---\nsession: s1\nI prefer rooibos\n", pattern)
    assert done.text == f"---\nsession: s1\nI prefer {MARKER}\n"


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab c\n#-:[]<!>\r", max_size=120),
    phrase=st.text(alphabet="abc", min_size=3, max_size=5),
)
def test_text_without_the_phrase_is_left_byte_for_byte(text: str, phrase: str) -> None:
    pattern = phrase_pattern([phrase])
    assert pattern is not None
    done = redact_document(text, pattern)
    if pattern.search(text) is None:
        assert (done.text, done.matches, done.lines) == (text, 0, 0)
    else:
        assert done.text.count(MARKER) == done.matches <= len(pattern.findall(text))


def test_a_frontmatter_name_is_never_redacted_even_when_it_is_the_word() -> None:
    """A header field named like the forgotten word keeps its name (the file must stay
    readable); its value and the body are redacted."""
    pattern = phrase_pattern(["tea"])
    assert pattern is not None
    done = redact_document("---\ntea: tea time\n---\nmore tea\n", pattern)
    assert done.text == f"---\ntea: {MARKER} time\n---\nmore {MARKER}\n"


# The letters where case-insensitive matching is subtle (long s, Kelvin sign, sharp s,
# final sigma, micro sign and mu, dotted and dotless i, ligatures, Polish and Ukrainian
# letters), a few non-word characters a phrase may start with, and whitespace.
_LETTERS = "aAsSſkKKßσςΣµμΜiIİıﬅﬆłŁżŻєЄїЇґҐ"
_CHARS = st.sampled_from([*_LETTERS, " ", "\n", "-", "#", "'", ".", "é", "\u0301"])
_WORDS = st.text(_CHARS, min_size=1, max_size=8)


def _alternation(phrases: list[str]) -> re.Pattern[str] | None:
    """The single regular expression of every phrase, longest first: what phrase_pattern
    must find the same matches as."""
    wanted = {" ".join(p.split()) for p in phrases}
    wanted = sorted((p for p in wanted if len(p) >= 3 and p != MARKER), key=lambda p: (-len(p), p))
    if not wanted:
        return None
    return re.compile("|".join(phrase_regex(p) for p in wanted), re.IGNORECASE)


@given(st.lists(_WORDS, min_size=1, max_size=12), st.lists(_WORDS, max_size=60), st.data())
@settings(max_examples=400, deadline=None)
def test_many_phrases_are_found_exactly_where_one_alternation_finds_them(
    phrases: list[str], words: list[str], data: st.DataObject
) -> None:
    # Texts made of the phrases themselves, in other cases, glued and spaced.
    pieces = [*words, *(data.draw(st.sampled_from([p, p.upper(), p.casefold()])) for p in phrases)]
    text = "".join(data.draw(st.permutations(pieces)))
    fast, slow = phrase_pattern(phrases), _alternation(phrases)
    assert (fast is None) == (slow is None)
    if fast is None or slow is None:
        return
    assert [m.span() for m in fast.finditer(text)] == [m.span() for m in slow.finditer(text)]
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert [m.span() for m in fast.finditer(text, start, end)] == [
        m.span() for m in slow.finditer(text, start, end)
    ]
    assert fast.subn(MARKER, text) == slow.subn(MARKER, text)
    # a text too long to walk word by word before its words are looked at: the same
    # matches (found, or ruled out by a word of every phrase missing)
    long = text * (WORDS_FIRST // max(len(text), 1) + 1)
    assert [m.span() for m in fast.finditer(long)] == [m.span() for m in slow.finditer(long)]
    if not fast.possible(text, start, end):
        assert slow.search(text[start:end]) is None


# Latin-1 letters (a text of them alone is folded as its bytes), and phrases that may
# hold letters re equates with them (long s, Kelvin sign, Ÿ, mu)
_LATIN1 = st.text(st.sampled_from([*"aAsSkKßµÀàÉéÿÞþ", " ", "\n", "-", "."]), max_size=8)
_TRICKY = st.text(st.sampled_from([*"aAsSkKßµÀàÉéÿÞþſKŸμ", " "]), min_size=3, max_size=8)


@given(st.lists(_TRICKY, min_size=1, max_size=4), st.lists(_LATIN1, max_size=80), st.data())
@settings(max_examples=400, deadline=None)
def test_a_latin1_text_is_ruled_out_only_when_no_phrase_is_in_it(
    phrases: list[str], words: list[str], data: st.DataObject
) -> None:
    latin = [p.lower() for p in phrases if _latin1(p.lower()) is not None]
    pieces = [*words, *latin]
    text = " ".join(data.draw(st.permutations(pieces)))
    assert _latin1(text) is not None
    fast, slow = phrase_pattern(phrases), _alternation(phrases)
    if fast is None or slow is None:
        return
    if not fast.possible(text):
        assert slow.search(text) is None
    long = text * (WORDS_FIRST // max(len(text), 1) + 1)
    assert [m.span() for m in fast.finditer(long)] == [m.span() for m in slow.finditer(long)]


def test_each_latin1_character_folds_to_one_as_lower_case_does() -> None:
    assert all(
        _LATIN1_FOLDED[code] == ord(chr(code).lower()) == ord(_fold(chr(code)))
        for code in range(256)
    )


@given(st.lists(_WORDS, min_size=1, max_size=6), st.lists(_WORDS, max_size=300), st.data())
@settings(max_examples=300, deadline=None)
def test_no_text_holding_a_phrase_is_passed_over_in_blocks(
    phrases: list[str], words: list[str], data: st.DataObject
) -> None:
    # An audit trail's lines looked at in blocks: every line holding a match is among
    # the ones given back, over blocks of every kind (none, some, all holding one).
    pool = [*words, *(data.draw(st.sampled_from([p, p.upper(), p.casefold()])) for p in phrases)]
    texts = data.draw(st.lists(st.sampled_from(pool), max_size=3 * BLOCK_TEXTS))
    fast, slow = phrase_pattern(phrases), _alternation(phrases)
    if fast is None or slow is None:
        return
    given_back = list(fast.which_may_match(texts))
    assert given_back == sorted(set(given_back))
    assert {n for n, t in enumerate(texts) if slow.search(t)} <= set(given_back)


def test_a_block_of_lines_without_a_word_of_the_phrase_is_passed_over() -> None:
    pattern = phrase_pattern(["Zofia moved to Kraków"])
    assert pattern is not None
    lines = [f"turn {n}: hello" for n in range(3 * BLOCK_TEXTS)]
    lines[BLOCK_TEXTS + 5] = "ZOFIA moved to KRAKÓW"
    assert list(pattern.which_may_match(lines)) == list(range(BLOCK_TEXTS, 2 * BLOCK_TEXTS))
    # read: the words of a block are taken from what it reads as (JSON's escapes)
    escaped = [line.replace("Ó", "\\u00d3") for line in lines]
    assert list(pattern.which_may_match(escaped)) == []
    unescaped = list(pattern.which_may_match(escaped, lambda b: b.replace("\\u00d3", "Ó")))
    assert unescaped == list(range(BLOCK_TEXTS, 2 * BLOCK_TEXTS))


def test_a_long_text_without_a_word_of_the_phrase_is_not_walked_word_by_word() -> None:
    # Forgetting one turn of a long session: the rest of the file (and every other
    # file) is searched for the turn's sentence. A text lacking one of its words
    # cannot hold it, whatever its case or spacing.
    pattern = phrase_pattern(["Zofia moved to Kraków in June"])
    assert pattern is not None
    text = "\n".join(f"Zofia said hello to Krzysztof, turn {n}" for n in range(2000))
    assert len(text) > WORDS_FIRST
    assert not pattern.possible(text)
    assert redact_document(text, pattern).matches == 0
    assert pattern.possible(text + "\nzofia   MOVED to KRAKÓW\nin june")
    assert redact(text + "\nzofia   MOVED to KRAKÓW\nin june.", pattern)[1] == 1
    assert redact_document(text + "\nZOFIA moved to kraków in June", pattern).matches == 1


def test_a_thousand_phrases_cost_a_pass_over_the_text_not_a_thousand() -> None:
    # Forgetting 1,000 items over a long transcript: one alternation tried every
    # phrase at every place. Counted in phrase tries, not timed.
    phrases = [f"secret number {n} of the vault" for n in range(1000)]
    text = (
        " ".join(f"word{n} and more words here" for n in range(2000))
        + " secret number 7 of the vault"
    )
    pattern = phrase_pattern(phrases)
    assert pattern is not None
    assert redact(text, pattern)[1] == 1
    tried = sum(len(pattern._by_word.get(w.lower(), ())) for w in re.findall(r"\w+", text))
    assert tried <= 1000  # only where a word starts a phrase ("secret": one place)


def test_a_short_text_without_a_word_of_the_phrase_is_not_walked_word_by_word() -> None:
    # Forgetting one turn of a long session: each of its other turns is a short block
    # of its own, searched for the turn's sentence. With a phrase of few words, a turn
    # lacking one of them is ruled out by looking the words up, not walked.
    pattern = phrase_pattern(["Zofia moved to Kraków in June"])
    assert pattern is not None
    turns = [f"Zofia said hello to Krzysztof, turn {n}" for n in range(2000)]
    assert all(len(t) < WORDS_FIRST for t in turns)
    assert sum(redact(t, pattern)[1] for t in turns) == 0
    assert pattern._compiled == {}  # no word was tried as the start of the phrase
    assert redact("zofia   MOVED to KRAKÓW in june.", pattern)[1] == 1
    assert redact_document("### [t1] Ada\nZOFIA moved to kraków in June\n", pattern).matches == 1
