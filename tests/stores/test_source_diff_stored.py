"""The difference between a file's rows and the rows an index holds of it, read back as
column values (another worker wrote them last), is the one found from the rows as this
process wrote them: the same rows gone, written again and moved."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.ports import SourceState
from kronika.stores.postgres.dialect import POSTGRES
from kronika.stores.sql import source_diff
from kronika.stores.sql.rows import item_columns, item_values

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
STATE = SourceState("jaskier", "brain_archive.md", "c1", 1, 10)
COLUMNS = item_columns(POSTGRES)
PLACE = (COLUMNS.index("pos"), COLUMNS.index("line"))


def fact(n: int) -> MemoryItem:
    return MemoryItem(
        id=f"f{n}",
        agent="jaskier",
        content=f"fact {n} about Kraków",
        type=ItemType.SEMANTIC,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance("brain_archive.md", n + 3),
        key=f"k{n}" if n % 2 else None,
        entities=("Kraków",) if n % 3 == 0 else (),
    )


def values(row: source_diff.Row) -> tuple[object, ...]:
    item, text_hash, pos = row
    return item_values(POSTGRES, item, STATE, pos, text_hash)


def rows(items: list[MemoryItem]) -> dict[str, source_diff.Row]:
    return source_diff.unique_rows(items, [f"h-{it.content}" for it in items])


EDITS = st.lists(
    st.sampled_from(["keep", "drop", "text", "importance", "line", "swap", "repeat", "new"]),
    min_size=12,
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(EDITS)
def test_the_rows_read_back_give_the_plan_of_the_rows_kept(edits: list[str]) -> None:
    before = [fact(n) for n in range(12)]
    after: list[MemoryItem] = []
    for n, (item, edit) in enumerate(zip(before, edits, strict=True)):
        if edit == "drop":
            continue
        if edit == "text":
            item = replace(item, content=f"edited {n}")
        elif edit == "importance":
            item = replace(item, importance=0.9)
        elif edit == "line":
            item = replace(item, provenance=Provenance(item.provenance.path, 100 + n))
        elif edit == "repeat":
            after.append(replace(item, content="a repeated id, second copy"))
        elif edit == "new":
            after.append(fact(100 + n))
        after.append(item)
        if edit == "swap" and len(after) > 1:
            after[-1], after[-2] = after[-2], after[-1]
    kept, now = rows(before), rows(after)
    stored = {item_id: values(row) for item_id, row in kept.items()}

    expected = source_diff.plan(kept, now)
    found = source_diff.plan_stored(stored, now, values, PLACE)

    assert sorted(found.gone) == sorted(expected.gone)
    assert sorted(r[0].id for r in found.fresh) == sorted(r[0].id for r in expected.fresh)
    assert sorted(found.moved) == sorted(expected.moved)
    assert found.rows == now


def test_a_row_another_writer_left_otherwise_is_written_again() -> None:
    """A column the file's item does not match (another writer's importance) writes the
    row again, though this process never wrote it."""
    now = rows([fact(1), fact(2)])
    stored = {item_id: values(row) for item_id, row in now.items()}
    stored["f2"] = values((replace(fact(2), importance=0.1), now["f2"][1], now["f2"][2]))
    stored["f9"] = values(rows([fact(9)])["f9"])

    found = source_diff.plan_stored(stored, now, values, PLACE)

    assert [r[0].id for r in found.fresh] == ["f2"] and found.gone == ["f9"]
    assert found.moved == []
