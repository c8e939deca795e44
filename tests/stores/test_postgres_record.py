"""The PostgreSQL store of record: many workers, one key; what the tables hold; the
working copy; errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.errors import StoreError
from kronika.settings import Settings
from kronika.stores.postgres.embedded import free_port

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

WORKERS = 4
WRITES = 12

_WORKER = textwrap.dedent(
    """
    import sys
    from kronika import build_memory, load_settings

    home, url, worker, writes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    settings = load_settings(home, environ={}, embedder="hashing", database_url=url)
    with build_memory(settings) as memory:
        for n in range(writes):
            memory.remember(f"value {worker}-{n}", key="city")
            memory.save_turn(f"s-{worker}", "user", f"turn {n} of worker {worker}")
    """
)


def test_workers_writing_one_key_lose_nothing_and_keep_one_history_chain(
    postgres_url: str, tmp_path: Path
) -> None:
    build_memory(_settings(tmp_path / "first", postgres_url)).close()  # migrate once
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tmp_path / f"w{n}"), postgres_url, str(n)]
            + [str(WRITES)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    errors = [worker.communicate(timeout=300)[1] for worker in workers]  # all, then check
    for worker, err in zip(workers, errors, strict=True):
        assert worker.returncode == 0, err

    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT id, status, content, valid_from, valid_to, superseded_by FROM record_items"
            " WHERE agent = 'default' AND key = 'city'"
        ).fetchall()
        turns = conn.execute("SELECT count(*) FROM record_items WHERE type = 'message'").fetchone()
    written = {f"city: value {w}-{n}" for w in range(WORKERS) for n in range(WRITES)}
    assert sorted(r[2] for r in rows) == sorted(written)  # every value, exactly once
    assert turns == (WORKERS * WRITES,)
    current = [r for r in rows if r[1] != "superseded"]
    assert len(current) == 1
    by_id = {r[0]: r for r in rows}
    successors = [r[5] for r in rows if r[1] == "superseded"]
    assert len(set(successors)) == len(successors) == len(rows) - 1  # one chain, no fork
    for row in rows:
        if row[1] == "superseded":
            after = by_id[row[5]]
            assert row[4] == after[3]  # contiguous validity: [from, to) then [to, …)
            assert row[3] <= row[4]
    # a worker that starts now reads the same history
    with build_memory(_settings(tmp_path / "late", postgres_url)) as late:
        history = late.history("city")
    assert len(history) == WORKERS * WRITES
    for old, new in zip(history, history[1:], strict=False):
        assert old.superseded_by == new.id and old.valid_to == new.valid_from


def test_the_record_holds_facts_with_their_history_and_the_audit_trail(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.remember("Kraków", key="city")
        memory.remember("Lviv", key="city")
        memory.note("Met Olena in Kyiv")
    with psycopg.connect(postgres_url) as conn:
        facts = conn.execute(
            "SELECT content, status, superseded_by IS NOT NULL FROM record_items"
            " WHERE key = 'city' ORDER BY valid_from"
        ).fetchall()
        documents = {row[0] for row in conn.execute("SELECT path FROM record_documents").fetchall()}
        audit = conn.execute("SELECT action FROM record_audit ORDER BY seq").fetchall()
    assert facts == [("city: Kraków", "superseded", True), ("city: Lviv", "current", False)]
    assert {"brain.md", "history.md", "identity.md"} <= documents
    assert [a for (a,) in audit] == ["remember", "supersede", "note"]


def test_a_working_copy_can_be_thrown_away_and_hand_edits_reach_the_record(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.remember("Kraków", key="city")
        brain = memory.workspace.agent_dir("default") / "brain.md"
        brain.write_text(brain.read_text().replace("Kraków", "Gdańsk"))
        memory.sync()
    with build_memory(_settings(tmp_path / "b", postgres_url)) as other:
        assert [f.value for f in other.facts()] == ["Gdańsk"]
        assert other.recall("Gdańsk", k=1).hits


def test_an_unreachable_database_is_a_clear_error(tmp_path: Path) -> None:
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/none"
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL at"):
        build_memory(_settings(tmp_path / "a", url))


def test_a_database_url_that_is_not_postgresql_is_refused(tmp_path: Path) -> None:
    from kronika.errors import ConfigError

    with pytest.raises(ConfigError, match="database_url"):
        load_settings(tmp_path, environ={"KRONIKA_DATABASE_URL": "mysql://x"})


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def test_kronika_init_on_a_new_machine_fetches_the_teams_memory(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.remember("Kraków", key="city")
    env = {
        "PATH": str(Path(sys.executable).parent),
        "KRONIKA_DATABASE_URL": postgres_url,
        "KRONIKA_EMBEDDER": "hashing",
    }
    kronika = str(Path(sys.executable).with_name("kronika"))
    home = str(tmp_path / "new")
    subprocess.run([kronika, "--home", home, "init"], env=env, check=True, capture_output=True)
    shown = subprocess.run(
        [kronika, "--home", home, "history", "city"], env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert "Kraków" in shown.stdout
    brain = (tmp_path / "new" / "agents" / "default" / "brain.md").read_text()
    assert "Kraków" in brain  # the Markdown view of the team's memory


def test_two_memories_sharing_one_working_copy_keep_each_others_writes(
    postgres_url: str, tmp_path: Path
) -> None:
    one = build_memory(_settings(tmp_path / "shared", postgres_url))
    two = build_memory(_settings(tmp_path / "shared", postgres_url))
    try:
        one.remember("Kraków", key="city")
        two.remember("Lviv", key="city")
        one.remember("Gdańsk", key="city")
        two.note("Met Olena in Kyiv")
        assert [h.value for h in two.history("city")] == ["Kraków", "Lviv", "Gdańsk"]
        assert not [n for n in one.notes + two.notes if "conflict" in n]
    finally:
        one.close()
        two.close()
    with build_memory(_settings(tmp_path / "elsewhere", postgres_url)) as other:
        assert [h.value for h in other.history("city")] == ["Kraków", "Lviv", "Gdańsk"]
        assert other.recall("Olena Kyiv", k=1).hits


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from kronika import build_memory, load_settings

    settings = load_settings(sys.argv[1], environ={}, embedder="hashing", database_url=sys.argv[2])
    memory = build_memory(settings)
    with memory.lock:
        memory.remember("Atlantis", key="city")  # written here, not yet in the record
        print("holding", flush=True)
        time.sleep(600)
    """
)


def test_a_worker_killed_while_writing_leaves_nothing_half_written(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.remember("Kraków", key="city")
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "killed"), postgres_url],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    finally:
        holder.kill()
        holder.communicate()
    with build_memory(_settings(tmp_path / "b", postgres_url)) as other:
        other.remember("Lviv", key="city")  # the lock died with its worker
        assert [h.value for h in other.history("city")] == ["Kraków", "Lviv"]


def test_a_hand_edit_made_while_another_worker_wrote_is_kept_aside(
    postgres_url: str, tmp_path: Path
) -> None:
    one = build_memory(_settings(tmp_path / "one", postgres_url))
    two = build_memory(_settings(tmp_path / "two", postgres_url))
    try:
        one.remember("Kraków", key="city")
        brain = one.workspace.agent_dir("default") / "brain.md"
        brain.write_text(brain.read_text().replace("Kraków", "Gdańsk"))  # not synced yet
        two.remember("likes tea", key="drink")
        facts = {f.key: f.value for f in one.facts()}
        assert facts == {"city": "Kraków", "drink": "likes tea"}  # the record's version
        kept = list((brain.parent / ".corrupt").glob("brain.md.conflict*"))
        assert len(kept) == 1 and "Gdańsk" in kept[0].read_text()
        assert any("edited here while another worker changed it" in n for n in one.notes)
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize("how", ["truncate", "cut in a value", "empty", "bad bytes", "delete"])
def test_a_damaged_working_copy_is_never_pushed_to_the_record(
    postgres_url: str, tmp_path: Path, how: str
) -> None:
    """A Brain and a session damaged in one worker's folder: the record (and so every
    other worker) keeps them whole, the damaged worker gets the record's version back
    with a note, and a fact written after the damage is kept."""
    facts = [f"I like thing {n} very much" for n in range(6)]
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        for n, fact in enumerate(facts):
            memory.remember(fact, key=f"like{n}")
        for n in range(3):
            memory.save_turn("s1", "user", f"I adopted cat number {n}")
    folder = tmp_path / "a" / "agents" / "default"
    for name in ("brain.md", "sessions/s1.md"):
        file = folder / name
        raw = file.read_bytes()
        if how == "truncate" or (how == "cut in a value" and name != "brain.md"):
            file.write_bytes(raw[: len(raw) * 2 // 3])
        elif how == "cut in a value":  # the last fact's line ends inside its value
            file.write_bytes(raw[: raw.index(b"very much", raw.index(b"thing 5"))])
        elif how == "empty":
            file.write_bytes(b"")
        elif how == "bad bytes":
            file.write_bytes(raw.replace(b"thing 3", b"thing \xff\xfe3").replace(b"cat", b"\xffat"))
        else:
            file.unlink()
    with build_memory(_settings(tmp_path / "a", postgres_url)) as damaged:
        damaged.recall("thing cat", k=20)
        damaged.remember("the sky is green", key="sky")
        notes = " ".join(damaged.notes)
    assert "brain.md" in notes and "s1.md" in notes, notes
    with build_memory(_settings(tmp_path / "b", postgres_url)) as other:
        values = {f.value for f in other.facts()}
        assert set(facts) | {"the sky is green"} <= values, values
        keys = [f.key for f in other.facts() if f.key]
        assert len(keys) == len(set(keys)), keys  # one current value per key
        turns = {h.item.content for h in other.recall("adopted cat number", k=20).hits}
        assert {f"I adopted cat number {n}" for n in range(3)} <= turns, turns
    with build_memory(_settings(tmp_path / "a", postgres_url)) as again:
        assert set(facts) | {"the sky is green"} <= {f.value for f in again.facts()}


def test_the_record_gives_one_document_whole(postgres_url: str, tmp_path: Path) -> None:
    """One document read alone (what repairing a damaged file reads) is its latest
    version, whole: the body and every part appended since, as the folder holds it."""
    from kronika.stores.postgres.connect import open_pool
    from kronika.stores.postgres.record import PostgresRecord

    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.remember("tea", key="drink")
        for n in range(3):  # the second and third turns are appended parts
            memory.save_turn("s1", "user", f"turn {n}")
        memory.save_turn("s2", "user", "another session")
        folder = memory.workspace.agent_dir("default")
    pool = open_pool(postgres_url)
    try:
        record = PostgresRecord(pool, "default")
        latest = {(d.agent, d.path): d for d in record.changes(0)}
        for path in ("sessions/s1.md", "sessions/s2.md", "brain.md"):
            one = record.document("default", path)
            assert one == latest[("default", path)]
            assert one is not None and one.text == (folder / path).read_text(encoding="utf-8")
        assert record.document("default", "sessions/none.md") is None
        assert record.document("someone-else", "brain.md") is None
    finally:
        pool.close()
