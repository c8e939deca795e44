"""The corruption matrix: every kind of file × every kind of damage × every command.

One seed workspace holds every kind of file kronika keeps (made once, copied per case).
Each case damages one file (cut to two thirds, emptied, deleted, bytes overwritten in
the middle, bytes that are not UTF-8 near the start) and runs the real command line in
process, as a person would. What must hold:

* no command ends in a traceback or "a bug in kronika";
* the damage is said: by the first command (a note naming the file), and by
  ``kronika doctor`` on every later run until it is fixed;
* ``doctor --fix`` restores what the index or a kept copy still holds, or says what is
  lost; derived files (the index and its markers, the server's job records) are rebuilt.

:func:`must_say` says which first commands must name the file; every damage is found
by ``doctor`` until it is fixed (:data:`GONE`: against what kronika recorded a file
held); docs/benchmarks-reliability.md gives the figures.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.cli import main
from kronika.core.lessons import exit_code

DAMAGES = ("truncate", "empty", "delete", "garble", "utf8")
A = "agents/default/"
KINDS = {
    "brain": A + "brain.md",
    "archive": A + "brain_archive.md",
    "history": A + "history.md",
    "notes": A + "memory/2026-11-20.md",
    "session": A + "sessions/s1.md",
    "summary": A + "summaries/L1/sum-1.md",
    "active": A + "active_context.md",
    "entity": A + "bank/entities/Pixel.md",
    "lessons": A + "lessons.md",
    "proposals": "agents/careful/proposals.md",
    "config": "kronika.toml",
    "index": "index.sqlite",
    "index.model": "index.model",
    "index.tenants": "index.tenants",
    "keys": "keys.sqlite",
    "jobs": "server-jobs.sqlite",
    "audit": "audit.jsonl",
}
COMMANDS: dict[str, tuple[str, ...]] = {
    "recall": ("recall", "cat thing tea"),
    "remember": ("remember", "the sky is green today"),
    "doctor": ("doctor",),
    "doctor --fix": ("doctor", "--fix"),
    "reindex": ("reindex",),
    "export": ("export", "-o", "{backup}"),
}
DERIVED = {"index", "index.model", "index.tenants"}
"""Rebuilt from the Markdown by the command that meets them."""
REFUSED = {("config", "truncate"), ("config", "garble"), ("config", "utf8")}
"""A settings file that cannot be read stops every command with a clear error (exit 2)
naming it: nothing is done under settings that may be wrong."""
GONE = {
    (kind, how)
    for kind in ("config", "keys", "jobs", "audit", "proposals")
    for how in ("empty", "delete")
}
"""A file that is gone or emptied reads as one never made: these are found against
what kronika recorded each held (``kronika.stores.held``)."""


def _seed(home: Path) -> None:
    from kronika.server.jobstore import SqliteJobRecords
    from kronika.server.keys import KeyStore

    home.mkdir(parents=True)
    (home / "kronika.toml").write_text(
        '# settings\n[agents.careful]\nautonomy = 1\nwriters = ["default"]\n', "utf-8"
    )
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True) as memory:
        for n in range(6):
            memory.remember(f"I like thing {n} very much, tea {n}", key=f"like{n}")
        memory.remember("Kraków", key="city")
        memory.remember("Warszawa", key="city")
        for n in range(3):
            memory.note(f"we discussed plan {n}", at=datetime(2026, 11, 20, 10, tzinfo=UTC))
        for n in range(3):
            memory.save_turn("s1", "user", f"I adopted cat number {n}")
            memory.save_turn("s1", "assistant", f"Congratulations on cat {n}!")
        memory.record_outcome("deploy", "make deploy", exit_code(2, "missing migration"))
        memory.create_agent("careful")
        memory.remember("maybe coffee", agent="careful", source_agent="careful")
    folder = home / A
    archive = "".join(f"- **old{n}**: archived thing {n}\n" for n in range(4))
    (folder / "brain_archive.md").write_text("# Brain archive\n\n" + archive, "utf-8")
    (folder / "active_context.md").write_text("We talked about the cat and the plan.\n", "utf-8")
    (folder / "summaries/L1/sum-1.md").write_text(
        "---\nid: sum-1\ncreated: 2026-11-21T10:00:00Z\nsessions: s1\n---\n\n"
        "The user adopted three cats.\n",
        "utf-8",
    )
    (folder / "bank/entities").mkdir(parents=True, exist_ok=True)
    (folder / "bank/entities/Pixel.md").write_text(
        "# Pixel\n\n- Pixel sleeps by the tin\n- Pixel is a dog\n- Pixel is brown\n", "utf-8"
    )
    with build_memory(settings) as memory:
        memory.sync()
    token = KeyStore(home / "keys.sqlite").create("default", label="seed key").token
    (home.parent / "token").write_text(token, "utf-8")
    jobs = SqliteJobRecords(home / "server-jobs.sqlite")
    job = {"id": "j-1", "kind": "reindex", "tenant": "default", "agent": "default"}
    done = {"params": {}, "status": "done", "created_at": "2026-11-20", "result": {}}
    jobs.insert({**job, **done, "message": "seed job done"}, "w", 1.0)
    jobs.close()
    for path in [home, *home.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("seed") / "ws"
    _seed(home)
    for kind, path in KINDS.items():
        assert (home / path).is_file(), kind
    return home


STORED_TEXT = {
    "index.sqlite": b"thing 3",
    "keys.sqlite": b"seed key",
    "server-jobs.sqlite": b"seed job",
}
"""A text stored in each SQLite file: "utf8" damage puts bytes that are not UTF-8
inside it (a page check cannot see that; reading the value back fails)."""


def damage(file: Path, how: str) -> None:
    raw = file.read_bytes()
    if how in ("utf8", "garble") and file.name in STORED_TEXT:
        at = raw.find(STORED_TEXT[file.name])
        assert at > 0, file
        data = bytearray(raw)
        if how == "utf8":  # inside the value
            data[at + 4 : at + 6] = b"\xff\xfe"
        else:  # over the cell that holds it
            data[at - 24 : at - 16] = b"\xde\xad\xbe\xef\x01\x02\x03\x04"
        file.write_bytes(bytes(data))
        return
    if how == "truncate":
        file.write_bytes(raw[: len(raw) * 2 // 3])
    elif how == "empty":
        file.write_bytes(b"")
    elif how == "delete":
        file.unlink()
    elif how == "garble":  # printable-ish bytes over the middle
        data = bytearray(raw)
        middle = len(data) // 2
        data[middle : middle + 8] = b"\x01\x02zz\x7f~^@"
        file.write_bytes(bytes(data))
    else:  # bytes that are not UTF-8, near the start
        data = bytearray(raw)
        at = min(len(data) // 4, 40) if len(data) > 16 else 0
        data[at : at + 2] = b"\xff\xfe"
        file.write_bytes(bytes(data))


class Run:
    """``kronika …`` on one workspace, in process; each answer as (code, all text)."""

    def __init__(self, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.home = home
        self.capsys = capsys
        self.out = ""

    def __call__(self, *argv: str) -> tuple[int, str]:
        args = [a.replace("{backup}", str(self.home.parent / "backup.json")) for a in argv]
        code = main([*args, "--home", str(self.home)])
        out = self.capsys.readouterr()
        self.out = out.out
        text = " ".join((out.out + "\n" + out.err).split())
        assert "Traceback" not in text and "a bug in kronika" not in text, text
        return code, text


@pytest.fixture
def workspace(
    seed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], Path]]:
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    monkeypatch.delenv("KRONIKA_HOME", raising=False)

    def made(kind: str, how: str) -> Path:
        home = Path(shutil.copytree(seed, tmp_path / "ws"))
        damage(home / KINDS[kind], how)
        return home

    yield made


SERVER_ONLY = {"keys", "jobs", "audit", "proposals"}
"""Files the matrix's other commands never read (the server's, the audit trail, the
proposals of another agent): ``doctor`` says their damage, the others need not."""


FACT_FILES = {"brain", "archive", "history"}


def must_say(kind: str, how: str, command: str) -> bool:
    """Whether the first command must name the damaged file: it read it, and the damage
    can be seen. A derived file is rebuilt by whichever command meets its damage (and
    says so: ``test_damage.py``); one that is gone is simply built again. ``remember``
    reads the fact files only (the rest waits for the next command that reads them, so
    a write never loads the embedding model for them); ``export`` copies every file as
    it is and says which hold bytes that are not text."""
    if kind in DERIVED:
        return False
    if kind in SERVER_ONLY:
        return command.startswith("doctor")
    if command == "remember":
        return kind in FACT_FILES
    if command == "export":
        return how == "utf8"
    return True


def _names(text: str, kind: str) -> bool:
    """Whether ``text`` names the damaged file of ``kind``."""
    return Path(KINDS[kind]).name in text


CASES = [(k, d) for k in KINDS for d in DAMAGES]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("kind", "how"), CASES)
def test_the_first_command_never_fails_on_damage_and_says_it(
    workspace: Callable[[str, str], Path],
    capsys: pytest.CaptureFixture[str],
    kind: str,
    how: str,
    command: str,
) -> None:
    run = Run(workspace(kind, how), capsys)
    code, text = run(*COMMANDS[command])
    if (kind, how) in REFUSED:
        assert code == 2 and "kronika.toml" in text  # a clear error, nothing done
        return
    assert code in (0, 11), text
    if must_say(kind, how, command):
        assert _names(text, kind), f"{kind} {how}: {command} said nothing: {text[:300]}"


@pytest.mark.parametrize(("kind", "how"), CASES)
def test_doctor_finds_damage_until_fixed_and_fix_restores_or_says(
    workspace: Callable[[str, str], Path],
    seed: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    how: str,
) -> None:
    run = Run(workspace(kind, how), capsys)
    if (kind, how) in REFUSED:
        assert run("doctor")[0] == 2
        return
    run("recall", "cat thing tea")  # whatever the first command: it has been met
    seen = kind not in DERIVED
    for _ in range(2):
        code, text = run("doctor", "--json")
        if seen:
            assert code == 11 and _names(text, kind), f"doctor lost sight of it: {text[:400]}"
        elif kind in DERIVED:  # rebuilt by the command that met it, or found
            assert code == 0 or _names(text, kind), text
        else:
            assert code == 0, text
    code, text = run("doctor", "--fix", "--json")
    if (kind, how) in GONE:
        _what_a_gone_file_held_is_back_or_said(run, seed, kind, text)
    if code == 11:  # what could not be restored is named
        assert _names(text, kind), text
        again, text = run("doctor", "--json")
        assert again == 11 and _names(text, kind), "said once, then silent"
    else:
        assert code == 0, text
        assert run("doctor")[0] == 0
    _what_was_held_is_back(run, kind, how)


RESTORED: dict[str, tuple[str, ...]] = {
    "brain": tuple(f"thing {n}" for n in range(6)),
    "archive": tuple(f"archived thing {n}" for n in range(4)),
    "session": tuple(f"cat number {n}" for n in range(3)),
    "notes": tuple(f"plan {n}" for n in range(3)),
    "summary": ("The user adopted three cats.",),
    "active": ("We talked about the cat and the plan.",),
    "entity": ("Pixel sleeps by the tin", "Pixel is a dog", "Pixel is brown"),
    "lessons": ("'make deploy' failed",),
}
"""What ``doctor --fix`` must have put back (whole, in recall and in the file), for
the kinds whose text the index holds."""
IN_PLACE = {"brain", "history"}
"""Overwritten bytes there fall in the seed's headers and metadata (checked apart)."""


def _what_was_held_is_back(run: Run, kind: str, how: str) -> None:
    if kind not in RESTORED or (how == "garble" and kind in IN_PLACE):
        return
    code, text = run("recall", "thing tea cat plan archived Pixel deploy", "--json", "--k", "60")
    assert code == 0
    hits = " ".join(h["content"] for h in json.loads(run.out)["hits"])
    missing = [words for words in RESTORED[kind] if words not in hits]
    assert not missing, f"{kind} {how}: not back in recall after --fix: {missing}"
    file = (run.home / KINDS[kind]).read_text("utf-8")
    if kind not in FACT_FILES:  # a fact may have moved between the fact files
        missing = [words for words in RESTORED[kind] if words not in file]
        assert not missing, f"{kind} {how}: not back in {KINDS[kind]} after --fix: {missing}"
    texts = [line for line in file.splitlines() if "zz" in line or "\ufffd" in line]
    damaged = [line for line in texts if any(words in line for words in RESTORED[kind])]
    assert not damaged, f"{kind} {how}: a damaged copy of an item left beside it: {damaged}"


HELD_SAID = {
    "config": "put back the last good copy",
    "keys": "put back the last good copy",
    "jobs": "held 1 job records",
    "audit": "the entries it lost are lost",
    "proposals": "held 1 proposal(s)",
}
"""What ``doctor --fix`` says of a file gone or emptied."""


def _what_a_gone_file_held_is_back_or_said(run: Run, seed: Path, kind: str, text: str) -> None:
    assert HELD_SAID[kind] in text, f"{kind}: --fix did not say what it held: {text[:600]}"
    if kind == "keys":  # the seed's key is accepted again
        from kronika.server.keys import KeyStore

        keys = KeyStore(run.home / "keys.sqlite")
        try:
            assert keys.verify((seed.parent / "token").read_text("utf-8")) is not None
        finally:
            keys.close()
    elif kind == "config":  # the agent's policy is back
        assert "[agents.careful]" in (run.home / "kronika.toml").read_text("utf-8")


SERVE_KINDS = ("brain", "session", "index", "index.model", "keys", "jobs")


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("kind", SERVE_KINDS)
def test_the_server_starts_or_says_why_and_never_answers_500(
    workspace: Callable[[str, str], Path],
    seed: Path,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    how: str,
) -> None:
    """``kronika serve``'s start (the service, the keys) and one recall over real HTTP."""
    pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
    import threading
    import time
    import urllib.error
    import urllib.request

    import uvicorn

    from kronika.errors import KronikaError
    from kronika.server.app import ServerConfig, create_app
    from kronika.server.run import build_service, open_keys

    home = workspace(kind, how)
    token = (seed.parent / "token").read_text("utf-8")
    settings = load_settings(home, environ={}, embedder="hashing")
    try:
        service = build_service(settings)
        keys = open_keys(settings)
    except KronikaError as refused:  # a clear reason not to start, naming the file
        assert kind == "keys" and "keys.sqlite" in str(refused), refused
        return
    server = uvicorn.Server(uvicorn.Config(create_app(service, keys, ServerConfig()), port=0))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "the server did not start"
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/agents/default/recall",
            data=json.dumps({"query": "thing cat"}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, body = answer.status, answer.read().decode()
        except urllib.error.HTTPError as failed:
            status, body = failed.code, failed.read().decode()
    finally:
        server.should_exit = True
        thread.join(20)
        keys.close()
        service.close()
    assert status != 500, body
    if kind == "keys" and (kind, how) not in GONE:
        assert status == 503 and "keys.sqlite" in body, body
    elif kind == "keys":  # no key left: said at start, and `doctor --fix` puts them back
        assert status == 401
        assert "keys.sqlite" in caplog.text and "held 1 keys" in caplog.text, caplog.text
    else:
        assert status == 200, body
