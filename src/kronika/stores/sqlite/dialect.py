"""SQLite's :class:`~kronika.stores.sql.dialect.Dialect`: ``?`` placeholders, lists as
JSON text, booleans as integers, entities in the ``item_entities`` table."""

from __future__ import annotations

import json
from collections.abc import Sequence

from kronika.stores.sql.dialect import Dialect

_SEPARATOR = "\x1f"  # char(31): no id contains it


class SqliteDialect(Dialect):
    mark = "?"
    true = "1"
    false = "0"
    items = "items"
    sources = "sources"
    usage = "usage"
    user = "user"

    def one_of(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        return f"{column} IN ({', '.join('?' * len(values))})", list(values)

    def has_entity(self, alias: str, forms: Sequence[str]) -> tuple[str, list[object]]:
        return (
            f"{alias}.rowid IN (SELECT item_rowid FROM item_entities"
            f" WHERE entity_norm IN ({', '.join('?' * len(forms))}))"
        ), list(forms)

    def same(self, column: str) -> str:
        return f"{column} IS ?"

    def utc_day(self, epoch: str) -> str:
        return f"date({epoch}, 'unixepoch')"

    def ordered_ids(self, query: str) -> str:
        return f"(SELECT group_concat(item_id, char(31)) FROM ({query}))"

    def split_ids(self, value: object) -> tuple[str, ...]:
        return tuple(str(value).split(_SEPARATOR)) if value else ()

    def encode_list(self, values: Sequence[str]) -> object:
        # most are empty: no encoder call for those
        return json.dumps(list(values), ensure_ascii=False) if values else "[]"

    def decode_list(self, value: object) -> tuple[str, ...]:
        return tuple(json.loads(str(value)))

    def encode_bool(self, value: bool) -> object:
        return int(value)


SQLITE = SqliteDialect()
