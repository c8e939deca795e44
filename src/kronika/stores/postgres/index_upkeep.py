"""Upkeep of :class:`~kronika.stores.postgres.index.PostgresIndex`
(:class:`~kronika.ports.IndexUpkeep`): meta values, the tables' health and statistics,
VACUUM, the rewrite of every file that held a forgotten text, starting anew, closing.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kronika.core.model import layer_counts
from kronika.stores.postgres.connect import redact_url
from kronika.stores.postgres.forget_due import ForgetsDue
from kronika.stores.postgres.index_base import (
    GRAPH_ORPHANS_DELETE,
    PostgresState,
    reset_items,
)
from kronika.stores.postgres.index_search import PostgresSearch
from kronika.stores.postgres.rewrite import run_locking
from kronika.stores.postgres.wal_scrub import scrub_wal

log = logging.getLogger("kronika")

_INDEX_TABLES = (
    "idx_items, idx_graph, idx_terms, idx_embeddings, idx_usage, idx_sources, idx_corpus,"
    " recall_log, recall_log_items"
)
_RECORD_TABLES = (
    "record_documents",
    "record_document_parts",
    "record_items",
    "record_proposals",
    "record_audit",
)


class PostgresUpkeep:
    """Meta values, health, statistics, VACUUM, the rewrite after a forget, recreate and
    close (:class:`~kronika.ports.IndexUpkeep`)."""

    def __init__(self, state: PostgresState, search: PostgresSearch, due: ForgetsDue) -> None:
        self.state = state
        self.search = search
        self.due = due

    def meta_value(self, key: str) -> str | None:
        with self.state.reading() as conn:
            row = conn.execute("SELECT value FROM idx_meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta_value(self, key: str, value: str) -> None:
        def work(conn: Any) -> None:
            conn.execute(
                "INSERT INTO idx_meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        self.state.write(work)

    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What is wrong with the index's tables: missing ones; with ``full``, keyword
        statistics that no longer add up."""
        problems: list[str] = []
        with self.state.reading() as conn:
            for table in ("idx_items", "idx_terms", "idx_sources", "idx_embeddings", "idx_usage"):
                (present,) = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
                if not present:
                    problems.append(f"table {table} is missing")
            if problems or not full:
                return problems
            wrong = conn.execute(
                "SELECT count(*) FROM (SELECT agent, tenant, count(*) AS n, sum(doc_len) AS t"
                " FROM idx_items GROUP BY 1, 2) AS a FULL JOIN idx_corpus AS c"
                " USING (agent, tenant) WHERE a.n IS DISTINCT FROM c.n"
                " OR a.t IS DISTINCT FROM c.tokens"
            ).fetchone()
            if wrong and wrong[0]:
                problems.append(f"keyword statistics of {wrong[0]} agents do not add up")
        return problems

    def recreate(self) -> str | None:
        """Start empty (nothing is kept aside: the server keeps its own storage sound)."""
        reset_items(self.state)
        return None

    def stats(self) -> dict[str, Any]:
        with self.state.reading() as conn:
            one = conn.execute
            by_agent = dict(one("SELECT agent, count(*) FROM idx_items GROUP BY 1").fetchall())
            by_type = dict(one("SELECT type, count(*) FROM idx_items GROUP BY 1").fetchall())
            by_layer = dict(one("SELECT layer, count(*) FROM idx_items GROUP BY 1").fetchall())
            (embedded,) = one("SELECT count(*) FROM idx_items WHERE vec IS NOT NULL").fetchone()
            (cached,) = one("SELECT count(*) FROM idx_embeddings").fetchone()
            (sources,) = one("SELECT count(*) FROM idx_sources").fetchone()
            (size,) = one(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c"
                " WHERE c.relkind = 'r' AND c.relname LIKE 'idx\\_%%'"
                " AND c.relnamespace = current_schema()::regnamespace"
            ).fetchone()
            migrations = [
                f"{v:04d}_{n}"
                for v, n in one("SELECT version, name FROM kronika_migrations ORDER BY 1")
            ]
        return {
            "path": redact_url(self.state.url),
            "items": sum(int(v) for v in by_agent.values()),
            "items_by_agent": {k: int(v) for k, v in by_agent.items()},
            "items_by_type": {k: int(v) for k, v in by_type.items()},
            "items_by_layer": layer_counts(by_layer),
            "sources": int(sources),
            "embedded": int(embedded),
            "embedding_model": self.state.model,
            "dim": self.state.dim,
            "embedding_cache": int(cached),
            "file_size": int(size),
            "caches_size": 0,
            "migrations": migrations,
        }

    def vacuum(self, *, full: bool = False) -> None:
        """Prune the deleted rows of the index's tables from their data files, skipping
        a table another session holds a lock on (a graph build: autovacuum prunes it
        later), and leaving the indexes' dead entries to autovacuum (``INDEX_CLEANUP
        OFF``: cleaning the HNSW index walks all of it, 0.8 s at 10,000 items, where
        pruning the pages takes milliseconds); ``full``: rewrite the files and their
        indexes, which locks the tables meanwhile."""
        with self.state.reading() as conn:
            options = "FULL" if full else "SKIP_LOCKED, INDEX_CLEANUP OFF"
            conn.execute(f"VACUUM ({options}) {_INDEX_TABLES}")

    def compact_after_forget(self) -> list[str]:
        """After a forget: rewrite the data files of the index's tables and of the store
        of record's (``VACUUM FULL``: the deleted tuples' bytes go with the old files;
        the HNSW index is dropped first and built again in the background), sample
        their statistics again and rewrite ``pg_statistic`` (the planner keeps sampled
        column values there, the forgotten among them), then write over the WAL files
        that logged the forgotten text
        (:func:`~kronika.stores.postgres.wal_scrub.scrub_wal`: rounds of
        ``pg_switch_wal()`` and ``CHECKPOINT``). What the database role may not do, or
        the server keeps, is skipped; returns what was skipped and why. The rewrites
        noted as due (:mod:`~kronika.stores.postgres.forget_due`) are done once every
        table was rewritten; one left locked keeps them due, for the next rewrite."""
        began = time.perf_counter()
        due = set(self.due.ready)  # the forgets written before it starts
        notes: list[str] = []
        graph = self._drop_graph(notes)
        with self.state.reading() as conn:
            conn.execute(GRAPH_ORPHANS_DELETE)  # every forgotten item's vector, whatever ran before
            for table in (*_INDEX_TABLES.split(", "), *_RECORD_TABLES):
                # ANALYZE: the planner's statistics (pg_statistic) sample column values
                note = run_locking(conn, f"VACUUM (FULL, ANALYZE) {table}", table)
                notes += [note] if note else []
        locked = bool(notes)  # a table (or the graph) not rewritten: still due
        # the statistics rows ANALYZE replaced, with their sampled values, are in its file
        run = self.state.run
        if run("SELECT has_table_privilege('pg_catalog.pg_statistic', 'MAINTAIN')")[0][0]:
            run("VACUUM FULL pg_catalog.pg_statistic")
        else:
            notes.append(
                "pg_statistic not rewritten (the role lacks MAINTAIN on it, e.g. pg_maintain):"
                " it may keep sampled values of forgotten rows"
            )
        rewritten = time.perf_counter()
        if graph:  # built again from the rows left, without locking them
            if self.state.building is not None:
                self.state.building.join(10)  # a build of ours, cancelled above, is ending
                self.state.building = (
                    None if not self.state.building.is_alive() else self.state.building
                )
            self.search.graph_ready(start=True)
        wal = scrub_wal(self.state.run)
        if not locked:
            self.due.done(due)
        log.info(
            "after a forget: tables rewritten in %.2f s; WAL written over in %d rounds,"
            " %.2f s (%s)",
            rewritten - began,
            wal.rounds,
            time.perf_counter() - rewritten,
            "verified" if wal.clean else "not verified",
        )
        return notes + wal.notes

    def _drop_graph(self, notes: list[str]) -> bool:
        """Drop the HNSW index, if there is one (True then): ``VACUUM FULL`` would build
        it again under the table's exclusive lock, a minute at 100k items with every
        recall waiting; searches are exact until the background build is done."""
        with self.state.reading() as conn:
            (there,) = conn.execute("SELECT to_regclass(%s)", (self.state.hnsw_name,)).fetchone()
            if there is None:
                return False
            note = run_locking(conn, f'DROP INDEX IF EXISTS "{self.state.hnsw_name}"', "idx_graph")
        notes += [note] if note else []
        self.state.graph_seen_until = 0.0
        return True

    def close(self) -> None:
        building = self.state.building
        if building is not None:
            building.join()
        with self.state.lock:
            self.state.tokenizer.close()
            if self.state.replica is not None:
                self.state.replica.close()
            self.state.conn.close()
