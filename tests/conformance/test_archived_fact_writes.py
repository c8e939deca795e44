"""Facts of the archive given a new value or said again, on every backend: the new
value is current and found, the old one is history, the archive's other facts keep
their lines (a fact that leaves marks its lines, `docs/workspace.md`), the marks are
dropped once they are many (moves and forgets alike), and the index holds what a
rebuild from the files holds."""

from __future__ import annotations

from tests.backends import Backend

from kronika import Memory
from kronika.stores.markdown.facts.many import COMPACT_AFTER

_BUDGET = {"brain_max": 60, "brain_budget": 40}


def _archived(memory: Memory, count: int) -> dict[str, str]:
    """``count`` keyed facts remembered, most of them archived by the Brain's budget;
    returns the archived ones' values by key."""
    memory.remember_many([{"key": f"k{n}", "value": f"value number {n}"} for n in range(count)])
    archived = {f.key: f.value or "" for f in memory.workspace.archived_facts("default") if f.key}
    assert len(archived) > count // 2, "the Brain's budget archived most facts"
    return archived


def _archive_text(memory: Memory) -> str:
    return (memory.workspace.agent_dir("default") / "brain_archive.md").read_text(encoding="utf-8")


def _cited_lines_hold_their_facts(memory: Memory) -> None:
    """Every archived fact the index holds cites the line its bullet is on."""
    lines = _archive_text(memory).splitlines()
    rows = memory.index.source_items("default", "brain_archive.md")
    assert rows
    for row in rows:
        line = lines[(row.provenance.line or 0) - 1]
        assert line.startswith(f"- **{row.key}**: {row.value}"), (row.key, line)


def _index_as_rebuilt(memory: Memory) -> None:
    """The index holds what a rebuild from the files holds, for every fact file."""
    paths = ("brain.md", "brain_archive.md", "history.md")
    before = {
        p: sorted(
            (r.id, r.provenance.line, r.content, r.status.value)
            for r in memory.index.source_items("default", p)
        )
        for p in paths
    }
    memory.reindex()
    after = {
        p: sorted(
            (r.id, r.provenance.line, r.content, r.status.value)
            for r in memory.index.source_items("default", p)
        )
        for p in paths
    }
    assert before == after


def test_an_archived_fact_given_a_new_value_or_said_again(backend: Backend) -> None:
    memory = backend.open(**_BUDGET)
    archived = _archived(memory, 40)
    keys = sorted(archived, key=lambda k: int(k[1:]))
    changed, again = keys[2], keys[5]
    lines_before = len(_archive_text(memory).splitlines())

    memory.remember("a changed value", key=changed)
    memory.remember(archived[again], key=again)  # the same value: refreshed where it is

    facts = {f.key: f.value for f in memory.facts() if f.key}
    assert facts[changed] == "a changed value" and facts[again] == archived[again]
    assert [h.value for h in memory.history(changed)] == [archived[changed], "a changed value"]
    text = _archive_text(memory)
    assert f"value number {changed[1:]} <!--" not in text
    assert " moved out -->" in text
    assert len(text.splitlines()) == lines_before, "no line of the archive moved"
    hits = memory.recall("a changed value", k=3).hits
    assert hits and hits[0].item.value == "a changed value"
    assert hits[0].item.provenance.path == "brain.md"
    _cited_lines_hold_their_facts(memory)
    _index_as_rebuilt(memory)

    other = backend.open("b", **_BUDGET)  # another process or worker reads the same
    assert {f.key: f.value for f in other.facts() if f.key}[changed] == "a changed value"


def test_many_archived_facts_changed_leave_no_marks_once_they_are_many(backend: Backend) -> None:
    memory = backend.open(**_BUDGET)
    count = 2 * COMPACT_AFTER + 40
    archived = _archived(memory, count)
    keys = sorted(archived, key=lambda k: int(k[1:]))[: COMPACT_AFTER + 20]
    for n, key in enumerate(keys):
        if n % 2:
            memory.remember(f"changed {key}", key=key)
        else:
            memory.remember_many([{"key": key, "value": f"changed {key}"}])
        assert _archive_text(memory).count(" moved out -->") <= max(
            COMPACT_AFTER, len(_archive_text(memory).splitlines()) // 8
        )
    assert _archive_text(memory).count(" moved out -->") < COMPACT_AFTER, "dropped once many"
    facts = {f.key: f.value for f in memory.facts() if f.key}
    assert all(facts[key] == f"changed {key}" for key in keys)
    assert len(facts) == count
    _cited_lines_hold_their_facts(memory)
    _index_as_rebuilt(memory)


def test_archived_facts_forgotten_leave_marks_that_hold_nothing_of_them(backend: Backend) -> None:
    """A fact forgotten from the archive leaves an id-less mark on its line: no line
    moves, nothing of it (value, id) stays in the file, the index or a rebuild, and the
    marks are dropped once they are many, forgets and moves alike."""
    memory = backend.open(**_BUDGET)
    count = 2 * COMPACT_AFTER + 40
    archived = {f.key: f for f in memory.workspace.archived_facts("default") if f.key}
    assert not archived
    _archived(memory, count)
    archived = {f.key: f for f in memory.workspace.archived_facts("default") if f.key}
    keys = sorted(archived, key=lambda k: int(k[1:]))
    first = archived[keys[3]]
    lines_before = len(_archive_text(memory).splitlines())
    memory.forget(first.id)
    text = _archive_text(memory)
    assert len(text.splitlines()) == lines_before, "no line of the archive moved"
    assert "<!-- moved out -->\n" in text
    assert first.id not in text and f"{first.value} <!--" not in text
    found = memory.recall(first.value or "", k=50, mode="lexical").hits
    assert found and first.id not in {hit.item.id for hit in found}
    _cited_lines_hold_their_facts(memory)
    _index_as_rebuilt(memory)
    for key in keys[4 : 4 + COMPACT_AFTER + 10]:
        memory.forget(archived[key].id)
        text = _archive_text(memory)
        assert text.count(" moved out -->") <= max(COMPACT_AFTER, len(text.splitlines()) // 8)
    assert _archive_text(memory).count(" moved out -->") < COMPACT_AFTER, "dropped once many"
    left = {f.key for f in memory.workspace.archived_facts("default") if f.key}
    assert left == set(keys) - {keys[3], *keys[4 : 4 + COMPACT_AFTER + 10]}
    _cited_lines_hold_their_facts(memory)
    _index_as_rebuilt(memory)


def test_a_key_forgotten_leaves_marks_in_the_history_and_moves_no_line(backend: Backend) -> None:
    """A key's values spread over a long history are forgotten as marks, line for line:
    nothing of them stays in the file, the index or a rebuild, and the other values
    keep their lines (they are not cited anew)."""
    memory = backend.open(**_BUDGET)
    for round_ in range(4):
        memory.remember_many(
            [{"key": f"k{n}", "value": f"value {round_} of {n}"} for n in range(30)]
        )
    history = memory.workspace.agent_dir("default") / "history.md"
    lines_before = history.read_text(encoding="utf-8").splitlines()
    cited = {
        row.id: row.provenance.line for row in memory.index.source_items("default", "history.md")
    }
    gone = {h.id for h in memory.history("k7")} | {f.id for f in memory.facts() if f.key == "k7"}
    assert len([i for i in gone if i in cited]) == 3, "three old values of k7 in the history"
    memory.forget(key="k7")
    text = history.read_text(encoding="utf-8")
    assert len(text.splitlines()) == len(lines_before), "no line of the history moved"
    assert text.count("<!-- moved out -->\n") == 3
    assert not any("of 7 <!--" in line for line in text.splitlines())
    assert not any(item_id in text for item_id in gone)
    rows = {r.id: r.provenance.line for r in memory.index.source_items("default", "history.md")}
    assert rows == {i: line for i, line in cited.items() if i not in gone}
    assert memory.history("k7") == []
    _index_as_rebuilt(memory)


def test_a_move_cut_short_then_another_write_keeps_the_fact_the_brain_holds(
    backend: Backend,
) -> None:
    """A fact of the archive written back into the Brain by a process killed before it
    marked the archive's copy: the Brain's copy is the fact. The next write deletes the
    archive's copy (a leftover), and the index must keep the Brain's, as a rebuild does."""
    memory = backend.open(**_BUDGET)
    archived = _archived(memory, 40)
    key = sorted(archived, key=lambda k: int(k[1:]))[3]
    bullet = next(
        line
        for line in _archive_text(memory).splitlines(keepends=True)
        if line.startswith(f"- **{key}**: ")
    )
    brain = memory.workspace.agent_dir("default") / "brain.md"
    brain.write_text(brain.read_text(encoding="utf-8") + bullet, encoding="utf-8")
    memory.sync()

    memory.remember("another fact written after the crash", key="after")

    assert f"- **{key}**: " not in _archive_text(memory), "the leftover is deleted"
    facts = {f.key: f.value for f in memory.facts() if f.key}
    assert facts[key] == archived[key]
    hits = memory.recall(archived[key], k=50, keys=[key], record_access=False).hits
    assert [(h.item.value, h.item.provenance.path) for h in hits] == [(archived[key], "brain.md")]
    _index_as_rebuilt(memory)
