"""One suite of memory behaviours, run on every backend (``tests/backends.py``).

Each test takes the ``backend`` fixture (``markdown``: the Markdown workspace with its
SQLite index; ``postgres``: the PostgreSQL store of record with a worker's working
copy) and goes through the :class:`~kronika.Memory` API only, so "behaves alike" means
the same answers on both. Where the other worker (``backend.open("b")``) reads, the
answer came through the store of record. Other suites run on both backends the same
way: take the ``backend`` fixture (defined in ``tests/conftest.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from backends import NEIGHBOUR, Backend
from kronika.core.model import ItemType, Reader, Status
from kronika.errors import InvalidInput, InvalidQuery, NotFound, PermissionDenied
from kronika.stores.postgres.connect import index_schema
from kronika.testing import FrozenClock
from kronika.workflows.portability import export_memory, import_export


def test_remember_then_recall_with_its_citation(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock)
    memory.remember("prefers green tea in the morning", key="drink")
    memory.note("Met Olena in Kyiv about the river project")
    hits = backend.open("b", clock=clock).recall("green tea", k=3).hits
    assert hits[0].item.value == "prefers green tea in the morning"
    assert hits[0].item.provenance.citation().startswith("brain.md#L")
    notes = memory.recall("Kyiv river", k=3, types=[ItemType.NOTE]).hits
    assert [h.item.type for h in notes] == [ItemType.NOTE]
    assert notes[0].item.provenance.path.startswith("memory/")


def test_a_new_value_supersedes_the_old_with_an_unbroken_history(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock)
    memory.remember("Kraków", key="city")
    clock.advance(days=3)
    backend.open("b", clock=clock).remember("Lviv", key="city")
    clock.advance(days=3)
    memory.remember("Warszawa", key="city")
    history = memory.history("city")
    assert [h.value for h in history] == ["Kraków", "Lviv", "Warszawa"]
    for old, new in zip(history, history[1:], strict=False):
        assert old.status is Status.SUPERSEDED
        assert old.superseded_by == new.id
        assert old.valid_to == new.valid_from
    assert [f.value for f in memory.facts() if f.key == "city"] == ["Warszawa"]
    back_then = memory.recall("city", k=10, as_of=(clock.now() - timedelta(days=2)).isoformat())
    assert [h.item.value for h in back_then.hits if h.item.key == "city"] == ["Lviv"]


def test_an_exact_duplicate_is_stored_once(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock)
    memory.remember("likes green tea", key="drink")
    clock.advance(hours=5)
    receipt = backend.open("b", clock=clock).remember("Likes  green tea", key="Drink")
    assert type(receipt.change).__name__ == "TouchFact"
    assert len([f for f in memory.facts() if f.key and f.key.lower() == "drink"]) == 1


def test_forget_leaves_nothing_readable(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock)
    memory.remember("Zanzibar", key="hideout")
    memory.remember("Quillbrook", key="hideout")
    memory.note("The hideout in Zanzibar has a blue door")
    receipt = memory.forget(key="hideout")
    assert receipt.outcome == "applied"
    other = backend.open("b", clock=clock)
    for mem in (memory, other):
        assert mem.history("hideout") == []
        assert not mem.recall("Zanzibar Quillbrook", k=10, mode="lexical").hits
        assert all("Zanzibar" not in e.summary for e in mem.audit())
    assert not _readable_anywhere(backend, ("Zanzibar", "Quillbrook"))


def test_a_forget_redacts_every_entry_of_a_long_audit_trail_and_no_other(
    backend: Backend, clock: FrozenClock
) -> None:
    # A trail of some hundreds of entries, the forgotten value in two of them far apart
    # (one with a line separator and a NEL in it, which JSON leaves as they are).
    memory = backend.open(clock=clock)
    memory.remember("Zanzibar\u2028with the blue door\x85", key="hideout")
    memory.remember_many([{"key": f"plant_{n}", "value": f"fern number {n}"} for n in range(300)])
    memory.note("We found Zanzibar with the blue  door at noon")
    before = memory.audit()
    assert before[0].summary.startswith("hideout: Zanzibar\u2028with the blue door")
    mentioning = [e for e in before if "Zanzibar" in e.summary]
    assert len(mentioning) == 2
    receipt = memory.forget(key="hideout")
    assert receipt.audit_redacted == 2
    for mem in (memory, backend.open("b", clock=clock)):
        after = mem.audit()
        assert not [e for e in after if "Zanzibar" in e.summary]
        kept = [e for e in after if e.action != "forget"]
        assert [e.summary for e in kept if "fern" in e.summary] == [
            e.summary for e in before if "fern" in e.summary
        ]
        assert len(kept) == len(before)


def test_a_turn_is_read_and_forgotten_by_the_turn_id_save_turn_gave(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock)
    kept = memory.save_turn("trip", "user", "we fly to Lisbon on Monday")
    said = memory.save_turn("trip", "user", "my passport number ends in Quokka77")
    memory.save_turn("visit", "user", "no turn here shares an id with the trip's")
    assert memory.get(said).content == "my passport number ends in Quokka77"
    receipt = memory.forget(said)
    assert receipt.outcome == "applied" and [it.content for it in receipt.items] == [
        "my passport number ends in Quokka77"
    ]
    other = backend.open("b", clock=clock)
    for mem in (memory, other):
        assert [t.content for t in mem.load_session("trip")] == ["we fly to Lisbon on Monday"]
        assert not mem.recall("Quokka77 passport", k=10, mode="lexical").hits
    assert not _readable_anywhere(backend, ("Quokka77",))
    with pytest.raises(NotFound):  # gone: naming it again finds nothing
        memory.forget(said)
    with pytest.raises(NotFound):
        other.get(said)
    assert memory.forget(kept, dry_run=True).items[0].content == "we fly to Lisbon on Monday"


def test_a_turn_id_names_only_what_the_reader_sees_and_two_sessions_sharing_it_need_the_item_id(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock)
    memory.save_turn("ann-notes", "user", "Ann keeps bees", turn_id="q1", user="ann")
    memory.save_turn("bob-notes", "user", "Bob keeps goats", turn_id="q1", user="bob")
    with pytest.raises(InvalidInput, match="more than one session"):
        memory.forget("q1")
    assert memory.load_session("ann-notes") and memory.load_session("bob-notes")
    # Ann sees her session only: the id names one turn, hers, and Bob's is not named
    with pytest.raises(InvalidInput, match="more than one session"):
        memory.get("q1")
    ann = Reader(tenant=backend.tenant or "default", user="ann")
    assert memory.get("q1", reader=ann).content == "Ann keeps bees"
    preview = memory.forget("q1", reader=ann, dry_run=True)
    assert [it.content for it in preview.items] == ["Ann keeps bees"]
    memory.forget("q1", reader=ann)
    assert [t.content for t in memory.load_session("bob-notes")] == ["Bob keeps goats"]
    assert memory.load_session("ann-notes") == []
    carol = Reader(tenant=backend.tenant or "default", user="carol")
    with pytest.raises(NotFound) as refused:
        memory.forget("q1", reader=carol)
    assert "bob-notes" not in str(refused.value)
    with pytest.raises(NotFound):
        memory.get("q1", reader=carol)


def test_proposals_wait_for_the_person(backend: Backend, clock: FrozenClock) -> None:
    _config(backend, "[agents.careful]\nautonomy = 1\n")
    memory = backend.open(clock=clock)
    memory.create_agent("careful")
    receipt = memory.remember("maybe Lisbon", key="city", agent="careful", source_agent="careful")
    assert receipt.outcome == "proposed"
    assert memory.facts(agent="careful") == []
    other = backend.open("b", clock=clock)
    waiting = other.proposals(agent="careful")
    assert len(waiting) == 1
    other.approve(waiting[0].id, agent="careful")
    assert [f.value for f in memory.facts(agent="careful")] == ["maybe Lisbon"]
    assert memory.proposals(agent="careful") == []


def test_writing_into_another_agent_needs_a_grant(backend: Backend, clock: FrozenClock) -> None:
    _config(backend, '[agents.jaskier]\nwriters = ["planner"]\n')
    memory = backend.open(clock=clock)
    for name in ("jaskier", "planner", "intruder"):
        memory.create_agent(name)
    memory.remember("likes ballads", agent="jaskier", source_agent="planner")
    with pytest.raises(PermissionDenied, match="writers"):
        memory.remember("likes metal", agent="jaskier", source_agent="intruder")
    audit = backend.open("b", clock=clock).audit(agent="jaskier")
    assert [(e.source_agent, e.outcome) for e in audit] == [
        ("planner", "applied"),
        ("intruder", "denied"),
    ]


def test_every_write_is_audited(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock)
    memory.remember("Lucas", key="nombre")
    memory.remember("Luca", key="nombre")
    memory.save_turn("s1", "user", "hola, soy Luca")
    actions = [(e.action, e.outcome) for e in backend.open("b", clock=clock).audit()]
    assert actions[:2] == [("remember", "applied"), ("supersede", "applied")]
    assert memory.load_session("s1")[0].content == "hola, soy Luca"


def test_a_nul_character_is_a_clear_error_on_every_backend(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock)
    memory.remember("keeps bees", key="hobby")
    for write in (
        lambda: memory.remember("tea\x00 with milk", key="drink"),
        lambda: memory.remember("x", key="dr\x00ink"),
        lambda: memory.note("met \x00Olena"),
        lambda: memory.save_turn("s1", "user", "hola\x00"),
    ):
        with pytest.raises(InvalidInput, match="NUL"):
            write()
    with pytest.raises(InvalidQuery, match="NUL"):
        memory.recall("bees\x00")
    assert [f.value for f in backend.open("b", clock=clock).facts()] == ["keeps bees"]


def test_export_then_import_gives_the_same_memory(
    backend: Backend, clock: FrozenClock, tmp_path: Path
) -> None:
    memory = backend.open(clock=clock)
    memory.remember("Kraków", key="city")
    clock.advance(days=1)
    memory.remember("Warszawa", key="city")
    memory.note("Зустрів Олену в Києві")
    memory.save_turn("s1", "user", "¿recordás que me gusta el mate?")
    exported = export_memory(memory)
    target = backend.another(tmp_path / "again")
    fresh = target.open(clock=clock)
    try:
        import_export(fresh, exported, replace_existing=True)
        again = export_memory(fresh)
    finally:
        target.close()
    assert again["agents"]["default"]["files"] == exported["agents"]["default"]["files"]
    assert again["agents"]["default"]["file_times"] == exported["agents"]["default"]["file_times"]
    assert again["audit"][: len(exported["audit"])] == exported["audit"]


def test_storage_policies_refuse_on_write_and_purge_what_they_no_longer_allow(
    backend: Backend, clock: FrozenClock
) -> None:
    _config(
        backend,
        '[retention]\nshort = 30\n\n[[policy]]\nname = "never store hr"\n'
        'channels = ["hr-private"]\nstore = false\n',
    )
    memory = backend.open(clock=clock)
    refused = memory.remember("salary is 9000 zlotyquux", channel="hr-private", scope="channel")
    assert refused.outcome == "refused"
    memory.save_turn("s1", "user", "the password hint is snorkelwren")
    memory.note("keep this note about tulips")
    clock.advance(days=31)
    report = backend.open("b", clock=clock).purge()
    assert report.forgotten == 1
    assert [it.content for it in memory.items(types=["note"])] == ["keep this note about tulips"]
    assert not memory.recall("snorkelwren", mode="lexical").hits
    assert not _readable_anywhere(backend, ("zlotyquux", "snorkelwren"))


def test_the_markdown_view_is_every_file_as_kept(backend: Backend, tmp_path: Path) -> None:
    memory = backend.open()
    memory.remember("Kraków", key="city")
    memory.remember("Lviv", key="city")
    memory.save_turn("s1", "user", "¿recordás que me gusta el mate?")
    files = export_memory(memory)["agents"]["default"]["files"]
    backend.open("b")  # the worker the command runs in (on Markdown: the same folder)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    out = tmp_path / "view"
    done = subprocess.run(
        [str(Path(sys.executable).with_name("kronika")), "export", "--markdown", str(out)],
        env={**env, **backend.environ("b")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    view = {
        p.relative_to(out / "default").as_posix(): p.read_bytes().decode()
        for p in (out / "default").rglob("*.md")
    }
    assert view == files
    assert "Lviv" in view["brain.md"] and "Kraków" in view["history.md"]


def _config(backend: Backend, text: str) -> None:
    for worker in ("a", "b"):
        home = backend.home(worker)
        home.mkdir(parents=True, exist_ok=True)
        (home / "kronika.toml").write_text(text)


def _readable_anywhere(backend: Backend, words: tuple[str, ...]) -> list[str]:
    """Where any of ``words`` can still be read: the workspace files of every worker and
    the audit file, and on PostgreSQL every text column of every table, but for the rows
    of the neighbour tenant that shares the database (which must keep its own)."""
    found = []
    for file in backend.root.rglob("*"):
        if file.is_file() and file.suffix in (".md", ".jsonl"):
            text = file.read_text(encoding="utf-8", errors="replace")
            found += [f"{file}: {w}" for w in words if w in text]
    if backend.database_url:
        import psycopg

        with psycopg.connect(backend.database_url) as conn:
            tables = conn.execute(  # the record's schema and every tenant's index schema
                "SELECT table_schema, table_name FROM information_schema.tables"
                " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
                " AND table_type = 'BASE TABLE'"
            ).fetchall()
            for schema, table in tables:
                if schema == index_schema(NEIGHBOUR):
                    continue
                rows = conn.execute(
                    f'SELECT CAST(t AS text) FROM "{schema}"."{table}" AS t'
                    " WHERE to_jsonb(t) ->> 'tenant' IS DISTINCT FROM %s",
                    (NEIGHBOUR,),
                )
                found += [f"{table}: {w}" for (row,) in rows for w in words if w in row]
    return found


def test_a_session_saved_turn_by_turn_is_listed_and_distilled_once_quiet(
    backend: Backend, clock: FrozenClock
) -> None:
    from kronika.workflows.jobs import run_job

    memory = backend.open(clock=clock)
    memory.save_turn("trip-lisbon", "user", "We fly to Lisbon on Friday")
    memory.save_turn("trip-lisbon", "assistant", "Noted: Lisbon, Friday")
    other = backend.open("b", clock=clock)
    listed = {h.session_id: h.status for h in other.workspace.session_headers("default")}
    assert listed == {"trip-lisbon": "open"}
    assert [t.speaker for t in other.load_session("trip-lisbon")] == ["user", "assistant"]
    # still being written: distill leaves it open
    run_job(memory, "distill")
    assert [h.status for h in memory.workspace.session_headers("default")] == ["open"]
    clock.advance(minutes=memory.settings.idle_minutes + 1)
    report = run_job(memory, "distill")
    assert "session trip-lisbon: ended (no turn for idle_minutes)" in report.done
    header = backend.open("b", clock=clock).workspace.session_headers("default")[0]
    assert (header.session_id, header.fields["end_reason"]) == ("trip-lisbon", "distill")
    assert header.status in {"ended", "consolidated"}
