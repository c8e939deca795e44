"""Turns a session lost are written back after its header as the workspace numbers its
lines: at "\\n" alone, so a header value holding U+2028, U+2029 or NEL (a title pasted
from a chat) stays one line, and the header is kept whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.cli import main


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"], ids=["LS", "PS", "NEL"])
def test_lost_turns_go_back_after_a_header_whose_title_holds_a_line_separator(
    tmp_path: Path, separator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    home = tmp_path / "home"
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True) as memory:
        for n in range(3):
            memory.save_turn("s1", "user", f"I adopted cat number {n}")
    file = home / "agents" / "default" / "sessions" / "s1.md"
    title = f"title: Cats{separator}and{separator}dogs\n"  # pasted over three lines
    text = file.read_text("utf-8").replace("source: api\n", "source: api\n" + title, 1)
    file.write_text(text, "utf-8")
    with build_memory(settings) as memory:
        memory.sync()  # the title is the file's own
    header, _, turns = text.partition("\n### ")
    file.write_text(header + "\n### " + turns.split("\n### ")[0] + "\n", "utf-8")  # two lost
    with build_memory(settings) as memory:
        memory.sync()  # the loss is seen and the lost turns kept

    assert main(["doctor", "--fix", "--home", str(home)]) == 0

    after = file.read_text("utf-8")
    assert after.startswith(header + "\n"), after[: len(header) + 40]
    assert all(f"I adopted cat number {n}" in after for n in range(3)), after
    with build_memory(settings) as memory:
        held = [i.content for i in memory.items(types=["message"])]
    assert sorted(held) == [f"I adopted cat number {n}" for n in range(3)]
