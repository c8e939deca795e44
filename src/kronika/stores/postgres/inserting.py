"""A few rows of the search index written by ``INSERT``, in one round trip with the
rest of their write.

``COPY`` loads many rows fastest, but it cannot run in a pipeline: each ``COPY`` is a
round trip of its own, and it needs the rows' ids first (another). A fact remembered
adds one to three rows; sent as ``INSERT`` statements they go to the server with the
write's other statements (the rows deleted, the places moved, the file's state) at
once. The rows are the ones ``COPY`` writes: the same values, the vector the cache
holds for the text (none when it holds none), the postings with their item's row id.
Nothing here touches a connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kronika.core.model import MemoryItem
from kronika.stores.postgres.lexical import weighted_tf

FEW = 64
"""Rows written by ``INSERT`` at most; more go by ``COPY``."""


def by_insert(count: int) -> bool:
    """Whether ``count`` rows are written by ``INSERT`` (else by ``COPY``)."""
    return count <= FEW


_TYPES = {
    **dict.fromkeys(("pos", "line", "layer", "doc_len"), "integer"),
    **dict.fromkeys(("turn_ids", "entities", "entity_norms", "tags"), "text[]"),
    **dict.fromkeys(
        ("confidence", "importance", "created_at", "updated_at", "valid_from", "valid_to"),
        "double precision",
    ),
    "multi": "boolean",
}
"""The type of each column of ``idx_items`` that is not text: every value is cast, so
rows of several ``VALUES`` lists (an empty list among them) take the columns' types."""

TERMS_INSERT = (
    "INSERT INTO idx_terms (term, item_rowid, agent, tenant, tf, pos, doc_len)"
    " SELECT t.term, i.rowid, t.agent, t.tenant, t.tf, t.pos::integer[], t.doc_len"
    " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::double precision[],"
    " %s::text[], %s::integer[]) AS t (term, id, agent, tenant, tf, pos, doc_len)"
    " JOIN idx_items AS i ON i.id = t.id"
)
"""The postings of items inserted before it in the same transaction (found by id)."""


def items_insert(columns: Sequence[str], count: int) -> str:
    """An ``INSERT`` of ``count`` rows of ``columns`` and each row's cached vector
    (parameters: a row's values, then the model, its text hash and the dimensions)."""
    values = ", ".join(f"%s::{_TYPES.get(c, 'text')}" for c in columns)
    vector = (
        "(SELECT e.vec FROM idx_embeddings AS e"
        " WHERE e.model = %s AND e.text_hash = %s AND e.dims = %s)"
    )
    rows = ", ".join([f"({values}, {vector})"] * count)
    return f"INSERT INTO idx_items ({', '.join((*columns, 'vec'))}) VALUES {rows}"


def terms_params(
    pairs: Sequence[tuple[MemoryItem, str]], postings: Sequence[Any]
) -> tuple[Any, ...]:
    """The parameters of :data:`TERMS_INSERT` for the items of ``pairs`` (with their
    :class:`~.lexical.Postings`): one array per column."""
    terms: list[str] = []
    ids: list[str] = []
    agents: list[str] = []
    tenants: list[str] = []
    tfs: list[float] = []
    places: list[str] = []
    lengths: list[int] = []
    for (item, _), found in zip(pairs, postings, strict=True):
        for term, at in found.terms.items():
            terms.append(term)
            ids.append(item.id)
            agents.append(item.agent)
            tenants.append(item.tenant)
            tfs.append(weighted_tf(at))
            places.append("{" + ",".join(map(str, at)) + "}")
            lengths.append(found.length)
    return (terms, ids, agents, tenants, tfs, places, lengths)
