"""The recall filter said once (:mod:`kronika.stores.filters`) and rendered by each index:
SQLite's and PostgreSQL's SQL (:mod:`kronika.stores.sql.where`) and, in
``test_qdrant_filters``, Qdrant's payload filter. Which items each keeps is checked on
real indexes in ``tests/conformance``; here, what the predicates say."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields, replace
from datetime import UTC, datetime

import pytest

from kronika.core.model import ItemType, Reader, RecallFilter, Scope
from kronika.stores.filters import HANDLED_FIELDS, recall_predicate, visibility
from kronika.stores.postgres.dialect import POSTGRES
from kronika.stores.sql.dialect import Dialect
from kronika.stores.sql.where import filter_clause, render
from kronika.stores.sqlite.dialect import SQLITE

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SET = {
    "agents": ("main",),
    "tenant": "acme",
    "scopes": (Scope.TEAM,),
    "types": (ItemType.NOTE,),
    "keys": ("city",),
    "entities": ("Ola",),
    "speakers": ("Anna",),
    "channel": "general",
    "since": T0,
    "until": T0,
    "as_of": T0,
    "include_superseded": True,
    "include_archived": False,
    "reader": Reader("acme"),
}


def test_every_field_of_the_recall_filter_changes_what_is_kept() -> None:
    names = {f.name for f in fields(RecallFilter)}
    assert names == HANDLED_FIELDS == set(SET)
    plain = recall_predicate(RecallFilter())
    for name, value in SET.items():
        assert recall_predicate(replace(RecallFilter(), **{name: value})) != plain, name


def _values(param: object) -> list[object]:
    """A parameter's values: a list's, or a PostgreSQL array literal's (``{"a","b"}``,
    stores/postgres/arrays.py; these hold no control characters), else itself."""
    if isinstance(param, list):
        return param
    if isinstance(param, str) and param.startswith("{") and param.endswith("}"):
        return list(json.loads(f"[{param[1:-1]}]"))
    return [param]


@pytest.mark.parametrize("d", [SQLITE, POSTGRES], ids=["sqlite", "postgres"])
def test_the_visibility_clause_has_no_branch_a_reader_cannot_use(d: Dialect) -> None:
    owner, owner_params = render(d, visibility(Reader("acme")))
    assert "team" not in owner and "channel" not in owner
    assert owner_params == ["acme", "global", "personal"]  # and user IS NULL
    assert "user IS NULL" in owner.replace("user_id", "user")
    member, params = render(d, visibility(Reader("acme", "anna", "general", ("core", "core"))))
    flat = [v for p in params for v in _values(p)]
    assert flat.count("core") == 1 and "anna" in flat and "general" in flat
    assert member.count(d.mark) == len(params)


@pytest.mark.parametrize("d", [SQLITE, POSTGRES], ids=["sqlite", "postgres"])
def test_every_placeholder_has_its_parameter(d: Dialect) -> None:
    full = RecallFilter(**{**SET, "reader": Reader("acme", "anna", "general", ("core",))})  # type: ignore[arg-type]
    for flt in (RecallFilter(), full, replace(full, entities=(), keys=("a", "b"))):
        sql, params = filter_clause(d, flt)
        assert sql.count(d.mark) == len(params), sql


def test_the_sqlite_condition_is_valid_sql_that_keeps_the_right_row() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE items (agent, tenant, scope, type, key_norm, speaker_norm, channel,"
        " user, team, created_at, valid_from, valid_to, status)"
    )
    conn.execute("CREATE TABLE item_entities (item_rowid, entity_norm)")
    epoch = T0.timestamp()
    row = ("main", "acme", "team", "note", "city", "anna", "general", None, "core")
    conn.execute(
        "INSERT INTO items VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", (*row, epoch, None, None, "active")
    )
    conn.execute("INSERT INTO item_entities VALUES (1, 'ola')")
    reader = Reader("acme", "anna", "general", ("core",))
    kept = RecallFilter(**{**SET, "reader": reader})  # type: ignore[arg-type]
    for flt, expected in ((kept, 1), (replace(kept, keys=("town",)), 0), (RecallFilter(), 1)):
        sql, params = filter_clause(SQLITE, flt)
        (n,) = conn.execute(f"SELECT count(*) FROM items AS i WHERE {sql}", params).fetchone()
        assert n == expected, flt
