"""The user's own name is no answer to a question that calls them by it (engine/owner.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.engine.owner import own_names

AT = datetime(2026, 11, 22, tzinfo=UTC)


def fact(key: str, value: str, kind: ItemType = ItemType.PROFILE) -> MemoryItem:
    return MemoryItem(
        id=f"f-{key}",
        agent="default",
        type=kind,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        content=f"{key}: {value}",
        key=key,
        value=value,
        created_at=AT,
        updated_at=AT,
        provenance=Provenance(path="brain.md"),
    )


def test_the_name_a_question_calls_the_user_by_answers_nothing_else_it_asks() -> None:
    name, nickname, city = fact("ім'я", "Тарас"), fact("прізвисько", "Тарік"), fact("місто", "Київ")
    items = [name, nickname, city, fact("name", "Taras", ItemType.SEMANTIC)]
    assert own_names(items, "Where does Taras live now?") == {name.id}
    assert own_names(items, "Де живе Тарас?") == {name.id}
    assert own_names(items, "Where does the user live?") == set()
