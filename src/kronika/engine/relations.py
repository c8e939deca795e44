"""Recall through a keyed fact that names a person: "What does my partner do for work?".

The question names the key of ``partner: Tom`` (or Tom himself) and asks something of Tom
(:func:`kronika.core.relations.asks_about_the_one_named`). Tom's entity page
(``bank/entities/Tom.md``) answers it, and shares no word with it. So the page takes
the fact's relevance, the evidence having come through the fact, and the fact, which
only leads to the answer, is divided by ``1 + focus`` (the answer focus: the answer,
not what leads to it). A question asking the value itself ("Jak ma na imię mąż
użytkownika?") leaves both as they were.

Only the best :data:`SEEDS` candidates that keyword search found are read (a question
that names a key finds its fact by the key, a field keyword search reads), and a page
is read under the recall's own filter: what the reader may not see is never brought
in, and a recall limited to other entities brings in no page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from kronika.core.entities import normalize_entity
from kronika.core.model import FACT_TYPES, MemoryItem, RecallFilter
from kronika.core.ranking import best_ids
from kronika.core.relations import asks_about_the_one_named
from kronika.core.text import folded_words
from kronika.ports import IndexReads

SEEDS = 5
"""Candidates read for a keyed fact naming a person (the best by relevance that keyword
search found)."""
PAGE_ITEMS = 50
"""Items mentioning the person read to find their page's (newest first)."""
ENTITY_PAGES = "bank/entities/"


def page_path(name: str) -> str:
    """Where the entity page of ``name`` lives in an agent's folder."""
    return f"{ENTITY_PAGES}{name}.md"


def page_entity(path: str) -> str | None:
    """The entity an item at ``path`` is the page of (``bank/entities/Tom.md`` → Tom);
    ``None`` for an item of no entity page."""
    if not path.startswith(ENTITY_PAGES) or not path.endswith(".md"):
        return None
    name = path[len(ENTITY_PAGES) : -len(".md")]
    return name if name and "/" not in name else None


def through_relations(
    index: IndexReads,
    read_items: Callable[[Sequence[str]], list[MemoryItem]],
    flt: RecallFilter,
    question: str,
    relevance: Mapping[str, float],
    matched: Iterable[str],
    *,
    focus: float,
) -> tuple[dict[str, float], dict[str, str]]:
    """``relevance`` with each page reached through a fact (see the module docstring),
    and ``{page item: the fact it was reached through}``. ``matched``: the ids keyword
    search found; ``read_items`` reads candidates (what recall has read ahead)."""
    found = set(matched)
    seeds = [i for i in best_ids(relevance) if i in found][:SEEDS]
    if not seeds:
        return dict(relevance), {}
    words = list(folded_words(question))
    out = dict(relevance)
    reached: dict[str, str] = {}
    for fact in read_items(seeds):
        value = (fact.value or "").strip()
        if not _names_someone(fact) or not asks_about_the_one_named(words, fact.key or "", value):
            continue
        page = _page(index, flt, value, out)
        if page is None or page in reached:
            continue
        carried = relevance[fact.id]
        out[page] = max(out.get(page, 0.0), carried)
        out[fact.id] = carried / (1.0 + focus)
        reached[page] = fact.id
    return out, reached


def _names_someone(fact: MemoryItem) -> bool:
    """A current keyed fact whose value could be a name (one to a few words)."""
    value = (fact.value or "").strip()
    return fact.type in FACT_TYPES and bool(value) and len(value.split()) <= 4


def _page(
    index: IndexReads, flt: RecallFilter, name: str, relevance: Mapping[str, float]
) -> str | None:
    """The item of ``name``'s entity page that best answers (the best candidate among
    them, else the newest), under ``flt``; ``None`` when there is none to read."""
    if flt.entities and normalize_entity(name) not in {normalize_entity(e) for e in flt.entities}:
        return None
    path = page_path(name)
    items = index.list_items(replace(flt, entities=(name,)), limit=PAGE_ITEMS)
    on_page = [item.id for item in items if item.provenance.path == path]
    if not on_page:
        return None
    return max(on_page, key=lambda i: relevance.get(i, 0.0))


__all__ = ["ENTITY_PAGES", "PAGE_ITEMS", "SEEDS", "page_entity", "page_path", "through_relations"]
