"""PostgreSQL's :class:`~kronika.stores.sql.dialect.Dialect`: ``%s`` placeholders, list
parameters as arrays (``= ANY``), lists stored as ``text[]``, entities in the
``entity_norms`` array column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from kronika.stores.postgres.arrays import held_text_array, is_text
from kronika.stores.sql.dialect import Dialect


class PostgresDialect(Dialect):
    mark = "%s"
    true = "true"
    false = "false"
    items = "idx_items"
    sources = "idx_sources"
    usage = "idx_usage"
    user = "user_id"

    def one_of(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        if values and is_text(values):  # one literal, made once (stores/postgres/arrays.py)
            return f"{column} = ANY(%s::text[])", [held_text_array(tuple(values))]
        return f"{column} = ANY(%s)", [list(values)]

    def has_entity(self, alias: str, forms: Sequence[str]) -> tuple[str, list[object]]:
        return f"{alias}.entity_norms && %s::text[]", [list(forms)]

    def same(self, column: str) -> str:
        return f"{column} IS NOT DISTINCT FROM %s"

    def utc_day(self, epoch: str) -> str:
        return f"to_char((to_timestamp({epoch}) AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')"

    def ordered_ids(self, query: str) -> str:
        return f"ARRAY({query})"

    def split_ids(self, value: object) -> tuple[str, ...]:
        return tuple(cast("list[str]", value))

    def encode_list(self, values: Sequence[str]) -> object:
        return list(values)

    def decode_list(self, value: object) -> tuple[str, ...]:
        return tuple(cast("list[str]", value))

    def encode_bool(self, value: bool) -> object:
        return bool(value)


POSTGRES = PostgresDialect()
