"""A fact file's parse spliced from the parse of its earlier text is the full parse.

kronika re-reads a fact file another writer changed (another worker of a server, an
editor) by parsing only the lines that differ from the text it parsed before
(:func:`~kronika.stores.markdown.facts.splice.splice`). Whatever the edit, the splice
either gives up or gives exactly what parsing the whole new text gives: the same items
in the same order, the same line spans, and only for a text a full parse reads without
warnings or damage. Edits are drawn from kronika's own bullets, hand-written bullets,
headings, continuation lines, blank lines, garbled and cut-off metadata comments.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.facts.splice import splice
from kronika.stores.markdown.lines import split_lines

_TIMES = (
    datetime(2024, 2, 1, tzinfo=UTC),
    datetime(2024, 3, 1, 12, 30, tzinfo=UTC),
    datetime(2024, 3, 2, tzinfo=UTC),
)
_STAMPS = ("2024-02-01T00:00:00Z", "2024-03-01T12:30:00Z", "2024-01-15T08:00:00Z")


@st.composite
def lines(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    word = draw(st.sampled_from(["tea", "mate", "Kraków", "café", "чай", "**x**", "a <b>"]))
    n = draw(st.integers(0, 40))
    stamp = draw(st.sampled_from(_STAMPS))
    match kind:
        case 0 | 1 | 2 | 3:
            return (
                f"- **k{n % 9}**: {word} {n} <!-- id=f-{n:012x} src=explicit created={stamp} -->\n"
            )
        case 4:
            return f"- {word} written by hand\n"
        case 5:
            return draw(st.sampled_from(["## User\n", "## Preferences\n", "# Brain\n", "## Now\n"]))
        case 6:
            return f"  continued {word}\n"
        case 7:
            return "\n"
        case 8:
            return f"- **g**: {word} <!-- id=f-{n:012x} created=not-a-time -->\n"
        case _:
            return f"- **t**: {word} <!-- id=f-{n:012x} src=expl"  # cut off, no line end


def _text(parts: list[str]) -> str:
    # a line without its end can only be the last one
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts[:-1]) + "".join(parts[-1:])


def _parse(text: str, mtime: datetime) -> brain.ParsedItems:
    return brain.parse_facts(text, spec=brain.BRAIN, agent="a", tenant="t", mtime=mtime)


@settings(max_examples=1000, deadline=None)
@given(
    before=st.lists(lines(), min_size=0, max_size=14),
    inserted=st.lists(lines(), min_size=0, max_size=4),
    cut=st.tuples(st.integers(0, 14), st.integers(0, 4)),
    times=st.tuples(st.sampled_from(_TIMES), st.sampled_from(_TIMES)),
)
def test_a_spliced_parse_is_the_full_parse(
    before: list[str],
    inserted: list[str],
    cut: tuple[int, int],
    times: tuple[datetime, datetime],
) -> None:
    old_text = _text(before)
    at = min(cut[0], len(before))
    after = [*before[:at], *inserted, *before[at + cut[1] :]]
    new_text = _text(after)
    then, now = times
    old = _parse(old_text, then)
    if old.warnings or old.damage:
        return  # kronika splices only from a parse read without either
    spliced = splice(
        old,
        split_lines(old_text),
        split_lines(new_text),
        spec=brain.BRAIN,
        agent="a",
        tenant="t",
        mtimes=(then, now),
    )
    if spliced is None:
        return
    full = _parse(new_text, now)
    assert not full.warnings and not full.damage
    assert spliced.items == full.items
    assert dict(spliced.spans) == dict(full.spans)
