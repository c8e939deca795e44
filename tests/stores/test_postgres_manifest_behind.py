"""A working copy whose ``record.json`` is older than its files (what a power cut may
leave: the files are synced as they are written, the manifest is not waited for) loses
no write: the documents it had not seen are pulled again, and the record keeps every
fact of both workers. A file the older manifest cannot place (the copy's own pushed
Brain, once another worker changed it) is kept aside in ``.corrupt/``, as a hand edit
met by another worker's change is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.settings import Settings
from kronika.stores.working_copy import MANIFEST

LOG = f"{MANIFEST}.log"  # the manifest's lines since it was last written whole

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _values(url: str) -> dict[str, str]:
    """The current facts of the default agent's Brain as the record holds them."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT key, data->>'value' FROM record_items WHERE agent = 'default'"
            " AND path = 'brain.md' AND status = 'current'"
        ).fetchall()
    return {str(k): str(v) for k, v in rows}


@pytest.mark.parametrize("other_worker_wrote", [False, True], ids=["alone", "another-wrote"])
def test_a_manifest_older_than_its_files_loses_no_write(
    postgres_url: str, tmp_path: Path, other_worker_wrote: bool
) -> None:
    home, old = tmp_path / "a", tmp_path / "then"
    with build_memory(_settings(home, postgres_url)) as first:
        for n in range(3):
            first.remember(f"value {n}", key=f"k{n}")
        old.mkdir()  # the manifest as the disk last held it: the whole and its log
        for name in (MANIFEST, LOG):
            if (home / name).exists():
                shutil.copy2(home / name, old / name)
        first.remember("value 3", key="k3")
        first.remember("value 4", key="k4")
    if other_worker_wrote:
        with build_memory(_settings(tmp_path / "b", postgres_url)) as second:
            second.remember("value 5", key="k5")
    # the power cut: the files stayed, the manifest did not
    for name in (MANIFEST, LOG):
        (home / name).unlink(missing_ok=True)
        if (old / name).exists():
            shutil.copy2(old / name, home / name)

    with build_memory(_settings(home, postgres_url)) as first:
        first.remember("value 6", key="k6")
        seen = {f.key: f.value for f in first.facts()}
        brain = (first.workspace.agent_dir("default") / "brain.md").read_text(encoding="utf-8")
        kept = sorted(first.workspace.agent_dir("default").glob(".corrupt/brain.md.conflict.*"))

    expected = {f"k{n}": f"value {n}" for n in range(7) if other_worker_wrote or n != 5}
    assert seen == expected
    assert _values(postgres_url) == expected
    assert all(f"**{key}**: {value} <" in brain for key, value in expected.items())
    # the Brain it had pushed, which the older manifest cannot place once another worker
    # changed it, is kept aside and said, not pushed: its facts are the record's already
    assert len(kept) == (1 if other_worker_wrote else 0)
    with build_memory(_settings(tmp_path / "c", postgres_url)) as fresh:
        assert {f.key: f.value for f in fresh.facts()} == expected
