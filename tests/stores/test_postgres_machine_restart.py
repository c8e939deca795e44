"""A working copy's files are written without waiting for the disk: the record has
every acknowledged write. A crash of the machine may then leave a file older than the
copy's ``record.json`` says. The manifest names the boot it was written in, so a copy
started in another boot gives every file that is not the record's version that
version again, before it sends anything, and keeps the file it found aside, as does a
copy whose manifest the crash left empty; within one boot (a worker restarted, the
machine not) a file that differs is a hand edit, and is sent as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.settings import Settings
from kronika.stores.durable import boot_id
from kronika.stores.working_copy import MANIFEST

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
pytestmark = pytest.mark.skipif(
    boot_id() is None, reason="the machine's boot cannot be told here: files are synced"
)


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _facts(memory: object) -> dict[str, str | None]:
    return {f.key: f.value for f in memory.facts() if f.key}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "after", ["machine-restarted", "manifest-emptied", "same-boot"], ids=lambda a: str(a)
)
def test_a_file_the_machines_crash_left_older_is_never_sent(
    postgres_url: str, tmp_path: Path, after: str
) -> None:
    restarted = after != "same-boot"
    home = tmp_path / "a"
    brain = home / "agents" / "default" / "brain.md"
    with build_memory(_settings(home, postgres_url), create=True) as worker:
        worker.remember("Kraków", key="city")
        older = brain.read_bytes()  # on disk; the next version was not waited for
        worker.remember("a dog called Burek", key="pet")
    assert json.loads((home / MANIFEST).read_text("utf-8"))["boot"] == boot_id()
    brain.write_bytes(older)  # what the crash left of the Brain
    if after == "machine-restarted":  # the manifest as the boot before wrote it
        saved = json.loads((home / MANIFEST).read_text("utf-8"))
        (home / MANIFEST).write_text(json.dumps({**saved, "boot": "an earlier boot"}), "utf-8")
    elif after == "manifest-emptied":  # its name kept by the crash, not its bytes
        (home / MANIFEST).write_bytes(b"")

    with build_memory(_settings(home, postgres_url)) as again:
        again.remember("blue", key="colour")
        held = _facts(again)
        notes = list(again.notes)
    with build_memory(_settings(tmp_path / "fresh", postgres_url), create=True) as fresh:
        kept = _facts(fresh)

    assert held == kept
    kept_aside = list((brain.parent / ".corrupt").glob("brain.md.unsent*"))
    if restarted:
        assert kept == {"city": "Kraków", "pet": "a dog called Burek", "colour": "blue"}
        assert [p.read_bytes() for p in kept_aside] == [older]
        said = "the machine restarted" if after == "machine-restarted" else "unreadable"
        assert any(said in note for note in notes), notes
        saved = json.loads((home / MANIFEST).read_text("utf-8"))
        assert saved["boot"] == boot_id()  # checked once: trusted in this boot
    else:  # the same boot: the folder lost nothing, so the older Brain is a hand edit
        assert kept == {"city": "Kraków", "colour": "blue"}
        assert kept_aside == []
