"""Each Markdown file as :class:`~kronika.stores.postgres.index.PostgresIndex` holds it
(:class:`~kronika.ports.IndexSources`): a file's rows replaced, appended to or removed
(in one transaction under an advisory lock on the file), its state and last rows read;
and the cache of vectors by text hash, a part of its own
(:class:`~kronika.stores.postgres.embedding_cache.PostgresEmbeddings`), which a write
of a file's rows fills in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from kronika.core.model import ItemType, MemoryItem
from kronika.ports import (
    SourceRows,
    SourceState,
    SourceTail,
    Vector,
    VectorPoint,
)
from kronika.stores.postgres import inserting
from kronika.stores.postgres.arrays import text_array
from kronika.stores.postgres.copying import postings_copy_text
from kronika.stores.postgres.dialect import POSTGRES
from kronika.stores.postgres.embedding_cache import Cached, PostgresEmbeddings
from kronika.stores.postgres.index_base import (
    ID_ORDER,
    PostgresState,
)
from kronika.stores.postgres.index_rows import (
    COLUMNS,
    SELECT_ITEM,
    item_from_row,
    item_row,
)
from kronika.stores.postgres.index_upkeep import PostgresUpkeep
from kronika.stores.postgres.trips import SNAPSHOT, in_pipeline, pipelined, sent_together
from kronika.stores.sql import source_diff
from kronika.stores.sql.rows import (
    default_text_hash,
    item_columns,
    item_values,
    source_state,
    source_states,
)

_KEPT_FILES = 8
"""Files whose rows :class:`PostgresSources` remembers as it wrote them: a write of a
fact touches the Brain, the archive, the history and a session file or two."""
UNKEPT_PATCH_IDS = 1_000
"""The most ids a file may hold for :meth:`PostgresSources.patch_source` to check
its rows in the index when this object keeps none (another worker wrote the file
last): the check reads every row of the file (a Brain's few, not a long archive's)."""


_STORED = item_columns(POSTGRES)
_SELECT_STORED = (
    f"SELECT {', '.join(_STORED)} FROM idx_items WHERE source_agent = %s AND source_path = %s"
)
"""A file's rows as the index holds them: the values :func:`item_values` gives."""
_PLACE = (_STORED.index("pos"), _STORED.index("line"))


class PostgresSources:
    """Each file's rows and state, and the vector cache
    (:class:`~kronika.ports.IndexSources`), the cache a part of its own
    (:class:`~.embedding_cache.PostgresEmbeddings`)."""

    def __init__(self, state: PostgresState, upkeep: PostgresUpkeep) -> None:
        self.state = state
        self.embeddings = PostgresEmbeddings(state, upkeep)
        """The vector cache, written with a file's rows in their transaction."""
        self._kept: dict[tuple[str, str], source_diff.KeptRows] = {}
        """The rows of each file as this object last wrote them (:meth:`replace_source`)."""

    @property
    def embedding_model(self) -> str:
        return self.state.model

    @property
    def patches_rows(self) -> bool:
        return True  # a fact file's rewrite changes only the rows of the facts it changed

    def source_states(
        self, agent: str, paths: Sequence[str] | None = None
    ) -> dict[str, SourceState]:
        with self.state.reading() as conn:
            return source_states(POSTGRES, conn, agent, paths)

    def source_state(self, agent: str, path: str) -> SourceState | None:
        with self.state.reading() as conn:
            return source_state(POSTGRES, conn, agent, path)

    def source_tail(self, agent: str, path: str, last: int = 2) -> SourceTail | None:
        """The end of one indexed file; rows can always follow it (``at_end``). The
        count is the last row's place + 1 (a session's places run 0, 1, 2… without
        gaps), read from the ``(source_agent, source_path, pos)`` index: no count of
        the rows."""
        # one snapshot, read in one round trip
        with self.state.reading() as conn, sent_together(conn, begin=SNAPSHOT):
            found_of = conn.execute(
                "SELECT content_hash, mtime_ns, size FROM idx_sources"
                " WHERE agent = %s AND path = %s",
                (agent, path),
            )
            rows_of = conn.execute(
                SELECT_ITEM.replace(" FROM idx_items", ", i.text_hash, i.pos FROM idx_items")
                + " WHERE i.source_agent = %s AND i.source_path = %s ORDER BY i.pos DESC LIMIT %s",
                (agent, path, max(last, 1)),
            )
        found = found_of.fetchone()
        if found is None:
            return None
        state = SourceState(agent, path, str(found[0]), int(found[1]), int(found[2]))
        rows = rows_of.fetchall()
        count = int(rows[0][-1]) + 1 if rows else 0
        rows = rows[:last]
        rows.reverse()
        items = tuple(item_from_row(row[:-2]) for row in rows)
        hashes = tuple(str(row[-2]) for row in rows)
        return SourceTail(state, count, items, hashes, bool(rows))

    def source_items(self, agent: str, path: str) -> list[MemoryItem]:
        with self.state.reading() as conn:
            rows = conn.execute(
                f"{SELECT_ITEM} WHERE i.source_agent = %s AND i.source_path = %s ORDER BY i.pos",
                (agent, path),
            )
            return [item_from_row(row) for row in rows]

    def replace_source(
        self,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str] | None = None,
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> set[str]:
        """Atomically replace every item of ``(state.agent, state.path)``: a repeated id
        keeps its first occurrence, an id indexed from another file moves here.
        ``vectors`` are cached in the same transaction, with the file's first
        statements, and the text hashes of its rows left without a vector come back
        with its last (:meth:`kronika.ports.IndexSources.replace_source`): no round trip
        of their own.

        Only the rows that differ are written (:mod:`kronika.stores.sql.source_diff`):
        from the rows as this object last wrote them when the index still holds the file
        so (same state, same number of rows), else from the rows the index holds, read
        back under the file's lock (another worker of the tenant wrote it last, or this
        object has not written it). Either way the rows are those of a full replace, in
        one transaction."""
        plan = self._replacement(SourceRows(state, items, text_hashes, vectors))
        # BEGIN and COMMIT with the statements when the rows kept say the write inserts
        # few rows; a write that finds it must COPY many is made again without
        try:
            together = plan.diff is not None and inserting.by_insert(len(plan.diff.fresh))
            self.state.write(plan.work, together=together)
        except _Copying:
            self.state.write(plan.work)
        self._replaced(plan)
        self._analyze_if_grown()
        return plan.lacking

    def replace_sources(self, files: Sequence[SourceRows]) -> set[str]:
        """:meth:`replace_source` of each of ``files``, in order, in one transaction
        (each file's lock taken as its turn comes), retried whole as one file's write is
        (:meth:`kronika.ports.IndexSources.replace_sources`)."""
        plans = [self._replacement(f) for f in files]

        def work(conn: Any) -> None:
            for plan in plans:
                plan.work(conn)

        self.state.write(work)
        lacking: set[str] = set()
        for plan in plans:
            self._replaced(plan)
            lacking |= plan.lacking
        self._analyze_if_grown()
        return lacking

    def _replacement(self, file: SourceRows) -> _Replacement:
        """What replacing one file's rows writes (:meth:`replace_source`): a repeated id
        keeps its first occurrence, an id indexed from another file moves here; the diff
        from the rows kept of the file, if any (they are let go: kept again once
        written)."""
        state, items = file.state, file.items
        if file.text_hashes is not None and len(file.text_hashes) != len(items):
            raise ValueError("text_hashes must have one hash per item")
        hashes = file.text_hashes if file.text_hashes is not None else [None] * len(items)
        by_line = source_diff.places_by_line(items)
        now = source_diff.unique_rows(
            items,
            [given or default_text_hash(it) for it, given in zip(items, hashes, strict=True)],
            by_line=by_line,
        )
        kept = self._kept.pop((state.agent, state.path), None)
        diff = None if kept is None else source_diff.plan(kept.rows, now)
        postings = [] if diff is None else self.state.tokenizer.items([r[0] for r in diff.fresh])
        cache = self.embeddings.rows(file.vectors or {})
        return _Replacement(self, state, now, by_line, kept, diff, postings, cache, file.vectors)

    def _replaced(self, plan: _Replacement) -> None:
        """After ``plan`` was written: its rows kept, the files it took ids from told."""
        self._keep(source_diff.KeptRows(plan.state, plan.now, plan.by_line))
        self._taken(plan.taken)

    def _taken(self, taken: Sequence[tuple[str, str, str]]) -> None:
        """The files that lost an id to the one just written hold a row less."""
        with self.state.lock:
            for item_id, agent, path in taken:
                if (other := self._kept.get((agent, path))) is not None:
                    other.rows.pop(item_id, None)

    def _keep(self, kept: source_diff.KeptRows) -> None:
        """Remember the rows just written of a file, for :data:`_KEPT_FILES` files at
        most (those written last): a sync of many files keeps only its last ones."""
        with self.state.lock:
            self._kept[(kept.state.agent, kept.state.path)] = kept
            while len(self._kept) > _KEPT_FILES:
                self._kept.pop(next(iter(self._kept)), None)

    def _holds(self, conn: Any, kept: source_diff.KeptRows, cache: Sequence[Cached] = ()) -> bool:
        """Take the file's lock, and say whether the index holds the file as ``kept``:
        its state, and as many rows (only another file's replace, taking ids from it,
        removes rows without changing its state; nothing adds one). The lock, both
        reads and the vectors of ``cache`` go in one round trip."""
        where = (kept.state.agent, kept.state.path)
        with pipelined(conn):
            found_state = self._locked_state(conn, where)
            self.embeddings.cache(conn, cache)
            found_count = conn.execute(
                "SELECT count(*) FROM idx_items WHERE source_agent = %s AND source_path = %s",
                where,
            )
        (count,) = found_count.fetchone()
        return _is_state(found_state.fetchone(), kept.state) and int(count) == len(kept.rows)

    def _holds_unkept(
        self,
        conn: Any,
        expected: SourceState,
        known: Collection[str],
        staying: Collection[str],
        cache: Sequence[Cached] = (),
    ) -> bool:
        """Take the file's lock, and say whether the index holds the file as
        ``expected`` with rows a patch may change as :meth:`_holds` says of the rows
        kept: every row's place is its line, no row has an id outside ``known`` (the
        ids the file holds now, and those it lets go), and each of ``staying`` (the ids
        it keeps unchanged) is a row of it, not taken by another file. The lock, the
        reads and the vectors of ``cache`` go in one round trip; the rows read are the
        file's alone (few: :data:`UNKEPT_PATCH_IDS`)."""
        where = (expected.agent, expected.path)
        with pipelined(conn):
            found_state = self._locked_state(conn, where)
            self.embeddings.cache(conn, cache)
            # joined, not ``= ANY``: a generic plan compares each row with every id
            found = conn.execute(
                "SELECT count(*) FILTER (WHERE k.id IS NULL), count(s.id),"
                " count(*) FILTER (WHERE i.line IS NULL OR i.pos IS DISTINCT FROM i.line)"
                " FROM idx_items AS i"
                " LEFT JOIN unnest(%s::text[]) AS k (id) ON k.id = i.id"
                " LEFT JOIN unnest(%s::text[]) AS s (id) ON s.id = i.id"
                " WHERE i.source_agent = %s AND i.source_path = %s",
                (text_array(known), text_array(staying), *where),
            )
        strays, present, off_line = found.fetchone()
        return (
            _is_state(found_state.fetchone(), expected)
            and int(strays) == 0
            and int(present) == len(staying)
            and int(off_line) == 0
        )

    def _locked_state(self, conn: Any, where: tuple[str, str]) -> Any:
        """Take the file's lock and ask for its state (the answer's cursor): in the
        caller's pipeline, with what else it asks."""
        self.state.lock_source(conn, *where)
        return conn.execute(
            "SELECT content_hash, mtime_ns, size FROM idx_sources WHERE agent = %s AND path = %s",
            where,
        )

    def _stored(
        self, conn: Any, state: SourceState, *, lock: bool, cache: Sequence[Cached] = ()
    ) -> dict[str, Any]:
        """The rows the index holds of the file, by id, as their values (``COLUMNS``'
        first ones, :func:`~kronika.stores.sql.rows.item_values`' order); with ``lock``
        the file's lock is taken first, and the vectors of ``cache`` cached, in the
        same round trip."""
        where = (state.agent, state.path)
        with pipelined(conn):
            if lock:
                self.state.lock_source(conn, *where)
            self.embeddings.cache(conn, cache)
            rows = conn.execute(_SELECT_STORED, where)
        return {row[0]: row for row in rows.fetchall()}

    @staticmethod
    def _values(state: SourceState) -> Callable[[source_diff.Row], Sequence[object]]:
        def values(row: source_diff.Row) -> Sequence[object]:
            item, text_hash, pos = row
            return item_values(POSTGRES, item, state, pos, text_hash)

        return values

    def _write_diff(
        self,
        conn: Any,
        state: SourceState,
        diff: source_diff.SourcePlan,
        postings: Any,
        *,
        check: set[str] | None = None,
    ) -> list[tuple[str, str, str, str]]:
        """Delete the rows of ids gone or changed (a changed id's from any file), insert
        the changed ones again, set the place and line of those that only moved, and the
        file's state: in one round trip when the rows inserted are few; the rows deleted
        (id, text hash, file). ``check`` gets the text hashes of the file's rows left
        without a vector."""
        if not inserting.by_insert(len(diff.fresh)) and in_pipeline(conn):
            raise _Copying  # COPY does not run in a pipeline: the write is made again
        renewed = [item.id for item, _, _ in diff.fresh]
        deleted = lacking = None
        with _pipelined(conn, len(diff.fresh)):
            if diff.gone or renewed:
                deleted = conn.execute(
                    "DELETE FROM idx_items WHERE (source_agent = %s AND source_path = %s"
                    " AND id = ANY(%s)) OR id = ANY(%s)"
                    " RETURNING id, text_hash, source_agent, source_path",
                    (state.agent, state.path, diff.gone, renewed),
                )
            self._insert(conn, state, diff.fresh, postings)
            if diff.moved:
                ids, places, lines = zip(*diff.moved, strict=True)
                conn.execute(
                    "UPDATE idx_items AS i SET pos = m.pos, line = m.line"
                    " FROM unnest(%s::text[], %s::integer[], %s::integer[])"
                    " AS m (id, pos, line)"
                    " WHERE i.id = m.id AND i.source_agent = %s AND i.source_path = %s",
                    (list(ids), list(places), list(lines), state.agent, state.path),
                )
            self._upsert_source(conn, state)
            if check is not None:
                lacking = conn.execute(
                    "SELECT DISTINCT text_hash FROM idx_items WHERE source_agent = %s"
                    " AND source_path = %s AND vec IS NULL",
                    (state.agent, state.path),
                )
        if lacking is not None and check is not None:
            check.update(str(h) for (h,) in lacking.fetchall())
        gone = [] if deleted is None else deleted.fetchall()
        self._note_deleted(((i, h) for i, h, _, _ in gone), set(renewed))
        return [tuple(row) for row in gone]

    def _analyze_if_grown(self) -> None:
        """ANALYZE the item and posting tables once this index has written as many rows
        as they held before (at least 1,000) since it last did: right after a bulk load
        the planner would otherwise guess, and autovacuum comes only later. Doubling
        keeps a load of n rows to about log2(n / 1,000) runs, each sampling at most
        30,000 rows, and the counts the planner sees within half of the truth."""
        if self.state.unanalyzed < 1_000:
            return
        with self.state.reading() as conn:
            (rows,) = conn.execute("SELECT coalesce(sum(n), 0) FROM idx_corpus").fetchone()
            if self.state.unanalyzed * 2 >= int(rows):
                conn.execute("ANALYZE idx_items, idx_terms")
                self.state.unanalyzed = 0

    def _note_deleted(self, gone: Iterable[tuple[str, str]], kept: set[str]) -> None:
        for item_id, text_hash in gone:
            self.state.maybe_unused.add(text_hash)
            if item_id not in kept:
                self.state.vanished.add(item_id)
            else:
                self.state.vanished.discard(item_id)

    @staticmethod
    def _upsert_source(conn: Any, state: SourceState) -> None:
        conn.execute(
            "INSERT INTO idx_sources (agent, path, content_hash, mtime_ns, size)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (agent, path) DO UPDATE SET"
            " content_hash = excluded.content_hash, mtime_ns = excluded.mtime_ns,"
            " size = excluded.size",
            (state.agent, state.path, state.content_hash, state.mtime_ns, state.size),
        )

    def _insert(
        self,
        conn: Any,
        state: SourceState,
        rows: Sequence[source_diff.Row],
        postings: Sequence[Any],
    ) -> None:
        """Write the rows (item, text hash, place; with their cached vectors) and their
        postings: up to :data:`~.inserting.FEW` by ``INSERT`` (they may go in a pipeline
        with the write's other statements), more by ``COPY`` (not in a pipeline)."""
        if not rows:
            return
        self.state.unanalyzed += len(rows)
        pairs = [(item, text_hash) for item, text_hash, _ in rows]
        if inserting.by_insert(len(rows)):
            params: list[object] = []
            for n, (item, text_hash, pos) in enumerate(rows):
                params.extend(item_row(item, state, pos, text_hash, postings[n].length))
                params.extend((self.state.model, text_hash, self.state.dim))
            conn.execute(inserting.items_insert(COLUMNS, len(rows)), params)
            conn.execute(inserting.TERMS_INSERT, inserting.terms_params(pairs, postings))
            return
        hashes = sorted({h for _, h in pairs})
        cached = dict(
            conn.execute(
                "SELECT text_hash, vec::text FROM idx_embeddings WHERE model = %s"
                " AND text_hash = ANY(%s) AND dims = %s",
                (self.state.model, hashes, self.state.dim),
            ).fetchall()
        )
        rowids = [
            int(r)
            for (r,) in conn.execute(
                "SELECT nextval(pg_get_serial_sequence('idx_items', 'rowid'))"
                " FROM generate_series(1, %s)",
                (len(pairs),),
            ).fetchall()
        ]
        columns = ", ".join(("rowid", *COLUMNS, "vec"))
        with conn.cursor() as cur:
            with cur.copy(f"COPY idx_items ({columns}) FROM STDIN") as copy:
                for n, (item, text_hash, pos) in enumerate(rows):
                    row = item_row(item, state, pos, text_hash, postings[n].length)
                    copy.write_row((rowids[n], *row, cached.get(text_hash)))
            with cur.copy(
                "COPY idx_terms (term, item_rowid, agent, tenant, tf, pos, doc_len) FROM STDIN"
            ) as copy:
                copy.write(postings_copy_text(pairs, rowids, postings))

    def remove_source(self, agent: str, path: str) -> None:
        self._kept.pop((agent, path), None)

        def work(conn: Any) -> None:
            self.state.lock_source(conn, agent, path)
            gone = conn.execute(
                "DELETE FROM idx_items WHERE source_agent = %s AND source_path = %s"
                " RETURNING id, text_hash",
                (agent, path),
            ).fetchall()
            conn.execute("DELETE FROM idx_sources WHERE agent = %s AND path = %s", (agent, path))
            self._note_deleted(gone, set())

        self.state.write(work)

    def append_to_source(
        self,
        expected: SourceState,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> bool:
        """Add ``items`` after the rows of a file the index holds as ``expected``, in one
        transaction; ``False`` (nothing written) when it does not, or an id is indexed.
        ``vectors`` are cached in the same transaction, in the round trip of its lock and
        checks, before the rows that take them are inserted (and kept when nothing is
        written: the file's re-index finds them)."""
        cache = self.embeddings.rows(vectors or {})
        ids = [item.id for item in items]
        if len(set(ids)) != len(ids):
            self.embeddings.store(cache)
            return False
        postings = self.state.tokenizer.items(list(items))
        kept = self._kept.pop((expected.agent, expected.path), None)
        added: dict[str, source_diff.Row] = {}
        # facts added to a fact file take their lines as places, as a re-index gives them
        by_line = kept.by_line if kept is not None else source_diff.places_by_line(items)

        def work(conn: Any) -> bool:
            where = (expected.agent, expected.path)
            with pipelined(conn):  # the lock, the vectors and the checks in one round trip
                found_state = self._locked_state(conn, where)
                self.embeddings.cache(conn, cache)
                found_last = conn.execute(
                    "SELECT max(pos) FROM idx_items WHERE source_agent = %s AND source_path = %s",
                    where,
                )
                taken = conn.execute("SELECT 1 FROM idx_items WHERE id = ANY(%s) LIMIT 1", (ids,))
            if not _is_state(found_state.fetchone(), expected):
                return False
            (last,) = found_last.fetchone()
            if last is None or taken.fetchone():
                return False
            added.clear()
            for n, (item, text_hash) in enumerate(zip(items, text_hashes, strict=True)):
                line = item.provenance.line
                place = line if by_line and line is not None and line > last else None
                added[item.id] = (item, text_hash, int(last) + 1 + n if place is None else place)
            with _pipelined(conn, len(added)):
                self._insert(conn, state, list(added.values()), postings)
                conn.execute(
                    "UPDATE idx_sources SET content_hash = %s, mtime_ns = %s, size = %s"
                    " WHERE agent = %s AND path = %s",
                    (state.content_hash, state.mtime_ns, state.size, state.agent, state.path),
                )
            return True

        done = self.state.write(work, together=inserting.by_insert(len(items)))
        if kept is not None and not done:
            self._keep(kept)  # nothing written: the rows are as they were (checked when used)
        elif kept is not None and kept.state == expected:
            # still by line when every row added took its line as its place
            by_line = kept.by_line and all(
                place == item.provenance.line for item, _, place in added.values()
            )
            # the rows kept are taken over, not copied (a long archive holds many)
            kept.rows.update(added)
            self._keep(source_diff.KeptRows(state, kept.rows, by_line))
        self._analyze_if_grown()
        return done

    def patch_source(
        self,
        expected: SourceState,
        state: SourceState,
        gone: Sequence[str],
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        lines: Mapping[str, int | None],
        *,
        vectors: Mapping[str, Vector] | None = None,
        held: Collection[str] | None = None,
    ) -> bool:
        """Change a few items of a file the index holds as ``expected``, in one
        transaction under the file's lock, as a re-index would leave its rows: the rows
        of ``gone`` deleted, those of ``items`` written again (an id of another file's
        moving here), the ids in ``lines`` given their new line, which is also their
        place, and ``vectors`` cached. Nothing else of the file is read or written,
        however long it is: an archived fact given a new value costs the same at any
        size. Only for a file whose rows take their lines as places
        (:func:`~kronika.stores.sql.source_diff.places_by_line`), checked against the
        rows this object wrote last; or, when another worker wrote the file since (or
        none are kept) and ``held`` (every id the file holds now) is given and short
        (:data:`UNKEPT_PATCH_IDS`), checked against the index's rows themselves in the
        same round trip (:meth:`_holds_unkept`). ``False`` (nothing written) otherwise,
        or when the index no longer holds ``expected``: the file is then re-indexed
        (:meth:`replace_source`, a diff of its rows)."""
        key = (expected.agent, expected.path)
        kept = self._kept.pop(key, None)
        if kept is not None and kept.state != expected:
            kept = None  # another worker indexed the file since this object did
        cache = self.embeddings.rows(vectors or {})
        fresh = [
            (item, text_hash, item.provenance.line)
            for item, text_hash in zip(items, text_hashes, strict=True)
            if item.type is not ItemType.MESSAGE and item.provenance.line is not None
        ]
        moved: list[tuple[str, int, int | None]] = [
            (item_id, line, line) for item_id, line in lines.items() if line is not None
        ]
        unkept = kept is None and held is not None and len(held) <= UNKEPT_PATCH_IDS
        if (
            (kept is None and not unkept)
            or (kept is not None and not kept.by_line)
            or len(fresh) < len(items)
            or len(moved) < len(lines)
        ):
            # the vectors are kept: the file's re-index finds them, and embeds none again
            self.embeddings.store(cache)
            return False
        diff = source_diff.SourcePlan(gone=list(gone), fresh=fresh, moved=moved)
        postings = self.state.tokenizer.items(list(items))
        taken: list[tuple[str, str, str]] = []
        known = set(held or ())
        staying = known.difference(item.id for item in items)

        def work(conn: Any) -> bool:
            if kept is not None:
                if not self._holds(conn, kept, cache):
                    return False
            elif not self._holds_unkept(conn, expected, known.union(gone), staying, cache):
                return False
            gone_rows = self._write_diff(conn, state, diff, postings)
            taken[:] = [(i, a, p) for i, _, a, p in gone_rows if (a, p) != key]
            return True

        try:
            done = self.state.write(work, together=inserting.by_insert(len(fresh)))
        except _Copying:
            done = self.state.write(work)
        if not done:
            return False
        if kept is not None:  # else the file's rows are not known here: none kept
            rows = kept.rows
            for item_id in gone:
                rows.pop(item_id, None)
            for item_id, place, _ in moved:
                if (row := rows.get(item_id)) is not None:
                    rows[item_id] = (source_diff.at_line(row[0], place), row[1], place)
            rows.update((row[0].id, row) for row in fresh)
            self._keep(source_diff.KeptRows(state, rows, by_line=True))
        self._taken(taken)
        self._analyze_if_grown()
        return True

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]:
        return self.embeddings.embeddings_missing(text_hashes)

    def store_embeddings(self, vectors: Mapping[str, Vector]) -> None:
        """Cache one unit vector per text hash and give it to the items of that text."""
        self.embeddings.store_embeddings(vectors)

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        """The items embedded from ``text_hashes`` (every item when ``None``) with their
        vectors (:meth:`.PostgresEmbeddings.vector_points`)."""
        return self.embeddings.vector_points(text_hashes)

    def drop_unused_embeddings(self, *, everywhere: bool = False) -> int:
        """Delete cached vectors no item uses any more
        (:meth:`.PostgresEmbeddings.drop_unused_embeddings`); how many went."""
        return self.embeddings.drop_unused_embeddings(everywhere=everywhere)

    def agents(self) -> list[str]:
        with self.state.reading() as conn:
            found = conn.execute(
                "SELECT agent FROM (SELECT agent FROM idx_sources UNION"
                f" SELECT agent FROM idx_items) AS a ORDER BY agent {ID_ORDER}"
            ).fetchall()
        return [a for (a,) in found]

    def reset(self) -> None:
        """Forget every item and source (keeps the embedding cache and usage statistics)."""

        self._kept.clear()

        def work(conn: Any) -> None:
            conn.execute("TRUNCATE idx_terms, idx_items, idx_graph, idx_corpus, idx_sources")

        self.state.write(work)


def _pipelined(conn: Any, inserted: int) -> AbstractContextManager[Any]:
    """A pipeline for a write whose ``inserted`` rows go by ``INSERT`` (few enough,
    :data:`~.inserting.FEW`), so the whole write is one round trip; else nothing: ``COPY``
    does not run in a pipeline."""
    return pipelined(conn) if inserting.by_insert(inserted) else nullcontext()


class _Replacement:
    """One file's rows to be written by :meth:`PostgresSources.replace_source` (or with
    others, :meth:`~PostgresSources.replace_sources`): :meth:`work` writes them in the
    caller's transaction, and may run again when that is retried."""

    def __init__(
        self,
        sources: PostgresSources,
        state: SourceState,
        now: dict[str, source_diff.Row],
        by_line: bool,
        kept: source_diff.KeptRows | None,
        diff: source_diff.SourcePlan | None,
        postings: Any,
        cache: Sequence[Cached],
        vectors: Mapping[str, Vector] | None,
    ) -> None:
        self.sources = sources
        self.state = state
        self.now = now
        self.by_line = by_line
        self.kept = kept
        self.diff = diff
        self.postings = postings
        self.cache = cache
        self.lacking: set[str] = set()
        self.check = self.lacking if vectors is not None else None
        self.taken: list[tuple[str, str, str]] = []  # (id, agent, path): rows of other files

    def work(self, conn: Any) -> None:
        """Write the file's rows on ``conn``, inside a transaction. The vectors are
        cached with the first round trip: the check of the rows kept, else (none kept)
        the read of the rows stored."""
        sources, state, kept, diff = self.sources, self.state, self.kept, self.diff
        if diff is not None and kept is not None and sources._holds(conn, kept, self.cache):
            gone = sources._write_diff(conn, state, diff, self.postings, check=self.check)
        else:  # another writer's rows, or none this object wrote: compare with them
            found = sources._stored(
                conn, state, lock=kept is None, cache=() if kept is not None else self.cache
            )
            plan = source_diff.plan_stored(found, self.now, sources._values(state), _PLACE)
            fresh = sources.state.tokenizer.items([r[0] for r in plan.fresh])
            gone = sources._write_diff(conn, state, plan, fresh, check=self.check)
        key = (state.agent, state.path)
        self.taken[:] = [(i, a, p) for i, _, a, p in gone if (a, p) != key]


class _Copying(Exception):
    """A write sent together (:meth:`PostgresSources.replace_source`) found it
    inserts enough rows to ``COPY`` them, which no pipeline can."""


def _is_state(found: Sequence[Any] | None, state: SourceState) -> bool:
    """Whether ``found`` (a row of ``idx_sources``: hash, time, size) is ``state``."""
    return found is not None and (str(found[0]), int(found[1]), int(found[2])) == (
        state.content_hash,
        state.mtime_ns,
        state.size,
    )
