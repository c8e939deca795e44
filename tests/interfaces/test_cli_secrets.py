"""Secrets and file modes as a person meets them through the real ``kronika`` command.

Every command runs in a subprocess under a permissive umask (022, the usual default),
so the modes checked are the ones kronika sets itself.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kronika.settings import load_settings
from kronika.stores.private import loose_modes, tighten_modes

KRONIKA = Path(sys.executable).with_name("kronika")
KEY = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"
posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


def kronika(
    home: Path, *args: str, umask: int = 0o022, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    return subprocess.run(
        [str(KRONIKA), "--home", str(home), *args],
        capture_output=True,
        text=True,
        env={**clean, "KRONIKA_EMBEDDER": "hashing", **(env or {})},
        timeout=120,
        check=False,
        preexec_fn=lambda: os.umask(umask),  # noqa: PLW1509 - the child's umask only
    )


def modes(home: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(home.stat().st_mode)}
    for path in home.rglob("*"):
        found[path.relative_to(home).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_remember_shows_and_stores_a_marker_never_the_key(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert kronika(home, "init").returncode == 0
    done = kronika(home, "remember", f"my OpenAI key is {KEY}")
    assert done.returncode == 0, done.stderr
    assert "my OpenAI key is [secret: openai-key]" in done.stdout and KEY not in done.stdout
    listed = kronika(home, "recall", "OpenAI key", "--json")
    assert "[secret: openai-key]" in listed.stdout and KEY not in listed.stdout
    data = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert KEY.encode() not in data


def test_refuse_exits_with_the_invalid_input_code_naming_the_kind(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    kronika(home, "init")
    config = home / "kronika.toml"
    config.write_text(config.read_text() + '\nsecrets = "refuse"\n')
    done = kronika(home, "remember", f"my OpenAI key is {KEY}")
    assert done.returncode == 2
    assert "openai-key" in done.stderr and KEY not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    assert KEY not in (home / "agents/default/brain.md").read_text()
    bad = kronika(home, "remember", "x", env={"KRONIKA_SECRETS": "sometimes"})
    assert bad.returncode != 0 and "'redact', 'refuse' or 'allow'" in bad.stderr


@posix_only
@pytest.mark.parametrize("umask", [0o022, 0o000, 0o277])
def test_everything_in_a_workspace_is_its_owners_alone(tmp_path: Path, umask: int) -> None:
    home = tmp_path / "ws"
    for args in (
        ("init",),
        ("remember", "--key", "city", "Kraków"),
        ("remember", "--key", "city", "Gdańsk"),
        ("note", "called the bank"),
        ("import", "jsonl", str(_conversation(tmp_path))),
        ("recall", "Kraków"),
    ):
        done = kronika(home, *args, umask=umask)
        assert done.returncode == 0, (args, done.stderr)
    found = modes(home)
    for name in ("kronika.toml", "audit.jsonl", "index.sqlite", ".kronika.lock", "index.model"):
        assert found[name] == 0o600, name
    assert found["agents/default/brain.md"] == 0o600
    assert found["agents/default/history.md"] == 0o600
    assert any(n.startswith("agents/default/sessions/") for n in found)
    for name, mode in found.items():
        expected = 0o700 if (home / name).is_dir() else 0o600
        assert mode == expected, f"{name}: {mode:o}"


def _conversation(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text(
        '{"session": "s1", "role": "user", "content": "I moved to Kraków"}\n'
        '{"session": "s1", "role": "assistant", "content": "Nice!"}\n'
    )
    return path


@posix_only
def test_the_index_write_ahead_log_is_private_while_it_exists(tmp_path: Path) -> None:
    from kronika import build_memory

    home = tmp_path / "ws"
    old = os.umask(0o022)
    try:
        with build_memory(load_settings(home, environ={}, embedder="hashing"), create=True) as mem:
            mem.remember("I like green tea")
            wal = [p for p in home.iterdir() if p.name.startswith("index.sqlite-")]
            assert wal, "the index keeps a -wal/-shm while open"
            assert {stat.S_IMODE(p.stat().st_mode) for p in wal} == {0o600}
    finally:
        os.umask(old)


@posix_only
def test_opening_an_older_workspace_closes_its_folder(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    kronika(home, "init")
    home.chmod(0o755)
    (home / "kronika.toml").chmod(0o644)
    done = kronika(home, "index", "stats")
    assert done.returncode == 0
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert "open to other users" in done.stderr
    # files made before stay as they were until rewritten; they can be listed and narrowed
    assert [p.name for p, _ in loose_modes(home)] == ["kronika.toml"]
    assert tighten_modes(home) == [home / "kronika.toml"]
    assert loose_modes(home) == []


def test_api_keys_come_from_the_environment_and_never_reach_the_config(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    env = {"KRONIKA_LLM_API_KEY": KEY, "KRONIKA_RERANKER_API_KEY": KEY + "r"}
    done = kronika(home, "init", env=env)
    assert done.returncode == 0, done.stderr
    assert KEY not in (home / "kronika.toml").read_text()
    settings = load_settings(home, environ=env)
    assert settings.llm_api_key == KEY and settings.reranker_api_key == KEY + "r"
    assert KEY not in repr(settings)
    kronika(home, "remember", "I like tea", env=env)
    assert KEY.encode() not in b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
