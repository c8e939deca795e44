"""The predicates of :mod:`kronika.stores.filters` as a SQL condition over the items.

:func:`filter_clause` is what every read of the SQL indexes filters with: the condition
over ``<items> AS <alias>`` and its parameters, in the order of the placeholders.
"""

from __future__ import annotations

from kronika.core.model import RecallFilter
from kronika.stores import filters
from kronika.stores.sql.dialect import Dialect


def filter_clause(d: Dialect, flt: RecallFilter, alias: str = "i") -> tuple[str, list[object]]:
    """:func:`~kronika.stores.filters.recall_predicate` of ``flt`` in ``d``'s SQL."""
    return render(d, filters.recall_predicate(flt), alias)


def column(d: Dialect, alias: str, field: str) -> str:
    """The SQL of a predicate field (``valid_start`` is computed)."""
    if field == "valid_start":
        return f"coalesce({alias}.valid_from, {alias}.created_at)"
    name = {"key": "key_norm", "speaker": "speaker_norm", "user": d.user}.get(field, field)
    return f"{alias}.{name}"


def render(d: Dialect, pred: filters.Predicate, alias: str = "i") -> tuple[str, list[object]]:
    """``pred`` as a condition over ``<items> AS <alias>``, and its parameters."""
    if isinstance(pred, filters.All | filters.AnyOf):
        rendered = [_part(d, p, alias) for p in pred.parts]
        if not rendered:
            return (d.true if isinstance(pred, filters.All) else d.false), []
        joiner = " AND " if isinstance(pred, filters.All) else " OR "
        sql = joiner.join(s for s, _ in rendered)
        params = [v for _, values in rendered for v in values]
        return (sql if isinstance(pred, filters.All) else f"({sql})"), params
    if isinstance(pred, filters.Not):
        sql, params = render(d, pred.part, alias)
        return f"NOT ({sql})", params
    if isinstance(pred, filters.Equals):
        col = column(d, alias, pred.field)
        if pred.value is None:
            return f"{col} IS NULL", []
        return f"{col} = {d.mark}", [pred.value]
    if isinstance(pred, filters.OneOf):
        if pred.field == "entities":
            return d.has_entity(alias, pred.values)
        return d.one_of(column(d, alias, pred.field), pred.values)
    col = column(d, alias, pred.field)
    bounds = [(">=", pred.gte), ("<=", pred.lte), (">", pred.gt)]
    given = [(op, v) for op, v in bounds if v is not None]
    return " AND ".join(f"{col} {op} {d.mark}" for op, _ in given) or d.true, [v for _, v in given]


def _part(d: Dialect, pred: filters.Predicate, alias: str) -> tuple[str, list[object]]:
    """A part of a conjunction or disjunction, bracketed where it is itself one."""
    sql, params = render(d, pred, alias)
    if (isinstance(pred, filters.All) and len(pred.parts) > 1) or (
        isinstance(pred, filters.Range) and len(params) > 1
    ):
        sql = f"({sql})"
    return sql, params
