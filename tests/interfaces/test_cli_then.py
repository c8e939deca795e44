"""``kronika recall`` tells a value from history as such: its status, its validity, the
reason it was recalled, and a citation into ``history.md``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.cli import main
from kronika.testing import FrozenClock


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "ws"
    monkeypatch.setenv("KRONIKA_HOME", str(home))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    clock = FrozenClock(datetime(2025, 1, 10, tzinfo=UTC))
    with build_memory(
        load_settings(home, environ={}, embedder="hashing"), create=True, clock=clock
    ) as memory:
        memory.remember("Kraków", key="city")
        clock.set(datetime(2025, 5, 5, tzinfo=UTC))
        memory.remember("Lviv", key="city")
        clock.set(datetime(2025, 9, 1, tzinfo=UTC))
        memory.remember("Warszawa", key="city")
    return home


def _recall(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["recall", *argv, "--no-record"]) == 0
    return capsys.readouterr().out


def test_json_shows_a_past_value_with_its_validity_and_reason(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = json.loads(
        _recall(capsys, "Where did she live in June 2025?", "--key", "city", "--json")
    )
    first = found["hits"][0]
    assert first["content"].endswith("Lviv")
    assert first["status"] == "superseded"
    assert first["citation"].startswith("history.md#L")
    assert first["valid_from"].startswith("2025-05-05")
    assert first["valid_to"].startswith("2025-09-01")
    assert first["history"].startswith("true then (2025-05-05 → 2025-09-01)")
    now = json.loads(_recall(capsys, "Where does she live?", "--key", "city", "--json"))
    assert [(h["status"], h["history"]) for h in now["hits"]] == [("current", None)]


def test_explain_has_a_column_for_what_came_from_history(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _recall(capsys, "Where did she live before Warszawa?", "--key", "city", "--explain")
    assert "from history" in table
    assert "the value before 'Warszawa'" in table
    assert "profile, superseded" in table
    assert "history.md#L" in table
    plain = _recall(capsys, "Where does she live?", "--key", "city", "--explain")
    assert "from history" not in plain and "superseded" not in plain
