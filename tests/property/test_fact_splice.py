"""A fact file's parse spliced from the parse of its earlier text is the full parse,
for each of the fact files (the Brain, the archive, the history).

kronika re-reads a fact file another writer changed (another worker of a server, an
editor) by parsing only the lines that differ from the text it parsed before
(:func:`~kronika.stores.markdown.facts.splice.splice`). Whatever the edit, the splice
either gives up or gives exactly what parsing the whole new text gives: the same items
in the same order, the same line spans, and only for a text a full parse reads without
warnings or damage. Edits are drawn from kronika's own bullets, hand-written bullets,
headings, continuation lines, blank lines, garbled and cut-off metadata comments.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from hypothesis import event, given, settings
from hypothesis import strategies as st

from kronika.stores.markdown.facts import brain, lookup
from kronika.stores.markdown.facts.cache import FactParse
from kronika.stores.markdown.facts.splice import (
    Spliced,
    common_end,
    common_start,
    splice,
    splice_change,
)
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


def _parse(text: str, mtime: datetime, spec: brain.FactsFile = brain.BRAIN) -> brain.ParsedItems:
    return brain.parse_facts(text, spec=spec, agent="a", tenant="t", mtime=mtime)


@settings(max_examples=1000, deadline=None)
@given(
    before=st.lists(lines(), min_size=0, max_size=14),
    inserted=st.lists(lines(), min_size=0, max_size=4),
    cut=st.tuples(st.integers(0, 14), st.integers(0, 4)),
    times=st.tuples(st.sampled_from(_TIMES), st.sampled_from(_TIMES)),
    spec=st.sampled_from(brain.FACT_FILES),
)
def test_a_spliced_parse_is_the_full_parse(
    before: list[str],
    inserted: list[str],
    cut: tuple[int, int],
    times: tuple[datetime, datetime],
    spec: brain.FactsFile,
) -> None:
    at = min(cut[0], len(before))
    after = [*before[:at], *inserted, *before[at + cut[1] :]]
    _check_splice(before, after, times, spec)


def _check_splice(
    before: list[str],
    after: list[str],
    times: tuple[datetime, datetime],
    spec: brain.FactsFile = brain.BRAIN,
) -> Spliced | None:
    """Splice the parse of ``before`` into that of ``after``; when the splice does not
    give up, it must be the full parse of ``after``, read without warnings or damage.
    Returns the splice (``None``: given up, or no clean parse to splice from)."""
    then, now = times
    old_text, new_text = _text(before), _text(after)
    old = _parse(old_text, then, spec)
    if old.warnings or old.damage:
        return None  # kronika splices only from a parse read without either
    texts = (old, split_lines(old_text), split_lines(new_text))
    where = {"spec": spec, "agent": "a", "tenant": "t", "mtimes": (then, now)}
    change = splice_change(*texts, **where)  # type: ignore[arg-type]
    assert (None if change is None else change.parsed) == splice(*texts, **where)  # type: ignore[arg-type]
    if change is None:
        return None
    full = _parse(new_text, now, spec)
    assert not full.warnings and not full.damage
    assert change.parsed.items == full.items
    assert dict(change.parsed.spans) == dict(full.spans)
    return change


def _bullet(n: int) -> str:
    return (
        f"- **key{n % 37}**: value {n} <!-- id=f-{0x100000 + n:012x} src=explicit"
        f" created={_STAMPS[n % 2]} -->\n"
    )


@settings(max_examples=300, deadline=None)
@given(
    head=st.integers(0, 400),
    middle=st.lists(lines(), min_size=0, max_size=6),
    tail=st.integers(0, 400),
    inserted=st.lists(lines(), min_size=0, max_size=4),
    cut=st.tuples(st.integers(0, 810), st.integers(0, 4)),
    times=st.tuples(st.sampled_from(_TIMES), st.sampled_from(_TIMES)),
)
def test_a_long_file_spliced_is_its_full_parse(
    head: int,
    middle: list[str],
    tail: int,
    inserted: list[str],
    cut: tuple[int, int],
    times: tuple[datetime, datetime],
) -> None:
    """The same as above in files of hundreds of kronika's bullets, so that the edit
    is found by comparing runs of lines and the facts around it by bisection."""
    before = [
        "## User\n",
        *(_bullet(n) for n in range(head)),
        *middle,
        *(_bullet(n) for n in range(head, head + tail)),
    ]
    at = min(cut[0], len(before))
    after = [*before[:at], *inserted, *before[at + cut[1] :]]
    change = _check_splice(before, after, times)
    if change is None:
        return
    old, full = _parse(_text(before), times[0]), _parse(_text(after), times[1])
    # what changed: the facts of the lines replaced, and of the new lines
    start, end, stop = change.region
    assert {i.id for i in change.gone} == {
        i for i, (a, b) in old.spans.items() if start <= a and b <= end
    }
    assert [i.id for i in change.added] == [
        i for i, (a, b) in sorted(full.spans.items(), key=lambda s: s[1]) if start <= a < stop
    ]


@settings(max_examples=500, deadline=None)
@given(
    before=st.lists(lines(), min_size=0, max_size=3),
    head=st.integers(0, 200),
    tail=st.integers(0, 200),
    spec=st.sampled_from(brain.FACT_FILES),
    picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=6),
    stray=st.one_of(st.none(), st.none(), st.none(), st.integers(0, 10**6)),
    times=st.tuples(
        st.sampled_from(_TIMES[2:] * 3 + _TIMES), st.sampled_from(_TIMES[2:] * 3 + _TIMES)
    ),
)
def test_bullets_turned_into_marks_anywhere_splice_as_the_full_parse(
    before: list[str],
    head: int,
    tail: int,
    spec: brain.FactsFile,
    picks: list[int],
    stray: int | None,
    times: tuple[datetime, datetime],
) -> None:
    """A forget turns the lines of facts all over a long file into marks, line for
    line (``<!-- moved out -->``): the splice takes those facts out without parsing the
    lines between them, and is the full parse; it gives them as gone, none as added,
    and says no line moved. A mark over a line of no bullet (``stray``) or over part of
    one is spliced as any edit is, or given up."""
    lines_before = split_lines(
        _text(
            [
                "## User\n",
                *(_bullet(n) for n in range(head)),
                *before,
                *(_bullet(n) for n in range(head, head + tail)),
            ]
        )
    )
    old = _parse("".join(lines_before), times[0], spec)
    if old.warnings or old.damage:
        event("a parse with warnings: not spliced")
        return
    after = list(lines_before)
    chosen = (
        list(
            {
                old.items[n % len(old.items)].id: old.items[n % len(old.items)] for n in picks
            }.values()
        )
        if old.items
        else []
    )
    for item in chosen:
        start, end = old.spans[item.id]
        after[start:end] = [brain.moved_out(None)] * (end - start)
    if stray is not None and not after[stray % len(after)].startswith("- "):
        after[stray % len(after)] = brain.moved_out(None)
    change = _check_splice(lines_before, after, times, spec)
    if change is None or not chosen or stray is not None:
        event("given up" if change is None else "spliced, not marks alone")
        return
    event("marks spliced")
    assert {i.id for i in change.gone} == {i.id for i in chosen}
    assert change.added == () and not change.shifted


@settings(max_examples=300, deadline=None)
@given(
    old=st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n"]), max_size=300),
    edits=st.lists(
        st.tuples(st.integers(0, 300), st.integers(0, 3), st.sampled_from(["x\n", "b\n"])),
        max_size=3,
    ),
)
def test_the_common_start_and_end_are_those_of_a_line_by_line_walk(
    old: list[str], edits: list[tuple[int, int, str]]
) -> None:
    new = list(old)
    for at, cut, line in edits:
        new[at : at + cut] = [line]
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end, stop = len(old), len(new)
    while end > start and stop > start and old[end - 1] == new[stop - 1]:
        end, stop = end - 1, stop - 1
    assert common_start(old, new) == start
    assert common_end(old, new, start) == (end, stop)


def _kept(text: str, mtime: datetime) -> FactParse:
    lines = split_lines(text)
    parsed = _parse(text, mtime)
    return FactParse((0, 0, 0, 0), 0, lines, parsed, hashlib.sha256(text.encode()), mtime, ())


def _lookups(entry: FactParse) -> dict[str, object]:
    """Every lookup of ``entry``, built if missing; the facts of each group in order."""
    lookup.ids(entry)
    lookup.marks(entry)
    lookup.borrows(entry, entry.mtime)
    lookup.hand_written(entry)
    for name in ("by_key", "by_concept", "by_form"):
        lookup._group(entry, name)
    out: dict[str, object] = {}
    for name, built in entry.derived.items():
        if name.startswith("by_"):
            out[name] = {label: [f for _, f in facts] for label, facts in built.items()}
        elif name == "times":
            out[name] = (built.hand, +built.created)
        else:
            out[name] = built
    return out


@settings(max_examples=300, deadline=None)
@given(
    head=st.integers(0, 200),
    middle=st.lists(lines(), min_size=0, max_size=2),
    inserted=st.lists(
        st.one_of(
            st.integers(0, 200).map(lambda n: f"<!-- f-{0x100000 + n:012x} moved out -->\n"),
            st.integers(0, 200).map(lambda n: _bullet(n).replace("value", "new value")),
            st.integers(0, 200).map(lambda n: _bullet(n).replace(_STAMPS[n % 2], _STAMPS[2])),
            lines(),
        ),
        max_size=4,
    ),
    cut=st.tuples(st.integers(0, 210), st.integers(0, 4)),
)
def test_lookups_carried_over_a_splice_are_those_built_anew(
    head: int, middle: list[str], inserted: list[str], cut: tuple[int, int]
) -> None:
    """The lookups kept with an archive's parse (its ids, its facts by key and by text,
    its lines a move left, its hand-written facts and times), carried over a rewrite
    from the facts of the lines it replaced alone, are those a fresh parse builds."""
    then = now = _TIMES[2]  # no fact is timed like its file
    before = ["## User\n", *(_bullet(n) for n in range(head)), *middle]
    at = min(cut[0], len(before))
    after = [*before[:at], *inserted, *before[at + cut[1] :]]
    old = _kept(_text(before), then)
    if old.parsed.warnings or old.parsed.damage:
        return
    built = _lookups(old)
    change = splice_change(
        old.parsed,
        old.lines,
        split_lines(_text(after)),
        spec=brain.BRAIN,
        agent="a",
        tenant="t",
        mtimes=(then, now),
    )
    if change is None:
        return
    new = _kept(_text(after), now)
    assert new.parsed.items == change.parsed.items
    new.parsed = change.parsed
    lookup.carry(old, new, change)
    if not new.derived:
        return  # a fact added, or a key changed: built again when asked for
    assert set(new.derived) == set(built)
    assert _lookups(new) == _lookups(_kept(_text(after), now))
    event("carried")
