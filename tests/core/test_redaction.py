"""Finding forgotten words in text: case and whitespace forgiven, whole words only,
Markdown structure kept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.redaction import MARKER, phrase_pattern, redact, redact_document


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
