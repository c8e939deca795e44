"""The user docs stay readable: no paragraph or list item runs past 200 words.

A reader should find what a page says in a minute. Tables and code blocks are not
counted; the benchmark pages (docs/benchmarks*.md) hold run logs and are not held to it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
LIMIT = 200

# Pages that still hold a longer paragraph, each with the length of its longest one.
# This list may only shrink: a page leaves it once its paragraphs are cut to LIMIT,
# and no cap here may be raised.
ALLOWED_LONGER = {
    "docs/cli.md": 249,
    "docs/postgres-index.md": 208,
}

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def paragraphs(text: str) -> list[str]:
    """The prose paragraphs and list items of a Markdown text, tables and code left out."""
    out: list[str] = []
    current: list[str] = []
    fenced = False

    def flush() -> None:
        if current:
            out.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not stripped or stripped.startswith(("|", "#")):
            flush()
            continue
        if _LIST_ITEM.match(line):
            flush()
            stripped = _LIST_ITEM.sub("", line)  # the item's words, not its marker
        current.append(stripped)
    flush()
    return out


def too_long(text: str, limit: int = LIMIT) -> list[str]:
    """The paragraphs over `limit` words, each as its word count and opening words."""
    return [
        f"{len(p.split())} words: {' '.join(p.split()[:8])} …"
        for p in paragraphs(text)
        if len(p.split()) > limit
    ]


def _user_pages() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").glob("*.md") if not p.name.startswith("benchmarks"))
    return [ROOT / "README.md", *docs]


@pytest.mark.parametrize("page", _user_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_paragraph_of_a_user_page_is_longer_than_the_limit(page: Path) -> None:
    check_page(page.relative_to(ROOT).as_posix(), page.read_text())


def check_page(name: str, text: str) -> None:
    limit = ALLOWED_LONGER.get(name, LIMIT)
    long = too_long(text, limit)
    assert not long, f"{name}: paragraphs over {limit} words (cut them up):\n" + "\n".join(long)


def test_the_allowlist_names_pages_that_exist() -> None:
    missing = [name for name in ALLOWED_LONGER if not (ROOT / name).is_file()]
    assert not missing, missing


def test_a_long_paragraph_is_found_and_tables_and_code_are_not_counted() -> None:
    long_prose = " ".join(["word"] * (LIMIT + 1))
    long_item = "- " + " ".join(["item"] * LIMIT) + "\n  " + "more words"
    long_row = "| " + " | ".join(["cell"] * (LIMIT + 5)) + " |"
    long_code = "```\n" + " ".join(["code"] * (LIMIT + 5)) + "\n```"
    short = " ".join(["word"] * LIMIT)

    assert len(too_long(long_prose)) == 1
    assert len(too_long(f"# Title\n\n{long_item}\n- short item\n")) == 1
    assert too_long(f"{short}\n\n{short}\n\n{long_row}\n\n{long_code}\n") == []
    # two list items of a run are two paragraphs, not one
    assert too_long(f"- {short}\n- {short}\n") == []
    # a paragraph broken over lines is one paragraph
    assert len(too_long(short + "\nand more")) == 1


def test_a_page_with_a_longer_paragraph_fails() -> None:
    text = "# A page\n\n" + " ".join(["word"] * (LIMIT + 1)) + "\n"
    with pytest.raises(AssertionError, match="paragraphs over 200 words"):
        check_page("docs/new-page.md", text)
    # an allowlisted page fails too once its paragraph grows past its cap
    grown = " ".join(["word"] * (ALLOWED_LONGER["docs/cli.md"] + 1))
    with pytest.raises(AssertionError, match="docs/cli.md"):
        check_page("docs/cli.md", grown)
