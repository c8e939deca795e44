"""Rewrites of the Brain re-index and re-parse only the facts they change, and the
result is the one a full parse and a rebuild give."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

from kronika import Memory, build_memory, load_settings
from kronika.core.model import MemoryItem
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.facts.splice import splice
from kronika.stores.markdown.lines import ParsedItems, split_lines
from kronika.testing import FrozenClock

_SECTIONS = ("user", "preferences", "decisions", "current", "Użytkownik")


def _rows(mem: Memory, path: str) -> list[tuple[object, ...]]:
    return sorted(
        (it.id, it.provenance.line, it.content, it.section, it.updated_at, it.status)
        for it in mem.index.source_items("default", path)
    )


def _fields(item: MemoryItem) -> tuple[object, ...]:
    return (item.id, item.provenance, item.content, item.section, item.updated_at, item.valid_from)


def test_remembered_facts_patch_the_brain_rows_as_a_rebuild_would_index_them(
    home: Path, clock: FrozenClock
) -> None:
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=120, brain_budget=80
    )
    rng = random.Random(7)
    with build_memory(settings, create=True, clock=clock) as mem:
        folder = mem.workspace.agent_dir("default")
        for n in range(80):
            key = f"k{rng.randrange(25)}"
            section = rng.choice(_SECTIONS)
            if rng.random() < 0.15:  # an exact duplicate: its time refreshed in place
                facts = mem.workspace.brain_facts("default")
                if facts:
                    old = rng.choice(facts)
                    mem.remember(old.value or old.content, key=old.key, section=old.section)
                    continue
            mem.remember(f"value {n} of {key}", key=key, section=section)
            clock.advance(seconds=1)
            kept = mem.workspace.brain_facts("default")
            text = (folder / "brain.md").read_text(encoding="utf-8")
            full = brain.parse_facts(
                text, spec=brain.BRAIN, agent="default", tenant="default", mtime=clock.now()
            )
            assert [_fields(it) for it in kept] == [_fields(it) for it in full.items]
        patched = {path: _rows(mem, path) for path in ("brain.md", "history.md")}
        assert patched["brain.md"] and patched["history.md"]
        mem.reindex()
        assert patched == {path: _rows(mem, path) for path in ("brain.md", "history.md")}


_T = datetime(2024, 1, 1, tzinfo=UTC)


def _parse(text: str) -> ParsedItems:
    return brain.parse_facts(text, spec=brain.BRAIN, agent="x", tenant="t", mtime=_T)


def _splice(parsed: ParsedItems, old: list[str], new: list[str]) -> ParsedItems | None:
    return splice(parsed, old, new, spec=brain.BRAIN, agent="x", tenant="t", mtimes=(_T, _T))


def test_an_edit_that_a_full_parse_must_read_is_not_spliced() -> None:
    bullet = "- **{}**: {} <!-- id=f-{} src=explicit created=2024-02-01T00:00:00Z -->\n"
    text = f"# Brain\n\n## User\n{bullet.format('a', 'one', 1)}- by hand\n"
    lines = split_lines(text)
    new = [*lines[:4], bullet.format("b", "two", 2), *lines[4:]]
    # a hand-written fact's id counts equal texts before it: parsed whole
    assert _splice(_parse(text), lines, new) is None
    head = lines[:4]
    # a line that continues a bullet changes that bullet: parsed whole
    assert _splice(_parse("".join(head)), head, [*head, "  continued\n"]) is None
    # one that does not: the splice is the full parse
    added = [*head, bullet.format("b", "two", 2)]
    spliced = _splice(_parse("".join(head)), head, added)
    assert spliced is not None
    assert spliced.items == _parse("".join(added)).items
