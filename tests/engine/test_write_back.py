"""Mending a damaged stretch of an item's text where it stands in its file, and never
writing what would read as damage."""

from __future__ import annotations

from pathlib import Path

from kronika import build_memory, load_settings
from kronika.core.lessons import exit_code
from kronika.engine.doctor import examine
from kronika.engine.write_back import mend

FILE = "# Pixel\n\n- Pixel sleeps by the tin\n- Pixel is a dog <!-- id=n-1 -->\n- Pixel is brown\n"


def test_an_overwritten_stretch_is_mended_and_nothing_else_changes() -> None:
    damaged = FILE.replace("is a dog", "is\ufffd\ufffdzz")
    assert mend(damaged, "Pixel is\ufffd\ufffdzz", "Pixel is a dog") == FILE


def test_a_text_cut_short_gets_its_end_back() -> None:
    cut = "We talked about the c"
    assert mend(f"<!-- scope=team team=core -->\n{cut}", cut, "We talked about the cat.") == (
        "<!-- scope=team team=core -->\nWe talked about the cat."
    )


def test_a_stretch_found_twice_or_not_at_all_is_left_alone() -> None:
    twice = "- a\ufffd b\n- a\ufffd b\n"
    assert mend(twice, "a\ufffd b", "ax b") is None
    assert mend(FILE, "Pixel is a cat", "Pixel is a dog") is None


def test_a_command_output_in_colour_is_no_damage(tmp_path: Path) -> None:
    """kronika never writes a control character, so one in a file is damage: a lesson
    drawn from a command's coloured output is written without them."""
    settings = load_settings(tmp_path / "ws", environ={}, embedder="hashing")
    with build_memory(settings, create=True) as memory:
        memory.record_outcome("deploy", "make deploy", exit_code(2, "\x1b[31mmissing\x1b[0m"))
        memory.sync()
        home = memory.settings.home
        found = examine(memory.workspace, memory.index, audit_path=home / "a.jsonl", home=home)
    lessons = (tmp_path / "ws/agents/default/lessons.md").read_text("utf-8")
    assert "missing" in lessons and "\x1b" not in lessons
    assert not [f for f in found.findings if f.check == "files"], found.findings
