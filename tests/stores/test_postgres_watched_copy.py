"""A team-mode working copy whose push is told by the folder watch which files
changed (:mod:`kronika.stores.folder_watch`): what it sends is what a push listing
every file sent, for kronika's own writes and hand edits made between commands, in
files old and new, in folders made after the watch began."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.settings import Settings

pytest.importorskip("psycopg", reason="the postgres extra is not installed")
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the folder watch uses Linux's inotify"
)


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def test_hand_edits_between_commands_reach_the_record_beside_many_files(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        for n in range(40):
            memory.save_turn(f"chat-{n}", "user", f"turn of chat {n}")
        memory.note("Olena keeps bees", at=datetime(2026, 3, 1, tzinfo=UTC))
        memory.remember("Kraków", key="city")
        folder = memory.workspace.agent_dir("default")
        notes = sorted((folder / "memory").glob("*.md"))
        assert notes
        with open(notes[0], "a", encoding="utf-8") as handle:  # in place, after a push
            handle.write("\n- Olena's hives stand in Zakopane\n")
        brain = folder / "brain.md"
        brain.write_text(brain.read_text(encoding="utf-8").replace("Kraków", "Lublin"))
        memory.remember("blue", key="colour")  # a command: the edits go with its push
        entity = folder / "bank" / "entities" / "olena.md"
        entity.write_text("# Olena\n\nBeekeeper from Zakopane, met at the market.\n")
        place = folder / "bank" / "places" / "zakopane.md"  # in a folder made by hand
        place.parent.mkdir()
        place.write_text("# Zakopane\n\nWhere the hives stand.\n")
        memory.remember("tea", key="drink")
        gone = folder / "bank" / "entities" / "stall.md"
        gone.write_text("# The stall\n\nA market stall, since closed.\n")
        memory.remember("green", key="colour")
        gone.unlink()  # removed by hand: the record lets it go with the next command
        memory.remember("black", key="drink")
    with build_memory(_settings(tmp_path / "b", postgres_url)) as other:
        assert {f.key: f.value for f in other.facts()} == {
            "city": "Lublin",
            "colour": "green",
            "drink": "black",
        }
        hives = other.recall("Olena hives Zakopane", k=3).hits
        assert any("hives stand in Zakopane" in hit.item.content for hit in hives)
        market = other.recall("beekeeper met at the market", k=3).hits
        assert any("met at the market" in hit.item.content for hit in market)
        copy = other.workspace.agent_dir("default")
        assert len(list((copy / "sessions").glob("*.md"))) == 40
        assert (copy / "bank" / "places" / "zakopane.md").read_text() == place.read_text()
        assert not (copy / "bank" / "entities" / "stall.md").exists()
        stall = other.recall("market stall since closed", k=5).hits
        assert not [hit for hit in stall if "since closed" in hit.item.content]


def test_a_file_with_a_second_name_is_looked_at_in_every_release(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.note("Olena keeps bees", at=datetime(2026, 3, 1, tzinfo=UTC))
        notes = sorted((memory.workspace.agent_dir("default") / "memory").glob("*.md"))
        outside = tmp_path / "my-notes.md"  # the file moved out, a second name left in
        os.replace(notes[0], outside)
        os.link(outside, notes[0])
        memory.remember("Kraków", key="city")
        with open(outside, "a", encoding="utf-8") as handle:
            handle.write("\n- Olena sells honey at the Sunday market\n")
        memory.remember("blue", key="colour")
    with build_memory(_settings(tmp_path / "b", postgres_url)) as other:
        honey = other.recall("Olena honey Sunday market", k=3).hits
        assert any("sells honey" in hit.item.content for hit in honey)
