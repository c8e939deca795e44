"""Changing the storage policies through the server: an admin key of the whole tenant
rewrites the policy tables of ``kronika.toml`` (the rest of the file kept byte for byte),
they apply at once, a bad rule is a 422 naming its line, and no other key may (in the
page: ``test_ui_policy_edit.py``)."""

from __future__ import annotations

import tomllib

from tests.server.conftest import Served

from kronika import load_settings
from kronika.core.policies import parse_policies
from kronika.core.policy_file import split, with_section

HEAD = """# acme's own settings: keep this comment
recall_k = 7

"""
OLD = """[retention]   # days per tier
short = 30

[[policy]]
name = "old rule"
channels = ["old"]
store = false

"""
TAIL = """# the teams, written by hand
[teams]
core = ["ann", "bob"]
"""
NEW = """[retention]
mid = 400

[[policy]]
name = "never store #hr-private"
channels = ["hr-private"]
store = false  # HR asked for it
"""


def config(served: Served) -> str:
    home = served.memories["acme"].settings.home
    return (home / "kronika.toml").read_text(encoding="utf-8")


def write_config(served: Served, text: str) -> None:
    home = served.memories["acme"].settings.home
    (home / "kronika.toml").write_text(text, encoding="utf-8")


def test_an_admin_changes_the_policies_and_they_apply_at_once(served: Served) -> None:
    before = config(served)
    write_config(served, HEAD + before + "\n" + OLD + TAIL)
    shown = served.call("GET", "/v1/agents/alice/policies").body
    # the policies as loaded at start: none (the file was written after); its tables
    assert shown["editable"] is True and shown["not_editable"] is None
    assert shown["toml"] == OLD.strip() + "\n"
    answer = served.call("PUT", "/v1/agents/alice/policies", {"toml": NEW})
    assert answer.status == 200, answer.body
    assert [p["name"] for p in answer.body["policies"]] == ["never store #hr-private"]
    assert answer.body["retention_days"]["mid"] == 400
    text = config(served)
    assert text == HEAD + before + "\n\n" + TAIL + "\n" + NEW  # the rest kept as it was
    again = load_settings(served.memories["acme"].settings.home, environ={}, embedder="hashing")
    assert [r.name for r in again.storage.rules] == ["never store #hr-private"]
    assert again.recall_k == 7 and again.teams["core"] == ("ann", "bob")
    # in force at once, for writes through the server and through the memory itself
    refused = served.call(
        "POST",
        "/v1/agents/alice/memories",
        {"content": "salaries are secret", "channel": "hr-private"},
    )
    assert refused.status in (200, 201) and "hr-private" in str(refused.body), refused.body
    assert served.memories["acme"].items(agent="alice", limit=10) == []
    receipt = served.memories["acme"].note("pay rise", agent="alice", channel="hr-private")
    assert receipt.outcome == "refused"
    audit = served.call("GET", "/v1/agents/alice/audit").body["entries"]
    assert any(e["action"] == "policies" and e["outcome"] == "applied" for e in audit)


def test_a_bad_rule_is_refused_naming_its_line_and_the_file_stays(served: Served) -> None:
    write_config(served, HEAD + OLD)
    for toml, said in [
        ('[[policy]]\nname = "x"\n', "line 1"),  # does nothing
        ('[[policy]]\nname = "x"\nmax_tier = "long"\n', "line 3"),
        ("[teams]\nx = ['a']\n", "only [retention] and [[policy]]"),
        ("[[policy]\n", "not valid TOML"),
        ('[[policy]]\nname = "x"\nstore = false\nwhat = 1\n', "no setting 'what'"),
    ]:
        answer = served.call("PUT", "/v1/agents/alice/policies", {"toml": toml})
        assert answer.status == 422 and said in str(answer.body), (toml, answer.body)
    assert config(served) == HEAD + OLD
    assert served.call("PUT", "/v1/agents/alice/policies", {"text": "x"}).status == 422


def test_only_an_admin_key_of_the_whole_tenant_may_change_them(served: Served) -> None:
    write_config(served, HEAD + OLD)
    edit = {"toml": NEW}
    for key in ("acme-reader", "acme-alice", "acme-admin-bob"):
        refused = served.call("PUT", "/v1/agents/alice/policies", edit, key=key)
        assert refused.status in (403, 404), (key, refused.status)
        shown = served.call("GET", "/v1/agents/bob/policies", key=key)
        if shown.status == 200:
            assert shown.body["editable"] is False and shown.body["toml"] is None
    assert served.call("PUT", "/v1/agents/alice/policies", edit, key="globex-admin").status == 200
    assert config(served) == HEAD + OLD  # globex edited its own workspace, not acme's
    assert served.call("PUT", "/v1/agents/alice/policies", edit, key=None).status == 401


def test_emptying_the_policies_leaves_the_rest_of_the_file() -> None:
    rest, section = split(HEAD + OLD + TAIL)
    # the blank line and the comment above [teams] are the teams' (TAIL's first line)
    assert rest == HEAD + "\n" + TAIL and section == OLD.removesuffix("\n")
    assert with_section(HEAD + OLD + TAIL, "") == HEAD + "\n" + TAIL
    raw = tomllib.loads(with_section("", NEW))
    assert parse_policies(raw["policy"], raw["retention"]).rules[0].name.startswith("never")
