"""The command line grouped by noun (`kronika proposals approve`, `kronika index
rebuild`…): the new spellings work, the earlier ones still do for a release and say on
stderr what to write instead, and `--json` prints the same either way."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.cli import main
from kronika.cli.legacy import RENAMED

Run = Callable[..., tuple[str, str]]


@pytest.fixture
def both(run: Callable[..., str], capsys: pytest.CaptureFixture[str]) -> Run:
    """``both(*argv)``: run ``kronika argv`` (exit 0), and return stdout and stderr."""

    def _both(*argv: str) -> tuple[str, str]:
        got = main(list(argv))
        captured = capsys.readouterr()
        assert got == 0, captured.err
        return captured.out, captured.err

    run("init")
    return _both


def _notice(err: str, old: str, new: str) -> None:
    """``err`` holds the one deprecation notice: a line of text, or with ``--json`` a
    JSON line like every other line kronika writes on stderr then."""
    said = [line for line in err.splitlines() if "deprecated" in line]
    assert len(said) == 1, err
    if said[0].startswith("{"):
        assert json.loads(said[0]) == {"deprecated": f"kronika {old}", "use": f"kronika {new}"}
        assert all(json.loads(line) for line in err.splitlines())
    else:
        assert said[0] == (
            f"kronika: `kronika {old}` is deprecated and goes in a later release;"
            f" use `kronika {new}`"
        )


SAME_JSON = [  # (earlier spelling, current spelling): the same document on stdout
    (("stats",), ("index", "stats")),
    (("audit",), ("logs", "audit")),
    (("recalls",), ("logs", "recalls")),
    (("usage",), ("logs", "usage")),
    (("sync",), ("index", "sync")),
    (("reindex",), ("index", "rebuild")),
    (("consolidate",), ("jobs", "consolidate")),
    (("purge", "--dry-run"), ("policies", "purge", "--dry-run")),
]


@pytest.mark.parametrize(("old", "new"), SAME_JSON, ids=[" ".join(o) for o, _ in SAME_JSON])
def test_an_earlier_spelling_prints_the_same_json_and_warns_on_stderr(
    both: Run, old: tuple[str, ...], new: tuple[str, ...]
) -> None:
    both("remember", "--key", "city", "Kraków")
    both("recall", "city")
    now, quiet = both(*new, "--json")
    before, warned = both(*old, "--json")
    assert "deprecated" not in quiet
    _notice(warned, old[0], " ".join(new[:2]))
    volatile = {"seconds", "at", "finished_at", "size", "index_size", "caches_size"}

    def steady(document: object) -> object:
        if isinstance(document, dict):
            return {k: steady(v) for k, v in document.items() if k not in volatile}
        if isinstance(document, list):
            return [steady(v) for v in document]
        return document

    if old[0] == "audit":  # `recall` and the first command add no entry; the rest compare
        assert json.loads(before) == json.loads(now)
    else:
        assert steady(json.loads(before)) == steady(json.loads(now))


def test_proposals_links_and_lessons_by_either_spelling(both: Run) -> None:
    both("agents", "create", "planner")
    assert json.loads(both("agents", "--json")[0]) == json.loads(
        both("agents", "list", "--json")[0]
    )
    a = json.loads(both("remember", "tea at five", "--json")[0])["item"]["id"]
    b = json.loads(both("remember", "coffee at nine", "--json")[0])["item"]["id"]
    made, quiet = both("links", "add", a, b, "--json")
    assert json.loads(made)["kind"] == "related" and quiet == ""
    again, warned = both("link", b, a, "--kind", "related", "--json")
    _notice(warned, "link", "links add")
    listed = json.loads(both("links", "list", a, "--json")[0])
    assert json.loads(both("links", a, "--json")[0]) == listed  # `links ID`: list is the default
    assert [{x["from"], x["to"]} for x in listed] == [{a, b}]  # related: one link, both ways
    learned, quiet = both("lessons", "record", "ship", "--action", "deploy", "--failed", "--json")
    assert quiet == "" and json.loads(learned)["is_ok"] is False
    _, warned = both("outcome", "ship", "--action", "deploy", "--ok")
    _notice(warned, "outcome", "lessons record")
    assert json.loads(both("lessons", "--json")[0]) == json.loads(
        both("lessons", "list", "--json")[0]
    )
    assert json.loads(both("proposals", "--json")[0]) == []
    assert json.loads(both("policies", "--json")[0]) == json.loads(
        both("policies", "list", "--json")[0]
    )


def test_approve_and_reject_by_either_spelling(both: Run, tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with (home / "kronika.toml").open("a") as config:
        config.write("\n[agents.default]\nautonomy = 1\n")
    with build_memory(load_settings(home, environ={}, embedder="hashing")) as memory:
        ids = [
            str(memory.remember(key=f"k{i}", value=v, source_agent="default").proposal)
            for i, v in enumerate(("Kraków", "Lviv", "tea", "rye"))
        ]
    listed = json.loads(both("proposals", "list", "--json")[0])
    assert [p["id"] for p in listed] == ids
    new, quiet = both("proposals", "approve", ids[0], "--json")
    old, warned = both("approve", ids[1], "--json")
    _notice(warned, "approve", "proposals approve")
    assert quiet == "" and set(json.loads(new)) == set(json.loads(old))
    assert json.loads(old)["approved"] == ids[1]
    new, quiet = both("proposals", "reject", ids[2], "--json")
    old, warned = both("reject", ids[3], "--json")
    _notice(warned, "reject", "proposals reject")
    assert quiet == "" and json.loads(old)["rejected"]["id"] == ids[3]
    brain = both("show", "brain")[0]
    assert "Kraków" in brain and "Lviv" in brain and "rye" not in brain
    assert json.loads(both("proposals", "--json")[0]) == []


def test_recall_takes_limit_and_still_takes_k(both: Run) -> None:
    for n in range(4):
        both("remember", f"tea number {n}")
    now, quiet = both("recall", "tea", "--limit", "2", "--no-record", "--json")
    before, warned = both("recall", "tea", "--k", "2", "--no-record", "--json")
    assert len(json.loads(now)["hits"]) == 2 and "deprecated" not in quiet
    _notice(warned, "recall --k", "recall --limit")
    _notice(both("recall", "tea", "--k", "2")[1], "recall --k", "recall --limit")
    assert [h["id"] for h in json.loads(before)["hits"]] == [
        h["id"] for h in json.loads(now)["hits"]
    ]


def test_help_lists_groups_and_no_earlier_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    said = capsys.readouterr().out
    lines = [line.split()[0] for line in said.splitlines() if re.match(r"  \S", line)]
    for group in ("agents", "proposals", "links", "lessons", "policies", "jobs", "index", "logs"):
        assert group in lines, said
    assert "groups (kronika GROUP COMMAND):" in said
    assert not set(lines) & set(RENAMED), "an earlier spelling is listed"
    assert said.index("remember and recall:") < said.index("options:")
    commands = [w for w in lines if not w.startswith("-")]
    assert len(commands) == 26 == len(set(commands))  # 36 before they were grouped
    assert main(["proposals", "--help"]) == 0
    group = capsys.readouterr().out
    assert "commands (default: list)" in group
    assert all(verb in group for verb in ("list", "approve", "reject"))


def test_an_unknown_verb_of_a_group_is_a_usage_error(
    run: Callable[..., str],
) -> None:
    run("init")
    assert "kronika keys --help" in run("keys", "make", code=2)
    assert "kronika index --help" in run("index", code=2)
