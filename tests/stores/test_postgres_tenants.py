"""Many tenants in one PostgreSQL database: each reads and writes only its own memory,
even with the same agents, keys, texts and item ids; a database written when it held
one tenant keeps working; index schemas are safe names, one per tenant."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.stores.postgres.connect import index_schema
from kronika.testing import FrozenClock
from kronika.workflows.portability import export_memory

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

LAYOUT = Path(__file__).parent / "data" / "postgres_one_tenant_layout.sql"
BEGIN = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _open(home: Path, url: str, tenant: str, clock: FrozenClock | None = None) -> Memory:
    settings = load_settings(home, environ={}, embedder="hashing", database_url=url, tenant=tenant)
    return build_memory(settings, create=True, clock=clock)


def _write_the_same(memory: Memory) -> None:
    memory.remember("Lives in Lviv", key="city")
    memory.remember("Lives in Kyiv", key="city")
    memory.note("Prefers tea over coffee")
    memory.save_turn("s1", "user", "The launch is planned for Friday")


def _view(memory: Memory) -> dict[str, object]:
    return {
        "items": sorted((i.id, i.content, i.status.value) for i in memory.items(limit=1000)),
        "history": [h.value for h in memory.history("city")],
        "recall": [h.item.id for h in memory.recall("Kyiv Lviv tea launch", k=10).hits],
        "count": memory.count(),
    }


def _found(memory: Memory, query: str) -> list[str]:
    return [h.item.content for h in memory.recall(query, k=50).hits]


def _rows(url: str, tenant: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT agent, path, position, id, status, content FROM record_items"
            " WHERE tenant = %s ORDER BY 1, 2, 3",
            (tenant,),
        ).fetchall()


def test_two_tenants_with_the_same_agent_keys_and_texts_each_see_only_their_own(
    postgres_url: str, tmp_path: Path
) -> None:
    acme = _open(tmp_path / "acme", postgres_url, "acme", FrozenClock(BEGIN))
    globex = _open(tmp_path / "globex", postgres_url, "globex", FrozenClock(BEGIN))
    try:
        _write_the_same(acme)
        _write_the_same(globex)  # same clock, same texts: turns get the same ids
        globex.remember("Works at the harbour", key="job")
        mine, theirs = _view(acme), _view(globex)
        assert {i[1:] for i in mine["items"]} < {i[1:] for i in theirs["items"]}
        assert {i[0] for i in mine["items"]} & {i[0] for i in theirs["items"]}  # a turn's id
        assert mine["history"] == theirs["history"] == ["Lives in Lviv", "Lives in Kyiv"]
        assert mine["count"] == 3 and theirs["count"] == 4
        assert not [c for c in _found(acme, "harbour") if "harbour" in c]
        assert all(h.item.tenant == "acme" for h in acme.recall("Lives", k=50).hits)
        exported = json.dumps(export_memory(acme))
        assert "harbour" not in exported and "globex" not in exported

        acme.reindex()  # empties and refills acme's index alone
        assert _view(globex) == theirs and _view(acme) == mine
        before = _rows(postgres_url, "globex")
        kyiv = next(i for i in acme.items() if i.content.endswith("Kyiv"))
        acme.forget(kyiv.id)
        acme.forget(next(i.id for i in acme.items() if "tea" in i.content))
        acme.forget(key="city")
        assert _rows(postgres_url, "globex") == before
        assert _view(globex) == theirs
        assert "city: Lives in Kyiv" in _found(globex, "Kyiv")
        assert "city: Lives in Kyiv" not in _found(acme, "Kyiv")
    finally:
        acme.close()
        globex.close()
    with _open(tmp_path / "acme-2", postgres_url, "acme") as again:  # another worker of acme
        assert again.history("city") == [] and again.count() == 1  # the turn
        assert not [c for c in _found(again, "harbour") if "harbour" in c]


def test_each_tenant_indexes_in_a_schema_of_its_own(postgres_url: str, tmp_path: Path) -> None:
    for tenant in ("acme", "globex"):
        with _open(tmp_path / tenant, postgres_url, tenant) as memory:
            memory.remember(f"Motto of {tenant}", key="motto")
    with psycopg.connect(postgres_url) as conn:
        schemas = dict(conn.execute("SELECT tenant, schema_name FROM record_index_schemas"))
        assert schemas == {t: index_schema(t) for t in ("acme", "globex")}
        for tenant, schema in schemas.items():
            rows = conn.execute(f'SELECT DISTINCT tenant FROM "{schema}".idx_items').fetchall()
            assert rows == [(tenant,)]
        public = conn.execute(
            "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"
            " AND relname LIKE 'idx\\_%%'"
        ).fetchone()
        assert public == (0,)


def test_a_database_written_for_one_tenant_keeps_its_index_and_takes_more_tenants(
    postgres_server: object, tmp_path: Path
) -> None:
    from kronika.stores.postgres.embedded import LocalPostgres, binaries

    assert isinstance(postgres_server, LocalPostgres)
    url = postgres_server.create_database("onetenantlayout")
    subprocess.run(
        [str(binaries() / "psql"), "-q", "-v", "ON_ERROR_STOP=1", "-f", str(LAYOUT), url],
        check=True,
        capture_output=True,
    )
    with psycopg.connect(url) as conn:
        (index_id,) = conn.execute("SELECT value FROM idx_meta WHERE key = 'index_id'").fetchone()

    with _open(tmp_path / "globex", url, "globex") as globex:  # another tenant comes first
        assert globex.count() == 0 and not _found(globex, "Kyiv")
        globex.remember("Lives in Porto", key="city")
    with _open(tmp_path / "acme", url, "acme") as acme:
        assert [h.value for h in acme.history("city")] == ["Lives in Lviv", "Lives in Kyiv"]
        assert [h.item.content for h in acme.recall("Kyiv", k=1).hits] == ["city: Lives in Kyiv"]
        assert not [c for c in _found(acme, "Porto") if "Porto" in c]
        assert "Prefers tea over coffee in the morning" in _found(acme, "tea")
        acme.remember("Lives in Odesa", key="city")
    with psycopg.connect(url) as conn:
        schema = index_schema("acme")
        moved = conn.execute(f"SELECT value FROM \"{schema}\".idx_meta WHERE key = 'index_id'")
        assert moved.fetchone() == (index_id,)  # the same index, moved, not rebuilt
        shared = conn.execute("SELECT version FROM kronika_migrations ORDER BY 1").fetchall()
        assert not [v for (v,) in shared if 200 <= v < 400]  # the index's went with it
        items = conn.execute(f'SELECT count(*) FROM "{schema}".idx_items').fetchone()
        assert items is not None and items[0] >= 4
    with _open(tmp_path / "globex-2", url, "globex") as globex:
        assert [h.value for h in globex.history("city")] == ["Lives in Porto"]


@pytest.mark.parametrize(
    "tenant",
    ["default", "Acme", "acme", "ACME!", "Kraków", 'x"; DROP SCHEMA public; --', "t" * 200, "  "],
)
def test_index_schema_names_are_plain_short_and_distinct(tenant: str) -> None:
    name = index_schema(tenant)
    assert name == index_schema(tenant)
    assert name.startswith("kronika_idx_") and len(name) <= 63
    assert name.replace("_", "").isalnum() and name == name.lower() and name.isascii()
    others = {"default", "Acme", "acme", "ACME!", "Kraków", "krakow", "t" * 199} - {tenant}
    assert name not in {index_schema(other) for other in others}
