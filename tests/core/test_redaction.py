"""Finding forgotten words in text: case and whitespace forgiven, whole words only,
Markdown structure kept."""

from __future__ import annotations

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
