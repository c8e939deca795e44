"""The PostgreSQL index's tokenizer gives the same postings after a bulk load as before
it, and keeps tokenizing one item as fast as before it (the bulk's table is made
again, not left emptied)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.stores.postgres.lexical import Tokenizer

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def fact(n: int) -> MemoryItem:
    return MemoryItem(
        id=f"f{n}",
        agent="bench",
        content=f"fact {n}: the value of key {n} is {n * 31} in Kraków, said Jaskier",
        type=ItemType.SEMANTIC,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance("brain_archive.md", n),
        key=f"city_{n}",
        entities=("Kraków",),
    )


def _one_item_ms(tokenizer: Tokenizer) -> float:
    began = time.perf_counter()
    for _ in range(20):
        tokenizer.items([fact(1)])
    return (time.perf_counter() - began) * 50


def test_one_item_after_a_bulk_load_gets_the_same_postings_as_fast() -> None:
    tokenizer = Tokenizer()
    try:
        first = tokenizer.items([fact(1), fact(2)])
        words = tokenizer.words(["krakow", "said jaskier"])
        alone = _one_item_ms(tokenizer)
        bulk = tokenizer.items([fact(n) for n in range(20_000)])
        assert bulk[1] == first[0] and bulk[2] == first[1]
        assert tokenizer.items([fact(1), fact(2)]) == first
        assert tokenizer.words(["krakow", "said jaskier"]) == words
        # left emptied, the bulk's index made this about 100 times slower
        assert _one_item_ms(tokenizer) < max(10 * alone, 5.0)
    finally:
        tokenizer.close()
