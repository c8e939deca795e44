"""Payload assembly and topic matching (pure functions)."""

from __future__ import annotations

from datetime import UTC, datetime

from kronika.core.context import (
    WindowMessage,
    extractive_digest,
    fit_tokens,
    recalled_line,
    system_prompt,
)
from kronika.core.matching import facts_about, topic_section
from kronika.core.model import BrainSection, ItemType, Layer, MemoryItem, Provenance, Tier

WHEN = datetime(2026, 11, 22, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


def fact(key: str, value: str, section: str = "User") -> MemoryItem:
    return MemoryItem(
        id=f"f-{key}",
        agent="a",
        content=f"{key}: {value}",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=WHEN,
        updated_at=WHEN,
        provenance=Provenance("brain.md", line=3),
        key=key,
        value=value,
        section=section,
    )


def test_empty_parts_leave_no_headings() -> None:
    text = system_prompt(
        identity="You are Jaskier.", memory_block="", active_context=" ", recalled=[], lessons=[]
    )
    assert text == "You are Jaskier."
    full = system_prompt(
        identity="I",
        memory_block="<memory>\n- x\n</memory>",
        active_context="We talked.",
        recalled=["- r"],
        lessons=["- l"],
    )
    assert (
        full.index("<memory>")
        < full.index("## Last conversation")
        < full.index("## Recalled from earlier conversations")
        < full.index("## Lessons learned")
    )


def test_fit_tokens_cuts_at_a_word_and_marks_it() -> None:
    assert fit_tokens("one two three", 5, words) == "one two three"
    cut = fit_tokens("one two three four five six", 3, words)
    assert cut.endswith("…") and words(cut) <= 3


def test_recalled_line_cites_its_source() -> None:
    item = fact("city", "Kraków")
    assert recalled_line(item) == "- [fact 2026-11-22 auto brain.md#L3] city: Kraków"


def test_extractive_digest_keeps_lead_sentences_and_says_what_it_dropped() -> None:
    messages = [WindowMessage("user", f"Point {n}. More words here.", n) for n in range(1, 30)]
    digest = extractive_digest(messages, "Earlier summary.", 60, words)
    assert digest.startswith("Earlier summary.")
    assert "earlier messages are in the saved transcript only" in digest
    assert "user: Point 29." in digest and "More words" not in digest
    assert words(digest) <= 60


def test_topics_match_keys_values_inflections_and_translations() -> None:
    facts = [fact("job", "nurse"), fact("city", "Kraków"), fact("drink", "tea", "Preferences")]
    assert [f.key for f in facts_about("my job", facts)] == ["job"]
    assert [f.key for f in facts_about("pracy", facts)] == ["job"]  # Polish, inflected
    assert [f.key for f in facts_about("Krakowie", facts)] == ["city"]
    assert [f.key for f in facts_about("where I live", facts)] == ["city"]
    assert [f.key for f in facts_about("preferencias", facts)] == ["drink"]
    assert facts_about("the", facts) == []
    assert facts_about("astronomy", facts) == []


def test_a_single_section_word_names_the_section() -> None:
    assert topic_section("ustalenia") is BrainSection.DECISIONS
    assert topic_section("my preferences") is BrainSection.PREFERENCES
    assert topic_section("preferences about tea") is None
