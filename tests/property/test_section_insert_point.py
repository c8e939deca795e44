"""Where a new bullet goes at the end of a section, read line by line
(:func:`~kronika.stores.markdown.lines.section_insert_point`), is where the blocks of
the file (:func:`~kronika.stores.markdown.lines.scan_blocks`) put it: after the
section's last block that is not blank, before the next heading of level 1 or 2."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.stores.markdown.lines import BlockKind, scan_blocks, section_insert_point

_PIECES = (
    "# Brain\n", "## User\n", "## user \n", "##User\n", "## Preferences\n", "### Sub\n",
    "#### deep\n", "#\n", "# \n", "## \n", "#tag\n", "## User", "## User\r\n",
    "- a\n", "- b <!-- id=f-1 -->\n", "* star\n", "+ plus\n", "- c",
    "  continued\n", "\tcontinued\n", "  \n", "\t\n", " \n", "\n", "\r\n", "  x",
    "a paragraph\n", "text\r\n",
)  # fmt: skip


def _by_blocks(lines: list[str], matches: set[str]) -> int | None:
    found: int | None = None
    last: int | None = None
    for block in scan_blocks(lines):
        if block.kind is BlockKind.HEADING and block.level <= 2:
            if found is not None:
                break
            if block.level == 2 and block.first.casefold() in matches:
                found = last = block.end - 1
            continue
        if found is not None and block.kind is not BlockKind.BLANK:
            last = block.end - 1
    return None if last is None else last + 1


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=14),
    st.sampled_from([{"user"}, {"preferences"}, {"user", "preferences"}, {""}, {"sub"}]),
)
def test_the_insert_point_is_the_one_the_blocks_give(lines: list[str], matches: set[str]) -> None:
    assert section_insert_point(lines, matches) == _by_blocks(lines, matches)
