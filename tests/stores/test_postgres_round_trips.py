"""Round trips to PostgreSQL: what a call pays again and again against a database that
is not on the same machine. Statements whose answers nothing waits for go together
(:func:`~kronika.stores.postgres.trips.sent_together`), and a failed one leaves no
half-written transaction behind."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kronika import Memory, build_memory, load_settings
from kronika.stores.postgres.connect import connect
from kronika.stores.postgres.trips import pipeline, sent_together
from kronika.testing import RoundTripProxy

# measured by this test: remember 11, save_turn 8, recall after them 14-20 (it reads
# the postings their words changed); 12 and 10 before the record's changes were read
# with its lock and an appended part numbered in its document's update; 24, 33-34 and
# 23-32 before statements went together
REMEMBER_MAX, SAVE_TURN_MAX, RECALL_MAX = 12, 9, 22


HOLD_S = 0.05  # answers held while counting: longer than a loaded machine's pauses


@pytest.fixture
def trips(postgres_url: str) -> Iterator[RoundTripProxy]:
    with RoundTripProxy(postgres_url, hold_s=0.0) as proxy:
        yield proxy


def test_statements_sent_together_commit_together(postgres_url: str) -> None:
    conn = connect(postgres_url)
    try:
        conn.execute("CREATE TABLE t (n integer PRIMARY KEY)")
        conn.commit()
        with sent_together(conn):
            conn.execute("INSERT INTO t VALUES (1)")
            conn.execute("INSERT INTO t VALUES (2)")
        assert not conn.autocommit  # as the connection was made
        other = connect(postgres_url, autocommit=True)
        assert other.execute("SELECT n FROM t ORDER BY n").fetchall() == [(1,), (2,)]
        other.close()
    finally:
        conn.close()


def test_a_failed_statement_rolls_the_whole_block_back(postgres_url: str) -> None:
    import psycopg

    conn = connect(postgres_url)
    try:
        conn.execute("CREATE TABLE t (n integer PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")
        conn.commit()
        with pytest.raises(psycopg.errors.UniqueViolation), sent_together(conn):
            conn.execute("INSERT INTO t VALUES (2)")
            conn.execute("INSERT INTO t VALUES (1)")  # already there
            conn.execute("INSERT INTO t VALUES (3)")
        assert not conn.autocommit
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        # nothing of the block was kept, and the connection goes on as before
        assert conn.execute("SELECT n FROM t ORDER BY n").fetchall() == [(1,)]
        conn.rollback()
        with pytest.raises(ValueError, match="raised inside"), sent_together(conn):
            conn.execute("INSERT INTO t VALUES (4)")
            raise ValueError("raised inside the block")
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
    finally:
        conn.close()


_COUNT = "SELECT count(*) FROM t WHERE n > %s"


@pytest.mark.parametrize("shape", ["sent together", "pipeline", "pipeline in a transaction"])
def test_a_statement_skipped_after_a_failure_runs_again_on_the_connection(
    postgres_url: str, shape: str
) -> None:
    """psycopg prepares a statement on its sixth run; when the server skips it, a
    statement before it having failed, the connection must not believe it prepared."""
    import psycopg

    conn = connect(postgres_url, autocommit=shape == "pipeline")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS t (n integer PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")
        conn.commit()
        conn.execute("ROLLBACK")  # a rollback seen while nothing was prepared yet
        for _ in range(5):
            assert conn.execute(_COUNT, (0,)).fetchone() == (1,)
        conn.commit()
        block = {
            "sent together": lambda: sent_together(conn),
            "pipeline": lambda: pipeline(conn),
            "pipeline in a transaction": lambda: _in_transaction(conn),
        }[shape]
        with pytest.raises(psycopg.errors.UniqueViolation), block():
            conn.execute("INSERT INTO t VALUES (1)")  # already there
            conn.execute(_COUNT, (0,))  # its sixth run: skipped by the server
        assert conn.execute(_COUNT, (0,)).fetchone() == (1,)
        assert conn.execute(_COUNT, (0,)).fetchone() == (1,)
    finally:
        conn.close()


@contextlib.contextmanager
def _in_transaction(conn: Any) -> Iterator[None]:
    with conn.transaction(), pipeline(conn):
        yield


def _memory(home: Path, url: str) -> Memory:
    settings = load_settings(home, environ={}, embedder="hashing", database_url=url)
    return build_memory(settings, create=True)


def test_a_call_waits_for_the_database_a_bounded_number_of_times(
    trips: RoundTripProxy, tmp_path: Path
) -> None:
    with _memory(tmp_path / "home", trips.url) as memory:
        for n in range(12):  # warmed up: prepared statements, the agent's documents
            memory.remember(f"a warm-up fact number {n}", key=f"warm_{n}")
            memory.save_turn("talk", "user", f"a warm-up turn {n}")
            memory.recall(f"warm-up fact {n}")
        trips.hold_s = HOLD_S
        counts: dict[str, list[int]] = {"remember": [], "save_turn": [], "recall": []}
        for n in range(4):
            with trips.counting() as made:
                memory.remember(f"I planted tomatoes in bed {n}", key=f"bed_{n}")
            counts["remember"] += made
            with trips.counting() as made:
                memory.save_turn("talk", "user", f"tomatoes in bed {n} need water")
            counts["save_turn"] += made
            with trips.counting() as made:
                found = memory.recall("where did I plant tomatoes?")
            counts["recall"] += made
            assert found.hits
    median = {what: sorted(made)[len(made) // 2] for what, made in counts.items()}
    assert median["remember"] <= REMEMBER_MAX, counts
    assert median["save_turn"] <= SAVE_TURN_MAX, counts
    assert median["recall"] <= RECALL_MAX, counts


SMALL_TALK = ("hi", "hello, how are you?", "thanks!", "ok", "great", "good morning", "bye")
SMALL_TALK += ("cześć", "dzięki", "hola", "gracias", "привіт", "дякую", "see you")


def test_small_talk_costs_a_recall_no_more_waits(trips: RoundTripProxy, tmp_path: Path) -> None:
    """In a memory of greetings and thanks, a question is answered by what tells
    something, and its recall waits for the database no more often than one in a
    memory without them: the small talk among its candidates is left out at once, not
    a few at each of many rankings (each ranking reads the candidates again)."""
    with _memory(tmp_path / "home", trips.url) as memory:
        for n in range(6):
            for said in SMALL_TALK:
                memory.save_turn(f"chat{n}", "user", said)
                memory.save_turn(f"chat{n}", "assistant", said)
        memory.remember("Bristol", key="city")
        memory.remember("Nubank", key="employer")
        memory.note("Alice is allergic to penicillin.")
        questions = ("where is my city?", "which employer do I have?", "what am I allergic to?")
        for question in questions:  # warmed up
            memory.recall(question)
        trips.hold_s = HOLD_S
        made_by: dict[str, list[int]] = {}
        for question in questions:
            with trips.counting() as made:
                found = memory.recall(question)
            made_by[question] = made
            said = [hit.item.content for hit in found.hits]
            assert said and not set(said) & set(SMALL_TALK), said
    # 10-18 measured; 34-54 when each ranking left out only the small talk at its top
    assert max(n for made in made_by.values() for n in made) <= RECALL_MAX, made_by
