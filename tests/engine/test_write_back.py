"""Mending a damaged stretch of an item's text where it stands in its file."""

from __future__ import annotations

from kronika.engine.write_back import mend

FILE = "# Pixel\n\n- Pixel sleeps by the tin\n- Pixel is a dog <!-- id=n-1 -->\n- Pixel is brown\n"


def test_an_overwritten_stretch_is_mended_and_nothing_else_changes() -> None:
    damaged = FILE.replace("is a dog", "is\ufffd\ufffdzz")
    assert mend(damaged, "Pixel is\ufffd\ufffdzz", "Pixel is a dog") == FILE


def test_a_text_cut_short_gets_its_end_back() -> None:
    cut = "We talked about the c"
    assert mend(f"<!-- scope=team team=core -->\n{cut}", cut, "We talked about the cat.") == (
        "<!-- scope=team team=core -->\nWe talked about the cat."
    )


def test_a_stretch_found_twice_or_not_at_all_is_left_alone() -> None:
    twice = "- a\ufffd b\n- a\ufffd b\n"
    assert mend(twice, "a\ufffd b", "ax b") is None
    assert mend(FILE, "Pixel is a cat", "Pixel is a dog") is None
