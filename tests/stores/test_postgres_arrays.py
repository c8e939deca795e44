"""Array parameters sent as literals (:mod:`kronika.stores.postgres.arrays`) reach the
server as the values they were made of."""

from __future__ import annotations

from kronika.stores.postgres.arrays import held_text_array, int_array, text_array
from kronika.stores.postgres.connect import connect

AWKWARD = [
    "plain",
    "",
    "NULL",
    "null",
    " spaced  out ",
    'a "quoted" word',
    "back\\slash\\",
    '\\"',
    "comma, and {braces}",
    "{}",
    "tab\tand\nnewline",
    "łódź імʼя ім'я",
    "emoji 🙂",
]


def test_text_and_int_arrays_arrive_as_the_values_they_were_made_of(postgres_url: str) -> None:
    with connect(postgres_url, autocommit=True) as conn:
        texts = conn.execute("SELECT %s::text[]", (text_array(AWKWARD),)).fetchone()
        held = conn.execute("SELECT %s::text[]", (held_text_array(tuple(AWKWARD)),)).fetchone()
        empty = conn.execute("SELECT %s::text[]", (text_array([]),)).fetchone()
        ints = conn.execute("SELECT %s::bigint[]", (int_array([0, -1, 2**62, 7]),)).fetchone()
        found = conn.execute(
            "SELECT w FROM unnest(%s::text[]) AS w WHERE w = ANY(%s::text[])",
            (text_array(AWKWARD), text_array(["NULL", 'a "quoted" word', "missing"])),
        ).fetchall()
    assert texts == (AWKWARD,)
    assert held == (AWKWARD,)
    assert empty == ([],)
    assert ints == ([0, -1, 2**62, 7],)
    assert sorted(w for (w,) in found) == sorted(["NULL", 'a "quoted" word'])
