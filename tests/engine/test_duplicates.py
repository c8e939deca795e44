"""Facts that say the same thing are kept once (SPEC M3): exact duplicates up to case,
spacing, punctuation and Unicode form refresh the fact that is there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kronika import Memory
from kronika.testing import FrozenClock
from kronika.workflows.session import Session


def _values(memory: Memory) -> list[str]:
    return [f.value or f.content for f in memory.facts()]


@pytest.mark.parametrize(
    "again",
    [
        "i drink green tea every morning.",
        "I drink green tea every morning!",
        "  I drink   green tea\nevery morning…",
        "I DRINK GREEN TEA EVERY MORNING",
        "Ｉ ｄｒｉｎｋ ｇｒｅｅｎ ｔｅａ ｅｖｅｒｙ ｍｏｒｎｉｎｇ",  # full-width (NFKC)
        "I drink green tea every\u00a0morning.",  # a no-break space
        "“I drink green tea every morning.”",  # curly quotes around it
    ],
)
def test_a_fact_said_again_differently_written_is_kept_once(
    memory: Memory, clock: FrozenClock, again: str
) -> None:
    memory.remember("I drink green tea every morning")
    clock.advance(hours=2)
    receipt = memory.remember(again)
    assert type(receipt.change).__name__ == "TouchFact"
    assert _values(memory) == ["I drink green tea every morning"]
    (fact,) = memory.facts()
    assert fact.updated_at == clock.now() and fact.created_at < fact.updated_at


def test_composed_and_decomposed_accents_and_curly_apostrophes_are_one_fact(
    memory: Memory,
) -> None:
    memory.remember("Zoë doesn't eat crème brûlée", key="dessert")
    decomposed = "Zoe\u0308 doesn’t eat cre\u0300me bru\u0302le\u0301e."
    assert type(memory.remember(decomposed, key="dessert").change).__name__ == "TouchFact"
    assert len(memory.facts()) == 1


def test_a_multi_valued_key_does_not_collect_the_same_value_twice(memory: Memory) -> None:
    memory.remember("Python", key="language", multi=True)
    memory.remember("Rust", key="language", multi=True)
    memory.remember("rust.", key="language", multi=True)
    assert sorted(_values(memory)) == ["Python", "Rust"]


def test_different_words_stay_different_facts(memory: Memory) -> None:
    memory.remember("I code in C")
    memory.remember("I code in C++")
    memory.remember("I code in C#")
    memory.remember("3.5 kg")
    memory.remember("35 kg")
    assert len(memory.facts()) == 5


def test_remember_said_twice_in_a_conversation_keeps_one_note(memory: Memory) -> None:
    session = Session(memory)
    session.user("Remember: I drink green tea every morning")
    session.user("remember: i drink green tea every morning.")
    assert _values(memory) == ["I drink green tea every morning"]


def test_the_cli_keeps_one_fact_for_two_spellings(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    run = [sys.executable, "-m", "kronika", "--home", str(home)]
    env = {"KRONIKA_EMBEDDER": "hashing", "PATH": "/usr/bin:/bin"}
    subprocess.run([*run, "init"], check=True, env=env, capture_output=True)
    for text in ("I drink green tea every morning", "i drink green tea every morning."):
        subprocess.run([*run, "remember", text], check=True, env=env, capture_output=True)
    brain = (home / "agents" / "default" / "brain.md").read_text(encoding="utf-8")
    assert brain.lower().count("green tea every morning") == 1
