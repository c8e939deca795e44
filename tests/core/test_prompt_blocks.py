from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.core.prompt import (
    choose_archive,
    render_brain,
    render_long_term_block,
    render_memory_block,
)

AT = datetime(2025, 11, 27, tzinfo=UTC)


def fact(
    id_: str,
    content: str,
    *,
    key: str | None = None,
    value: str | None = None,
    section: str | None = None,
    access_count: int = 0,
    age_days: int = 0,
    created: datetime = AT,
) -> MemoryItem:
    return MemoryItem(
        id=id_,
        agent="jaskier",
        content=content,
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=created,
        updated_at=AT - timedelta(days=age_days),
        provenance=Provenance("brain.md"),
        key=key,
        value=value,
        section=section,
        access_count=access_count,
    )


def test_no_facts_means_no_block_at_all():
    assert render_memory_block([]) == ""
    assert render_long_term_block([], []) == ""
    assert render_brain("jaskier", []) == ""


def test_memory_block_lists_keyed_and_plain_facts():
    block = render_memory_block(
        [fact("1", "x", key="city", value="Kraków"), fact("2", "prefers short\nanswers")]
    )
    assert block == (
        "<memory>\n- [fact 2025-11-27 auto] city: Kraków\n"
        "- [fact 2025-11-27 auto] prefers short answers\n</memory>"
    )


def test_memory_block_groups_by_section_in_brain_order():
    block = render_memory_block(
        [
            fact("1", "uses vim", section="preferences"),
            fact("2", "name: Ola", section="User"),
            fact("3", "unsorted"),
            fact("4", "likes tea", section="Preferences"),
        ]
    )
    said = "- [fact 2025-11-27 auto] "
    assert block.splitlines() == [
        "<memory>",
        said + "unsorted",
        "## User",
        said + "name: Ola",
        "## Preferences",
        said + "uses vim",
        said + "likes tea",
        "</memory>",
    ]


def test_long_term_block_puts_static_first_and_dedupes_by_id():
    static = [fact("s", "x", key="name", value="Ola", created=datetime(2024, 3, 1, tzinfo=UTC))]
    relevant = [fact("r", "moved to Gdańsk"), static[0]]
    assert render_long_term_block(relevant, static) == (
        "<LONG_TERM_MEMORY>\n- [fact 2024-03-01 auto] name: Ola\n"
        "- [fact 2025-11-27 auto] moved to Gdańsk\n</LONG_TERM_MEMORY>"
    )


def test_brain_orders_sections_and_omits_empty_ones():
    brain = render_brain(
        "jaskier",
        [
            fact("1", "ship v2 by Friday", section="Current"),
            fact("2", "name: Ola"),
            fact("3", "chose SQLite", section="Decisions"),
        ],
    )
    assert brain == (
        "# Brain of jaskier\n\n## User\n- name: Ola\n\n## Decisions\n- chose SQLite"
        "\n\n## Current\n- ship v2 by Friday"
    )
    assert "Preferences" not in brain


def words(text: str) -> int:
    return len(text.split())


def test_nothing_is_archived_when_the_brain_fits():
    facts = [fact("a", "likes tea"), fact("b", "lives in Kraków")]
    assert choose_archive(facts, budget=100, count=words) == []


def test_archive_takes_least_used_then_oldest_first():
    facts = [
        fact("popular", "likes tea", access_count=9, age_days=300),
        fact("old", "had a cat", access_count=1, age_days=200),
        fact("new", "bought a bike", access_count=1, age_days=1),
        fact("unused", "once visited Oslo", access_count=0, age_days=2),
    ]
    full = words(render_brain("jaskier", facts))
    # room for everything but about two facts
    chosen = choose_archive(facts, budget=full - 6, count=words)
    assert chosen == ["unused", "old"]


@given(st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=12), st.integers(0, 80))
def test_archiving_always_reaches_the_budget_or_empties_the_brain(uses, budget):
    facts = [
        fact(f"f{i}", f"fact number {i} " * (i % 3 + 1), access_count=u) for i, u in enumerate(uses)
    ]
    chosen = choose_archive(facts, budget=budget, count=words)
    left = [f for f in facts if f.id not in chosen]
    assert len(set(chosen)) == len(chosen)
    assert words(render_brain("jaskier", left)) <= budget or not left
