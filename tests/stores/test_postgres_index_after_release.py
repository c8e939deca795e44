"""In team mode a write is indexed once the store of record holds it and has let go of
the agent's write lock: the next writer of the agent goes on meanwhile, and its own
indexing waits for this one's, so the index never goes back to an older version. A
worker that finds the index behind a version of the record (its writer died before
indexing it) indexes that version as it is: what the writer removed on purpose is not
taken for a loss of this folder, and what it forgot is not kept aside here."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.providers.embedders import HashingEmbedder
from kronika.settings import Settings
from kronika.stores.sqlite import SqliteIndex
from threads import HELD_S, WAIT_S, in_thread

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kronika.stores.postgres.connect import index_schema, migrate, open_pool  # noqa: E402
from kronika.stores.postgres.record import PostgresRecord  # noqa: E402


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _in_record(url: str, key: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT 1 FROM record_items WHERE agent = 'default' AND path = 'brain.md'"
            " AND key = %s AND status = 'current'",
            (key,),
        ).fetchone()
    return row is not None


def test_the_next_writer_of_an_agent_goes_on_while_a_write_is_being_indexed(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        first.remember("the harbour is north of the town", key="harbour")
        indexing, go_on = threading.Event(), threading.Event()

        def slow_indexing() -> None:  # what runs after first's hold, as its indexing does
            indexing.set()
            assert go_on.wait(WAIT_S)

        def hold() -> None:
            with first._ctx.lock.for_agent("default"):
                first._ctx.lock.after_release(slow_indexing)

        held, held_errors = in_thread(hold)
        assert indexing.wait(WAIT_S)
        writer, errors = in_thread(lambda: second.remember("the lighthouse is white", key="light"))
        deadline = time.monotonic() + WAIT_S
        while not _in_record(postgres_url, "light") and time.monotonic() < deadline:
            time.sleep(0.05)
        # the write reached the record while first's indexing ran; its own indexing
        # waits for first's, so it has not returned
        assert _in_record(postgres_url, "light")
        writer.join(HELD_S)
        assert writer.is_alive()
        go_on.set()
        for thread in (held, writer):
            thread.join(WAIT_S)
            assert not thread.is_alive()
        assert not held_errors and not errors
        # once remember() returned, its fact is found, by both workers
        for memory in (second, first):
            found = memory.recall("lighthouse white", k=1)
            assert [hit.item.content for hit in found.hits] == ["light: the lighthouse is white"]


def test_a_hold_of_the_whole_tenant_waits_for_an_agents_indexing(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        open_pool(postgres_url, max_size=2) as one,
        open_pool(postgres_url, max_size=2) as other,
    ):
        with one.connection() as conn:
            migrate(conn)
        first, second = PostgresRecord(one, "t-follow"), PostgresRecord(other, "t-follow")
        running, go_on = threading.Event(), threading.Event()
        order: list[str] = []

        def follow_up() -> None:
            running.set()
            assert go_on.wait(WAIT_S)
            order.append("first's follow-up")

        first.hold(frozenset({"north"}))
        releasing, errors = in_thread(lambda: first.release(follow_up))
        assert running.wait(WAIT_S)
        second.hold(frozenset({"north"}))  # the agent's write lock is free again
        handing, hand_errors = in_thread(
            lambda: second.release(lambda: order.append("second's follow-up"))
        )
        handing.join(HELD_S)
        assert handing.is_alive() and order == []  # its follow-up waits for first's
        go_on.set()
        for thread in (releasing, handing):
            thread.join(WAIT_S)
            assert not thread.is_alive()
        assert not errors and not hand_errors
        assert order == ["first's follow-up", "second's follow-up"]

        running.clear()
        go_on.clear()
        first.hold(frozenset({"south"}))
        releasing, errors = in_thread(lambda: first.release(follow_up))
        assert running.wait(WAIT_S)
        whole, whole_errors = in_thread(lambda: second.hold(None))
        whole.join(HELD_S)
        assert whole.is_alive()  # a forget, a sync, an edit of the tenant waits for it
        go_on.set()
        for thread in (releasing, whole):
            thread.join(WAIT_S)
            assert not thread.is_alive()
        assert not errors and not whole_errors
        second.release()


@pytest.mark.parametrize("next_step", ["read", "write"])
def test_a_version_its_writer_never_indexed_is_indexed_by_the_next_worker_as_it_is(
    postgres_url: str, tmp_path: Path, next_step: str
) -> None:
    """The first worker's writes reach the record but never the shared index (as if it
    died after each push): the next worker, reading or writing, finds the index behind
    and takes four facts forgotten at once for what they are, not for a damaged Brain."""
    embedder = HashingEmbedder()
    keys = [f"k{n}" for n in range(6)]
    with build_memory(_settings(tmp_path / "b", postgres_url)) as second:
        for key in keys:
            second.remember(f"the value of {key} is {key}-secret", key=key)
    own = SqliteIndex(tmp_path / "own.db", embedding_model=embedder.model_id, dim=embedder.dim)
    settings = _settings(tmp_path / "a", postgres_url)
    with build_memory(settings, embedder=embedder, index=own) as first:
        for key in keys[:4]:
            first.forget(key=key)
        first.remember("the ferry leaves at nine", key="ferry")

    with build_memory(_settings(tmp_path / "b", postgres_url)) as second:
        if next_step == "write":
            second.remember("the tide is low", key="tide")
        found = second.recall("the value of k0 k1 k2 k3 secret", k=10)
        texts = [hit.item.content for hit in found.hits]
        folder = second.workspace.agent_dir("default")
        kept = [f.read_text(encoding="utf-8") for f in folder.glob(".corrupt/*")]
        assert not any("secret" in text for text in kept)  # nothing forgotten kept aside
        assert not [note for note in second.notes if "lost" in note]
        assert not any(f"{key}-secret" in text for key in keys[:4] for text in texts)
        assert {hit.item.key for hit in found.hits} >= {"k4", "k5"}
        ferry = second.recall("ferry", k=1)
        assert [hit.item.content for hit in ferry.hits] == ["ferry: the ferry leaves at nine"]


_WORKER = textwrap.dedent(
    """
    import sys
    from kronika import build_memory, load_settings

    home, url, worker, writes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    settings = load_settings(home, environ={}, embedder="hashing", database_url=url)
    with build_memory(settings) as memory:
        for n in range(writes):
            memory.remember(f"value {n} of worker {worker}", key=f"k{worker}_{n}")
    """
)


def test_workers_writing_one_agent_at_once_leave_the_index_at_the_records_last_version(
    postgres_url: str, tmp_path: Path
) -> None:
    """Four workers remember facts of one agent at once, each indexing after its push: once
    all have returned, the shared index holds the Brain the record holds, row for row
    (nobody synced since; an indexing that went back to an older Brain would lack facts)."""
    workers, writes = 4, 10
    build_memory(_settings(tmp_path / "first", postgres_url)).close()  # migrate once
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tmp_path / f"w{n}"), postgres_url, str(n)]
            + [str(writes)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    schema = index_schema(load_settings(tmp_path / "first", environ={}).tenant)
    files = ["brain.md", "brain_archive.md"]  # the Brain lets go of facts at its budget
    with psycopg.connect(postgres_url) as conn:
        record = conn.execute(
            "SELECT path, id, content FROM record_items WHERE agent = 'default' AND path = ANY(%s)",
            (files,),
        ).fetchall()
        digests = dict(
            conn.execute(
                f"SELECT path, content_hash FROM {schema}.idx_sources"
                " WHERE agent = 'default' AND path = ANY(%s)",
                (files,),
            ).fetchall()
        )
        indexed = conn.execute(
            f"SELECT source_path, id, content FROM {schema}.idx_items"
            " WHERE source_agent = 'default' AND source_path = ANY(%s)",
            (files,),
        ).fetchall()
    assert len(record) == workers * writes
    assert sorted(indexed) == sorted(record)
    with build_memory(_settings(tmp_path / "late", postgres_url)) as late:
        parsed = {path: late.workspace.parse_source("default", path) for path in files}
    # the index's version of each file is the record's last
    assert digests == {path: found.content_hash for path, found in parsed.items()}


class _EmbedderDown(HashingEmbedder):
    """An embedding model that fails until it is back (a provider gone for a while)."""

    up = False

    def embed_documents(self, texts: list[str]) -> list[Any]:
        if not self.up:
            raise RuntimeError("the embedding model is not reachable")
        return list(super().embed_documents(texts))


@pytest.mark.parametrize("team", [False, True], ids=["local", "team"])
def test_a_write_whose_indexing_fails_is_stored_and_says_so(
    postgres_url: str, tmp_path: Path, team: bool
) -> None:
    embedder = _EmbedderDown()
    url = postgres_url if team else ""
    settings = load_settings(tmp_path / "a", environ={}, embedder="hashing", database_url=url)
    with build_memory(settings, create=True, embedder=embedder) as memory:
        receipt = memory.remember("the harbour is north of the town", key="harbour")
        assert receipt.outcome == "applied"
        assert any("the index was not updated" in note for note in receipt.notes)
        assert [f.value for f in memory.facts()] == ["the harbour is north of the town"]
        embedder.up = True
        memory.sync(paths=["brain.md"], agent="default")
        found = memory.recall("harbour north", k=1)
        assert [hit.item.key for hit in found.hits] == ["harbour"]
