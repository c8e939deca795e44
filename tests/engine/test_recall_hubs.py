"""Hub reduction in recall: a turn of a long session is read against other sessions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kronika import build_memory
from kronika.errors import ConfigError
from kronika.settings import Settings
from kronika.testing import FrozenClock, conversation

T = datetime(2024, 5, 1, 9, tzinfo=UTC)
GARDEN = [
    "The tomatoes in our garden caught blight this week.",
    "Our garden needs more water in this heat.",
    "I moved the garden bench under the old apple tree.",
    "The garden hose leaks again near the shed.",
    "We planted basil and mint along the garden fence.",
    "The garden soil is too dry after this week.",
    "Birds keep eating the garden strawberries.",
    "I bought new garden gloves and a rake.",
    "The garden path needs new gravel soon.",
    "Our neighbour admired the garden roses.",
    "The garden shed roof leaks in the rain.",
    "We cleared weeds from the garden beds.",
]
QUESTION = "What happened to the tomatoes in the garden this week?"


def _first(settings: Settings, **overrides: object) -> str:
    """The best hit's text, the garden session, small talk and three notes remembered."""
    talks = [
        conversation(
            "garden", T, [(f"G:{n}", "Ana" if n % 2 else "Ben", t) for n, t in enumerate(GARDEN)]
        )
    ]
    talks += [
        conversation(
            f"chat{s}",
            T,
            [
                (f"C{s}:1", "Ana", f"Hi Ben, how are you doing this week, friend {s}?"),
                (f"C{s}:2", "Ben", "Fine, thanks."),
            ],
        )
        for s in range(8)
    ]
    clock = FrozenClock(T)
    with build_memory(settings.with_overrides(**overrides), create=True, clock=clock) as mem:
        mem.import_sessions("conv", talks)
        for note in (
            "Blight spreads fast in wet summers.",
            "Tomatoes need sun.",
            "Plumber Friday.",
        ):
            mem.remember(note, agent="conv")
        hits = mem.recall(QUESTION, agent="conv", k=3, record_access=False).hits
        return hits[0].item.content


def test_the_answer_in_a_long_session_is_not_lowered_by_its_own_sessions_turns(
    settings: Settings,
) -> None:
    # every turn of the garden talk is close to the others: read against every
    # candidate (the default scope), the answer counts as a hub and a short note
    # overtakes it
    assert _first(settings, hub_neighbours=10) == "Tomatoes need sun."
    # read against other sessions and notes only, it stays first
    first = _first(settings, hub_neighbours=10, hub_scope="others")
    assert first.startswith("The tomatoes in our garden")


def test_an_unknown_hub_scope_is_refused(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="'hub_scope' must be 'others' or 'all'"):
        settings.with_overrides(hub_scope="session")
