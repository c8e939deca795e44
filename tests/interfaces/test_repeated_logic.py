"""kronika's source repeats little logic, and may only repeat less.

The pairs of places sharing six or more lines of the same logic (see
``tests/duplication.py`` for how lines are compared, what counts as boilerplate and
which files are data) stay at most ``CEILING``. When a change writes logic again,
this test names the new pairs so the repeated lines can become one function; when a
change removes pairs, lower ``CEILING`` to the new count so it stays that way.
"""

from __future__ import annotations

import time
from pathlib import Path

from duplication import Line, code_lines, find_pairs, logic_pairs, read_tree

CEILING = 73


def test_repeated_logic_stays_under_the_ceiling() -> None:
    started = time.monotonic()
    pairs = logic_pairs()
    assert time.monotonic() - started < 30
    listing = "\n".join(str(pair) for pair in pairs)
    assert len(pairs) <= CEILING, (
        f"{len(pairs)} pairs of places repeat logic, more than the ceiling of {CEILING}; "
        f"merge the new ones into one function:\n{listing}"
    )


def _two_files(first: str, second: str) -> dict[str, list[Line]]:
    return {"a.py": code_lines(first), "b.py": code_lines(second)}


_LOGIC = '''
def total(orders, tax):
    """Sum the orders."""
    amount = 0
    for order in orders:  # every order
        if order.paid:
            amount += order.price * order.count
    amount = round(amount * (1 + tax), 2)
    log.info("total %s", amount)
    return amount
'''


def test_logic_written_twice_with_other_names_is_a_pair() -> None:
    renamed = (
        _LOGIC.replace("total", "weight")
        .replace("orders", "parcels")
        .replace("order", "parcel")
        .replace("price", "mass")
        .replace('"total %s"', '"weight %s"')
        .replace("2)", "3)")
    )
    (pair,) = find_pairs(_two_files(_LOGIC, "\n\n# moved here\n" + renamed))
    assert not pair.identical and not pair.boilerplate
    assert (pair.first, pair.first_lines) == ("a.py", (2, 10))
    assert (pair.second, pair.second_lines) == ("b.py", (5, 13))


def test_the_same_logic_to_the_letter_is_an_identical_pair() -> None:
    (pair,) = find_pairs(_two_files(_LOGIC, _LOGIC))
    assert pair.identical and not pair.boilerplate


def test_parameter_lists_alike_in_shape_are_boilerplate() -> None:
    first = "def a(\n    x: int,\n    *,\n    y: str | None = None,\n    z: str | None = None,\n"
    first += "    w: int | None = None,\n    v: bool = False,\n) -> None:\n    pass\n"
    second = first.replace("x:", "q:").replace("y:", "r:").replace("def a", "def b")
    (pair,) = find_pairs(_two_files(first, second))
    assert pair.boilerplate


def test_comments_blank_lines_and_imports_do_not_count() -> None:
    text = "import os\nfrom a import (\n    b,\n    c,\n)\n\n# note\nx = 1\n"
    assert [line.text for line in code_lines(text)] == ["x = 1"]


def test_data_tables_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "kronika" / "bench" / "memdata").mkdir(parents=True)
    (tmp_path / "kronika" / "bench" / "memdata" / "en.py").write_text("x = 1\n")
    (tmp_path / "kronika" / "bench" / "run.py").write_text("y = 2\n")
    assert list(read_tree(tmp_path / "kronika")) == ["kronika/bench/run.py"]
