"""A secret in any stored field — not only the content — is screened on every write
path: tags, entity names, a Brain section and who said a turn are redacted; a field
that names something (a session id, which becomes a file name; a turn id; the user,
channel or team) is refused, in ``redact`` and ``refuse`` alike. After each write the
whole workspace — Markdown, audit trail, index — is searched for the secret."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.sessions.test_secret_screening import assert_nowhere

from kronika import Memory, build_memory
from kronika.core.model import SessionRecord, TurnRecord
from kronika.errors import InvalidInput
from kronika.settings import Settings
from kronika.testing import FrozenClock
from kronika.workflows.tools import call_tool

KEY = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"
LABELLED = "password=Tr0ub4dor&3x"
AT = datetime(2025, 3, 1, tzinfo=UTC)


def names_in(home: Path) -> str:
    """Every file and folder name of the workspace."""
    return "\n".join(str(p.relative_to(home)) for p in home.rglob("*"))


def test_tags_entities_section_and_speaker_are_redacted(memory: Memory, home: Path) -> None:
    fact = memory.remember(
        "the billing bucket is in Kraków",
        tags=[KEY, "aws"],
        entities=[f"token {KEY}", "Kraków"],
    ).item
    assert fact is not None
    assert (fact.tags, fact.entities) == (("aws",), ("Kraków",))
    note = memory.note("deploys run at night", tags=[LABELLED, "ops"]).item
    assert note is not None and note.tags == ("ops",)
    memory.save_turn("s-1", f"ops {KEY}", "hello")
    assert memory.load_session("s-1")[0].speaker == "ops [secret: openai-key]"
    memory.import_sessions(
        "default",
        [
            SessionRecord(
                "import-1",
                AT,
                (TurnRecord("t1", f"bot {LABELLED}", "hi", AT),),
                source=f"export {KEY}",
            )
        ],
    )
    memory.sync()
    assert_nowhere(home, KEY, "Tr0ub4dor&3x")


@pytest.mark.parametrize(
    "write",
    [
        lambda m: m.save_turn(KEY, "user", "hello"),
        lambda m: m.save_turn(f"s-{KEY}", "user", "hello"),
        lambda m: m.save_turn("s-2", "user", "hello", turn_id=KEY),
        lambda m: m.import_sessions(
            "default", [SessionRecord(KEY, AT, (TurnRecord("t1", "user", "hi", AT),))]
        ),
        lambda m: m.import_sessions(
            "default", [SessionRecord("s-3", AT, (TurnRecord(KEY, "user", "hi", AT),))]
        ),
        lambda m: m.remember("likes tea", scope="personal", user=KEY),
        lambda m: m.note("likes tea", scope="channel", channel=f"ops-{KEY}"),
        lambda m: m.remember("likes tea", scope="team", team=KEY),
        lambda m: m.save_turn("s-4", "user", "hello", scope="channel", channel=KEY),
    ],
    ids=[
        "session-id",
        "session-id-part",
        "turn-id",
        "imported-session-id",
        "imported-turn-id",
        "user",
        "channel",
        "team",
        "turn-channel",
    ],
)
def test_a_name_holding_a_secret_is_refused_and_never_becomes_a_file(
    memory: Memory, home: Path, write: Any
) -> None:
    with pytest.raises(InvalidInput, match="holds a secret \\(openai-key\\)") as refused:
        write(memory)
    assert KEY not in str(refused.value)  # the refusal names the kind, not the value
    memory.sync()
    assert KEY not in names_in(home)
    assert_nowhere(home, KEY)


def test_refuse_mode_refuses_a_secret_in_a_tag(settings: Settings, clock: FrozenClock) -> None:
    refusing = settings.with_overrides(secrets="refuse")
    with build_memory(refusing, create=True, clock=clock) as memory:
        with pytest.raises(InvalidInput, match="openai-key"):
            memory.remember("likes tea", tags=[KEY])
        with pytest.raises(InvalidInput, match="openai-key"):
            memory.save_turn("s-1", f"ops {KEY}", "hello")
        assert memory.facts() == []
        assert_nowhere(settings.home, KEY)


def test_allow_keeps_names_as_given(settings: Settings, clock: FrozenClock) -> None:
    allowing = settings.with_overrides(secrets="allow")
    with build_memory(allowing, create=True, clock=clock) as memory:
        memory.save_turn("s-ok", "user", "hello", turn_id=KEY)
        assert memory.load_session("s-ok")[0].provenance.turn_ids == (KEY,)


def test_a_brain_section_is_one_of_four_and_never_stored_unknown(
    memory: Memory, home: Path
) -> None:
    said = call_tool(
        memory, "default", "remember", {"key": "drink", "value": "tea", "section": KEY}
    )
    assert not said["ok"]
    with pytest.raises(InvalidInput, match="unknown Brain section"):
        memory.remember("likes tea", section=f"Keys {KEY}")
    assert_nowhere(home, KEY)
