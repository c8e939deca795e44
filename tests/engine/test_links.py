"""Links between items (event -> reflection, error -> strategy, reflection -> strategy,
item <-> item): kept in the agent's links.md, removed with a forgotten item, carried by
an export; over a real workspace and index."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika import Memory, build_memory, load_settings
from kronika.core.model import ItemLink, LinkKind
from kronika.errors import InvalidInput, NotFound
from kronika.stores.markdown.links import format_link, parse_link


def _ids(memory: Memory, *texts: str) -> list[str]:
    made = []
    for text in texts:
        receipt = memory.note(text)
        assert receipt.item is not None
        made.append(receipt.item.id)
    return made


def test_each_kind_of_link_is_kept_in_links_md_as_readable_lines(memory: Memory) -> None:
    event, error, reflection, strategy = _ids(
        memory,
        "The deploy ran at 3 a.m.",
        "The deploy failed: the disk was full",
        "Deploys fail when nobody checks disk space first",
        "Check free disk space before every deploy",
    )
    memory.link(event, reflection, "reflection")
    memory.link(error, strategy, LinkKind.STRATEGY)
    memory.link(reflection, strategy, "strategy")
    memory.link(strategy, event)  # related, both ways
    assert [(link.from_id, link.to_id, link.kind) for link in memory.links()] == [
        (event, reflection, LinkKind.REFLECTION),
        (error, strategy, LinkKind.STRATEGY),
        (reflection, strategy, LinkKind.STRATEGY),
        (min(event, strategy), max(event, strategy), LinkKind.RELATED),
    ]
    ends = {end for link in memory.links(strategy) for end in (link.from_id, link.to_id)}
    assert ends - {strategy} == {error, reflection, event}
    text = (memory.workspace.agent_dir("default") / "links.md").read_text(encoding="utf-8")
    assert f"- {event} -[reflection]-> {reflection} <!-- created=2026-11-22T09:00:00Z -->" in text
    assert "<-[related]->" in text
    assert "disk" not in text  # ids only, never an item's text


def test_linking_again_or_the_other_way_round_keeps_one_link(memory: Memory) -> None:
    a, b = _ids(memory, "Ola likes sailing", "Ola bought a boat")
    first = memory.link(a, b)
    assert memory.link(b, a) == first
    assert memory.link(a, b, "related") == first
    assert len(memory.links()) == 1
    assert [e.action for e in memory.audit()].count("link") == 1


def test_a_link_needs_two_items_of_the_agent_and_a_known_kind(memory: Memory) -> None:
    (a,) = _ids(memory, "The printer jams on thick paper")
    with pytest.raises(NotFound):
        memory.link(a, "n-nothing-here")
    with pytest.raises(InvalidInput, match="kinds are reflection, strategy, related"):
        memory.link(a, a + "x", "causes")
    with pytest.raises(InvalidInput):
        memory.link(a, a)
    memory.create_agent("planner")
    (other,) = [r.item.id for r in [memory.note("Plan the trip", agent="planner")] if r.item]
    with pytest.raises(NotFound):
        memory.link(a, other)
    assert memory.links() == []


def test_forgetting_an_item_removes_its_links_and_keeps_the_others(memory: Memory) -> None:
    error, strategy, other = _ids(
        memory,
        "The build broke on the zanzibar branch",
        "Run the tests before pushing",
        "Coffee helps in the morning",
    )
    memory.link(error, strategy, "strategy")
    memory.link(strategy, other)
    memory.forget(error)
    assert [(link.from_id, link.to_id) for link in memory.links()] == [
        (min(strategy, other), max(strategy, other))
    ]


def test_an_export_carries_the_links_to_another_workspace(memory: Memory, tmp_path: Path) -> None:
    from kronika.workflows.portability import export_memory, import_export

    a, b = _ids(memory, "The cat is called Mruczek", "Mruczek hates the vacuum cleaner")
    memory.link(a, b)
    data = export_memory(memory)
    there = load_settings(tmp_path / "there", environ={}, embedder="hashing")
    with build_memory(there, create=True) as copy:
        import_export(copy, data, replace_existing=True)
        assert copy.links() == memory.links()
        assert copy.links(a)[0].created_at == memory.links()[0].created_at


def test_a_hand_written_line_that_is_no_link_survives_a_rewrite(memory: Memory) -> None:
    a, b, c = _ids(memory, "one thing", "another thing", "a third thing")
    memory.link(a, b)
    path = memory.workspace.agent_dir("default") / "links.md"
    path.write_text(path.read_text(encoding="utf-8") + "- my own remark\n", encoding="utf-8")
    memory.link(b, c, "strategy")
    memory.forget(a)
    text = path.read_text(encoding="utf-8")
    assert "- my own remark" in text and f"{b} -[strategy]-> {c}" in text
    assert len(memory.links()) == 1


ids = st.text(st.characters(blacklist_categories=("Z", "C")), min_size=1, max_size=12)


@given(ids, ids, st.sampled_from(list(LinkKind)), st.booleans())
def test_a_link_line_reads_back_as_the_same_link(
    a: str, b: str, kind: LinkKind, timed: bool
) -> None:
    at = datetime(2026, 11, 22, 9, 0, tzinfo=UTC) if timed else None
    link = ItemLink(a, b, kind, at)
    assert parse_link(format_link(link)) == link.normalised()


def test_link_and_links_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from kronika.cli import main

    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    assert main(["init"]) == 0
    for text in ("The backup failed overnight", "Rotate the backup disks weekly"):
        assert main(["note", text]) == 0
    capsys.readouterr()
    assert main(["list", "--json"]) == 0
    rows = {row["content"]: row["id"] for row in json.loads(capsys.readouterr().out)}
    error, strategy = rows["The backup failed overnight"], rows["Rotate the backup disks weekly"]
    assert main(["links", "add", error, strategy, "--kind", "strategy"]) == 0
    assert f"{error} -[strategy]-> {strategy}" in capsys.readouterr().out
    assert main(["links", strategy, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["kind"] == "strategy"
    assert main(["links", "add", error, "n-missing"]) == 5
    assert main(["links", "add", error, strategy, "--kind", "causes"]) == 2
