"""The exact text kronika shows: citations, prompt lines, cut sentences, digests.

A model and a person both read these strings, so their shape is behaviour."""

from __future__ import annotations

from datetime import UTC, datetime

from kronika.core.context import WindowMessage, extractive_digest, fit_tokens, lead_sentence
from kronika.core.fusion import with_neighbours
from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.core.prompt import fact_line
from kronika.core.serialize import item_from_dict, item_to_dict

AT = datetime(2025, 11, 27, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


def test_a_citation_names_the_line_only_when_there_is_one() -> None:
    assert Provenance("brain.md", line=12).citation() == "brain.md#L12"
    assert Provenance("brain.md").citation() == "brain.md"


def _fact(**fields: object) -> MemoryItem:
    base: dict[str, object] = {
        "id": "f-1",
        "agent": "a",
        "content": "city: Kraków",
        "type": ItemType.FACT,
        "layer": Layer.LONG_TERM,
        "tier": Tier.LONG,
        "created_at": AT,
        "updated_at": AT,
        "provenance": Provenance("brain.md", line=3, session_id="s-7", turn_ids=("s-7_2",)),
    }
    return MemoryItem(**{**base, **fields})  # type: ignore[arg-type]


def test_a_prompt_line_shows_a_keyed_fact_by_its_value() -> None:
    assert fact_line(_fact(key="city", value="Kraków")) == "- city: Kraków"
    assert fact_line(_fact(key="city", value=None, content="Kraków")) == "- city: Kraków"
    assert fact_line(_fact(content="likes  mate\nevery day")) == "- likes mate every day"


def test_an_item_keeps_where_it_came_from_through_serialisation() -> None:
    item = _fact(key="city", value="Kraków")
    back = item_from_dict(item_to_dict(item))
    assert back.provenance == item.provenance
    assert back.provenance.session_id == "s-7"


def test_a_text_cut_to_a_budget_ends_in_an_ellipsis_or_is_empty() -> None:
    assert fit_tokens("one two three", 5, words) == "one two three"
    assert fit_tokens("one two three four five", 3, words) == "one two three…"
    assert fit_tokens("one two three", 0, words) == ""


def test_the_lead_sentence_is_the_first_sentence_or_a_cut_at_a_word() -> None:
    assert lead_sentence("It rained. Then it snowed.") == "It rained."
    assert lead_sentence("short enough", 50) == "short enough"
    assert lead_sentence("a long line without any stop at all", 12) == "a long line…"


def test_a_digest_lists_one_line_per_message_and_says_what_it_dropped() -> None:
    messages = [
        WindowMessage("user", "I moved to Valencia. It is warm.", 1),
        WindowMessage("assistant", "Nice! How is the flat?", 2),
    ]
    assert extractive_digest(messages, "Earlier: talked about work.", 100, words) == (
        "Earlier: talked about work.\nuser: I moved to Valencia.\nassistant: Nice!"
    )
    short = extractive_digest(messages, "Earlier: talked about work and the weather.", 12, words)
    assert short == (
        "Earlier: talked about…\n(2 earlier messages are in the saved transcript only.)"
    )
    # the note is never cut: when it alone is over the budget it stays, and says so
    assert extractive_digest(messages, "Earlier: work.", 3, words) == (
        "(2 earlier messages are in the saved transcript only.)"
    )


def test_a_neighbour_link_without_an_offset_is_ignored() -> None:
    """An index may list a turn beside itself or at offset 0; neither is a neighbour."""
    relevance = {"t1": 0.5, "t2": 0.8}
    found = with_neighbours(relevance, {"t1": [("t2", 0), ("t1", 1)]}, weight=0.5)
    assert found == relevance
