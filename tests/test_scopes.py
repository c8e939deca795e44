"""Readers, audiences and tenants through the Python API: what each write records in
the Markdown, what survives a rebuild and an export, and who can read and write it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.core.model import Reader, Scope
from kronika.errors import ConfigError, Conflict, InvalidInput, NotFound, PermissionDenied
from kronika.testing import FrozenClock
from kronika.workflows.portability import export_memory, import_export
from kronika.workflows.session import Session

CONFIG = """
[agents.acme-bot]
tenant = "acme"

[teams]
core = ["anna", "bob"]
"""
ANNA = Reader("acme", "anna", "general", ("core",))
BOB_IN_DM = Reader("acme", "bob", "dm-bob", ("core",))
CARL = Reader("acme", "carl", "general")


@pytest.fixture
def team(tmp_path: Path, clock: FrozenClock) -> Iterator[Memory]:
    home = tmp_path / "ws"
    home.mkdir()
    (home / "kronika.toml").write_text(CONFIG, encoding="utf-8")
    memory = build_memory(
        load_settings(home, environ={}, embedder="hashing"), create=True, clock=clock
    )
    memory.create_agent("acme-bot")
    yield memory
    memory.close()


def _contents(memory: Memory, reader: Reader) -> set[str]:
    return {item.content for item in memory.items(agent="acme-bot", reader=reader)}


def test_the_reader_builder_takes_teams_from_the_config_and_the_tenant_setting(
    team: Memory,
) -> None:
    assert team.reader(user="bob") == Reader("default", "bob", None, ("core",))
    assert team.reader(user="carl", tenant="acme", teams=["x"]).teams == ("x",)


def test_every_audience_round_trips_through_the_markdown_and_a_rebuild(team: Memory) -> None:
    team.remember("prefers tea", key="drink", agent="acme-bot", user="anna")
    team.remember("standup at nine", agent="acme-bot", scope="team", team="core", user="anna")
    team.note("the launch slipped", agent="acme-bot", reader=ANNA)
    team.save_turn("s1", "user", "hello from the channel", agent="acme-bot", reader=ANNA)
    before = {
        (i.content, i.tenant, i.scope, i.user, i.channel, i.team)
        for i in team.items(agent="acme-bot", limit=100)
    }
    assert ("drink: prefers tea", "acme", Scope.PERSONAL, "anna", None, None) in before
    assert ("standup at nine", "acme", Scope.TEAM, "anna", None, "core") in before
    assert ("the launch slipped", "acme", Scope.CHANNEL, "anna", "general", None) in before
    assert ("hello from the channel", "acme", Scope.CHANNEL, "anna", "general", None) in before
    folder = team.workspace.agent_dir("acme-bot")
    assert "user=anna" in (folder / "brain.md").read_text()
    assert "team=core" in (folder / "brain.md").read_text()
    session = (folder / "sessions" / "s1.md").read_text()
    assert "scope: channel" in session and "channel: general" in session
    team.reindex()
    after = {
        (i.content, i.tenant, i.scope, i.user, i.channel, i.team)
        for i in team.items(agent="acme-bot", limit=100)
    }
    assert after == before


def test_each_reader_sees_their_own_their_channel_their_team_and_global(team: Memory) -> None:
    team.remember("anna's secret", agent="acme-bot", scope="personal", reader=ANNA)
    team.remember("said in general", agent="acme-bot", reader=ANNA)
    team.remember("core team plan", agent="acme-bot", scope="team", reader=ANNA)
    team.remember("company holiday", agent="acme-bot", scope="global")
    assert _contents(team, ANNA) == {
        "anna's secret",
        "said in general",
        "core team plan",
        "company holiday",
    }
    assert _contents(team, BOB_IN_DM) == {"core team plan", "company holiday"}
    assert _contents(team, CARL) == {"said in general", "company holiday"}
    assert _contents(team, Reader("globex", "anna", "general", ("core",))) == set()
    hit = team.recall("secret", agent="acme-bot", reader=BOB_IN_DM, mode="lexical")
    assert not hit.hits


def test_a_fact_of_one_user_never_supersedes_anothers(team: Memory) -> None:
    team.remember("Anna", key="name", agent="acme-bot", scope="personal", reader=ANNA)
    team.remember("Bob", key="name", agent="acme-bot", scope="personal", reader=BOB_IN_DM)
    team.remember("Anka", key="name", agent="acme-bot", scope="personal", reader=ANNA)
    assert [f.value for f in team.facts(agent="acme-bot", reader=BOB_IN_DM)] == ["Bob"]
    assert [f.value for f in team.history("name", agent="acme-bot", reader=ANNA)] == [
        "Anna",
        "Anka",
    ]


def test_a_reader_of_another_tenant_may_not_write_and_scopes_need_their_names(
    team: Memory,
) -> None:
    with pytest.raises(PermissionDenied, match="tenant"):
        team.remember("x", agent="acme-bot", reader=Reader("globex", "anna"))
    with pytest.raises(InvalidInput, match="needs a team"):
        team.remember("x", agent="acme-bot", scope="team", user="carl")
    with pytest.raises(InvalidInput, match="needs a channel"):
        team.note("x", agent="acme-bot", scope="channel")


def test_a_session_keeps_one_audience(team: Memory) -> None:
    team.save_turn("s1", "user", "first", agent="acme-bot", reader=ANNA)
    with pytest.raises(Conflict, match="belongs in a session of its own") as refused:
        team.save_turn("s1", "user", "second", agent="acme-bot", reader=CARL)
    assert "anna" in str(refused.value)  # Carl reads #general: he sees whose it is
    assert "of user carl" in str(refused.value)
    with pytest.raises(Conflict, match="another audience") as refused:
        team.save_turn("s1", "user", "second", agent="acme-bot", reader=BOB_IN_DM)
    assert "anna" not in str(refused.value) and "general" not in str(refused.value)
    team.save_turn("s1", "assistant", "reply", agent="acme-bot", reader=ANNA)
    assert len(team.load_session("s1", agent="acme-bot", reader=ANNA)) == 2
    assert team.load_session("s1", agent="acme-bot", reader=BOB_IN_DM) == []


def test_get_of_an_item_the_reader_may_not_see_is_not_found(team: Memory) -> None:
    item = team.remember("anna only", agent="acme-bot", scope="personal", reader=ANNA).item
    assert item is not None
    assert team.get(item.id, agent="acme-bot", reader=ANNA).content == "anna only"
    with pytest.raises(NotFound):
        team.get(item.id, agent="acme-bot", reader=CARL)
    with pytest.raises(NotFound):
        team.forget(item.id, agent="acme-bot", reader=CARL)


def test_a_chat_session_wakes_with_what_its_reader_may_see_and_keeps_its_facts_theirs(
    team: Memory,
) -> None:
    team.remember("bob likes jazz", agent="acme-bot", scope="personal", reader=BOB_IN_DM)
    chat = Session(team, agent="acme-bot", reader=ANNA)
    assert "jazz" not in chat.wake().memory_block
    chat.user("My favourite colour is green.")
    chat.new_conversation()  # no model: the rules extract the fact, the summary is extractive
    learned = [f for f in team.facts(agent="acme-bot") if "green" in f.content]
    assert learned and all(f.channel == "general" and f.user == "anna" for f in learned)
    assert "green" in team.active_context(agent="acme-bot", reader=ANNA)
    assert team.active_context(agent="acme-bot", reader=BOB_IN_DM) == ""
    assert not any("green" in f.content for f in team.facts(agent="acme-bot", reader=BOB_IN_DM))
    again = Session(team, agent="acme-bot", reader=CARL).wake()  # carl is in general too
    assert "green" in again.memory_block and "jazz" not in again.memory_block


def test_an_export_and_import_keep_users_teams_and_tenants_which_the_index_follows(
    team: Memory, tmp_path: Path, clock: FrozenClock
) -> None:
    team.remember("core team plan", agent="acme-bot", scope="team", reader=ANNA)
    data = export_memory(team)
    assert data["agents"]["acme-bot"]["policy"]["tenant"] == "acme"
    other = tmp_path / "other"
    with build_memory(
        load_settings(other, environ={}, embedder="hashing"), create=True, clock=clock
    ) as restored:
        import_export(restored, data)
    with build_memory(load_settings(other, environ={}, embedder="hashing"), clock=clock) as again:
        item = next(i for i in again.items(agent="acme-bot") if i.content == "core team plan")
        assert (item.tenant, item.scope, item.user, item.channel, item.team) == (
            "acme",
            Scope.TEAM,
            "anna",
            "general",  # where it was said (for storage policies); read by the team
            "core",
        )


def test_bad_team_and_tenant_tables_are_config_errors(tmp_path: Path) -> None:
    (tmp_path / "kronika.toml").write_text('[teams]\ncore = "anna"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="teams"):
        load_settings(tmp_path, environ={})
    (tmp_path / "kronika.toml").write_text("[agents.a]\ntenant = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="tenant"):
        load_settings(tmp_path, environ={})
